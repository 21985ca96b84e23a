#!/usr/bin/env bash
# Captures Nsight Compute's other CSV layouts (issue 21): --page raw and --print-summary
# per-kernel, beside the --page details captures of this folder (README.md), on the same
# harness and metrics. Run from the repository root on a GPU machine:
#   testdata/ncu-h200/capture-layouts.sh OUTDIR
set -u
out=${1:?usage: capture-layouts.sh OUTDIR}
mkdir -p "$out"
nvcc -O3 -lineinfo -Xptxas -v -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/kg-h kernels/harness.cpp kernels/harness_cases.cpp kernels/harness_device.cu kernels/flash_fwd.cu kernels/gemm_wmma.cu kernels/softmax.cu >/dev/null 2>&1 || { echo "harness build failed"; exit 3; }
M=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size
K="regex:flash_fwd|gemm_wmma|row_softmax"
cap() { local f=$1; shift; { echo "+ $*"; KG_MODE=check KG_SHAPES=mission KG_ROUNDS=1 KG_OUT=/tmp/kg-out.json "$@" 2>&1; echo "exit=$?"; } >"$out/$f"; }
ncu --version >"$out/ncu-version.txt" 2>&1
cap ncu-raw.csv ncu --csv --page raw --clock-control none --print-units base --metrics $M -k "$K" -c 6 /tmp/kg-h
cap ncu-raw-all.csv ncu --csv --page raw --clock-control none -k regex:row_softmax -c 1 /tmp/kg-h
cap ncu-summary-per-kernel.csv ncu --csv --print-summary per-kernel --clock-control none --print-units base --metrics $M -k "$K" -c 6 /tmp/kg-h
cap ncu-summary-per-gpu.csv ncu --csv --print-summary per-gpu --clock-control none --print-units base --metrics $M -k "$K" -c 6 /tmp/kg-h
cap ncu-details-mangled.csv ncu --csv --clock-control none --print-units base --print-kernel-base mangled --metrics $M -k "$K" -c 6 /tmp/kg-h
