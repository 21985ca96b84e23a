#!/usr/bin/env bash
# Captures the CUDA runtime's occupancy answers for the kernels of kernels/ (occupancy.cu),
# built three ways: as the targets build them, with KG_FLASH_MIN_BLOCKS=16 (the "spill"
# recording's registers cap) and with -maxrregcount=128 (a register count past an occupancy
# step). Run from the repository root on a GPU machine:  testdata/occupancy-h200/capture.sh OUTDIR
set -u
out=${1:?usage: capture.sh OUTDIR}
mkdir -p "$out"
src=testdata/occupancy-h200/occupancy.cu
build() { # NAME FLAGS...
  local name=$1; shift
  { echo "+ nvcc -O3 -lineinfo -Xptxas -v -arch=sm_90a $* $src"; nvcc -O3 -lineinfo -Xptxas -v -arch=sm_90a "$@" -DKG_VARIANT="\"$name\"" -o /tmp/occ-$name $src 2>&1; echo "exit=$?"; } >"$out/ptxas-$name.txt"
  /tmp/occ-$name >"$out/occupancy-$name.json" 2>"$out/occupancy-$name.err"; echo "$name exit=$?"
}
build default
build minblocks16 -DKG_FLASH_MIN_BLOCKS=16
build maxrreg128 -maxrregcount=128
