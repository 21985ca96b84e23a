// Row softmax, fp32 in and out: y[r][:] = exp(x[r][:] - max) / sum. One block per row;
// block-wide max and sum through warp shuffles and a small shared array.

#include <cuda_runtime.h>
#include "softmax.h"
namespace kg {

template <int kThreads>
__device__ __forceinline__ float block_reduce(float v, float* scratch, bool is_max) {
  for (int off = 16; off > 0; off /= 2) {
    float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) v = is_max ? fmaxf(v, scratch[w]) : v + scratch[w];
  __syncthreads();  // scratch is reused by the next reduction
  return v;
}

template <int kThreads>
__global__ void __launch_bounds__(kThreads)
row_softmax(const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float scratch[kThreads / 32];
  const float* xr = x + (size_t)blockIdx.x * cols;
  float* yr = y + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += kThreads) m = fmaxf(m, xr[c]);
  m = block_reduce<kThreads>(m, scratch, true);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += kThreads) s += __expf(xr[c] - m);
  s = block_reduce<kThreads>(s, scratch, false);
#ifdef KG_DEFECT_SOFTMAX_UNINIT
  // A planted defect (testdata/replay/record.sh's cmake-uninit, never in a normal build): y
  // read before anything wrote it (the harness never initialises y), which initcheck reports.
  // The comparison keeps the read alive and is never true for a value ever written, so the
  // output is unchanged. Only row 0, to keep the report short.
  if (blockIdx.x == 0 && yr[threadIdx.x] == -12345.0f) s += 1e-30f;
#endif
#ifdef KG_DEFECT_SOFTMAX_SLOW
  // A planted slowdown (testdata/timing/measure-serve.sh's launch-bound slowdown, never in
  // a normal build): each block waits KG_SOFTMAX_SLOW_CYCLES clock cycles. row_softmax ×
  // small (1024 rows) is one wave on an H100/H200, so the kernel takes that much longer;
  // the ratio measured is what counts.
#ifndef KG_SOFTMAX_SLOW_CYCLES
#define KG_SOFTMAX_SLOW_CYCLES 160
#endif
  {
    const long long until = clock64() + KG_SOFTMAX_SLOW_CYCLES;
    while (clock64() < until) {
    }
  }
#endif
  const float inv = 1.0f / s;
  for (int c = threadIdx.x; c < cols; c += kThreads) yr[c] = __expf(xr[c] - m) * inv;
}

cudaError_t launch_row_softmax(const float* x, float* y, int rows, int cols,
                                      cudaStream_t stream) {
  row_softmax<256><<<rows, 256, 0, stream>>>(x, y, cols);
  return cudaGetLastError();
}

}  // namespace kg
