// The host launcher of gemm_wmma.cu, which is a translation unit of its own (kernel-gate.yml
// compiles each kernel file apart, in parallel): what harness_cases.cpp calls.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace kg {

// C[M][N] (fp32) = A[M][K] (fp16) * B[K][N] (fp16), row-major; 128 threads a block.
// cudaErrorInvalidValue when M, N or K is not a multiple of the tile (64, 64, 32).
cudaError_t launch_gemm_wmma(const half* a, const half* b, float* c, int M, int N, int K, cudaStream_t stream = 0);

}  // namespace kg
