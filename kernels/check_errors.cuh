// The comparisons of the harness's KG_MODE=check (harness_cases.cpp), run on the GPU: an output
// against its fp64 reference (stored as float), and a repeated launch's output against the first. Copying
// both to the host and looping there took most of a check run's time (row_softmax × long,
// 67M elements: ~5 s on an H100); here each is one grid-stride pass, a block reduction and
// a few atomics per block. The semantics are the host loops' (kernels/tests/check_errors_check.cu
// compares the two on random data with NaN and Inf): only sum_err may differ, in its last
// bits, because the order of the additions differs (and varies between runs).
//
// Self-contained (harness_device.cu includes it, as does its check): the host functions return
// the CUDA error instead of throwing. A file compiled without nvcc's CUDA front end (no
// __CUDACC__: harness_cases.cpp, a .cpp) sees only the declarations of Compare and MaxDiff; a .cu of
// the program instantiates the ones it calls (harness_device.cu: half and float), or the link
// fails naming the one missing.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <limits>

namespace kgcheck {

// Errors of got against ref over one buffer, as harness_cases.cpp's Errors sums them.
struct ErrorSums {
  double max_err = 0, sum_err = 0, ref_max_abs = 0;  // over the elements whose got is finite
  unsigned long long nan = 0, inf = 0, bad = 0;      // a NaN or Inf in got is bad
};

// Compare compares got with ref (n device elements each; T is float or __half) on the GPU: NaN
// and Inf in got are counted (and bad) and left out of the rest; an element is bad when
// |got - ref| > atol + rtol * |ref|. Synchronises with the device.
template <class T>
cudaError_t Compare(const T* got, const float* ref, size_t n, double atol, double rtol, ErrorSums* out);

// MaxDiff is the largest |a - b| over n device elements (T is float or __half), elements NaN in
// both left out; Inf when a NaN in one has no NaN in the other. Synchronises with the device.
template <class T>
cudaError_t MaxDiff(const T* a, const T* b, size_t n, double* out);

}  // namespace kgcheck

