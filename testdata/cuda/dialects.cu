// Capture source: kernels whose ptxas output exercises what a parser must survive
// (namespaces, templates with commas and parentheses, extern "C", non-inlined device
// functions, local arrays on the stack, recursion, constant and global memory).
// Not a kernel of the project; compiled only by testdata/capture-cuda13.sh.
#include <cuda_runtime.h>

namespace kg { namespace detail {
template <typename T, int N> struct Vec { T v[N]; };
struct Plus { __device__ float operator()(float a, float b) const { return a + b; } };
template <bool B> struct Flag {};
}  // namespace detail

template <typename T, int N, typename Op>
__global__ void reduce_vec(const detail::Vec<T, N>* in, T* out, Op op) {
  T acc = T(0);
#pragma unroll
  for (int i = 0; i < N; ++i) acc = op(acc, in[threadIdx.x].v[i]);
  out[threadIdx.x] = acc;
}
template __global__ void reduce_vec<float, 4, detail::Plus>(const detail::Vec<float, 4>*, float*, detail::Plus);

template <int N>
__global__ void flagged(float* out, detail::Flag<(N > 2)>, int (*)(int, int)) { out[threadIdx.x] = N; }
template __global__ void flagged<3>(float*, detail::Flag<true>, int (*)(int, int));
}  // namespace kg

extern "C" __global__ void plain_c_kernel(float* out) { out[threadIdx.x] = 2.0f * threadIdx.x; }

__device__ __noinline__ float helper_noinline(const float* a, int i) {
  float tmp[32];
  for (int k = 0; k < 32; ++k) tmp[k] = a[k] * k;
  return tmp[i & 31];
}
__global__ void calls_noinline(const float* a, float* out, int i) { out[threadIdx.x] = helper_noinline(a, i + threadIdx.x); }

__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__global__ void recursive_kernel(int* out, int n) { out[threadIdx.x] = fib(n + threadIdx.x); }

__global__ void lmem_kernel(const float* in, float* out, int idx) {
  float a[64];
  for (int i = 0; i < 64; ++i) a[i] = in[i * blockDim.x + threadIdx.x];
  out[threadIdx.x] = a[(idx + threadIdx.x) & 63];
}

__constant__ float ctable[256];
__device__ float gbuf[1024];
__global__ void uses_const(float* out) { out[threadIdx.x] = ctable[threadIdx.x] + gbuf[threadIdx.x]; }
