#!/usr/bin/env bash
# Records the GPU run that `kernel-gate demo` replays. Run on a machine with nvcc and a GPU,
# from the repository root:
#
#   testdata/replay/record.sh OUTDIR [KERNEL_GATE_BINARY]
#
# For each case it writes OUTDIR/CASE/{build.log,sass.txt,RECORDED}: the nvcc -Xptxas -v build
# of kernels/ for sm_89 and sm_90a (the arches of an L4 and an H100/H200) with the shell's
# xtrace lines, and cuobjdump --dump-sass of the objects it made. With a kernel-gate binary it
# also runs the gates live on that machine, fed straight from nvcc and cuobjdump through pipes
# and asking the real nvcc for its version, and keeps the results as live-*.json and the exit
# codes in live-exit.txt; the replay tests require the replay to agree with them.
set -u
out=${1:?usage: record.sh OUTDIR [KERNEL_GATE_BINARY]}
kg=${2:-}
mkdir -p "$out"
archs="-gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a"
kernels="flash_fwd gemm_wmma softmax"

record_case() {
  local name=$1; shift
  local extra="$*" d="$out/$name" obj
  obj=$(mktemp -d)
  mkdir -p "$d"
  {
    echo "+ nvcc --version"
    nvcc --version
    for k in $kernels; do
      echo "+ nvcc $archs -lineinfo -Xptxas -v $extra -c kernels/$k.cu -o $k.o"
      nvcc $archs -lineinfo -Xptxas -v $extra -c "kernels/$k.cu" -o "$obj/$k.o"
    done
  } >"$d/build.log" 2>&1
  for k in $kernels; do
    (cd "$obj" && cuobjdump --dump-sass "$k.o")
  done >"$d/sass.txt" 2>&1
  printf 'recorded %s on %s (%s), nvcc %s, by testdata/replay/record.sh\n' "$(date -u +%F)" \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
    "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1 | sed 's/^/driver /')" \
    "$(nvcc --version | sed -n 's/.*, V//p')" >"$d/RECORDED"
  if [ -n "$kg" ]; then
    # Live: the gates read the tools' output as it is produced, and ask nvcc for its version.
    for k in $kernels; do
      nvcc $archs -lineinfo -Xptxas -v $extra -c "kernels/$k.cu" -o "$obj/$k.o" 2>&1
    done | "$kg" ptxas --config kernel-gate.yml --format json --out "$d/live-ptxas.json" -
    echo "ptxas exit=$?" >"$d/live-exit.txt"
    for k in $kernels; do cuobjdump --dump-sass "$obj/$k.o"; done |
      "$kg" sass --config kernel-gate.yml --format json --out "$d/live-sass.json" --sass -
    echo "sass exit=$?" >>"$d/live-exit.txt"
  fi
  rm -rf "$obj"
}

record_case clean
# The register-spilling tile config: __launch_bounds__ promising 16 blocks per SM caps
# flash_fwd at 32 registers.
record_case spill -DKG_FLASH_MIN_BLOCKS=16
