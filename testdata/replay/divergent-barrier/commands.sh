#!/bin/sh
# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).
(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >/root/out/rec/divergent-barrier/gpu.csv.plain 2>&1)
git -C /tmp/tmp.2MGJcR2rnW/repo worktree add --detach /tmp/kernel-gate-base-426000832/base 827f3c034ae72426a4bb7f1fa2444e0bc6b7e26a >/dev/null 2>&1
(nvcc --version >/root/out/rec/divergent-barrier/nvcc-version.txt.plain 2>&1)
(
(cd /tmp/kernel-gate-base-426000832/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/divergent-barrier/base/attention/compile/0.o kernels/harness.cpp >/root/out/rec/divergent-barrier/base/attention/compile/0.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-426000832/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/divergent-barrier/base/attention/compile/1.o kernels/harness_cases.cpp >/root/out/rec/divergent-barrier/base/attention/compile/1.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-426000832/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/divergent-barrier/base/attention/compile/2.o kernels/harness_device.cu >/root/out/rec/divergent-barrier/base/attention/compile/2.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-426000832/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/divergent-barrier/base/attention/compile/3.o kernels/flash_fwd.cu >/root/out/rec/divergent-barrier/base/attention/compile/3.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-426000832/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/divergent-barrier/base/attention/compile/4.o kernels/gemm_wmma.cu >/root/out/rec/divergent-barrier/base/attention/compile/4.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-426000832/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/divergent-barrier/base/attention/compile/5.o kernels/softmax.cu >/root/out/rec/divergent-barrier/base/attention/compile/5.log.plain 2>&1) &
wait
cd /tmp/kernel-gate-base-426000832/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /root/out/rec/divergent-barrier/base/attention/harness /root/out/rec/divergent-barrier/base/attention/compile/0.o /root/out/rec/divergent-barrier/base/attention/compile/1.o /root/out/rec/divergent-barrier/base/attention/compile/2.o /root/out/rec/divergent-barrier/base/attention/compile/3.o /root/out/rec/divergent-barrier/base/attention/compile/4.o /root/out/rec/divergent-barrier/base/attention/compile/5.o >/root/out/rec/divergent-barrier/base/attention/build.log.plain 2>&1
) &
(
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/divergent-barrier/head/attention/compile/0.o kernels/harness.cpp >/root/out/rec/divergent-barrier/head/attention/compile/0.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/divergent-barrier/head/attention/compile/1.o kernels/harness_cases.cpp >/root/out/rec/divergent-barrier/head/attention/compile/1.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/divergent-barrier/head/attention/compile/2.o kernels/harness_device.cu >/root/out/rec/divergent-barrier/head/attention/compile/2.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/divergent-barrier/head/attention/compile/3.o kernels/flash_fwd.cu >/root/out/rec/divergent-barrier/head/attention/compile/3.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/divergent-barrier/head/attention/compile/4.o kernels/gemm_wmma.cu >/root/out/rec/divergent-barrier/head/attention/compile/4.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/divergent-barrier/head/attention/compile/5.o kernels/softmax.cu >/root/out/rec/divergent-barrier/head/attention/compile/5.log.plain 2>&1) &
wait
cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /root/out/rec/divergent-barrier/head/attention/harness /root/out/rec/divergent-barrier/head/attention/compile/0.o /root/out/rec/divergent-barrier/head/attention/compile/1.o /root/out/rec/divergent-barrier/head/attention/compile/2.o /root/out/rec/divergent-barrier/head/attention/compile/3.o /root/out/rec/divergent-barrier/head/attention/compile/4.o /root/out/rec/divergent-barrier/head/attention/compile/5.o >/root/out/rec/divergent-barrier/head/attention/build.log.plain 2>&1
) &
wait
(cuobjdump --list-elf /root/out/rec/divergent-barrier/base/attention/harness >/root/out/rec/divergent-barrier/base/attention/list-elf.txt.plain 2>&1) &
(cuobjdump --list-elf /root/out/rec/divergent-barrier/head/attention/harness >/root/out/rec/divergent-barrier/head/attention/list-elf.txt.plain 2>&1) &
wait
(mkdir -p /root/out/rec/divergent-barrier/base/attention/cubins && cd /root/out/rec/divergent-barrier/base/attention/cubins && cuobjdump -xelf all /root/out/rec/divergent-barrier/base/attention/harness >/root/out/rec/divergent-barrier/base/attention/xelf.txt.plain 2>&1) &
(mkdir -p /root/out/rec/divergent-barrier/head/attention/cubins && cd /root/out/rec/divergent-barrier/head/attention/cubins && cuobjdump -xelf all /root/out/rec/divergent-barrier/head/attention/harness >/root/out/rec/divergent-barrier/head/attention/xelf.txt.plain 2>&1) &
wait
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/0-1-2-3-4-5.sm_89.cubin >/root/out/rec/divergent-barrier/base/attention/sass/1.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/0-1-2-3-4-5.sm_90a.cubin >/root/out/rec/divergent-barrier/base/attention/sass/2.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/harness_device.sm_89.cubin >/root/out/rec/divergent-barrier/base/attention/sass/3.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/harness_device.sm_90a.cubin >/root/out/rec/divergent-barrier/base/attention/sass/4.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/flash_fwd.sm_89.cubin >/root/out/rec/divergent-barrier/base/attention/sass/5.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/flash_fwd.sm_90a.cubin >/root/out/rec/divergent-barrier/base/attention/sass/6.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/gemm_wmma.sm_89.cubin >/root/out/rec/divergent-barrier/base/attention/sass/7.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/gemm_wmma.sm_90a.cubin >/root/out/rec/divergent-barrier/base/attention/sass/8.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/softmax.sm_89.cubin >/root/out/rec/divergent-barrier/base/attention/sass/9.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/base/attention/cubins/softmax.sm_90a.cubin >/root/out/rec/divergent-barrier/base/attention/sass/10.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/0-1-2-3-4-5.sm_89.cubin >/root/out/rec/divergent-barrier/head/attention/sass/1.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/0-1-2-3-4-5.sm_90a.cubin >/root/out/rec/divergent-barrier/head/attention/sass/2.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/harness_device.sm_89.cubin >/root/out/rec/divergent-barrier/head/attention/sass/3.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/harness_device.sm_90a.cubin >/root/out/rec/divergent-barrier/head/attention/sass/4.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/flash_fwd.sm_89.cubin >/root/out/rec/divergent-barrier/head/attention/sass/5.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/flash_fwd.sm_90a.cubin >/root/out/rec/divergent-barrier/head/attention/sass/6.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/gemm_wmma.sm_89.cubin >/root/out/rec/divergent-barrier/head/attention/sass/7.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/gemm_wmma.sm_90a.cubin >/root/out/rec/divergent-barrier/head/attention/sass/8.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/softmax.sm_89.cubin >/root/out/rec/divergent-barrier/head/attention/sass/9.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/divergent-barrier/head/attention/cubins/softmax.sm_90a.cubin >/root/out/rec/divergent-barrier/head/attention/sass/10.txt.plain 2>&1) &
wait
(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits >/root/out/rec/divergent-barrier/gpu-memory.txt.plain 2>&1)
(
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/root/out/rec/divergent-barrier/attention/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /root/out/rec/divergent-barrier/attention/sanitize/memcheck.xml.plain --log-file /root/out/rec/divergent-barrier/attention/sanitize/memcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /root/out/rec/divergent-barrier/head/attention/harness >/root/out/rec/divergent-barrier/attention/sanitize/memcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/root/out/rec/divergent-barrier/attention/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /root/out/rec/divergent-barrier/attention/sanitize/racecheck.xml.plain --log-file /root/out/rec/divergent-barrier/attention/sanitize/racecheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /root/out/rec/divergent-barrier/head/attention/harness >/root/out/rec/divergent-barrier/attention/sanitize/racecheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/root/out/rec/divergent-barrier/attention/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /root/out/rec/divergent-barrier/attention/sanitize/initcheck.xml.plain --log-file /root/out/rec/divergent-barrier/attention/sanitize/initcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/divergent-barrier/head/attention/harness >/root/out/rec/divergent-barrier/attention/sanitize/initcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/root/out/rec/divergent-barrier/attention/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /root/out/rec/divergent-barrier/attention/sanitize/synccheck.xml.plain --log-file /root/out/rec/divergent-barrier/attention/sanitize/synccheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/divergent-barrier/head/attention/harness >/root/out/rec/divergent-barrier/attention/sanitize/synccheck.out.plain 2>&1
) &
(
cd /tmp/tmp.2MGJcR2rnW/repo && env KG_MODE=check KG_SHAPES=small,mission KG_KERNELS=gemm_wmma KG_ROUNDS=3 KG_OUT=/root/out/rec/divergent-barrier/gemm/check.json /root/out/rec/divergent-barrier/head/attention/harness >/root/out/rec/divergent-barrier/gemm/check.log.plain 2>&1
) &
(
cd /tmp/tmp.2MGJcR2rnW/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=row_softmax KG_ROUNDS=3 KG_OUT=/root/out/rec/divergent-barrier/softmax/check.json /root/out/rec/divergent-barrier/head/attention/harness >/root/out/rec/divergent-barrier/softmax/check.log.plain 2>&1
) &
wait
git -C /tmp/tmp.2MGJcR2rnW/repo worktree remove --force /tmp/kernel-gate-base-426000832/base
rm -rf /tmp/kernel-gate-base-426000832
