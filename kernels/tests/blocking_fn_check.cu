// GPU check of kernels/kg_bench.h's TimeLaunches with launches that wait for the GPU (issue
// 21), built and run by kernels/tests/blocking_fn_check.py with nvcc:
//   nvcc -O2 -std=c++17 -arch=native -Ikernels -o /tmp/blocking_fn_check kernels/tests/blocking_fn_check.cu
// For each case it writes "== case NAME" on stderr (so that TimeLaunches's own lines can be
// told apart) and one JSON line on stdout per round: the wall seconds TimeLaunches took, how
// many timings are NaN, and their median in microseconds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "kg_bench.h"

__global__ void scale(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 1.0001f;
}

int main() {
  const int n = 1 << 20, samples = 100, rounds = 2;
  float* d = nullptr;
  if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "blocking_fn_check: cudaMalloc failed\n");
    return 2;
  }
  cudaMemset(d, 0, n * sizeof(float));
  std::vector<float> pageable(n, 1.0f);  // ordinary host memory: a copy from it waits for the stream
  auto kernel = [&](int) { scale<<<(n + 255) / 256, 256>>>(d, n); };
  struct Case {
    const char* name;
    std::function<void(int)> launch;
  };
  const std::vector<Case> cases = {
      {"kernel", kernel},
      {"synchronize", [&](int i) { kernel(i); cudaDeviceSynchronize(); }},
      {"pageable_copy", [&](int) { cudaMemcpy(d, pageable.data(), n * sizeof(float), cudaMemcpyHostToDevice); }},
      {"kernel_after", kernel},
  };
  for (const Case& c : cases) {
    std::fprintf(stderr, "== case %s\n", c.name);
    std::fflush(stderr);
    for (int i = 0; i < 5; ++i) c.launch(i);  // warm-up
    cudaDeviceSynchronize();
    for (int r = 0; r < rounds; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<double> us = kgbench::TimeLaunches(c.launch, samples, 0);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fflush(stderr);
      std::vector<double> ok;
      for (double x : us)
        if (!std::isnan(x)) ok.push_back(x);
      std::sort(ok.begin(), ok.end());
      const double median = ok.empty() ? -1 : ok[ok.size() / 2];
      std::printf("{\"case\": \"%s\", \"round\": %d, \"seconds\": %.3f, \"samples\": %zu, \"nan\": %zu, \"median_us\": %.3f}\n",
                  c.name, r, secs, us.size(), us.size() - ok.size(), median);
      std::fflush(stdout);
    }
  }
  const cudaError_t err = cudaGetLastError();
  cudaFree(d);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "blocking_fn_check: %s\n", cudaGetErrorString(err));
    return 1;
  }
  return 0;
}
