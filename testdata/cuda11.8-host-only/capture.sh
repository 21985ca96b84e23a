#!/usr/bin/env bash
# Captures what nvcc prints for a host-only source (a .cpp, which nvcc hands to the host
# compiler alone: no cudafe++, cicc or ptxas) compiled as kernel-gate run compiles one of a
# target's sources apart (nvcc -lineinfo -Xptxas -v, two -gencode, --threads 2, -c): the
# harness's driver, kernels/harness.cpp, and testdata/cuda/host_only_error.cpp, which does not
# compile. Needs nvcc and a host compiler, no GPU. From the repository root:
#   testdata/cuda11.8-host-only/capture.sh OUTDIR
# Every capture file starts with the command that made it, as a "+ cmd" line, and ends with
# "exit=N" (as testdata/capture-cuda13.sh's).
set -u
out=${1:?usage: capture.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp kernels/*.cpp kernels/*.h kernels/*.cuh testdata/cuda/host_only_error.cpp "$work"/
cd "$work" || exit 2
cap() { local f=$1; shift; { echo "+ $*"; "$@" 2>&1; echo "exit=$?"; } >"$out/$f"; }
F="-lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 --threads 2"
{ nvcc --version; c++ --version; } >"$out/versions.txt" 2>&1
# shellcheck disable=SC2086 # F is words
cap nvcc_host_only.txt nvcc $F -c -o harness.o harness.cpp
# shellcheck disable=SC2086
cap nvcc_host_only_error.txt nvcc $F -c -o host_only_error.o host_only_error.cpp
