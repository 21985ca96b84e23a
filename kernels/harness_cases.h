// The harness's kernels under test, as harness.cpp (the driver) uses them: each kernel ×
// shape a Case that knows how to check, time and sanitize it. Defined in harness_cases.cpp,
// a translation unit of its own so that the driver's host C++ and this compile side by side
// (the driver alone was the build's longest compile).
#pragma once
#include <functional>
#include <string>
#include <vector>

#define KG_BENCH_EXTERN_HOLD  // TimeLaunches holds the stream with harness_device.cu's kernel
#include "kg_bench.h"

namespace kgharness {

// A Timer times one round of `samples` single launches (microseconds each). It owns the
// input copies it rotates through, set up and warmed up when it was made: bench mode makes
// one per kernel × shape per run, serve mode one per kernel × shape per process.
using Timer = std::function<std::vector<double>(int samples)>;

struct Case {
  virtual ~Case() = default;
  virtual void check(kgbench::Result& r, int checks) = 0;
  virtual Timer timer() = 0;
  virtual void sanitize() = 0;  // one launch on fresh inputs
  // The launch's threads per block, as its launcher in flash_fwd.cu, gemm_wmma.cu or
  // softmax.cu sets it: written as block_size, for the occupancy an explanation computes.
  virtual int block_size() const = 0;
  void bench(kgbench::Result& r, int rounds, int samples) {
    Timer t = timer();
    for (int k = 0; k < rounds; ++k) r.rounds_us.push_back(t(samples));
  }
};

// make_case is the Case of a kernel × shape; nullptr for one the harness does not know.
Case* make_case(const std::string& kernel, const std::string& shape);

}  // namespace kgharness
