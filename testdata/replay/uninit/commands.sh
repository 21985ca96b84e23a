#!/bin/sh
# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).
(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >/tmp/rec/uninit/gpu.csv.plain 2>&1)
git -C /tmp/tmp.rF37VTMqD5/repo worktree add --detach /tmp/kernel-gate-base-2969162322/base 5c40c2f938ed627ad6de8bc63c8d2539289c5d8f >/dev/null 2>&1
(nvcc --version >/tmp/rec/uninit/nvcc-version.txt.plain 2>&1)
(cd /tmp/kernel-gate-base-2969162322/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/uninit/base/attention/harness kernels/harness.cu >/tmp/rec/uninit/base/attention/build.log.plain 2>&1) &
(cd /tmp/tmp.rF37VTMqD5/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/uninit/head/attention/harness kernels/harness.cu >/tmp/rec/uninit/head/attention/build.log.plain 2>&1) &
wait
(cuobjdump --dump-sass /tmp/rec/uninit/base/attention/harness >/tmp/rec/uninit/base/attention/sass.txt.plain 2>&1)
(cuobjdump --dump-sass /tmp/rec/uninit/head/attention/harness >/tmp/rec/uninit/head/attention/sass.txt.plain 2>&1)
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/uninit/attention/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /tmp/rec/uninit/attention/sanitize/memcheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /tmp/rec/uninit/head/attention/harness >/tmp/rec/uninit/attention/sanitize/memcheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/uninit/attention/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /tmp/rec/uninit/attention/sanitize/racecheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /tmp/rec/uninit/head/attention/harness >/tmp/rec/uninit/attention/sanitize/racecheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/uninit/attention/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /tmp/rec/uninit/attention/sanitize/initcheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no /tmp/rec/uninit/head/attention/harness >/tmp/rec/uninit/attention/sanitize/initcheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/uninit/attention/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /tmp/rec/uninit/attention/sanitize/synccheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no /tmp/rec/uninit/head/attention/harness >/tmp/rec/uninit/attention/sanitize/synccheck.log.plain 2>&1
(cd /tmp/tmp.rF37VTMqD5/repo && env KG_MODE=check KG_SHAPES=small,mission KG_KERNELS=gemm_wmma KG_ROUNDS=3 KG_OUT=/tmp/rec/uninit/gemm/check.json /tmp/rec/uninit/head/attention/harness >/tmp/rec/uninit/gemm/check.log.plain 2>&1)
(cd /tmp/tmp.rF37VTMqD5/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=row_softmax KG_ROUNDS=3 KG_OUT=/tmp/rec/uninit/softmax/check.json /tmp/rec/uninit/head/attention/harness >/tmp/rec/uninit/softmax/check.log.plain 2>&1)
git -C /tmp/tmp.rF37VTMqD5/repo worktree remove --force /tmp/kernel-gate-base-2969162322/base
rm -rf /tmp/kernel-gate-base-2969162322
