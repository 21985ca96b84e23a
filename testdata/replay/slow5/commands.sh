#!/bin/sh
# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).
(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >/tmp/rec/slow5/gpu.csv.plain 2>&1)
git -C /tmp/tmp.gixVd1PqdO/repo worktree add --detach /tmp/kernel-gate-base-2525514366/base 6c296ab0b59fe6c33780eaefd0295b2b0811b5b0 >/dev/null 2>&1
(nvcc --version >/tmp/rec/slow5/nvcc-version.txt.plain 2>&1)
(cd /tmp/tmp.gixVd1PqdO/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/slow5/head/attention/harness kernels/harness.cu >/tmp/rec/slow5/head/attention/build.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-2525514366/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/slow5/base/attention/harness kernels/harness.cu >/tmp/rec/slow5/base/attention/build.log.plain 2>&1) &
wait
(cuobjdump --dump-sass /tmp/rec/slow5/base/attention/harness >/tmp/rec/slow5/base/attention/sass.txt.plain 2>&1)
(cuobjdump --dump-sass /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/head/attention/sass.txt.plain 2>&1)
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/slow5/attention/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /tmp/rec/slow5/attention/sanitize/memcheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/attention/sanitize/memcheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/slow5/attention/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /tmp/rec/slow5/attention/sanitize/racecheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/attention/sanitize/racecheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/slow5/attention/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /tmp/rec/slow5/attention/sanitize/initcheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/attention/sanitize/initcheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/slow5/attention/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /tmp/rec/slow5/attention/sanitize/synccheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/attention/sanitize/synccheck.log.plain 2>&1
(cd /tmp/tmp.gixVd1PqdO/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=flash_fwd,flash_fwd_causal KG_ROUNDS=3 KG_OUT=/tmp/rec/slow5/attention/check.json /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/attention/check.log.plain 2>&1)
for round in $(seq 0 32); do
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,nounits >/dev/null
  (cd /tmp/kernel-gate-base-2525514366/base && env KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=bench KG_ROUNDS=1 KG_SAMPLES=30 KG_SHAPES=mission,long KG_OUT=/tmp/rec/slow5/attention/bench/base.plain.json /tmp/rec/slow5/base/attention/harness) >>/tmp/rec/slow5/attention/bench/base-harness.log.plain 2>&1
  (cd /tmp/tmp.gixVd1PqdO/repo && env KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=bench KG_ROUNDS=1 KG_SAMPLES=30 KG_SHAPES=mission,long KG_OUT=/tmp/rec/slow5/attention/bench/head.plain.json /tmp/rec/slow5/head/attention/harness) >>/tmp/rec/slow5/attention/bench/head-harness.log.plain 2>&1
  (cd /tmp/tmp.gixVd1PqdO/repo && env KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=bench KG_ROUNDS=1 KG_SAMPLES=30 KG_SHAPES=mission,long KG_OUT=/tmp/rec/slow5/attention/bench/reference.plain.json python3 kernels/sdpa_reference.py) >>/tmp/rec/slow5/attention/bench/reference-harness.log.plain 2>&1
done
env KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=check KG_ROUNDS=1 KG_OUT=/tmp/rec/slow5/attention/ncu/harness-ncu.json.plain KG_SHAPES=mission ncu --csv --clock-control none --print-units base --print-kernel-base mangled --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active -k regex:flash_fwd -c 32 /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/attention/ncu/ncu.log.plain 2>&1
(cd /tmp/tmp.gixVd1PqdO/repo && env KG_MODE=check KG_SHAPES=small,mission KG_KERNELS=gemm_wmma KG_ROUNDS=3 KG_OUT=/tmp/rec/slow5/gemm/check.json /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/gemm/check.log.plain 2>&1)
(cd /tmp/tmp.gixVd1PqdO/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=row_softmax KG_ROUNDS=3 KG_OUT=/tmp/rec/slow5/softmax/check.json /tmp/rec/slow5/head/attention/harness >/tmp/rec/slow5/softmax/check.log.plain 2>&1)
git -C /tmp/tmp.gixVd1PqdO/repo worktree remove --force /tmp/kernel-gate-base-2525514366/base
rm -rf /tmp/kernel-gate-base-2525514366
