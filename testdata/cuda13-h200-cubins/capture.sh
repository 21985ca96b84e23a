#!/usr/bin/env bash
# Captures, on a GPU machine with CUDA 13 (run from the repository root), what kernel-gate
# run's SASS dump reads cubin by cubin (pipeline/sassdump.go): this repository's C++ harness
# built as kernel-gate.yml builds it (each source nvcc -c, sm_89 and sm_90a, then linked),
# cuobjdump --list-elf of it, the files cuobjdump -xelf all writes, nvdisasm -c -hex of the
# smallest kernel cubin (softmax's, sm_90a and sm_89), and the timing of the two ways to dump
# (testdata/timing/sass-dump.sh). Usage: capture.sh OUTDIR
set -u
out=${1:?usage: capture.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
b=$(mktemp -d)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -2
  echo "cuobjdump: $(command -v cuobjdump)"
  echo "nvdisasm: $(command -v nvdisasm) ($(nvdisasm --version | tail -1))"
  echo "cores: $(nproc)"
} >"$out/versions.txt" 2>&1
srcs=$(sed -n 's/^ *sources: \[\(.*\)\].*/\1/p' kernel-gate.yml | head -1 | tr -d ' ' | tr ',' ' ')
objs=
for s in $srcs; do
  o=$b/$(basename "$s").o
  nvcc -O3 -lineinfo -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c "$s" -o "$o" &
  objs="$objs $o"
done
wait
nvcc -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a $objs -o "$b/harness" || exit 1
{ echo "+ cuobjdump --list-elf harness"; cuobjdump --list-elf "$b/harness"; echo "exit=$?"; } >"$out/list-elf.txt" 2>&1
mkdir "$b/x"
{ echo "+ cuobjdump -xelf all harness (in an empty directory)"; (cd "$b/x" && cuobjdump -xelf all "$b/harness"); echo "exit=$?"; echo "+ ls"; ls -l "$b/x"; } >"$out/xelf.txt" 2>&1
for c in "$b"/x/softmax*.cubin; do
  n=$(basename "$c" .cubin)
  { echo "+ nvdisasm -c -hex $n.cubin"; nvdisasm -c -hex "$c"; echo "exit=$?"; } >"$out/nvdisasm_$n.txt" 2>&1
done
sh testdata/timing/sass-dump.sh "$b/harness" 3 >"$out/sass-dump-timing.txt" 2>&1
rm -rf "$b"
