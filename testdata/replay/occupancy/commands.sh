#!/bin/sh
# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).
(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >/tmp/rec/occupancy/gpu.csv.plain 2>&1)
git -C /tmp/tmp.2wdkAX8Ksi/repo worktree add --detach /tmp/kernel-gate-base-3896387531/base 7e0a9b98565a8d43d4b3c8fa73f9b327c9448e02 >/dev/null 2>&1
(nvcc --version >/tmp/rec/occupancy/nvcc-version.txt.plain 2>&1)
(cd /tmp/tmp.2wdkAX8Ksi/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/occupancy/head/attention/harness kernels/harness.cu >/tmp/rec/occupancy/head/attention/build.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-3896387531/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/occupancy/base/attention/harness kernels/harness.cu >/tmp/rec/occupancy/base/attention/build.log.plain 2>&1) &
wait
(cuobjdump --dump-sass /tmp/rec/occupancy/base/attention/harness >/tmp/rec/occupancy/base/attention/sass.txt.plain 2>&1)
(cuobjdump --dump-sass /tmp/rec/occupancy/head/attention/harness >/tmp/rec/occupancy/head/attention/sass.txt.plain 2>&1)
(cd /tmp/tmp.2wdkAX8Ksi/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=flash_fwd,flash_fwd_causal KG_ROUNDS=3 KG_OUT=/tmp/rec/occupancy/attention/check.json /tmp/rec/occupancy/head/attention/harness >/tmp/rec/occupancy/attention/check.log.plain 2>&1)
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/tmp/rec/occupancy/gemm/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /tmp/rec/occupancy/gemm/sanitize/memcheck.xml.plain --log-file /tmp/rec/occupancy/gemm/sanitize/memcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /tmp/rec/occupancy/head/attention/harness >/tmp/rec/occupancy/gemm/sanitize/memcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/tmp/rec/occupancy/gemm/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /tmp/rec/occupancy/gemm/sanitize/racecheck.xml.plain --log-file /tmp/rec/occupancy/gemm/sanitize/racecheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /tmp/rec/occupancy/head/attention/harness >/tmp/rec/occupancy/gemm/sanitize/racecheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/tmp/rec/occupancy/gemm/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /tmp/rec/occupancy/gemm/sanitize/initcheck.xml.plain --log-file /tmp/rec/occupancy/gemm/sanitize/initcheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /tmp/rec/occupancy/head/attention/harness >/tmp/rec/occupancy/gemm/sanitize/initcheck.out.plain 2>&1
env KG_SHAPES=small KG_KERNELS=gemm_wmma KG_MODE=sanitize KG_OUT=/tmp/rec/occupancy/gemm/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /tmp/rec/occupancy/gemm/sanitize/synccheck.xml.plain --log-file /tmp/rec/occupancy/gemm/sanitize/synccheck.log.plain --error-exitcode 86 --print-limit 10000 --demangle no /tmp/rec/occupancy/head/attention/harness >/tmp/rec/occupancy/gemm/sanitize/synccheck.out.plain 2>&1
(cd /tmp/tmp.2wdkAX8Ksi/repo && env KG_MODE=check KG_SHAPES=small,mission KG_KERNELS=gemm_wmma KG_ROUNDS=3 KG_OUT=/tmp/rec/occupancy/gemm/check.json /tmp/rec/occupancy/head/attention/harness >/tmp/rec/occupancy/gemm/check.log.plain 2>&1)
for first in $(seq 1 16 16); do
  last=$((first + 15)); [ $last -le 16 ] || last=16
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,nounits >/dev/null
  for s in $(seq 0 3); do
    { printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' $round; done; } | (cd /tmp/kernel-gate-base-3896387531/base && env KG_KERNELS=gemm_wmma KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/tmp/rec/occupancy/gemm/bench/base.plain.json KG_SERVE_FD=3 KG_SHAPES=mission /tmp/rec/occupancy/base/attention/harness 3>>/tmp/rec/occupancy/gemm/bench/base-answers.plain) >>/tmp/rec/occupancy/gemm/bench/base-harness.log.plain 2>&1
    { printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' 0; for round in $(seq $((first + s)) 4 $last); do printf '{"round": %d, "samples": 30, "shapes": ["mission"]}\n' $round; done; } | (cd /tmp/tmp.2wdkAX8Ksi/repo && env KG_KERNELS=gemm_wmma KG_MODE=serve KG_ROUNDS=1 KG_SAMPLES=30 KG_OUT=/tmp/rec/occupancy/gemm/bench/head.plain.json KG_SERVE_FD=3 KG_SHAPES=mission /tmp/rec/occupancy/head/attention/harness 3>>/tmp/rec/occupancy/gemm/bench/head-answers.plain) >>/tmp/rec/occupancy/gemm/bench/head-harness.log.plain 2>&1
  done
done
(cd /tmp/tmp.2wdkAX8Ksi/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=row_softmax KG_ROUNDS=3 KG_OUT=/tmp/rec/occupancy/softmax/check.json /tmp/rec/occupancy/head/attention/harness >/tmp/rec/occupancy/softmax/check.log.plain 2>&1)
git -C /tmp/tmp.2wdkAX8Ksi/repo worktree remove --force /tmp/kernel-gate-base-3896387531/base
rm -rf /tmp/kernel-gate-base-3896387531
