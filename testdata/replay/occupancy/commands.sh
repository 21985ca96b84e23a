#!/bin/sh
# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).
(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >/root/out/rec/occupancy/gpu.csv.plain 2>&1)
git -C /tmp/tmp.GLQ5riMVuH/repo worktree add --detach /tmp/kernel-gate-base-1842885699/base 93f35d91baf4e3174d7fba9aa3763a293796fc7b >/dev/null 2>&1
(nvcc --version >/root/out/rec/occupancy/nvcc-version.txt.plain 2>&1)
(
(cd /tmp/kernel-gate-base-1842885699/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/occupancy/base/attention/compile/0.o kernels/harness.cpp >/root/out/rec/occupancy/base/attention/compile/0.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1842885699/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/occupancy/base/attention/compile/1.o kernels/harness_cases.cpp >/root/out/rec/occupancy/base/attention/compile/1.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1842885699/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/occupancy/base/attention/compile/2.o kernels/harness_device.cu >/root/out/rec/occupancy/base/attention/compile/2.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1842885699/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/occupancy/base/attention/compile/3.o kernels/flash_fwd.cu >/root/out/rec/occupancy/base/attention/compile/3.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1842885699/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/occupancy/base/attention/compile/4.o kernels/gemm_wmma.cu >/root/out/rec/occupancy/base/attention/compile/4.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1842885699/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/occupancy/base/attention/compile/5.o kernels/softmax.cu >/root/out/rec/occupancy/base/attention/compile/5.log.plain 2>&1) &
wait
cd /tmp/kernel-gate-base-1842885699/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /root/out/rec/occupancy/base/attention/harness /root/out/rec/occupancy/base/attention/compile/0.o /root/out/rec/occupancy/base/attention/compile/1.o /root/out/rec/occupancy/base/attention/compile/2.o /root/out/rec/occupancy/base/attention/compile/3.o /root/out/rec/occupancy/base/attention/compile/4.o /root/out/rec/occupancy/base/attention/compile/5.o >/root/out/rec/occupancy/base/attention/build.log.plain 2>&1
) &
(
(cd /tmp/tmp.GLQ5riMVuH/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/occupancy/head/attention/compile/0.o kernels/harness.cpp >/root/out/rec/occupancy/head/attention/compile/0.log.plain 2>&1) &
(cd /tmp/tmp.GLQ5riMVuH/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/occupancy/head/attention/compile/1.o kernels/harness_cases.cpp >/root/out/rec/occupancy/head/attention/compile/1.log.plain 2>&1) &
(cd /tmp/tmp.GLQ5riMVuH/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/occupancy/head/attention/compile/2.o kernels/harness_device.cu >/root/out/rec/occupancy/head/attention/compile/2.log.plain 2>&1) &
(cd /tmp/tmp.GLQ5riMVuH/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/occupancy/head/attention/compile/3.o kernels/flash_fwd.cu >/root/out/rec/occupancy/head/attention/compile/3.log.plain 2>&1) &
(cd /tmp/tmp.GLQ5riMVuH/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/occupancy/head/attention/compile/4.o kernels/gemm_wmma.cu >/root/out/rec/occupancy/head/attention/compile/4.log.plain 2>&1) &
(cd /tmp/tmp.GLQ5riMVuH/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/occupancy/head/attention/compile/5.o kernels/softmax.cu >/root/out/rec/occupancy/head/attention/compile/5.log.plain 2>&1) &
wait
cd /tmp/tmp.GLQ5riMVuH/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /root/out/rec/occupancy/head/attention/harness /root/out/rec/occupancy/head/attention/compile/0.o /root/out/rec/occupancy/head/attention/compile/1.o /root/out/rec/occupancy/head/attention/compile/2.o /root/out/rec/occupancy/head/attention/compile/3.o /root/out/rec/occupancy/head/attention/compile/4.o /root/out/rec/occupancy/head/attention/compile/5.o >/root/out/rec/occupancy/head/attention/build.log.plain 2>&1
) &
wait
(cuobjdump --list-elf /root/out/rec/occupancy/base/attention/harness >/root/out/rec/occupancy/base/attention/list-elf.txt.plain 2>&1) &
(cuobjdump --list-elf /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/head/attention/list-elf.txt.plain 2>&1) &
wait
(mkdir -p /root/out/rec/occupancy/base/attention/cubins && cd /root/out/rec/occupancy/base/attention/cubins && cuobjdump -xelf all /root/out/rec/occupancy/base/attention/harness >/root/out/rec/occupancy/base/attention/xelf.txt.plain 2>&1) &
(mkdir -p /root/out/rec/occupancy/head/attention/cubins && cd /root/out/rec/occupancy/head/attention/cubins && cuobjdump -xelf all /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/head/attention/xelf.txt.plain 2>&1) &
wait
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/0-1-2-3-4-5.sm_89.cubin >/root/out/rec/occupancy/base/attention/sass/1.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/0-1-2-3-4-5.sm_90a.cubin >/root/out/rec/occupancy/base/attention/sass/2.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/harness_device.sm_89.cubin >/root/out/rec/occupancy/base/attention/sass/3.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/harness_device.sm_90a.cubin >/root/out/rec/occupancy/base/attention/sass/4.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/flash_fwd.sm_89.cubin >/root/out/rec/occupancy/base/attention/sass/5.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/flash_fwd.sm_90a.cubin >/root/out/rec/occupancy/base/attention/sass/6.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/gemm_wmma.sm_89.cubin >/root/out/rec/occupancy/base/attention/sass/7.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/gemm_wmma.sm_90a.cubin >/root/out/rec/occupancy/base/attention/sass/8.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/softmax.sm_89.cubin >/root/out/rec/occupancy/base/attention/sass/9.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/base/attention/cubins/softmax.sm_90a.cubin >/root/out/rec/occupancy/base/attention/sass/10.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/0-1-2-3-4-5.sm_89.cubin >/root/out/rec/occupancy/head/attention/sass/1.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/0-1-2-3-4-5.sm_90a.cubin >/root/out/rec/occupancy/head/attention/sass/2.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/harness_device.sm_89.cubin >/root/out/rec/occupancy/head/attention/sass/3.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/harness_device.sm_90a.cubin >/root/out/rec/occupancy/head/attention/sass/4.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/flash_fwd.sm_89.cubin >/root/out/rec/occupancy/head/attention/sass/5.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/flash_fwd.sm_90a.cubin >/root/out/rec/occupancy/head/attention/sass/6.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/gemm_wmma.sm_89.cubin >/root/out/rec/occupancy/head/attention/sass/7.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/gemm_wmma.sm_90a.cubin >/root/out/rec/occupancy/head/attention/sass/8.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/softmax.sm_89.cubin >/root/out/rec/occupancy/head/attention/sass/9.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/occupancy/head/attention/cubins/softmax.sm_90a.cubin >/root/out/rec/occupancy/head/attention/sass/10.txt.plain 2>&1) &
wait
(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits >/root/out/rec/occupancy/gpu-memory.txt.plain 2>&1)
(
cd /tmp/tmp.GLQ5riMVuH/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=flash_fwd,flash_fwd_causal KG_ROUNDS=3 KG_OUT=/root/out/rec/occupancy/attention/check.json /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/attention/check.log.plain 2>&1
) &
(
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/root/out/rec/occupancy/gemm/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /root/out/rec/occupancy/gemm/sanitize/memcheck.xml.plain --log-file /root/out/rec/occupancy/gemm/sanitize/memcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/gemm/sanitize/memcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/root/out/rec/occupancy/gemm/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /root/out/rec/occupancy/gemm/sanitize/racecheck.xml.plain --log-file /root/out/rec/occupancy/gemm/sanitize/racecheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/gemm/sanitize/racecheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/root/out/rec/occupancy/gemm/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /root/out/rec/occupancy/gemm/sanitize/initcheck.xml.plain --log-file /root/out/rec/occupancy/gemm/sanitize/initcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/gemm/sanitize/initcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/root/out/rec/occupancy/gemm/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /root/out/rec/occupancy/gemm/sanitize/synccheck.xml.plain --log-file /root/out/rec/occupancy/gemm/sanitize/synccheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/gemm/sanitize/synccheck.out.plain 2>&1
cd /tmp/tmp.GLQ5riMVuH/repo && env KG_MODE=check KG_SHAPES=small,mission KG_KERNELS=gemm_wmma KG_ROUNDS=3 KG_OUT=/root/out/rec/occupancy/gemm/check.json /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/gemm/check.log.plain 2>&1
) &
(
cd /tmp/tmp.GLQ5riMVuH/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=row_softmax KG_ROUNDS=3 KG_OUT=/root/out/rec/occupancy/softmax/check.json /root/out/rec/occupancy/head/attention/harness >/root/out/rec/occupancy/softmax/check.log.plain 2>&1
) &
wait
for first in $(seq 1 16 16); do
  last=$((first + 15)); [ $last -le 16 ] || last=16
  reflast=$((last < 16 ? last : 16))
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,nounits >/dev/null
  for s in $(seq 0 3); do
    { printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' $round; done; } | (cd /tmp/kernel-gate-base-1842885699/base && env KG_KERNELS=gemm_wmma KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/occupancy/gemm/bench/base.plain.json KG_SERVE_FD=3 KG_SHAPES=mission /root/out/rec/occupancy/base/attention/harness 3>>/root/out/rec/occupancy/gemm/bench/base-answers.plain) >>/root/out/rec/occupancy/gemm/bench/base-harness.log.plain 2>&1
    { printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' $round; done; } | (cd /tmp/tmp.GLQ5riMVuH/repo && env KG_KERNELS=gemm_wmma KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/occupancy/gemm/bench/head.plain.json KG_SERVE_FD=3 KG_SHAPES=mission /root/out/rec/occupancy/head/attention/harness 3>>/root/out/rec/occupancy/gemm/bench/head-answers.plain) >>/root/out/rec/occupancy/gemm/bench/head-harness.log.plain 2>&1
  done
done
git -C /tmp/tmp.GLQ5riMVuH/repo worktree remove --force /tmp/kernel-gate-base-1842885699/base
rm -rf /tmp/kernel-gate-base-1842885699
