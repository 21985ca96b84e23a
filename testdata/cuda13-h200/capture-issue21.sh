#!/usr/bin/env bash
# Captures the ptxas and nvdisasm dialects issue 21 names, with the CUDA 13 toolkit:
# a device function printed before the first entry function (devfirst.cu, three archs),
# ptxas's limit warnings (ptxas_limits.cu, -maxrregcount beyond 255) and nvdisasm of
# sm_80 and sm_89 cubins (does it print .sectioninfo @"SHI_REGISTERS=N" there?).
# Run from the repository root:  testdata/cuda13-h200/capture-issue21.sh OUTDIR
set -u
out=${1:?usage: capture-issue21.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp testdata/cuda/devfirst.cu testdata/cuda/ptxas_limits.cu kernels/softmax.cu "$work"/
cd "$work"
cap() { local f=$1; shift; { echo "+ $*"; "$@" 2>&1; echo "exit=$?"; } >"$out/$f"; }
cap ptxas_devfirst_multi.txt nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v -c devfirst.cu -o devfirst.o
cap ptxas_limits_sm90a.txt nvcc -arch=sm_90a -lineinfo -Xptxas -v,-warn-spills,-warn-lmem-usage -c ptxas_limits.cu -o /dev/null
cap ptxas_maxrreg300_sm90a.txt nvcc -arch=sm_90a -maxrregcount=300 -Xptxas -v -c ptxas_limits.cu -o /dev/null
cap ptxas_maxrreg8_sm80.txt nvcc -arch=sm_80 -maxrregcount=8 -Xptxas -v -c ptxas_limits.cu -o /dev/null
for a in 80 89; do
  nvcc -cubin -arch=sm_$a -lineinfo -o softmax_sm$a.cubin softmax.cu && cap nvdisasm_softmax_sm$a.txt nvdisasm softmax_sm$a.cubin
done
nvcc -cubin -arch=sm_90a -o devfirst_sm90a.cubin devfirst.cu && cap nvdisasm_devfirst_sm90a.txt nvdisasm devfirst_sm90a.cubin
grep -l sectioninfo "$out"/nvdisasm_* || echo "no .sectioninfo line in any nvdisasm capture"
