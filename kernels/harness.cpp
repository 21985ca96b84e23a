// Harness for the kernels in this directory: kernel-gate/bench/v1 (docs/harness-protocol.md), kg_bench.h.
//
//   KG_MODE=check     per kernel × shape, KG_ROUNDS checks on fresh random inputs against an
//                     fp64 reference computed on the GPU, then repeated launches on the same
//                     input, which must agree with the first; compared on the GPU (check_errors.cuh)
//   KG_MODE=bench     KG_ROUNDS rounds of KG_SAMPLES single-launch timings (CUDA events), after
//                     a warm-up, rotating through enough input copies that L2 holds none
//   KG_MODE=sanitize  one launch of each kernel on its first shape, for compute-sanitizer
//   KG_MODE=serve     every kernel × shape set up and warmed up once, then one round of
//                     KG_SAMPLES timings per request line (kg_bench.h's Serve)
//
// KG_KERNELS picks kernels (default all), KG_SHAPES shapes (default small,mission,long),
// KG_OUT the result file (default stdout). Build, each kernel its own translation unit: nvcc -O3
// -lineinfo -arch=native harness.cpp harness_cases.cpp harness_device.cu flash_fwd.cu
// gemm_wmma.cu softmax.cu (defects: -DKG_DEFECT_...).
//
// Host-only: nvcc hands a .cpp to the host compiler alone (no __CUDACC__), so none of its
// device passes parses this driver, whose host C++ made harness.cu the slowest file of the
// build. Its device code, with the launchers it calls, is harness_device.cu's; the kernels'
// checks and timers are harness_cases.cpp's, compiled beside this file (together they were
// still the build's longest compile).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "harness_cases.h"

namespace {

using kgharness::Case;
using kgharness::make_case;
using kgharness::Timer;

// serve is KG_MODE=serve: every kernel × shape asked for is set up and warmed up once,
// then each request times one round of the ones it names (kg_bench.h's Serve). A kernel ×
// shape that failed to set up, or failed a round, answers with its error from then on, and
// the process exits 1 at the end of its input, as a bench run with an error does.
int serve(const kgbench::Request& req, const std::vector<std::string>& kernels) {
  struct Entry {
    std::string kernel, shape, error;
    std::unique_ptr<Case> c;
    Timer timer;
  };
  std::vector<Entry> entries;
  bool failed = false;
  for (const auto& kernel : kernels)
    for (const auto& shape : req.shapes) {
      Entry e{kernel, shape, "", std::unique_ptr<Case>(make_case(kernel, shape)), nullptr};
      try {
        if (!e.c) throw std::string("unknown kernel or shape");
        e.timer = e.c->timer();
      } catch (const std::string& err) {
        e.error = err;
        failed = true;
        std::fprintf(stderr, "harness: %s %s: %s\n", kernel.c_str(), shape.c_str(), err.c_str());
      }
      entries.push_back(std::move(e));
    }
  const int rc = kgbench::Serve(req, [&](const kgbench::ServeRequest& sr) {
    std::vector<kgbench::Result> out;
    for (auto& e : entries) {
      if (!kgbench::Wanted(sr.kernels, e.kernel) || !kgbench::Wanted(sr.shapes, e.shape)) continue;
      kgbench::Result r;
      r.kernel = e.kernel;
      r.shape = e.shape;
      if (e.c) r.block_size = e.c->block_size();
      if (e.error.empty()) {
        try {
          r.rounds_us.push_back(e.timer(sr.samples));
        } catch (const std::string& err) {
          e.error = err;
          failed = true;
          std::fprintf(stderr, "harness: %s %s: round %d: %s\n", e.kernel.c_str(), e.shape.c_str(), sr.round, err.c_str());
        }
      }
      r.error = e.error;
      out.push_back(r);
    }
    // Asked for what this process did not set up (KG_KERNELS, KG_SHAPES): an error each.
    for (const auto& shape : sr.shapes)
      for (const auto& kernel : sr.kernels.empty() ? kernels : sr.kernels) {
        bool have = false;
        for (const auto& e : entries) have = have || (e.kernel == kernel && e.shape == shape);
        if (have) continue;
        kgbench::Result r;
        r.kernel = kernel;
        r.shape = shape;
        r.error = "not set up in this process (KG_KERNELS, KG_SHAPES)";
        out.push_back(r);
        failed = true;
      }
    return out;
  });
  return rc != 0 ? rc : failed ? 1 : 0;
}

}  // namespace

int main() {
  kgbench::Request req = kgbench::Request::FromEnv("small,mission,long");
  std::vector<std::string> kernels;
  {
    std::string ks = kgbench::Request::env("KG_KERNELS", "flash_fwd,flash_fwd_causal,gemm_wmma,row_softmax");
    size_t p = 0;
    while (p <= ks.size()) {
      size_t q = ks.find(',', p);
      if (q == std::string::npos) q = ks.size();
      if (q > p) kernels.push_back(ks.substr(p, q - p));
      p = q + 1;
    }
  }
  if (req.mode == "serve") return serve(req, kernels);
  if (req.mode != "check" && req.mode != "bench" && req.mode != "sanitize") {
    std::fprintf(stderr, "harness: KG_MODE=%s: want check, bench, sanitize or serve\n", req.mode.c_str());
    return 2;
  }
  std::vector<kgbench::Result> results;
  bool failed = false;
  for (const auto& kernel : kernels) {
    // Sanitizers are slow: one launch of each kernel on its first shape is enough.
    std::vector<std::string> shapes = req.mode == "sanitize" ? std::vector<std::string>{req.shapes.at(0)} : req.shapes;
    for (const auto& shape : shapes) {
      kgbench::Result r;
      r.kernel = kernel;
      r.shape = shape;
      Case* c = make_case(kernel, shape);
      if (c) r.block_size = c->block_size();
      try {
        if (!c) throw std::string("unknown kernel or shape");
        if (req.mode == "check") c->check(r, std::max(req.rounds, 1));
        else if (req.mode == "bench") c->bench(r, std::max(req.rounds, 1), std::max(req.samples, 1));
        else {
          c->sanitize();
          r.launches = 1;
#ifdef KG_DEFECT_CRASH
          std::fprintf(stderr, "harness: KG_DEFECT_CRASH: aborting after the first launch\n");
          std::abort();
#endif
        }
      } catch (const std::string& e) {
        r.error = e;
        failed = true;
        std::fprintf(stderr, "harness: %s %s: %s\n", kernel.c_str(), shape.c_str(), e.c_str());
      }
      delete c;
      results.push_back(r);
      if (failed && cudaPeekAtLastError() != cudaSuccess) break;  // a sticky CUDA error: stop
    }
  }
  if (!kgbench::Write(req, results)) {
    std::fprintf(stderr, "harness: cannot write %s\n", req.out.c_str());
    return 2;
  }
  return failed ? 1 : 0;
}
