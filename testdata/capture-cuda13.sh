#!/usr/bin/env bash
# Captures the real tool output kept under testdata/cuda13/ (run on a machine with nvcc 13
# and a GPU, from the repository root):  testdata/capture-cuda13.sh OUTDIR
# Every capture file starts with the command that made it, as a "+ cmd" line (like `set -x`).
set -u
out=${1:?usage: capture-cuda13.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
root=$(pwd)
cp kernels/*.cu testdata/cuda/*.cu "$work"/
cd "$work"

# cap FILE CMD...: run CMD, keep its stdout+stderr (and the exit status) in $out/FILE.
cap() { local f=$1; shift; { echo "+ $*"; "$@" 2>&1; echo "exit=$?"; } >"$out/$f"; }
# capsh FILE 'shell line': the same for a pipeline or a build tool.
capsh() { local f=$1; shift; { echo "+ $*"; bash -c "$*" 2>&1; echo "exit=$?"; } >"$out/$f"; }

K="flash_fwd.cu gemm_wmma.cu softmax.cu"
{ nvcc --version; cuobjdump --version; nvdisasm --version; nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv; command -v clang++ && clang++ --version; } >"$out/versions.txt" 2>&1

for a in 80 89 90a; do
  capsh ptxas_kernels_sm$a.txt "for f in $K; do echo + nvcc -gencode arch=compute_$a,code=sm_$a -lineinfo -Xptxas -v -c \$f; nvcc -gencode arch=compute_$a,code=sm_$a -lineinfo -Xptxas -v -c \$f -o /dev/null; done"
done
cap ptxas_flash_multi.txt nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v -c flash_fwd.cu -o flash_multi.o
cap ptxas_flash_spill_sm90a.txt nvcc -arch=sm_90a -lineinfo -Xptxas -v,-warn-spills,-warn-lmem-usage -DKG_FLASH_MIN_BLOCKS=16 -c flash_fwd.cu -o /dev/null
cap ptxas_flash_debug_sm89.txt nvcc -arch=sm_89 -G -Xptxas -v -c flash_fwd.cu -o /dev/null
cap ptxas_dialects_sm80.txt nvcc -arch=sm_80 -lineinfo -Xptxas -v,-warn-lmem-usage -c dialects.cu -o /dev/null
cap ptxas_dialects_resusage_sm90a.txt nvcc -arch=sm_90a --resource-usage -c dialects.cu -o /dev/null
cap ptxas_too_much_smem.txt nvcc -arch=sm_90a -Xptxas -v -c too_much_smem.cu -o /dev/null
cap nvcc_syntax_error.txt nvcc -arch=sm_90a -Xptxas -v -c syntax_error.cu -o /dev/null
cap nvlink_rdc.txt nvcc -arch=sm_90a -rdc=true --resource-usage rdc_a.cu rdc_b.cu -o rdc
cap ptxas_direct.txt bash -c "nvcc -arch=sm_89 -ptx softmax.cu -o softmax.ptx && ptxas -v -arch=sm_89 softmax.ptx -o softmax.cubin"

# Build tools around nvcc: make -j (parallel compiles write to one log) and CMake + Ninja.
printf 'FLAGS = -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v\nall: flash_fwd.o gemm_wmma.o softmax.o\n%%.o: %%.cu\n\tnvcc $(FLAGS) -c $< -o $@\n' >Makefile
capsh build_make_j3.txt "make -j3"
rm -f flash_fwd.o gemm_wmma.o softmax.o
mkdir -p cm && cat >cm/CMakeLists.txt <<CM
cmake_minimum_required(VERSION 3.24)
project(kgcapture LANGUAGES CUDA)
set(CMAKE_CUDA_ARCHITECTURES 89 90a)
add_library(kg OBJECT $work/flash_fwd.cu $work/gemm_wmma.cu $work/softmax.cu)
target_compile_options(kg PRIVATE \$<\$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v -lineinfo>)
CM
capsh build_cmake_ninja.txt "cmake -S cm -B cmb -G Ninja >/dev/null && cmake --build cmb"

# Object-file views: resource usage, SASS (cuobjdump and nvdisasm), for fatbins and cubins.
nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -lineinfo -c gemm_wmma.cu -o gemm_multi.o
cap cuobjdump_res_flash_multi.txt cuobjdump --dump-resource-usage flash_multi.o
cap cuobjdump_sass_flash_multi.txt cuobjdump --dump-sass flash_multi.o
cap cuobjdump_sass_gemm_multi.txt cuobjdump --dump-sass gemm_multi.o
nvcc -cubin -arch=sm_90a -lineinfo softmax.cu -o softmax_sm90a.cubin
nvcc -cubin -arch=sm_90a -lineinfo flash_fwd.cu -o flash_sm90a.cubin
cap cuobjdump_res_cubin.txt cuobjdump -res-usage softmax_sm90a.cubin
cap cuobjdump_sass_cubin_softmax.txt cuobjdump -sass softmax_sm90a.cubin
cap nvdisasm_softmax_sm90a.txt nvdisasm softmax_sm90a.cubin
cap nvdisasm_g_flash_sm90a.txt nvdisasm -g -c flash_sm90a.cubin
nvcc -arch=sm_90a -c dialects.cu -o dialects.o && cap cuobjdump_sass_dialects.txt cuobjdump -sass dialects.o

if command -v clang++ >/dev/null; then
  cap clang_ptxas_sm80.txt clang++ -x cuda --cuda-gpu-arch=sm_80 -Xcuda-ptxas -v -c softmax.cu -o /dev/null
fi

# The kernels must be right before anything gates them.
nvcc -arch=native -O2 -lineinfo selftest.cu -o selftest && cap selftest.txt ./selftest
