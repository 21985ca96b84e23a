// A harness for the runner's tests of kernels/kg_bench.h, built with the host compiler
// against testdata/cudastub (no CUDA): its "kernels" spin on the host, so TimeLaunches
// times host work. KG_MODE=bench writes KG_ROUNDS rounds; KG_MODE=serve sets up once and
// answers rounds through kgbench::Serve, printing to stdout as user code may.
// -DKG_TEST_WORK=N sets the spin's length (head built with more work is slower).
#include <cstdio>
#include <string>
#include <vector>

#include "kg_bench.h"

#ifndef KG_TEST_WORK
#define KG_TEST_WORK 20000
#endif

namespace {
volatile unsigned sink;

void spin(int n) {
  unsigned x = 1;
  for (int i = 0; i < n; ++i) x = x * 1664525u + 1013904223u;
  sink = x;
}

int work_of(const std::string& shape) { return shape == "long" ? 4 * KG_TEST_WORK : KG_TEST_WORK; }

kgbench::Result time_one(const std::string& kernel, const std::string& shape, int rounds, int samples) {
  kgbench::Result r;
  r.kernel = kernel;
  r.shape = shape;
  if (shape != "small" && shape != "long") {
    r.error = "unknown shape";
    return r;
  }
  const int n = work_of(shape) * (kernel == "spin2" ? 2 : 1);
  for (int k = 0; k < rounds; ++k) r.rounds_us.push_back(kgbench::TimeLaunches([&](int) { spin(n); }, samples, nullptr));
  return r;
}
}  // namespace

int main() {
  kgbench::Request req = kgbench::Request::FromEnv("small");
  const std::vector<std::string> kernels = {"spin", "spin2"};
  if (req.mode == "serve") {
    for (int i = 0; i < 100; ++i) spin(KG_TEST_WORK);  // the warm-up: set up once
    std::printf("serve-harness: set up {\"round\": 1, \"file\": {}}\n");
    return kgbench::Serve(req, [&](const kgbench::ServeRequest& sr) {
      std::printf("serve-harness: round %d\n", sr.round);
      std::fflush(stdout);
      std::vector<kgbench::Result> out;
      for (const auto& k : kernels)
        if (kgbench::Wanted(sr.kernels, k))
          for (const auto& s : sr.shapes.empty() ? req.shapes : sr.shapes) out.push_back(time_one(k, s, 1, sr.samples));
      return out;
    });
  }
  if (req.mode != "bench") {
    std::fprintf(stderr, "serve-harness: KG_MODE=%s\n", req.mode.c_str());
    return 2;
  }
  std::vector<kgbench::Result> out;
  for (const auto& k : kernels)
    for (const auto& s : req.shapes) out.push_back(time_one(k, s, req.rounds, req.samples));
  return kgbench::Write(req, out) ? 0 : 2;
}
