// Timing capture for evaluating the speedup gate: per-launch CUDA-event timings of three
// kinds of kernel (compute-bound, memory-bound, launch-bound), each as an A/A pair (the same
// kernel twice) and as A/B pairs where B is slowed by 1%, 3%, 5% and 10%, interleaved on one
// GPU in ABBA order, round after round, as kernel-gate's runner does.
//
// The slowdown is injected by work: each kernel's time is T(w) = a + b*w for w units of work
// (iterations or elements). a and b are measured first, then B gets w_s = w0 + s*T(w0)/b, so
// that its expected time is (1+s)*T(w0) whatever the fixed launch cost. T is measured as the
// pairs are judged: the median over 25 rounds of each round's median of SAMPLES launches. A
// first slope from T(w0) and T(2*w0) gives the work of the 10% pair, w10; the slope used is
// the secant over [w0, w10], the range the pairs use (for the one-warp kernel 2*w0 adds only
// about four 32 ns timer steps, too few to resolve a slope; the memory-bound kernel is not
// linear out to 2*w0). The JSON records w0, w_s and the calibration, so the realised slowdown
// can be checked against the nominal one.
//
// Launches are timed with kernels/kg_bench.h's TimeLaunches, the helper the harnesses use:
// each round's launches and events are queued behind a blocking kernel, so every event pair
// measures its launch's device time rather than the host's launch gaps. A hold that timed
// out (its timings NaN) is counted in "hold_timeouts" and makes the exit status 3.
//
//   nvcc -O3 -arch=native -o slowdowns slowdowns.cu && ./slowdowns ROUNDS SAMPLES | gzip > slowdowns.json.gz
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../kernels/kg_bench.h"

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

__global__ void compute_kernel(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x * 1e-4f;
  for (int i = 0; i < iters; ++i) {
    a = fmaf(a, b, c);
    d = fmaf(d, c, b);
    b = fmaf(b, 0.99999f, 1e-7f);
    c = fmaf(c, 1.00001f, -1e-7f);
  }
  if (a + b + c + d == 1234.5f) out[threadIdx.x] = a;  // never true; keeps the loop
}

__global__ void stream_kernel(const float4* __restrict__ x, float4* __restrict__ y, size_t n, float s) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = x[i];
    y[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
  }
}

__global__ void tiny_kernel(float* out, int iters) {
  float a = threadIdx.x;
  for (int i = 0; i < iters; ++i) a = fmaf(a, 0.999f, 1.0f);
  if (a == -1.0f) out[0] = a;
}

struct Family {
  const char* name;
  const char* unit;
  long long w0;  // base work
  // launch runs the kernel with w units of work.
  void (*launch)(long long w, float* f, float4* x, float4* y);
};

void launch_compute(long long w, float* f, float4*, float4*) { compute_kernel<<<132 * 8, 256>>>(f, (int)w); }
void launch_stream(long long w, float*, float4* x, float4* y) { stream_kernel<<<132 * 16, 256>>>(x, y, (size_t)w, 1.5f); }
void launch_tiny(long long w, float* f, float4*, float4*) { tiny_kernel<<<1, 32>>>(f, (int)w); }

int hold_timeouts = 0;  // samples whose hold timed out (NaN from TimeLaunches)

// times n launches, each between its own pair of events, queued behind a blocking kernel
// (kgbench::TimeLaunches); returns microseconds.
std::vector<double> time_launches(const Family& fam, long long w, int n, float* f, float4* x, float4* y) {
  std::vector<double> us = kgbench::TimeLaunches([&](int) { fam.launch(w, f, x, y); }, n, 0);
  CK(cudaGetLastError());
  for (double& v : us)
    if (!(v > 0)) {  // NaN: timed unheld; keep the JSON valid and the sample out of the medians
      ++hold_timeouts;
      v = -1;
    }
  return us;
}

// median as the evaluation takes it: the mean of the two middle values of an even count.
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// round_median is T(w) as the pairs are judged: the median over 25 rounds of each round's
// median of `samples` launches.
double round_median(const Family& fam, long long w, int samples, float* f, float4* x, float4* y) {
  std::vector<double> m;
  for (int r = 0; r < 25; ++r) m.push_back(median(time_launches(fam, w, samples, f, x, y)));
  return median(m);
}

