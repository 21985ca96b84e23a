#!/usr/bin/env bash
# Measures the speedup gate's wall time, one harness process per round against harnesses
# that serve their rounds (KG_MODE=serve), on a GPU, for docs/speedup-serving.md. Needs Go
# (or KG_BIN=path/to/kernel-gate), nvcc and python3 (PyTorch for the reference's rows, skipped without it). From the
# repository root, on one otherwise idle H100 or H200:
#
#   testdata/timing/measure-serve.sh [OUTDIR]
#
# It builds kernels/harness.cu four times from the same source: A, A' (a second build of the
# same source, so A/A compares two binaries, as base and head are), and A with the planted
# slowdown KG_DEFECT_SLOW5 at SLOW3_CYCLES and SLOW5_CYCLES cycles per tile (about 3% and 5%
# on flash_fwd × mission; the realised ratio is printed, and that is what counts). Then
# `kernel-gate bench run --base-cmd A --head-cmd B` on one kernel × shape at a time, each
# case once with bench.serve false (one process per round, as before) and once with
# bench.serve true (restarted every RESTART_EVERY rounds):
#
#   attention  flash_fwd × mission: A/A, 3%, 5%
#   reference  kernels/sdpa_reference.py against itself (PyTorch, Python): A/A
#   launch     row_softmax × small, a launch-bound kernel of a few µs: A/A
#   lifetimes  REPEAT_AA more served A/A runs of attention, for the false-slower rate over
#              many server lifetimes (with the runs above, at least 20 per side)
#
# Per run it prints the verdict, the realised ratio, the rounds, the wall seconds of the
# timing (starting the harnesses to the last round: what bench.wall_budget bounds) and per
# round, the seconds the processes spent setting up, and the kernels' own timed seconds (the
# floor: every timed launch of both sides). Each run has a wall budget (WALL_BUDGET, default
# 60s: an undecided pair then is inconclusive, with the rounds it reached) and the whole
# script stops starting runs after TOTAL_BUDGET seconds (default 420), so it ends within
# about 8 minutes. OUTDIR (default a new temporary directory) keeps every run's result JSON
# and artifacts, and summary.tsv.
set -u
cd "$(dirname "$0")/../.." || exit 2
out=${1:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
SLOW3_CYCLES=${SLOW3_CYCLES:-220}
SLOW5_CYCLES=${SLOW5_CYCLES:-370}
RESTART_EVERY=${RESTART_EVERY:-4}
WALL_BUDGET=${WALL_BUDGET:-60s}
TOTAL_BUDGET=${TOTAL_BUDGET:-420}
REPEAT_AA=${REPEAT_AA:-4}
SAMPLES=${SAMPLES:-30}
start=$SECONDS

echo "measure-serve: building into $out" >&2
# The GPU machines have no Go: KG_BIN names a kernel-gate built elsewhere
# (CGO_ENABLED=0 go build -o kernel-gate ./action).
if [ -n "${KG_BIN:-}" ]; then cp "$KG_BIN" "$out/kernel-gate" || exit 2; else go build -o "$out/kernel-gate" ./action || exit 2; fi
build() { # name, extra nvcc flags...
  local name=$1
  shift
  nvcc -O3 -lineinfo -arch=native "$@" -o "$out/$name" kernels/harness.cu >"$out/$name.build.log" 2>&1
}
build A & build A2 & build slow3 -DKG_DEFECT_SLOW5 -DKG_SLOW_CYCLES="$SLOW3_CYCLES" &
build slow5 -DKG_DEFECT_SLOW5 -DKG_SLOW_CYCLES="$SLOW5_CYCLES" &
wait
for b in A A2 slow3 slow5; do
  [ -x "$out/$b" ] || { echo "measure-serve: the $b build failed: $out/$b.build.log" >&2; exit 2; }
done
echo "measure-serve: built in $((SECONDS - start)) s" >&2
has_torch=0
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && has_torch=1

printf 'case\tmode\tverdict\tratio\trounds\ttiming_s\ts_per_round\tsetup_s\tkernel_s\tstarts\tstopped\n' >"$out/summary.tsv"

# run NAME MODE KERNEL SHAPE BASE_CMD HEAD_CMD
run() {
  local name=$1 mode=$2 kernel=$3 shape=$4 base=$5 head=$6
  if [ $((SECONDS - start)) -ge "$TOTAL_BUDGET" ]; then
    echo "measure-serve: $name $mode skipped: the script's budget of $TOTAL_BUDGET s is spent" >&2
    return
  fi
  local dir="$out/$name-$mode" serve=false
  [ "$mode" = serve ] && serve=true
  mkdir -p "$dir"
  cat >"$dir/kernel-gate.yml" <<EOF
bench:
  samples: $SAMPLES
  shapes: [$shape]
  serve: $serve
  restart_every: $RESTART_EVERY
  wall_budget: $WALL_BUDGET
  env: {KG_KERNELS: $kernel}
EOF
  echo "measure-serve: $name, $mode ($((SECONDS - start)) s so far)" >&2
  timeout 300 "$out/kernel-gate" bench run --config "$dir/kernel-gate.yml" --base-cmd "$base" --head-cmd "$head" \
    --artifacts "$dir/artifacts" --format json --out "$dir/result.json" 2>"$dir/progress.log"
  python3 - "$dir/result.json" "$name" "$mode" >>"$out/summary.tsv" <<'PY'
import json, sys
path, name, mode = sys.argv[1:4]
try:
    g = next(g for g in json.load(open(path))["gates"] if g["name"] == "speedup")
except Exception as e:  # noqa: BLE001
    print(f"{name}\t{mode}\tno result ({e})" + "\t-" * 8)
    sys.exit(0)
d, r = g["data"], g["data"]["runner"]
cs = d.get("comparisons") or []
c = cs[0] if cs else {}
sides = (r.get("serve") or {}).get("sides") or []
setup = sum(s.get("setup_seconds", 0) for s in sides)
starts = "/".join(str(s.get("starts", 0)) for s in sides)
kernel_s = sum(x.get("gpu_seconds") or 0 for x in cs)
rounds_run = max(r.get("rounds_run", 0), 1)
verdict = c.get("verdict") or g["verdict"] + ((": " + r["failure"]["why"][:80]) if r.get("failure") else "")
ratio = f"{c['ratio']:.4f}" if c.get("ratio") else "-"
print(f"{name}\t{mode}\t{verdict}\t{ratio}\t{r.get('rounds', 0)}\t{r.get('timing_seconds', 0):.1f}\t"
      f"{r.get('timing_seconds', 0) / (rounds_run + 1):.3f}\t{setup:.1f}\t{kernel_s:.3f}\t{starts}\t{r.get('stopped', '')}")
PY
  tail -1 "$out/summary.tsv" >&2
}

for mode in process serve; do
  run attention-AA "$mode" flash_fwd mission "$out/A" "$out/A2"
  run attention-3pct "$mode" flash_fwd mission "$out/A" "$out/slow3"
  run attention-5pct "$mode" flash_fwd mission "$out/A" "$out/slow5"
done
if [ "$has_torch" = 1 ]; then
  for mode in serve process; do
    run reference-AA "$mode" flash_fwd mission "python3 kernels/sdpa_reference.py" "python3 kernels/sdpa_reference.py"
  done
else
  echo "measure-serve: no PyTorch with CUDA: the reference rows are skipped" >&2
fi
for mode in serve process; do
  run launch-AA "$mode" row_softmax small "$out/A" "$out/A2"
done
for i in $(seq 1 "$REPEAT_AA"); do
  run "attention-AA-$i" serve flash_fwd mission "$out/A" "$out/A2"
done

echo
column -t -s "$(printf '\t')" "$out/summary.tsv" 2>/dev/null || cat "$out/summary.tsv"
echo
echo "measure-serve: done in $((SECONDS - start)) s; results in $out"
