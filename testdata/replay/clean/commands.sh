#!/bin/sh
# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).
(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >/root/out/rec/clean/gpu.csv.plain 2>&1)
git -C /tmp/tmp.2MGJcR2rnW/repo worktree add --detach /tmp/kernel-gate-base-1462599868/base 827f3c034ae72426a4bb7f1fa2444e0bc6b7e26a >/dev/null 2>&1
(nvcc --version >/root/out/rec/clean/nvcc-version.txt.plain 2>&1)
(
(cd /tmp/kernel-gate-base-1462599868/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/clean/base/attention/compile/0.o kernels/harness.cpp >/root/out/rec/clean/base/attention/compile/0.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1462599868/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/clean/base/attention/compile/1.o kernels/harness_cases.cpp >/root/out/rec/clean/base/attention/compile/1.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1462599868/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/clean/base/attention/compile/2.o kernels/harness_device.cu >/root/out/rec/clean/base/attention/compile/2.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1462599868/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/clean/base/attention/compile/3.o kernels/flash_fwd.cu >/root/out/rec/clean/base/attention/compile/3.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1462599868/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/clean/base/attention/compile/4.o kernels/gemm_wmma.cu >/root/out/rec/clean/base/attention/compile/4.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-1462599868/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/clean/base/attention/compile/5.o kernels/softmax.cu >/root/out/rec/clean/base/attention/compile/5.log.plain 2>&1) &
wait
cd /tmp/kernel-gate-base-1462599868/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /root/out/rec/clean/base/attention/harness /root/out/rec/clean/base/attention/compile/0.o /root/out/rec/clean/base/attention/compile/1.o /root/out/rec/clean/base/attention/compile/2.o /root/out/rec/clean/base/attention/compile/3.o /root/out/rec/clean/base/attention/compile/4.o /root/out/rec/clean/base/attention/compile/5.o >/root/out/rec/clean/base/attention/build.log.plain 2>&1
) &
(
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/clean/head/attention/compile/0.o kernels/harness.cpp >/root/out/rec/clean/head/attention/compile/0.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -c -o /root/out/rec/clean/head/attention/compile/1.o kernels/harness_cases.cpp >/root/out/rec/clean/head/attention/compile/1.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/clean/head/attention/compile/2.o kernels/harness_device.cu >/root/out/rec/clean/head/attention/compile/2.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/clean/head/attention/compile/3.o kernels/flash_fwd.cu >/root/out/rec/clean/head/attention/compile/3.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/clean/head/attention/compile/4.o kernels/gemm_wmma.cu >/root/out/rec/clean/head/attention/compile/4.log.plain 2>&1) &
(cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a --threads 2 -c -o /root/out/rec/clean/head/attention/compile/5.o kernels/softmax.cu >/root/out/rec/clean/head/attention/compile/5.log.plain 2>&1) &
wait
cd /tmp/tmp.2MGJcR2rnW/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /root/out/rec/clean/head/attention/harness /root/out/rec/clean/head/attention/compile/0.o /root/out/rec/clean/head/attention/compile/1.o /root/out/rec/clean/head/attention/compile/2.o /root/out/rec/clean/head/attention/compile/3.o /root/out/rec/clean/head/attention/compile/4.o /root/out/rec/clean/head/attention/compile/5.o >/root/out/rec/clean/head/attention/build.log.plain 2>&1
) &
wait
(cuobjdump --list-elf /root/out/rec/clean/base/attention/harness >/root/out/rec/clean/base/attention/list-elf.txt.plain 2>&1) &
(cuobjdump --list-elf /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/head/attention/list-elf.txt.plain 2>&1) &
wait
(mkdir -p /root/out/rec/clean/base/attention/cubins && cd /root/out/rec/clean/base/attention/cubins && cuobjdump -xelf all /root/out/rec/clean/base/attention/harness >/root/out/rec/clean/base/attention/xelf.txt.plain 2>&1) &
(mkdir -p /root/out/rec/clean/head/attention/cubins && cd /root/out/rec/clean/head/attention/cubins && cuobjdump -xelf all /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/head/attention/xelf.txt.plain 2>&1) &
wait
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/0-1-2-3-4-5.sm_89.cubin >/root/out/rec/clean/base/attention/sass/1.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/0-1-2-3-4-5.sm_90a.cubin >/root/out/rec/clean/base/attention/sass/2.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/harness_device.sm_89.cubin >/root/out/rec/clean/base/attention/sass/3.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/harness_device.sm_90a.cubin >/root/out/rec/clean/base/attention/sass/4.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/flash_fwd.sm_89.cubin >/root/out/rec/clean/base/attention/sass/5.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/flash_fwd.sm_90a.cubin >/root/out/rec/clean/base/attention/sass/6.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/gemm_wmma.sm_89.cubin >/root/out/rec/clean/base/attention/sass/7.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/gemm_wmma.sm_90a.cubin >/root/out/rec/clean/base/attention/sass/8.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/softmax.sm_89.cubin >/root/out/rec/clean/base/attention/sass/9.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/base/attention/cubins/softmax.sm_90a.cubin >/root/out/rec/clean/base/attention/sass/10.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/0-1-2-3-4-5.sm_89.cubin >/root/out/rec/clean/head/attention/sass/1.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/0-1-2-3-4-5.sm_90a.cubin >/root/out/rec/clean/head/attention/sass/2.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/harness_device.sm_89.cubin >/root/out/rec/clean/head/attention/sass/3.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/harness_device.sm_90a.cubin >/root/out/rec/clean/head/attention/sass/4.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/flash_fwd.sm_89.cubin >/root/out/rec/clean/head/attention/sass/5.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/flash_fwd.sm_90a.cubin >/root/out/rec/clean/head/attention/sass/6.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/gemm_wmma.sm_89.cubin >/root/out/rec/clean/head/attention/sass/7.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/gemm_wmma.sm_90a.cubin >/root/out/rec/clean/head/attention/sass/8.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/softmax.sm_89.cubin >/root/out/rec/clean/head/attention/sass/9.txt.plain 2>&1) &
(/usr/local/cuda/bin/nvdisasm -c -hex /root/out/rec/clean/head/attention/cubins/softmax.sm_90a.cubin >/root/out/rec/clean/head/attention/sass/10.txt.plain 2>&1) &
wait
(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits >/root/out/rec/clean/gpu-memory.txt.plain 2>&1)
(
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/root/out/rec/clean/attention/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /root/out/rec/clean/attention/sanitize/memcheck.xml.plain --log-file /root/out/rec/clean/attention/sanitize/memcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/attention/sanitize/memcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/root/out/rec/clean/attention/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /root/out/rec/clean/attention/sanitize/racecheck.xml.plain --log-file /root/out/rec/clean/attention/sanitize/racecheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/attention/sanitize/racecheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/root/out/rec/clean/attention/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /root/out/rec/clean/attention/sanitize/initcheck.xml.plain --log-file /root/out/rec/clean/attention/sanitize/initcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/attention/sanitize/initcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/root/out/rec/clean/attention/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /root/out/rec/clean/attention/sanitize/synccheck.xml.plain --log-file /root/out/rec/clean/attention/sanitize/synccheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/attention/sanitize/synccheck.out.plain 2>&1
cd /tmp/tmp.2MGJcR2rnW/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=flash_fwd,flash_fwd_causal KG_ROUNDS=3 KG_OUT=/root/out/rec/clean/attention/check.json /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/attention/check.log.plain 2>&1
) &
(
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/root/out/rec/clean/gemm/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /root/out/rec/clean/gemm/sanitize/memcheck.xml.plain --log-file /root/out/rec/clean/gemm/sanitize/memcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/gemm/sanitize/memcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/root/out/rec/clean/gemm/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /root/out/rec/clean/gemm/sanitize/racecheck.xml.plain --log-file /root/out/rec/clean/gemm/sanitize/racecheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/gemm/sanitize/racecheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/root/out/rec/clean/gemm/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /root/out/rec/clean/gemm/sanitize/initcheck.xml.plain --log-file /root/out/rec/clean/gemm/sanitize/initcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/gemm/sanitize/initcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/root/out/rec/clean/gemm/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /root/out/rec/clean/gemm/sanitize/synccheck.xml.plain --log-file /root/out/rec/clean/gemm/sanitize/synccheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/gemm/sanitize/synccheck.out.plain 2>&1
cd /tmp/tmp.2MGJcR2rnW/repo && env KG_MODE=check KG_SHAPES=small,mission KG_KERNELS=gemm_wmma KG_ROUNDS=3 KG_OUT=/root/out/rec/clean/gemm/check.json /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/gemm/check.log.plain 2>&1
) &
(
env KG_SHAPES=small KG_KERNELS=row_softmax KG_MODE=sanitize KG_OUT=/root/out/rec/clean/softmax/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /root/out/rec/clean/softmax/sanitize/memcheck.xml.plain --log-file /root/out/rec/clean/softmax/sanitize/memcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/softmax/sanitize/memcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=row_softmax KG_MODE=sanitize KG_OUT=/root/out/rec/clean/softmax/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /root/out/rec/clean/softmax/sanitize/racecheck.xml.plain --log-file /root/out/rec/clean/softmax/sanitize/racecheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/softmax/sanitize/racecheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=row_softmax KG_MODE=sanitize KG_OUT=/root/out/rec/clean/softmax/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /root/out/rec/clean/softmax/sanitize/initcheck.xml.plain --log-file /root/out/rec/clean/softmax/sanitize/initcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/softmax/sanitize/initcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=row_softmax KG_MODE=sanitize KG_OUT=/root/out/rec/clean/softmax/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /root/out/rec/clean/softmax/sanitize/synccheck.xml.plain --log-file /root/out/rec/clean/softmax/sanitize/synccheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/softmax/sanitize/synccheck.out.plain 2>&1
cd /tmp/tmp.2MGJcR2rnW/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=row_softmax KG_ROUNDS=3 KG_OUT=/root/out/rec/clean/softmax/check.json /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/softmax/check.log.plain 2>&1
) &
wait
for first in $(seq 1 16 16); do
  last=$((first + 15)); [ $last -le 16 ] || last=16
  reflast=$((last < 16 ? last : 16))
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,nounits >/dev/null
  for s in $(seq 0 3); do
    { printf '{"round": %d, "samples": 30, "shapes": ["mission","long"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission","long"]}\n' $round; done; } | (cd /tmp/kernel-gate-base-1462599868/base && env KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/clean/attention/bench/base.plain.json KG_SERVE_FD=3 KG_SHAPES=mission,long /root/out/rec/clean/base/attention/harness 3>>/root/out/rec/clean/attention/bench/base-answers.plain) >>/root/out/rec/clean/attention/bench/base-harness.log.plain 2>&1
    { printf '{"round": %d, "samples": 30, "shapes": ["mission","long"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission","long"]}\n' $round; done; } | (cd /tmp/tmp.2MGJcR2rnW/repo && env KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/clean/attention/bench/head.plain.json KG_SERVE_FD=3 KG_SHAPES=mission,long /root/out/rec/clean/head/attention/harness 3>>/root/out/rec/clean/attention/bench/head-answers.plain) >>/root/out/rec/clean/attention/bench/head-harness.log.plain 2>&1
  [ $first -gt 16 ] ||    { printf '{"round": %d, "samples": 30, "shapes": ["mission","long"]}\n' 0; for round in $(seq $((first + s)) 4 $reflast); do printf '{"round": %d, "samples": 30, "shapes": ["mission","long"]}\n' $round; done; } | (cd /tmp/tmp.2MGJcR2rnW/repo && env KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/clean/attention/bench/reference.plain.json KG_SERVE_FD=3 KG_SHAPES=mission,long sh -c 'python3 kernels/sdpa_reference.py' 3>>/root/out/rec/clean/attention/bench/reference-answers.plain) >>/root/out/rec/clean/attention/bench/reference-harness.log.plain 2>&1
  done
