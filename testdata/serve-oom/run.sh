#!/usr/bin/env bash
# The speedup runner's out-of-memory fallback on a real GPU (docs/harness-protocol.md, "Sets
# of processes, and restarts"), and the out-of-memory messages real harnesses print. From the
# repository root, on an otherwise idle GPU machine with nvcc and PyTorch:
#
#   KG_BIN=path/to/kernel-gate testdata/serve-oom/run.sh OUTDIR
#
# Each serving process of the C++ harness (flash_fwd × mission) runs under hold.py, which
# first holds 30% of the GPU's memory: a set of 4 processes a side (8, 240%) cannot fit, one a
# side (60%) can, and a restart, whose new processes set up while the old ones end (4, 120%),
# cannot. `kernel-gate bench run` (servers 4, restart_every 4) must say both in warnings and
# still decide. Then two out-of-memory messages are captured as the harnesses print them:
# the C++ harness in bench mode with all but SPARE MiB of the free memory held
# (harness-oom-SPARE.*), and hold.py itself asking for more than the GPU has (torch-oom.stderr).
set -u
cd "$(dirname "$0")/../.." || exit 2
out=${1:?OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
nvcc -O3 -lineinfo -arch=native -o "$out/A" kernels/harness.cpp kernels/harness_cases.cpp kernels/harness_device.cu kernels/flash_fwd.cu kernels/gemm_wmma.cu kernels/softmax.cu || exit 2
total=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits --id=0) || exit 2
hold=$((total * 30 / 100))
echo "GPU memory: $total MiB; each serving process holds $hold MiB first" | tee "$out/plan.txt"
cat >"$out/kernel-gate.yml" <<YML
bench:
  samples: 30
  shapes: [mission]
  serve: true
  servers: 4
  restart_every: 4
  wall_budget: 120s
  env: {KG_KERNELS: flash_fwd}
YML
cmd="python3 testdata/serve-oom/hold.py $hold $out/A"
"${KG_BIN:?KG_BIN}" bench run --config "$out/kernel-gate.yml" --base-cmd "$cmd" --head-cmd "$cmd" \
  --artifacts "$out/artifacts" --format json --out "$out/result.json" 2>"$out/progress.log"
echo "kernel-gate bench run: exit $?" | tee -a "$out/plan.txt"
# The harness's own message: hold.py takes what is free but SPARE MiB (its own CUDA context
# comes out of those too), and the harness's context and inputs then do not fit.
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits --id=0) || exit 2
for spare in 1200 900 700; do
  KG_MODE=bench KG_SHAPES=long KG_KERNELS=flash_fwd KG_ROUNDS=1 KG_OUT="$out/harness-oom-$spare.json" \
    python3 testdata/serve-oom/hold.py $((free - spare)) "$out/A" >"$out/harness-oom-$spare.stdout" 2>"$out/harness-oom-$spare.stderr"
  echo "harness under a hold of all but $spare of the $free MiB free: exit $?" | tee -a "$out/plan.txt"
done
python3 testdata/serve-oom/hold.py $((total + 1024)) true >/dev/null 2>"$out/torch-oom.stderr"
echo "hold.py asking for more than the GPU has: exit $?" | tee -a "$out/plan.txt"
