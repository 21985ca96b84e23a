// The host launcher of flash_fwd.cu, which is a translation unit of its own (kernel-gate.yml
// compiles each kernel file apart, in parallel): what harness_cases.cpp calls.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace kg {

// FlashAttention-2 forward, head dimension 64: q, k, v, o are [batch*heads][seqlen][64],
// row-major. Grid (ceil(seqlen/64), batch*heads), 128 threads.
cudaError_t launch_flash_fwd(const half* q, const half* k, const half* v, half* o, int batch_heads, int seqlen,
                             bool causal, cudaStream_t stream = 0);

}  // namespace kg
