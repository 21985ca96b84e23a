// Timing capture for evaluating the speedup gate: per-launch CUDA-event timings of three
// kinds of kernel (compute-bound, memory-bound, launch-bound), each as an A/A pair (the same
// kernel twice) and as A/B pairs where B is slowed by 1%, 3%, 5% and 10%, interleaved on one
// GPU in ABBA order, round after round, as kernel-gate's runner does.
//
// The slowdown is injected by work: each kernel's time is T(w) = a + b*w for w units of work
// (iterations or elements). a and b are measured first (medians of many launches at two
// sizes), then B gets w_s = w0 + s*T(w0)/b, so that its expected time is (1+s)*T(w0) whatever
// the fixed launch cost. The JSON records w0, w_s and the calibration, so the realised
// slowdown can be checked against the nominal one.
//
//   nvcc -O3 -arch=native -o slowdowns slowdowns.cu && ./slowdowns ROUNDS SAMPLES | gzip > slowdowns.json.gz
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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

// times launches one by one with events; returns microseconds.
std::vector<double> time_launches(const Family& fam, long long w, int n, float* f, float4* x, float4* y,
                                  std::vector<cudaEvent_t>& ev) {
  for (int i = 0; i < n; ++i) {
    CK(cudaEventRecord(ev[2 * i]));
    fam.launch(w, f, x, y);
    CK(cudaEventRecord(ev[2 * i + 1]));
  }
  CK(cudaEventSynchronize(ev[2 * n - 1]));
  CK(cudaGetLastError());
  std::vector<double> us(n);
  for (int i = 0; i < n; ++i) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    us[i] = 1000.0 * ms;
  }
  return us;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
  std::vector<cudaEvent_t> ev(2 * std::max(samples, 200));
  for (auto& e : ev) CK(cudaEventCreate(&e));

  Family fams[] = {
      {"compute-bound", "iterations", 2000, launch_compute},
      {"memory-bound", "float4 elements", (long long)4 << 20, launch_stream},  // 64 MiB in, 64 MiB out: past the L2
      {"launch-bound", "iterations", 64, launch_tiny},
  };
  const double slow[] = {0.0, 0.01, 0.03, 0.05, 0.10};
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("{\"schema\": \"kernel-gate/slowdown-capture/v1\", \"device\": \"%s\", \"rounds\": %d, \"samples\": %d,\n \"families\": [",
              p.name, rounds, samples);
  for (int fi = 0; fi < 3; ++fi) {
    Family& fam = fams[fi];
    for (int i = 0; i < 50; ++i) fam.launch(fam.w0, f, x, y);  // warm-up
    CK(cudaDeviceSynchronize());
    // Calibrate T(w) = a + b*w from medians at w0 and 2*w0.
    const double t1 = median(time_launches(fam, fam.w0, 200, f, x, y, ev));
    const double t2 = median(time_launches(fam, 2 * fam.w0, 200, f, x, y, ev));
    const double b = (t2 - t1) / fam.w0, a = t1 - b * fam.w0;
    std::printf("%s\n  {\"name\": \"%s\", \"unit\": \"%s\", \"base_work\": %lld, \"calibration\": {\"t_base_us\": %.4f, \"t_double_us\": %.4f, \"fixed_us\": %.4f, \"us_per_unit\": %.9g},\n   \"pairs\": [",
                fi ? "," : "", fam.name, fam.unit, fam.w0, t1, t2, a, b);
    for (int si = 0; si < 5; ++si) {
      const long long wb = fam.w0 + (long long)(slow[si] * t1 / b + 0.5);
      std::printf("%s\n    {\"nominal_slowdown\": %.2f, \"a_work\": %lld, \"b_work\": %lld, \"a\": [", si ? "," : "", slow[si], fam.w0, wb);
      std::vector<std::vector<double>> A, B;
      for (int r = 0; r < rounds; ++r) {
        // ABBA: even rounds A then B, odd rounds B then A.
        if (r % 2 == 0) {
          A.push_back(time_launches(fam, fam.w0, samples, f, x, y, ev));
          B.push_back(time_launches(fam, wb, samples, f, x, y, ev));
        } else {
          B.push_back(time_launches(fam, wb, samples, f, x, y, ev));
          A.push_back(time_launches(fam, fam.w0, samples, f, x, y, ev));
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
  std::printf("\n ]}\n");
  return 0;
}
