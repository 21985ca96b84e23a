// Tiled GEMM on Tensor Cores through WMMA: C[M][N] (fp32) = A[M][K] (fp16) * B[K][N] (fp16),
// all row-major. Each block computes a kBM x kBN tile with 4 warps in a 2x2 grid; each
// warp owns (kBM/2) x (kBN/2) of C as 16x16 accumulator fragments. K advances in steps of kBK
// through shared memory. M, N and K must be multiples of the tile sizes (the launcher checks).

#include <cuda_fp16.h>
#include <mma.h>
#include "gemm_wmma.h"
namespace kg {

template <int kBM, int kBN, int kBK>
__global__ void __launch_bounds__(128)
gemm_wmma(const half* __restrict__ a, const half* __restrict__ b, float* __restrict__ c,
          int M, int N, int K) {
  using namespace nvcuda;
  constexpr int kWM = kBM / 2, kWN = kBN / 2;
  constexpr int kFragM = kWM / 16, kFragN = kWN / 16;
  constexpr int kLdA = kBK + 8, kLdB = kBN + 8;
  __shared__ __align__(128) half sA[kBM][kLdA];
  __shared__ __align__(128) half sB[kBK][kLdB];

  const int warp = threadIdx.x / 32;
  const int wm = (warp / 2) * kWM, wn = (warp % 2) * kWN;
  const int bm = blockIdx.y * kBM, bn = blockIdx.x * kBN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragM][kFragN];
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int j = 0; j < kFragN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += kBK) {
    for (int i = threadIdx.x; i < kBM * kBK / 8; i += 128) {
      int r = i / (kBK / 8), col = (i % (kBK / 8)) * 8;
      *reinterpret_cast<uint4*>(&sA[r][col]) =
          *reinterpret_cast<const uint4*>(a + (size_t)(bm + r) * K + k0 + col);
    }
    for (int i = threadIdx.x; i < kBK * kBN / 8; i += 128) {
      int r = i / (kBN / 8), col = (i % (kBN / 8)) * 8;
      *reinterpret_cast<uint4*>(&sB[r][col]) =
          *reinterpret_cast<const uint4*>(b + (size_t)(k0 + r) * N + bn + col);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> af[kFragM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> bf[kFragN];
#pragma unroll
      for (int i = 0; i < kFragM; ++i) wmma::load_matrix_sync(af[i], &sA[wm + i * 16][kk], kLdA);
#pragma unroll
      for (int j = 0; j < kFragN; ++j) wmma::load_matrix_sync(bf[j], &sB[kk][wn + j * 16], kLdB);
#pragma unroll
      for (int i = 0; i < kFragM; ++i)
#pragma unroll
        for (int j = 0; j < kFragN; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int j = 0; j < kFragN; ++j)
      wmma::store_matrix_sync(c + (size_t)(bm + wm + i * 16) * N + bn + wn + j * 16, acc[i][j], N,
                              wmma::mem_row_major);
}

cudaError_t launch_gemm_wmma(const half* a, const half* b, float* c, int M, int N, int K,
                                    cudaStream_t stream) {
  constexpr int kBM = 64, kBN = 64, kBK = 32;
  if (M % kBM || N % kBN || K % kBK) return cudaErrorInvalidValue;
  gemm_wmma<kBM, kBN, kBK><<<dim3(N / kBN, M / kBM), 128, 0, stream>>>(a, b, c, M, N, K);
  return cudaGetLastError();
}

}  // namespace kg
