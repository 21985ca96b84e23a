// Package speedup is the speedup gate: it judges whether head (the pull request's kernels)
// is slower than base, kernel × shape by kernel × shape, from bench-mode harness files
// (kernel-gate/bench/v1, package benchfile) whose timings were taken side by side on one
// GPU, and whether a kernel keeps its stated speedup over a reference implementation
// ("15x faster than PyTorch SDPA"). Config is the speedup section of kernel-gate.yml.
//
// # The statistic
//
// Round i of base ran beside round i of head (the runner interleaves them, ABBA). Clocks,
// temperature and the host drift between rounds — a GEMM's median moves from 189 to 220 µs
// within seconds on an H200 while head/base inside a round stays at 1.02–1.04
// (testdata/timing/h200-sdpa-gemm-noise.json) — so rounds are compared only with their own
// partner and samples are never pooled across rounds as if independent. Per round, the
// statistic is the median of each side's launches (robust to the first, slow launch and to
// preemption outliers) and the ratio head / base of the two medians. A round where either
// side has no valid timing is dropped and counted; NaN, ±Inf, zero and negative timings
// are dropped and counted, never judged.
//
// The estimate is the median of the per-round ratios, with a distribution-free confidence
// interval: benchmath.AssumeNothing.Summary (golang.org/x/perf/benchmath, the engine of
// benchstat), whose interval is the pair of order statistics that go-moremath's
// stats.QuantileCI picks from the binomial distribution (exactly up to 30 rounds, with the
// continuity-corrected normal approximation above). It needs no model of the timing
// distribution, which is skewed, multi-modal and quantised (32 ns event resolution); it
// assumes only that the per-round ratios are independent and share a median, which
// side-by-side rounds make plausible even while the clocks drift (when the ratio itself
// changes over a stretch of rounds, as it does once in the launch-bound capture, the
// interval describes the rounds that were run, not a longer future). We use the established package rather than our own order statistics so that
// the interval is the one benchstat users already read. It covers the median with at least
// the nominal confidence, but its two tails need not be equal (benchmath biases it to the
// left, and over few rounds the binomial is coarse): either tail alone may hold up to about
// twice half the nominal error, never more than all of it. The bounds below therefore
// count the whole nominal error against each direction.
//
// The p-value is a sign test (binomial tails from gonum.org/v1/gonum/stat/distuv) of the
// null hypothesis "head is no slower than base by more than the margin": the median
// per-round ratio is at most 1 + max_slowdown. With k of n ratios above 1 + max_slowdown,
// p = P(Binomial(n, 1/2) >= k). It is rank-based and distribution-free like the interval,
// and it is the test the interval's lower bound inverts: the bound is above 1 +
// max_slowdown exactly when p <= PThreshold, the exact one-sided level of benchmath's
// interval, so the verdict and the p-value never disagree. A Mann-Whitney U test
// (benchmath's Compare) would compare the pooled launches, which drift breaks; it is used
// only to reproduce benchstat and asv in the evaluation.
//
// # The decision
//
// With margin m = max_slowdown (default 0.02) and the interval [lo, hi] of head / base:
//
//   - slower when lo > 1 + m: head is slower by more than the margin, with confidence. It
//     fails the gate (an error finding).
//   - faster when hi < 1 - m, same when hi < 1 + m otherwise: a slowdown smaller than the
//     margin is not a failure (a notice with the number).
//   - inconclusive when the interval straddles 1 + m, or when there are fewer than
//     min_rounds rounds or too few for a finite interval. The runner then adds rounds
//     (NeedMore: the rounds double from min_rounds to max_rounds within
//     gpu_seconds_budget); once the budget is spent an inconclusive comparison is a
//     warning, never a silent pass.
//
// # Failed and skipped comparisons
//
// A kernel × shape that cannot be compared is never a pass. Which side is at fault decides
// which of the two it is:
//
//   - failed (an error finding: the gate fails, exit 1) when head's side cannot be judged:
//     head's harness reported an error; head has no timings; head's timings are all NaN,
//     ±Inf, zero or negative, or its rounds are all empty (a broken timer must not hide a
//     slowdown); head has valid timings beside base's in under half of base's valid
//     rounds (far fewer rounds than base: the runs were not side by side, or head's was
//     cut short); a summary timing is not a finite number > 0; a kernel × shape that a
//     rule with shapes requires is missing; base and head ran on different setups.
//   - skipped (a warning finding: the gate's verdict is skip unless something failed, so
//     it shows; exit 0, as for any gate that could not judge everything and said why)
//     when there is nothing on base's side to compare with: a kernel × shape in base but
//     not in head (removed or renamed; a rule with shapes makes it a failure), base's
//     harness failed for it, base has no valid timing for it, or the two sides report no
//     common timing.
//
// Both show in the table ("failed", "skipped") and in the summary ("1 failed, 2 skipped");
// neither adds a record to data.comparisons, whose verdicts stay slower, same, faster and
// inconclusive. A kernel × shape new in head has nothing to be compared with and is only a
// notice. Inconclusive comparisons are warnings that leave the gate passing (see The
// decision): they were judged, on too few rounds or too much noise.
//
// # Corrections
//
// Many kernel × shape pairs are judged in one run, and the add-rounds loop looks at each
// pair up to Limits.Looks times (16, 32, ..., 512 rounds: 6 looks). Both are corrected by
// Bonferroni on the confidence level: each interval is taken at
//
//	level = 1 - (1 - confidence) / (pairs × looks)
//
// where pairs counts every comparison with rounds in the run (head versus base, and each
// reference goal judged with rounds). This spends the error budget evenly over the looks
// (a Pocock-like boundary bounded by the union bound, so it holds whatever the correlation
// between looks), and a file judged once is judged at the same level, so a one-shot
// comparison is never less strict than the loop. With confidence 0.99 the chance that any
// kernel of a run is called slower at any look when none is slower by more than the margin
// is at most 1%, and so is the chance that any kernel slower than the margin passes.
// Holm's step-down would be slightly more powerful but needs every pair's p-value before
// any decision, which the add-rounds loop, deciding pairs one by one, does not have.
//
// # Summary-only inputs
//
// A harness that reports only p50_us, mean_us or min_us gives no samples: the gate compares
// the same summary of both sides by plain ratio against the margin, labels it "no samples:
// noise not assessed" (a warning finding) and never claims significance: there is no
// interval or p-value. A plain ratio over the margin still fails the gate.
//
// # Reference goals
//
// min_speedup_vs_reference (per kernel rule) is a goal on reference / head, per round from
// the head run's reference timings (round i of the reference beside round i of head),
// estimated the same way: the goal is missed (an error) when the interval's upper bound is
// below it, met when its lower bound is at or above it, inconclusive (a warning) otherwise.
//
// # Side by side
//
// Base and head must report the same device, compute capability, driver and CUDA version:
// timings from different setups are not a side-by-side comparison, so the gate compares
// nothing and fails.
//
// docs/speedup-evaluation.md measures the judge and the defaults on real H200 timings of
// injected slowdowns, beside github-action-benchmark's, benchstat's and asv's rules.
package speedup
