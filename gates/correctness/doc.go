// Package correctness is the correctness gate: it judges the check-mode output of a
// kernel harness (kernel-gate/bench/v1, package benchfile) — each kernel × shape's error
// against a reference, NaN and Inf counts, how many checks ran and whether repeated launches
// on the same input agree — against tolerances from the correctness section of
// kernel-gate.yml:
//
//	correctness:
//	  max_err: 0.06          # absolute max error; default 0.06
//	  mean_err: 0.001        # no default
//	  rtol: 0.01             # max_err <= rtol × ref_max_abs, where the harness reports ref_max_abs; no default
//	  bad_fraction: 0        # fraction of elements outside the harness's own tolerance; no default
//	  repeat_tol: 0          # repeated launches on the same input; default 0 (bit-identical)
//	  min_checks: 3          # default: the request's rounds, else 1
//	  kernels:               # per kernel glob (and optional shapes); later rules win
//	    - match: "flash_fwd*"
//	      shapes: [long]     # also requires flash_fwd × long to be reported
//	      max_err: 0.08
//	      reason: "fp16 softmax over 2048 keys"
//
// # What never passes
//
// A NaN or Inf never passes, whatever the tolerance: nan_count > 0, inf_count > 0 or a
// non-finite max_err, mean_err, ref_max_abs, bad_fraction or repeat_max_diff is an error.
// The gate fails closed where the harness leaves a question open: a check-mode result
// without nan_count (a max taken with fmax skips NaN, so max_err alone cannot rule it out) or
// without max_err, fewer checks than the request's rounds or min_checks, a requested shape
// that a kernel did not report, a rule with shapes whose kernel × shape is missing, and a
// non-empty harness error are errors. inf_count is not required: an Inf output makes max_err
// infinite unless the reference is infinite there too, and a non-finite ref_max_abs is an
// error.
//
// # Defaults
//
// max_err 0.06 is what the kernel teams gate fp16 kernels with today. repeat_tol is 0: the
// kernels here (and any kernel without floating-point atomics) are deterministic, so any
// difference between launches on the same input is a race or uninitialised memory — the
// bug where the first call passes and later calls fail. A kernel that accumulates with
// floating-point atomics (split-K GEMM, atomic reductions) legitimately differs in the last
// bits between launches; give it a repeat_tol in a kernel rule with its reason. mean_err,
// rtol and bad_fraction have no default: bad_fraction counts against a tolerance the harness
// chose, which kernel-gate cannot see, so it is judged only when the config sets a limit.
//
// # Limits
//
// Each limit resolves from the most specific level: the last matching kernel rule, the top
// level, the default. A rule matches a result when its glob matches the kernel
// (kernelname.Glob, the same globs as the other gates) and, when the rule has shapes, the
// result's shape is one of them. Every finding names where its limit came from
// ("limit from kernel-gate.yml:12 (flash_fwd* × long)"). max_err and rtol are independent:
// both must hold, so a kernel judged only relatively needs a larger max_err too.
//
// A file that is not in check mode and holds no error measurement (a bench-mode run) has
// nothing to judge: the gate skips and says so. Results of a file that does hold some
// measurements are all judged, so a result with none is an error.
package correctness
