// Host-only tests of kernels/kg_bench.h's holds: TimeLaunches's loop run behind a fake
// hold, compiled with the host's C++ compiler against gates/speedup/abrun/testdata/cudastub
// (no CUDA). kernels/kg_bench_test.py builds and runs it (CppHoldTest); by hand, from the
// repository's root:
//   c++ -std=c++17 -Wall -Wextra -Werror -Igates/speedup/abrun/testdata/cudastub -Ikernels
//     kernels/tests/kg_bench_hold_test.cpp -o /tmp/kg_bench_hold_test && /tmp/kg_bench_hold_test
// It exits 1 on a failed check; its stderr holds TimeLaunches's own messages, which
// kg_bench_test.py counts.
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "kg_bench.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stdout, "FAIL: %s\n", what.c_str());
    ++failures;
  }
}

// FakeHold stands for the GPU's hold: a launch that "waits for the GPU" (End) can only
// return once the current hold is over, which is how a real hold that is never released
// ends: it times out.
struct FakeHold {
  std::vector<int> starts, releases;
  std::set<int> ended;  // chunks whose hold ended without being released
  int current = -1;
  bool Start(int c, cudaStream_t) {
    starts.push_back(c);
    current = c;
    return true;
  }
  bool Ended(int c) const { return ended.count(c) != 0; }
  void Release(int c) { releases.push_back(c); }
  void End() {
    if (current >= 0) ended.insert(current);
  }
};

int nans(const std::vector<double>& us) {
  int n = 0;
  for (double x : us) n += std::isnan(x);
  return n;
}

void test_verdict() {
  using kgbench::detail::HoldVerdict;
  using kgbench::detail::hold_verdict;
  check(hold_verdict(false, false) == HoldVerdict::kQueued, "verdict: queued");
  check(hold_verdict(true, true) == HoldVerdict::kWaits, "verdict: ended during the first call");
  check(hold_verdict(true, false) == HoldVerdict::kWaits, "verdict: ended during the first call (unreleased)");
  check(hold_verdict(false, true) == HoldVerdict::kTimedOut, "verdict: ended later");
}

void test_queued() {
  FakeHold h;
  int calls = 0;
  auto us = kgbench::detail::time_launches(h, [&](int) { ++calls; }, 100, nullptr);
  check(us.size() == 100 && calls == 100 && nans(us) == 0, "queued: 100 samples, 100 calls, no NaN");
  check(h.starts == std::vector<int>{0, 1} && h.releases == std::vector<int>{0, 1}, "queued: one hold per chunk, released");
}

// A launch that waits at every call (cudaDeviceSynchronize, a pageable copy) is found by the
// first hold, and every sample is timed unheld: one hold, not one per chunk.
void test_waits(int round) {
  FakeHold h;
  int calls = 0;
  auto us = kgbench::detail::time_launches(
      h, [&](int) { ++calls; h.End(); }, 100, nullptr);
  check(us.size() == 100 && nans(us) == 0, "waits: 100 timings, none NaN (round " + std::to_string(round) + ")");
  check(h.starts == std::vector<int>{0}, "waits: a single hold");
  check(calls == 1 + 100, "waits: the first call, then every sample unheld");
}

// A launch that waits only from the second chunk on: every sample is timed again unheld, so
// that one round is timed one way.
void test_waits_in_a_later_chunk() {
  FakeHold h;
  int calls = 0;
  auto us = kgbench::detail::time_launches(
      h, [&](int i) { ++calls; if (i == kgbench::kHoldChunk) h.End(); }, 100, nullptr);
  check(nans(us) == 0, "waits later: no NaN");
  check(h.starts == std::vector<int>{0, 1}, "waits later: two holds");
  check(calls == kgbench::kHoldChunk + 1 + 100, "waits later: every sample again");
}

// A hold that times out after the chunk's first call (a host that stalled, a launch that
// waits now and then): that chunk is NaN, the others kept, and no sample is timed again.
void test_timed_out_later() {
  FakeHold h;
  int calls = 0;
  auto us = kgbench::detail::time_launches(
      h, [&](int i) { ++calls; if (i == kgbench::kHoldChunk + 5) h.End(); }, 100, nullptr);
  check(nans(us) == 100 - kgbench::kHoldChunk, "timed out later: the second chunk is NaN");
  check(!std::isnan(us[kgbench::kHoldChunk - 1]) && std::isnan(us[kgbench::kHoldChunk]), "timed out later: which");
  check(calls == 100 && h.starts == std::vector<int>{0, 1}, "timed out later: held as usual");
}

void test_no_hold() {
  int calls = 0;
  auto us = kgbench::TimeLaunches([&](int) { ++calls; }, 3, nullptr);  // plain C++: unheld
  check(us.size() == 3 && calls == 3 && nans(us) == 0, "plain C++: timed unheld");
  check(kgbench::TimeLaunches([](int) {}, 0, nullptr).empty(), "no samples");
}

}  // namespace

int main() {
  test_verdict();
  test_queued();
  test_waits(1);
  test_waits(2);  // the same launch type: said once in all
  test_waits_in_a_later_chunk();
  test_timed_out_later();
  test_no_hold();
  if (failures) return 1;
  std::printf("ok\n");
  return 0;
}
