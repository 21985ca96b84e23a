#!/bin/sh
# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).
(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >/tmp/rec/spill/gpu.csv.plain 2>&1)
git -C /tmp/tmp.MO4oCf2Mv3/repo worktree add --detach /tmp/kernel-gate-base-128567261/base c2dbe451542322f17fe1bf062e85788ee8dc61ee >/dev/null 2>&1
(nvcc --version >/tmp/rec/spill/nvcc-version.txt.plain 2>&1)
(cd /tmp/tmp.MO4oCf2Mv3/repo && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/spill/head/attention/harness kernels/harness.cu >/tmp/rec/spill/head/attention/build.log.plain 2>&1) &
(cd /tmp/kernel-gate-base-128567261/base && nvcc -lineinfo -Xptxas -v -O3 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a -o /tmp/rec/spill/base/attention/harness kernels/harness.cu >/tmp/rec/spill/base/attention/build.log.plain 2>&1) &
wait
(cuobjdump --dump-sass /tmp/rec/spill/base/attention/harness >/tmp/rec/spill/base/attention/sass.txt.plain 2>&1)
(cuobjdump --dump-sass /tmp/rec/spill/head/attention/harness >/tmp/rec/spill/head/attention/sass.txt.plain 2>&1)
(cd /tmp/tmp.MO4oCf2Mv3/repo && env KG_MODE=check KG_SHAPES=small,mission KG_KERNELS=gemm_wmma KG_ROUNDS=3 KG_OUT=/tmp/rec/spill/gemm/check.json /tmp/rec/spill/head/attention/harness >/tmp/rec/spill/gemm/check.log.plain 2>&1)
(cd /tmp/tmp.MO4oCf2Mv3/repo && env KG_MODE=check KG_SHAPES=small,mission,long KG_KERNELS=row_softmax KG_ROUNDS=3 KG_OUT=/tmp/rec/spill/softmax/check.json /tmp/rec/spill/head/attention/harness >/tmp/rec/spill/softmax/check.log.plain 2>&1)
git -C /tmp/tmp.MO4oCf2Mv3/repo worktree remove --force /tmp/kernel-gate-base-128567261/base
rm -rf /tmp/kernel-gate-base-128567261
