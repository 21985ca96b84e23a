// Host-only tests of kernels/kg_bench.h in a file compiled without nvcc's CUDA front end that
// holds the stream through another file's kernel (KG_BENCH_EXTERN_HOLD, as kernels/harness.cpp
// does with harness_device.cu's): TimeLaunches must queue every chunk behind a hold launched by
// kgbench::LaunchHold, here a fake that records its calls, against
// gates/speedup/abrun/testdata/cudastub with pinned memory (KG_STUB_PINNED). kernels/kg_bench_test.py
// builds and runs it (CppHoldTest); by hand, from the repository's root:
//   c++ -std=c++17 -Wall -Wextra -Werror -Igates/speedup/abrun/testdata/cudastub -Ikernels
//     kernels/tests/kg_bench_extern_hold_test.cpp -o /tmp/kg_bench_extern_hold_test && /tmp/kg_bench_extern_hold_test
// It exits 1 on a failed check.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define KG_STUB_PINNED
#define KG_BENCH_EXTERN_HOLD
#include "kg_bench.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stdout, "FAIL: %s\n", what.c_str());
    ++failures;
  }
}

// One call of LaunchHold: its arguments, and the release flag as it was then.
struct Launched {
  const volatile int* release;
  volatile int* timed_out;
  unsigned long long timeout_ns;
  cudaStream_t stream;
  int released_then;
};

std::vector<Launched> launched;
cudaError_t answer = cudaSuccess;  // what LaunchHold returns
bool time_out = false;             // a hold that ends at once (as one that timed out)

int nans(const std::vector<double>& us) {
  int n = 0;
  for (double x : us) n += std::isnan(x);
  return n;
}

cudaStream_t stream() { return reinterpret_cast<cudaStream_t>(0x5); }

// Every chunk queued behind its own hold, launched with the bound and the stream, and released
// once its samples are queued.
void test_held() {
  launched.clear();
  int calls = 0;
  int released_during = 0;
  auto us = kgbench::TimeLaunches(
      [&](int) {
        ++calls;
        if (!launched.empty()) released_during += *launched.back().release;
      },
      100, stream());
  check(us.size() == 100 && calls == 100 && nans(us) == 0, "held: 100 samples, 100 calls, no NaN");
  check(launched.size() == 2, "held: one hold per chunk of " + std::to_string(kgbench::kHoldChunk) + ", got " +
                                  std::to_string(launched.size()));
  for (const auto& l : launched) {
    check(l.timeout_ns == kgbench::kHoldTimeoutNs && l.stream == stream(), "held: the bound and the stream passed on");
    check(l.released_then == 0 && *l.release == 1 && *l.timed_out == 0, "held: set unreleased, released after");
    check(l.release != l.timed_out, "held: the release and the time-out flags differ");
  }
  check(released_during == 0, "held: no hold released before its chunk was queued");
  if (launched.size() == 2) check(launched[0].release != launched[1].release, "held: each chunk its own flag");
}

// A hold that cannot be launched: every sample timed unheld, none lost.
void test_launch_fails() {
  launched.clear();
  answer = cudaErrorUnknown;
  int calls = 0;
  auto us = kgbench::TimeLaunches([&](int) { ++calls; }, 100, stream());
  answer = cudaSuccess;
  check(us.size() == 100 && calls == 100 && nans(us) == 0, "launch fails: 100 timings unheld");
}

// A hold that has ended when the first call returns: launch waits for the GPU, so every
// sample is timed unheld (kg_bench_hold_test.cpp tests the loop itself; here the flag comes
// through LaunchHold's pointer).
void test_ended_during_the_first_call() {
  launched.clear();
  time_out = true;
  int calls = 0;
  auto us = kgbench::TimeLaunches([&](int) { ++calls; }, 10, stream());
  time_out = false;
  check(us.size() == 10 && nans(us) == 0, "ended: 10 timings, none NaN");
  check(launched.size() == 1 && calls == 1 + 10, "ended: one hold, then every sample unheld");
}

// KG_BENCH_BLOCKING=0: no hold at all.
void test_not_blocking() {
  launched.clear();
  setenv("KG_BENCH_BLOCKING", "0", 1);
  auto us = kgbench::TimeLaunches([](int) {}, 10, stream());
  unsetenv("KG_BENCH_BLOCKING");
  check(us.size() == 10 && launched.empty(), "KG_BENCH_BLOCKING=0: unheld, no hold launched");
}

}  // namespace

// What kernels/harness_device.cu defines with KG_BENCH_DEFINE_HOLD, faked.
cudaError_t kgbench::LaunchHold(const volatile int* release, volatile int* timed_out, unsigned long long timeout_ns,
                                cudaStream_t s) {
  launched.push_back({release, timed_out, timeout_ns, s, *release});
  if (answer != cudaSuccess) return answer;
  if (time_out) *timed_out = 1;
  return cudaSuccess;
}

int main() {
  test_held();
  test_launch_fails();
  test_ended_during_the_first_call();
  test_not_blocking();
  if (failures) return 1;
  std::printf("ok\n");
  return 0;
}
