// The launcher flash_fwd_ext.cu exports to the binding (flash_fwd_bind.cpp): plain CUDA
// types only, so that the binding, which includes PyTorch's headers, is compiled by the host
// compiler and the kernel's file by nvcc without them.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace kg::torch_ext {

constexpr int kHeadDim = 64;  // flash_fwd.cu's kg::kHeadDim; flash_fwd_ext.cu checks they agree

// Launches kg::flash_fwd on stream: q, k, v, o are [batch_heads][seqlen][64] fp16 on the GPU.
cudaError_t launch_flash_fwd(const half* q, const half* k, const half* v, half* o, int batch_heads,
                             int seqlen, bool causal, cudaStream_t stream);

}  // namespace kg::torch_ext
