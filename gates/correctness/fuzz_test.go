package correctness

import (
	"math"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Which fields of the fuzzed result are present (bits of FuzzEvaluate's mask).
const (
	hasMaxErr = 1 << iota
	hasMeanErr
	hasRef
	hasBad
	hasNaN
	hasInf
	hasChecks
	hasLaunches
	hasRepeat
	hasSecond  // a clean second result beside the fuzzed one
	hasShapes  // request.shapes names the shapes
	hasRequest // the file has a request at all
)

// harnessErrors are the harness errors FuzzEvaluate picks from; most results have none.
var harnessErrors = [...]string{"", "", "", "", "CUDA error: an illegal memory access was encountered", " \n", "\xff\xfe", strings.Repeat("é", 1200)}

// FuzzEvaluate judges files built from fuzzed numbers, NaN and Inf included: Evaluate never
// panics, its output always encodes, and a NaN, an Inf or a NaN count never passes.
func FuzzEvaluate(f *testing.F) {
	all := uint16(1<<12 - 1)
	nan, inf := math.NaN(), math.Inf(1)
	f.Add(0.00035, 1.2e-5, 4.0, 0.0, 0.0, int64(0), int64(0), 3, 3, 3, all, uint8(0), uint8(0), uint8(0))
	f.Add(nan, 1.2e-5, 4.0, 0.0, 0.0, int64(12), int64(0), 3, 3, 3, all, uint8(0), uint8(1), uint8(0))
	f.Add(0.00035, nan, 4.0, 0.0, 0.0, int64(0), int64(0), 3, 3, 3, all, uint8(0), uint8(2), uint8(1))
	f.Add(0.00035, 1.2e-5, nan, nan, nan, int64(0), int64(0), 3, 3, 3, all, uint8(0), uint8(3), uint8(0))
	f.Add(inf, 1.2e-5, inf, 0.0, inf, int64(0), int64(4), 3, 3, 3, all, uint8(0), uint8(0), uint8(2))
	f.Add(math.Inf(-1), -1.0, -4.0, -0.5, -1e-300, int64(-1), int64(-1), -1, -1, -1, all, uint8(0), uint8(1), uint8(0))
	f.Add(0.00035, 1.2e-5, 4.0, 0.0, 0.0, int64(64), int64(0), 3, 3, 3, uint16(hasMaxErr|hasNaN), uint8(0), uint8(0), uint8(1))
	f.Add(0.0712, 1e-3, 5e-324, 2.0, 0.004, int64(0), int64(0), 1, 1, 3, all, uint8(1), uint8(2), uint8(0))
	f.Add(1e308, 1e308, 1e-308, 1.0, 1e308, int64(math.MaxInt64), int64(0), math.MaxInt, 2, math.MaxInt, all, uint8(0), uint8(3), uint8(0))
	f.Add(0.0, 0.0, 0.0, 0.0, 0.0, int64(0), int64(0), 0, 0, 0, uint16(0), uint8(0), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, maxErr, meanErr, ref, bad, rep float64, nanCount, infCount int64,
		checks, launches, rounds int, mask uint16, errSel, cfgSel, modeSel uint8) {
		// The harness error is picked, not fuzzed: the fuzzer minimizes every new string it
		// finds (quadratic in its length), which would stall the run for little coverage.
		harnessErr := harnessErrors[int(errSel)%len(harnessErrors)]
		has := func(bit uint16) bool { return mask&bit != 0 }
		r := benchfile.Result{Kernel: "flash_fwd", Shape: "long", Error: harnessErr}
		fl := func(bit uint16, v float64) *benchfile.Float {
			if !has(bit) {
				return nil
			}
			x := benchfile.Float(v)
			return &x
		}
		r.MaxErr, r.MeanErr, r.RefMaxAbs, r.BadFraction, r.RepeatMaxDiff =
			fl(hasMaxErr, maxErr), fl(hasMeanErr, meanErr), fl(hasRef, ref), fl(hasBad, bad), fl(hasRepeat, rep)
		if has(hasNaN) {
			r.NaNCount = &nanCount
		}
		if has(hasInf) {
			r.InfCount = &infCount
		}
		if has(hasChecks) {
			r.Checks = &checks
		}
		if has(hasLaunches) {
			r.RepeatLaunches = &launches
		}
		file := &benchfile.File{Schema: benchfile.Schema, Device: benchfile.Device{Name: "NVIDIA H200"}, Results: []benchfile.Result{r}}
		if has(hasSecond) {
			file.Results = append(file.Results, clean("gemm_wmma", "256x192x320"))
		}
		if has(hasRequest) {
			mode := [...]string{benchfile.ModeCheck, benchfile.ModeBench, benchfile.ModeSanitize, ""}[modeSel%4]
			file.Request = &benchfile.Request{Mode: mode, Rounds: rounds}
			if has(hasShapes) {
				file.Request.Shapes = []string{"small", "long"}
			}
		}
		cfgs := [...]Config{
			{},
			{Tolerance: Tolerance{RTol: f64(0.01), MeanErr: f64(1e-4), BadFraction: f64(0), RepeatTol: f64(1e-6), MinChecks: intp(2)}},
			{Kernels: []Rule{{Match: "flash_*", Shapes: []string{"long"}, Tolerance: Tolerance{MaxErr: f64(1e300)}}}},
			{Tolerance: Tolerance{MaxErr: f64(0)}, Kernels: []Rule{{Match: "gemm_*", Shapes: []string{"missing"}}, {Match: "none", Tolerance: Tolerance{RTol: f64(1e300)}}}},
		}
		g, err := Evaluate(file, "fuzz.json", cfgs[int(cfgSel)%len(cfgs)])
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
		checkInvariants(t, file, g)
		if nonFinite(file) && g.Verdict != result.Fail {
			t.Fatalf("a NaN or Inf passed: %s %q", g.Verdict, messages(g, result.Error))
		}
		if harnessErr != "" && g.Verdict != result.Fail {
			t.Fatalf("a harness error passed: %s", g.Verdict)
		}
		if g.Verdict == result.Pass && (r.MaxErr == nil || !r.MaxErr.Finite() || r.NaNCount == nil) {
			t.Fatalf("passed without a finite max_err and a nan_count: %+v", r)
		}
	})
}
