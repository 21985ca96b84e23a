#!/bin/sh
# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).
(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >/tmp/rec/race/gpu.csv.plain 2>&1)
git -C /tmp/tmp.MO4oCf2Mv3/repo worktree add --detach /tmp/kernel-gate-base-499244428/base c2dbe451542322f17fe1bf062e85788ee8dc61ee >/dev/null 2>&1
(nvcc --version >/tmp/rec/race/nvcc-version.txt.plain 2>&1)
(cd /tmp/tmp.MO4oCf2Mv3/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/race/head/attention/harness kernels/harness.cu >/tmp/rec/race/head/attention/build.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-499244428/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/race/base/attention/harness kernels/harness.cu >/tmp/rec/race/base/attention/build.log.plain 2>&1) &
wait
(cuobjdump --dump-sass /tmp/rec/race/base/attention/harness >/tmp/rec/race/base/attention/sass.txt.plain 2>&1)
(cuobjdump --dump-sass /tmp/rec/race/head/attention/harness >/tmp/rec/race/head/attention/sass.txt.plain 2>&1)
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/race/attention/sanitize/harness-memcheck.json.plain compute-sanitizer --tool memcheck --xml --save /tmp/rec/race/attention/sanitize/memcheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 /tmp/rec/race/head/attention/harness >/tmp/rec/race/attention/sanitize/memcheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/race/attention/sanitize/harness-racecheck.json.plain compute-sanitizer --tool racecheck --xml --save /tmp/rec/race/attention/sanitize/racecheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis /tmp/rec/race/head/attention/harness >/tmp/rec/race/attention/sanitize/racecheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/race/attention/sanitize/harness-initcheck.json.plain compute-sanitizer --tool initcheck --xml --save /tmp/rec/race/attention/sanitize/initcheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no /tmp/rec/race/head/attention/harness >/tmp/rec/race/attention/sanitize/initcheck.log.plain 2>&1
env KG_SHAPES=small KG_KERNELS=flash_fwd,flash_fwd_causal KG_MODE=sanitize KG_OUT=/tmp/rec/race/attention/sanitize/harness-synccheck.json.plain compute-sanitizer --tool synccheck --xml --save /tmp/rec/race/attention/sanitize/synccheck.xml.plain --error-exitcode 86 --print-limit 10000 --demangle no /tmp/rec/race/head/attention/harness >/tmp/rec/race/attention/sanitize/synccheck.log.plain 2>&1
(cd /tmp/tmp.MO4oCf2Mv3/repo && env KG_MODE=check KG_SHAPES=small,mission KG_KERNELS=gemm_wmma KG_ROUNDS=3 KG_OUT=/tmp/rec/race/gemm/check.json /tmp/rec/race/head/attention/harness >/tmp/rec/race/gemm/check.log.plain 2>&1)
(cd /tmp/tmp.MO4oCf2Mv3/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=row_softmax KG_ROUNDS=3 KG_OUT=/tmp/rec/race/softmax/check.json /tmp/rec/race/head/attention/harness >/tmp/rec/race/softmax/check.log.plain 2>&1)
git -C /tmp/tmp.MO4oCf2Mv3/repo worktree remove --force /tmp/kernel-gate-base-499244428/base
rm -rf /tmp/kernel-gate-base-499244428