done
env KG_KERNELS=flash_fwd,flash_fwd_causal,row_softmax KG_MODE=check KG_ROUNDS=1 KG_OUT=/root/out/rec/clean/attention/ncu-together/harness-ncu.json.plain KG_SHAPES=mission ncu --csv --clock-control none --print-units base --print-kernel-base mangled --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active -k 'regex:flash_fwd|row_softmax' -c 64 /root/out/rec/clean/head/attention/harness >/root/out/rec/clean/attention/ncu-together/ncu.log.plain 2>&1
for first in $(seq 1 16 16); do
  last=$((first + 15)); [ $last -le 16 ] || last=16
  reflast=$((last < 16 ? last : 16))
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,nounits >/dev/null
  for s in $(seq 0 3); do
    { printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' $round; done; } | (cd /tmp/kernel-gate-base-1462599868/base && env KG_KERNELS=gemm_wmma KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/clean/gemm/bench/base.plain.json KG_SERVE_FD=3 KG_SHAPES=mission /root/out/rec/clean/base/attention/harness 3>>/root/out/rec/clean/gemm/bench/base-answers.plain) >>/root/out/rec/clean/gemm/bench/base-harness.log.plain 2>&1
    { printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' $round; done; } | (cd /tmp/tmp.2MGJcR2rnW/repo && env KG_KERNELS=gemm_wmma KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/clean/gemm/bench/head.plain.json KG_SERVE_FD=3 KG_SHAPES=mission /root/out/rec/clean/head/attention/harness 3>>/root/out/rec/clean/gemm/bench/head-answers.plain) >>/root/out/rec/clean/gemm/bench/head-harness.log.plain 2>&1
  done
done
for first in $(seq 1 16 16); do
  last=$((first + 15)); [ $last -le 16 ] || last=16
  reflast=$((last < 16 ? last : 16))
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,nounits >/dev/null
  for s in $(seq 0 3); do
    { printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' $round; done; } | (cd /tmp/kernel-gate-base-1462599868/base && env KG_KERNELS=row_softmax KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/clean/softmax/bench/base.plain.json KG_SERVE_FD=3 KG_SHAPES=mission /root/out/rec/clean/base/attention/harness 3>>/root/out/rec/clean/softmax/bench/base-answers.plain) >>/root/out/rec/clean/softmax/bench/base-harness.log.plain 2>&1
    { printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' $round; done; } | (cd /tmp/tmp.2MGJcR2rnW/repo && env KG_KERNELS=row_softmax KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/root/out/rec/clean/softmax/bench/head.plain.json KG_SERVE_FD=3 KG_SHAPES=mission /root/out/rec/clean/head/attention/harness 3>>/root/out/rec/clean/softmax/bench/head-answers.plain) >>/root/out/rec/clean/softmax/bench/head-harness.log.plain 2>&1
  done
done
git -C /tmp/tmp.2MGJcR2rnW/repo worktree remove --force /tmp/kernel-gate-base-1462599868/base
rm -rf /tmp/kernel-gate-base-1462599868
