#!/usr/bin/env bash
# Records the speedup gate's inputs for the replay (run on a GPU machine from the repository
# root):  testdata/replay/record-bench.sh OUTDIR KERNEL_GATE_BINARY
#
# kernel-gate bench run alternates two harness builds on the GPU (ABBA rounds, nvidia-smi read
# before each round) and keeps the merged base and head timings in CASE/bench/{base,head}.json:
#   clean  base and head are the same clean build (an A/A comparison)
#   slow5  head is built with -DKG_DEFECT_SLOW5 (a few percent slower flash_fwd)
# The live verdicts are kept as CASE/live-speedup.json.
set -u
out=${1:?usage: record-bench.sh OUTDIR KERNEL_GATE_BINARY}
kg=${2:?usage: record-bench.sh OUTDIR KERNEL_GATE_BINARY}
bin=$(mktemp -d)
nvcc -O3 -lineinfo -arch=native -o "$bin/h_clean" kernels/harness.cu &
nvcc -O3 -lineinfo -arch=native -DKG_DEFECT_SLOW5 -o "$bin/h_slow5" kernels/harness.cu &
wait
export KG_KERNELS=flash_fwd,flash_fwd_causal
for c in clean slow5; do
  mkdir -p "$out/$c"
  "$kg" bench run --config kernel-gate.yml --base-cmd "$bin/h_clean" --head-cmd "$bin/h_$c" \
    --shapes small,mission --samples 30 --artifacts "$out/$c/bench" --format json --out "$out/$c/live-speedup.json"
  echo "bench run exit=$?" >"$out/$c/live-exit-bench.txt"
done
rm -rf "$bin"
