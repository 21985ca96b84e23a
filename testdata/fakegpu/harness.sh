#!/bin/sh
# The fake harness the fake nvcc builds: check mode copies the H200 run's check results
# (testdata/replay/clean/TARGET/check.json, the target found from KG_KERNELS); sanitize mode
# reports one launch; bench mode draws timings like gates/speedup/abrun/testdata/fake-harness.sh. FAKE_HARNESS_GPU_ERROR=1 makes the check
# run die the way a faulting kernel does (and creates the file $FAKE_SMI_DEAD_AFTER, if set,
# which makes the fake nvidia-smi fail from then on); FAKE_HARNESS_GPU_ERROR=KERNELS only the
# check run of that KG_KERNELS (several: KERNELS;KERNELS).
# FAKE_CHECK_RENDEZVOUS=DIR: a check run waits, up to 10 s, until three check runs have
# arrived in DIR, and says in $FAKE_ENV_LOG whether they met ("check met" or "check
# alone"): three targets' checks ran at once, or one after another.
# FAKE_ENV_DUMP=DIR: write the environment this process was started with to DIR (the
# token tests: no child of kernel-gate may hold one).
# FAKE_HARNESS_CHECK_AFTER=SCRIPT: sh -c SCRIPT once check mode wrote KG_OUT (a pull
# request's harness that leaves a FIFO or a link where kernel-gate reads or writes next).
if [ -n "$FAKE_ENV_DUMP" ]; then { tr '\0' '\n' </proc/$$/environ || env; } >"$FAKE_ENV_DUMP/harness.$$" 2>/dev/null; fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
case $KG_MODE in
check)
  if [ "$FAKE_HARNESS_GPU_ERROR" = 1 ] || { [ -n "$FAKE_HARNESS_GPU_ERROR" ] && case ";$FAKE_HARNESS_GPU_ERROR;" in *";$KG_KERNELS;"*) true ;; *) false ;; esac; }; then
    [ -n "$FAKE_SMI_DEAD_AFTER" ] && : >"$FAKE_SMI_DEAD_AFTER"
    echo "harness: flash_fwd small: CUDA error: unspecified launch failure" >&2
    exit 1
  fi
  case $KG_KERNELS in
  flash_fwd,flash_fwd_causal) t=attention ;;
  gemm_wmma) t=gemm ;;
  row_softmax) t=softmax ;;
  *) echo "fake harness: no recorded check for KG_KERNELS=$KG_KERNELS" >&2; exit 2 ;;
  esac
  if [ -n "$FAKE_CHECK_RENDEZVOUS" ]; then
    : >"$FAKE_CHECK_RENDEZVOUS/$$"
    i=0
    while [ "$(ls "$FAKE_CHECK_RENDEZVOUS" | wc -l)" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    if [ $i -lt 100 ]; then echo "check met" >>"$FAKE_ENV_LOG"; else echo "check alone" >>"$FAKE_ENV_LOG"; fi
  fi
  cp "$repo/testdata/replay/clean/$t/check.json" "$KG_OUT"
  if [ -n "$FAKE_HARNESS_CHECK_AFTER" ]; then sh -c "$FAKE_HARNESS_CHECK_AFTER"; fi
  ;;
sanitize)
  printf '{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"}, "results": [{"kernel": "k", "shape": "small", "launches": 1}]}\n' >"$KG_OUT"
  ;;
bench)
  if [ -n "$FAKE_HEAD_FACTOR" ]; then
    # Head's harness (a path under head/) FAKE_HEAD_FACTOR times as slow on gemm as base's,
    # which reports the recorded kernel's name, gemm_wmma, so that a finding names the target's.
    f=1
    case $FAKE_HARNESS_BIN in */head/*) f=$FAKE_HEAD_FACTOR ;; esac
    sh "$repo/gates/speedup/abrun/testdata/fake-harness.sh" "state=/dev/null" "side=x" "factor=$f" || exit
    sed 's/"kernel": "gemm"/"kernel": "gemm_wmma"/' "$KG_OUT" >"$KG_OUT.fake" && mv "$KG_OUT.fake" "$KG_OUT"
    exit
  fi
  exec sh "$repo/gates/speedup/abrun/testdata/fake-harness.sh" "state=/dev/null" "side=x" ${FAKE_FACTOR:+factor=$FAKE_FACTOR}
  ;;
esac