void print_round(const std::vector<double>& v) {
  std::printf("[");
  for (size_t i = 0; i < v.size(); ++i) std::printf(i ? ",%.3f" : "%.3f", v[i]);
  std::printf("]");
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int samples = argc > 2 ? std::atoi(argv[2]) : 20;
  const size_t max_elems = (size_t)16 << 20;  // room for the calibration at twice the base
  float* f;
  float4 *x, *y;
  CK(cudaMalloc(&f, 4096));
  CK(cudaMalloc(&x, max_elems * sizeof(float4)));
  CK(cudaMalloc(&y, max_elems * sizeof(float4)));
  CK(cudaMemset(x, 0x3c, max_elems * sizeof(float4)));  // about 0.0115f everywhere: not zeros

  Family fams[] = {
      {"compute-bound", "iterations", 2000, launch_compute},
      {"memory-bound", "float4 elements", (long long)4 << 20, launch_stream},  // 64 MiB in, 64 MiB out: past the L2
      {"launch-bound", "iterations", 64, launch_tiny},
  };
  const double slow[] = {0.0, 0.01, 0.03, 0.05, 0.10};
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  int runtime = 0;
  CK(cudaRuntimeGetVersion(&runtime));
  std::printf("{\"schema\": \"kernel-gate/slowdown-capture/v1\", \"device\": \"%s\", \"driver\": \"%s\", \"cuda\": \"%d.%d\",\n"
              " \"timing\": \"blocking\", \"hold_chunk\": %d, \"rounds\": %d, \"samples\": %d,\n \"families\": [",
              p.name, kgbench::driver_version().c_str(), runtime / 1000, (runtime % 1000) / 10, kgbench::kHoldChunk, rounds, samples);
  for (int fi = 0; fi < 3; ++fi) {
    Family& fam = fams[fi];
    for (int i = 0; i < 50; ++i) fam.launch(fam.w0, f, x, y);  // warm-up
    CK(cudaDeviceSynchronize());
    // Calibrate T(w) = a + b*w: a first slope from w0 and 2*w0, then the secant over the
    // work the pairs use, [w0, w10].
    const double t1 = round_median(fam, fam.w0, samples, f, x, y);
    const double t2 = round_median(fam, 2 * fam.w0, samples, f, x, y);
    const double b2 = (t2 - t1) / fam.w0;
    if (!(b2 > 0)) {
      std::fprintf(stderr, "slowdowns: %s: T(2*w0) = %.4f us is not above T(w0) = %.4f us\n", fam.name, t2, t1);
      return 2;
    }
    const long long w10 = fam.w0 + (long long)(0.10 * t1 / b2 + 0.5);
    const double t10 = round_median(fam, w10, samples, f, x, y);
    const double b = (t10 - t1) / (double)(w10 - fam.w0), a = t1 - b * fam.w0;
    if (!(b > 0)) {
      std::fprintf(stderr, "slowdowns: %s: T(%lld) = %.4f us is not above T(w0) = %.4f us\n", fam.name, w10, t10, t1);
      return 2;
    }
    std::printf("%s\n  {\"name\": \"%s\", \"unit\": \"%s\", \"base_work\": %lld, \"calibration\": {\"t_base_us\": %.4f, \"t_double_us\": %.4f, "
                "\"span_work\": %lld, \"t_span_us\": %.4f, \"fixed_us\": %.4f, \"us_per_unit\": %.9g},\n   \"pairs\": [",
                fi ? "," : "", fam.name, fam.unit, fam.w0, t1, t2, w10, t10, a, b);
    for (int si = 0; si < 5; ++si) {
      const long long wb = fam.w0 + (long long)(slow[si] * t1 / b + 0.5);
      std::printf("%s\n    {\"nominal_slowdown\": %.2f, \"a_work\": %lld, \"b_work\": %lld, \"a\": [", si ? "," : "", slow[si], fam.w0, wb);
      std::vector<std::vector<double>> A, B;
      for (int r = 0; r < rounds; ++r) {
        // ABBA: even rounds A then B, odd rounds B then A.
        if (r % 2 == 0) {
          A.push_back(time_launches(fam, fam.w0, samples, f, x, y));
          B.push_back(time_launches(fam, wb, samples, f, x, y));
        } else {
          B.push_back(time_launches(fam, wb, samples, f, x, y));
          A.push_back(time_launches(fam, fam.w0, samples, f, x, y));
        }
      }
      for (int r = 0; r < rounds; ++r) { if (r) std::printf(","); print_round(A[r]); }
      std::printf("],\n     \"b\": [");
      for (int r = 0; r < rounds; ++r) { if (r) std::printf(","); print_round(B[r]); }
      std::printf("]}");
      std::fflush(stdout);
    }
    std::printf("]}");
  }
  std::printf("\n ],\n \"hold_timeouts\": %d}\n", hold_timeouts);
  if (hold_timeouts) {
    std::fprintf(stderr, "slowdowns: %d timings were taken after a hold timed out (written as -1)\n", hold_timeouts);
    return 3;
  }
  return 0;
}