// The definitions: kernels and their launches, which only nvcc's CUDA front end compiles.
#ifdef __CUDACC__
namespace kgcheck {

namespace detail {

constexpr int kThreads = 256;  // per block; a multiple of 32 (the warp reductions need whole warps)
constexpr int kWarps = kThreads / 32;
constexpr size_t kMaxBlocks = 1024;  // grid-stride beyond: enough blocks to fill an H100/H200

// The accumulators in device memory, zeroed before each pass. The maxima are kept as the bit
// patterns of non-negative doubles, which order as those unsigned integers do (sign bit 0,
// then exponent, then mantissa: a larger value has larger bits; +Inf above every finite one).
// So atomicMax on the bits is a max on the values, for non-negative, non-NaN values only:
// every value passed is a fabs (+0.0, never -0.0) that compared greater than a running max
// starting at +0.0, so it is never NaN. Zeroed bits are +0.0, the host loops' start.
struct DeviceSums {
  unsigned long long max_err_bits, ref_max_abs_bits;
  double sum_err;
  unsigned long long nan, inf, bad;
};

struct DeviceDiff {
  unsigned long long max_bits;    // max |a - b| over elements where neither is NaN, as above
  unsigned long long mismatches;  // elements where exactly one of a, b is NaN
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }  // exact

// By the bits, not the math library: no question of which isnan overload device code sees.
__device__ __forceinline__ bool is_nan(float x) { return (__float_as_uint(x) & 0x7fffffffu) > 0x7f800000u; }
__device__ __forceinline__ bool is_inf(float x) { return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u; }

__device__ __forceinline__ void atomic_max_nonneg(unsigned long long* bits, double v) {
  atomicMax(bits, (unsigned long long)__double_as_longlong(v));
}

__device__ __forceinline__ void atomic_add_double(double* p, double v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600
  atomicAdd(p, v);
#else  // no double atomicAdd before sm_60: the CAS loop of the CUDA programming guide
  unsigned long long* q = (unsigned long long*)p;
  unsigned long long old = *q, assumed;
  do {
    assumed = old;
    old = atomicCAS(q, assumed, (unsigned long long)__double_as_longlong(v + __longlong_as_double((long long)assumed)));
  } while (assumed != old);
#endif
}

// Warp reductions to lane 0; every lane of the warp must call them.
__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
// For non-NaN values; as std::max(v, other), a NaN other would leave v.
__device__ __forceinline__ double warp_max(double v) {
  for (int o = 16; o > 0; o >>= 1) {
    const double other = __shfl_down_sync(0xffffffffu, v, o);
    if (other > v) v = other;
  }
  return v;
}

// One pass of the harness's old host loop (Errors::add) over n elements, into *out.
template <class T>
__global__ void __launch_bounds__(kThreads) errors_kernel(const T* got, const float* ref, size_t n, double atol,
                                                          double rtol, DeviceSums* out) {
  double max_err = 0, sum_err = 0, ref_max_abs = 0;
  unsigned long long nan = 0, inf = 0, bad = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float g = to_float(got[i]);
    if (is_nan(g)) { ++nan; ++bad; continue; }
    if (is_inf(g)) { ++inf; ++bad; continue; }
    const float r = ref[i];
    const double e = fabs((double)g - (double)r);
    if (e > max_err) max_err = e;  // as std::max(max_err, e): a NaN e (a NaN ref) leaves it
    sum_err += e;                  // ... but makes the sum NaN, as on the host
    const double ra = (double)fabsf(r);
    if (ra > ref_max_abs) ref_max_abs = ra;
    // atol + rtol * |ref| rounded as the host rounds it: no fused multiply-add.
    if (e > __dadd_rn(atol, __dmul_rn(rtol, ra))) ++bad;
  }
  __shared__ double s_max[kWarps], s_sum[kWarps], s_ref[kWarps];
  __shared__ unsigned long long s_nan[kWarps], s_inf[kWarps], s_bad[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  max_err = warp_max(max_err);
  sum_err = warp_sum(sum_err);
  ref_max_abs = warp_max(ref_max_abs);
  nan = warp_sum(nan);
  inf = warp_sum(inf);
  bad = warp_sum(bad);
  if (lane == 0) {
    s_max[warp] = max_err;
    s_sum[warp] = sum_err;
    s_ref[warp] = ref_max_abs;
    s_nan[warp] = nan;
    s_inf[warp] = inf;
    s_bad[warp] = bad;
  }
  __syncthreads();
  if (warp != 0) return;
  const bool have = lane < kWarps;
  max_err = warp_max(have ? s_max[lane] : 0.0);
  sum_err = warp_sum(have ? s_sum[lane] : 0.0);
  ref_max_abs = warp_max(have ? s_ref[lane] : 0.0);
  nan = warp_sum(have ? s_nan[lane] : 0ull);
  inf = warp_sum(have ? s_inf[lane] : 0ull);
  bad = warp_sum(have ? s_bad[lane] : 0ull);
  if (lane == 0) {
    atomic_max_nonneg(&out->max_err_bits, max_err);
    atomic_add_double(&out->sum_err, sum_err);
    atomic_max_nonneg(&out->ref_max_abs_bits, ref_max_abs);
    atomicAdd(&out->nan, nan);
    atomicAdd(&out->inf, inf);
    atomicAdd(&out->bad, bad);
  }
}

// One pass of the harness's old max_diff over n elements, into *out. The difference is taken
// in float, as the host did (a[i] - b[i] on floats); Inf - Inf is NaN and left out of the max.
template <class T>
__global__ void __launch_bounds__(kThreads) repeat_diff_kernel(const T* a, const T* b, size_t n, DeviceDiff* out) {
  double max_d = 0;
  unsigned long long mismatches = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float x = to_float(a[i]), y = to_float(b[i]);
    const bool xn = is_nan(x), yn = is_nan(y);
    if (xn != yn) { ++mismatches; continue; }
    if (xn) continue;
    const double d = (double)fabsf(x - y);
    if (d > max_d) max_d = d;
  }
  __shared__ double s_max[kWarps];
  __shared__ unsigned long long s_mis[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  max_d = warp_max(max_d);
  mismatches = warp_sum(mismatches);
  if (lane == 0) {
    s_max[warp] = max_d;
    s_mis[warp] = mismatches;
  }
  __syncthreads();
  if (warp != 0) return;
  const bool have = lane < kWarps;
  max_d = warp_max(have ? s_max[lane] : 0.0);
  mismatches = warp_sum(have ? s_mis[lane] : 0ull);
  if (lane == 0) {
    atomic_max_nonneg(&out->max_bits, max_d);
    atomicAdd(&out->mismatches, mismatches);
  }
}

inline unsigned blocks_for(size_t n) {
  const size_t b = (n + kThreads - 1) / kThreads;
  return (unsigned)(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

inline double from_bits(unsigned long long bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// A zeroed device accumulator, freed on every path.
template <class S>
struct Scratch {
  S* p = nullptr;
  cudaError_t err;
  Scratch() {
    err = cudaMalloc(&p, sizeof(S));
    if (err == cudaSuccess) err = cudaMemset(p, 0, sizeof(S));
  }
  ~Scratch() {
    if (p) cudaFree(p);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// Waits for the pass and copies its accumulators back.
template <class S>
cudaError_t finish(const Scratch<S>& s, S* h) {
  cudaError_t e = cudaGetLastError();  // the launch
  if (e == cudaSuccess) e = cudaDeviceSynchronize();  // the pass itself
  if (e == cudaSuccess) e = cudaMemcpy(h, s.p, sizeof(S), cudaMemcpyDeviceToHost);
  return e;
}

}  // namespace detail

template <class T>
cudaError_t Compare(const T* got, const float* ref, size_t n, double atol, double rtol, ErrorSums* out) {
  detail::Scratch<detail::DeviceSums> s;
  if (s.err != cudaSuccess) return s.err;
  detail::errors_kernel<T><<<detail::blocks_for(n), detail::kThreads>>>(got, ref, n, atol, rtol, s.p);
  detail::DeviceSums h;
  const cudaError_t e = detail::finish(s, &h);
  if (e != cudaSuccess) return e;
  out->max_err = detail::from_bits(h.max_err_bits);
  out->sum_err = h.sum_err;
  out->ref_max_abs = detail::from_bits(h.ref_max_abs_bits);
  out->nan = h.nan;
  out->inf = h.inf;
  out->bad = h.bad;
  return cudaSuccess;
}

template <class T>
cudaError_t MaxDiff(const T* a, const T* b, size_t n, double* out) {
  detail::Scratch<detail::DeviceDiff> s;
  if (s.err != cudaSuccess) return s.err;
  detail::repeat_diff_kernel<T><<<detail::blocks_for(n), detail::kThreads>>>(a, b, n, s.p);
  detail::DeviceDiff h;
  const cudaError_t e = detail::finish(s, &h);
  if (e != cudaSuccess) return e;
  *out = h.mismatches ? std::numeric_limits<double>::infinity() : detail::from_bits(h.max_bits);
  return cudaSuccess;
}

}  // namespace kgcheck
#endif  // __CUDACC__
