#!/bin/sh
# The fake harness the fake nvcc builds: check mode copies the H200 run's check results
# (testdata/replay/clean/*/check.json)
# (only the kernels of KG_KERNELS); sanitize mode reports one launch; bench mode draws
# timings like gates/abrun/testdata/fake-harness.sh. FAKE_HARNESS_GPU_ERROR=1 makes the check
# run die the way a faulting kernel does (and creates the file $FAKE_SMI_DEAD_AFTER, if set,
# which makes the fake nvidia-smi fail from then on).
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
case $KG_MODE in
check)
  if [ -n "$FAKE_HARNESS_GPU_ERROR" ]; then
    [ -n "$FAKE_SMI_DEAD_AFTER" ] && : >"$FAKE_SMI_DEAD_AFTER"
    echo "harness: flash_fwd small: CUDA error: unspecified launch failure" >&2
    exit 1
  fi
  python3 - "$repo/testdata/replay/clean" "$KG_OUT" "$KG_KERNELS" <<'PY'
import json, sys
src, out, kernels = sys.argv[1], sys.argv[2], sys.argv[3]
f = json.load(open(src + "/attention/check.json"))
for t in ("gemm", "softmax"):
    f["results"] += json.load(open(src + "/" + t + "/check.json"))["results"]
import os
if os.environ.get("KG_SHAPES"):
    f["request"]["shapes"] = os.environ["KG_SHAPES"].split(",")
if kernels:
    keep = set(kernels.split(","))
    f["results"] = [r for r in f["results"] if r["kernel"] in keep]
json.dump(f, open(out, "w"))
PY
  ;;
sanitize)
  printf '{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"}, "results": [{"kernel": "k", "shape": "small", "launches": 1}]}\n' >"$KG_OUT"
  ;;
bench)
  exec sh "$repo/gates/abrun/testdata/fake-harness.sh" "state=/dev/null" "side=x" ${FAKE_FACTOR:+factor=$FAKE_FACTOR}
  ;;
esac
