#!/bin/sh
# A fake kernel harness for the A/B runner's tests (no GPU): it speaks kernel-gate/bench/v1
# in bench mode and draws its timings from awk's seeded generator. Settings are NAME=VALUE
# arguments:
#   state=PATH    file counting this side's runs (required; run n = round n-1, n=1 the warm-up)
#   side=NAME     appended with the run number to order= (to check the ABBA order)
#   order=PATH    shared log of the order the runs came in
#   factor=F      head/base scale of the slow kernel's timings (1.05: 5% slower)
#   slow=KERNEL   the kernel factor applies to (default gemm; softmax never changes)
#   seed=N        this side's noise seed; the per-round drift is shared by both sides
#   fail_on=N     exit 1 on run N;   hang_on=N  hang on run N (with a child process)
#   nofile_on=N   write no file on run N;   bad_on=N  write a broken file on run N
#   device=NAME   the device name it reports (default "NVIDIA H200")
#   errors_on=N   report a harness error for softmax on run N (and exit 0)
#   wait_on=N:PATH     on run N, wait (up to about 20 s) for PATH to exist before timing:
#                      for a fake nvidia-smi to have printed what the round must see
#   wait_gone=N:FILE   on run N, wait (as long) for the process whose pid FILE holds to be
#                      gone (reaped, not a zombie): for a fake nvidia-smi's end to be seen
state= side=x order=/dev/null factor=1 slow=gemm seed=1 fail_on=0 hang_on=0 nofile_on=0 bad_on=0 errors_on=0
wait_on= wait_gone=
device="NVIDIA H200"
for a in "$@"; do
  case $a in
    state=*) state=${a#state=} ;; side=*) side=${a#side=} ;; order=*) order=${a#order=} ;;
    factor=*) factor=${a#factor=} ;; slow=*) slow=${a#slow=} ;; seed=*) seed=${a#seed=} ;;
    fail_on=*) fail_on=${a#fail_on=} ;; hang_on=*) hang_on=${a#hang_on=} ;;
    nofile_on=*) nofile_on=${a#nofile_on=} ;; bad_on=*) bad_on=${a#bad_on=} ;;
    errors_on=*) errors_on=${a#errors_on=} ;; device=*) device=${a#device=} ;;
    wait_on=*) wait_on=${a#wait_on=} ;; wait_gone=*) wait_gone=${a#wait_gone=} ;;
    *) echo "fake-harness: unknown setting $a" >&2; exit 2 ;;
  esac
done
[ -n "$state" ] || { echo "fake-harness: state= is required" >&2; exit 2; }
[ "$KG_MODE" = bench ] || { echo "fake-harness: KG_MODE=$KG_MODE, want bench" >&2; exit 2; }
[ "$KG_ROUNDS" = 1 ] || { echo "fake-harness: KG_ROUNDS=$KG_ROUNDS, want 1" >&2; exit 2; }
[ -n "$KG_OUT" ] || { echo "fake-harness: no KG_OUT" >&2; exit 2; }
n=$(( $(cat "$state" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$state"
echo "$side $n" >>"$order"
echo "fake-harness: $side run $n"
# waitfor CONDITION...: polls the condition every 10 ms, at most 2000 times.
waitfor() {
  i=0
  until "$@"; do
    i=$((i + 1))
    [ $i -ge 2000 ] && { echo "fake-harness: gave up waiting for: $*" >&2; return; }
    sleep 0.01
  done
}
gone() { [ -s "$1" ] && ! kill -0 "$(cat "$1")" 2>/dev/null; }
[ -n "$wait_on" ] && [ "${wait_on%%:*}" = "$n" ] && waitfor test -e "${wait_on#*:}"
[ -n "$wait_gone" ] && [ "${wait_gone%%:*}" = "$n" ] && waitfor gone "${wait_gone#*:}"
if [ "$n" -eq "$fail_on" ]; then
  echo "harness: flash_fwd mission: an illegal memory access was encountered" >&2
  exit 1
fi
if [ "$n" -eq "$hang_on" ]; then
  sleep 30 &
  echo $! >"$state.child"
  wait
fi
[ "$n" -eq "$nofile_on" ] && exit 0
if [ "$n" -eq "$bad_on" ]; then
  echo '{"schema": "kernel-gate/bench/v1", "results": [' >"$KG_OUT"
  exit 0
fi
awk -v n="$n" -v seed="$seed" -v f="$factor" -v slow="$slow" -v samples="${KG_SAMPLES:-30}" \
    -v shapes="${KG_SHAPES:-small}" -v device="$device" -v errn="$errors_on" 'BEGIN {
  srand(n); drift = 1 + 0.1 * (rand() - 0.5)        # the round: shared by both sides
  srand(seed * 100003 + n)
  ns = split(shapes, sh, ",")
  printf "{\"schema\": \"kernel-gate/bench/v1\",\n \"device\": {\"name\": \"%s\", \"compute_cap\": \"9.0\", \"driver\": \"580.159.04\", \"cuda\": \"13.0\"},\n", device
  printf " \"request\": {\"mode\": \"bench\", \"shapes\": [], \"rounds\": 1, \"samples\": %d},\n \"results\": [", samples
  nk = split("gemm softmax", k, " ")
  first = 1
  for (i = 1; i <= nk; i++) for (j = 1; j <= ns; j++) {
    printf "%s\n  {\"kernel\": \"%s\", \"shape\": \"%s\"", (first ? "" : ","), k[i], sh[j]
    first = 0
    if (n == errn && k[i] == "softmax") { printf ", \"error\": \"out of memory\"}"; continue }
    base = (k[i] == "gemm" ? 100 : 20) * j
    scale = (k[i] == slow ? f : 1)
    printf ", \"rounds_us\": [["
    for (s = 1; s <= samples; s++) {
      z = 0; for (u = 0; u < 12; u++) z += rand(); z -= 6   # about N(0, 1)
      printf "%s%.4f", (s > 1 ? ", " : ""), base * scale * drift * (1 + 0.01 * z)
    }
    printf "]]}"
  }
  printf "\n ]}\n"
}' >"$KG_OUT"
