package correctness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

func f64(v float64) *float64 { return &v }

func fl(v float64) *benchfile.Float { f := benchfile.Float(v); return &f }

func i64(v int64) *int64 { return &v }

func intp(v int) *int { return &v }

const fixtures = "../../testdata/correctness"

// readFixture reads a harness file from testdata/correctness with benchfile.Read, as the
// command does.
func readFixture(t testing.TB, name string) *benchfile.File {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := benchfile.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

func evaluate(t *testing.T, f *benchfile.File, source string, cfg Config) result.Gate {
	t.Helper()
	g, err := Evaluate(f, source, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, f, g)
	return g
}

// finding renders what a test asserts about a finding: "flash_fwd max_err 0.0712>0.06".
func finding(f result.Finding) string {
	s := strings.TrimSpace(f.Kernel + " " + f.Metric)
	switch {
	case f.Value != nil && f.Limit != nil:
		s += fmt.Sprintf(" %g>%g", *f.Value, *f.Limit)
	case f.Value != nil:
		s += fmt.Sprintf(" %g", *f.Value)
	}
	return s
}

func findings(g result.Gate, sev result.Severity) []string {
	var out []string
	for _, f := range g.Findings {
		if f.Severity == sev {
			out = append(out, finding(f))
		}
	}
	return out
}

func messages(g result.Gate, sev result.Severity) []string {
	var out []string
	for _, f := range g.Findings {
		if f.Severity == sev {
			out = append(out, f.Message)
		}
	}
	return out
}

// checkInvariants holds for every gate Evaluate returns.
func checkInvariants(t testing.TB, f *benchfile.File, g result.Gate) {
	t.Helper()
	if g.Name != Name || g.Summary == "" || g.Findings == nil {
		t.Errorf("gate %q summary %q findings %v", g.Name, g.Summary, g.Findings)
	}
	switch g.Verdict {
	case result.Pass, result.Skip:
		if g.Count(result.Error) > 0 {
			t.Errorf("verdict %s with errors %q", g.Verdict, messages(g, result.Error))
		}
	case result.Fail:
		if g.Count(result.Error) == 0 {
			t.Error("fail without an error finding")
		}
	default:
		t.Errorf("verdict %q", g.Verdict)
	}
	for _, fd := range g.Findings {
		if fd.Message == "" || fd.Metric == "" {
			t.Errorf("finding without message or metric: %+v", fd)
		}
		if fd.Value != nil && (math.IsNaN(*fd.Value) || math.IsInf(*fd.Value, 0)) || fd.Limit != nil && (math.IsNaN(*fd.Limit) || math.IsInf(*fd.Limit, 0)) {
			t.Errorf("non-finite value or limit (JSON cannot hold it): %+v", fd)
		}
		// A finding that compares with a limit names where the limit came from.
		if fd.Severity == result.Error && fd.Value != nil && fd.Limit != nil && *fd.Limit != 0 &&
			!strings.Contains(fd.Message, "(limit from ") && !strings.Contains(fd.Message, "(the request asked for") {
			t.Errorf("limit without its source: %q", fd.Message)
		}
	}
	// The whole result encodes as JSON (no NaN anywhere) and reads back.
	var b bytes.Buffer
	if err := result.Write(&b, result.New("test", g)); err != nil {
		t.Fatalf("encoding the result: %v", err)
	}
	if _, err := result.Read(&b); err != nil {
		t.Fatalf("reading the result back: %v", err)
	}
	// The table has a row per result, failing rows first, and so has data.
	if g.Table == nil || len(g.Table.Rows) != len(f.Results) || len(g.Table.Columns) != 8 {
		t.Fatalf("table %+v for %d results", g.Table, len(f.Results))
	}
	seenPass := false
	for _, r := range g.Table.Rows {
		if len(r.Cells) != len(g.Table.Columns) {
			t.Errorf("row %v", r.Cells)
		}
		if r.Status != result.Fail {
			seenPass = true
		} else if seenPass {
			t.Errorf("failing row %v after a passing one", r.Cells)
		}
	}
	var d Data
	if err := json.Unmarshal(g.Data, &d); err != nil || len(d.Results) != len(f.Results) {
		t.Errorf("data %s: %v", g.Data, err)
	}
}

// TestEvaluateFiles judges every fixture with the defaults. To add real harness output,
// add its file to testdata/correctness and a row here.
func TestEvaluateFiles(t *testing.T) {
	tests := []struct {
		file     string
		verdict  result.Verdict
		errors   []string
		warnings int
		// contains are substrings of the error messages, in order.
		contains []string
	}{
		{"check_clean.json", result.Pass, nil, 0, nil},
		{"check_nan_bare.json", result.Fail,
			[]string{"flash_fwd nan_count 12288>0", "flash_fwd max_err", "flash_fwd mean_err"}, 0,
			[]string{"flash_fwd × long: 12288 NaN output element(s): NaN never passes, whatever the tolerance", "max_err is NaN", "mean_err is NaN"}},
		{"check_nan_string.json", result.Fail,
			[]string{"row_softmax nan_count 1000>0", "row_softmax max_err", "row_softmax mean_err", "row_softmax repeat_max_diff"}, 0,
			[]string{"row_softmax × 64x1000: 1000 NaN", "max_err is NaN", "mean_err is NaN", "repeat_max_diff is NaN"}},
		// A max taken with fmax skips NaN: max_err looks fine, nan_count does not.
		{"check_nan_count_only.json", result.Fail, []string{"flash_fwd nan_count 64>0"}, 0, nil},
		{"check_inf.json", result.Fail, []string{"flash_fwd inf_count 4>0", "flash_fwd max_err"}, 0,
			[]string{"4 Inf output element(s)", "max_err is +Inf"}},
		{"check_over_default.json", result.Fail, []string{"flash_fwd max_err 0.0712>0.06"}, 0,
			[]string{"flash_fwd × long: max_err 0.0712 > 0.06 (limit from default)"}},
		{"check_fewer_checks.json", result.Fail, []string{"flash_fwd checks 1>3"}, 0,
			[]string{"flash_fwd × long: ran 1 of 3 checks (the request asked for 3 rounds)"}},
		{"check_missing_shape.json", result.Fail, []string{"flash_fwd missing_result"}, 0,
			[]string{"flash_fwd × long: shape long was requested but not reported"}},
		{"check_repeat_disagree.json", result.Fail, []string{"row_softmax repeat_max_diff 0.00390625>0"}, 0,
			[]string{"repeated launches disagree (the first call passes, later calls fail): repeat_max_diff 0.00390625 > 0 over 3 launches (limit from default)"}},
		{"check_missing_nan_count.json", result.Fail, []string{"flash_fwd nan_count"}, 0,
			[]string{"flash_fwd × mission: the harness did not report nan_count: NaN cannot be ruled out"}},
		{"check_missing_max_err.json", result.Fail, []string{"gemm_wmma max_err"}, 0,
			[]string{"gemm_wmma × 256x192x320: the harness did not report max_err: nothing to judge is not a pass"}},
		{"check_harness_error.json", result.Fail, []string{"flash_fwd harness_error"}, 0,
			[]string{"flash_fwd × long: the harness failed: CUDA error: an illegal memory access was encountered (cudaErrorIllegalAddress) at flash_fwd.cu:212"}},
		{"check_no_repeat.json", result.Pass, nil, 5, nil},
		{"bench_only.json", result.Skip, nil, 0, nil},
		{"bench_partial_check.json", result.Fail, []string{"flash_fwd missing_result"}, 0,
			[]string{"flash_fwd × mission: the result holds no correctness measurement"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := readFixture(t, tt.file)
			g := evaluate(t, f, tt.file, Config{})
			if g.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s; errors %q", g.Verdict, tt.verdict, messages(g, result.Error))
			}
			if got := findings(g, result.Error); !slices.Equal(got, tt.errors) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.errors)
			}
			if got := g.Count(result.Warning); got != tt.warnings {
				t.Errorf("%d warnings, want %d: %q", got, tt.warnings, messages(g, result.Warning))
			}
			msgs := messages(g, result.Error)
			for i, c := range tt.contains {
				if i >= len(msgs) || !strings.Contains(msgs[i], c) {
					t.Errorf("error %d does not contain %q: %q", i, c, msgs)
				}
			}
			for _, fd := range g.Findings {
				if fd.Severity == result.Error && fd.Metric != MetricMissing && fd.File != tt.file {
					t.Errorf("finding does not name the harness file: %+v", fd)
				}
			}
		})
	}
}

func TestEvaluateSkip(t *testing.T) {
	f := readFixture(t, "bench_only.json")
	g := evaluate(t, f, "bench.json", Config{})
	want := []string{`nothing to judge: bench.json is a bench-mode run (request.mode "bench") and holds no error measurement (run the harness with KG_MODE=check)`}
	if g.Verdict != result.Skip || !slices.Equal(messages(g, result.Notice), want) {
		t.Errorf("verdict %s, notices %q", g.Verdict, messages(g, result.Notice))
	}
	// A rule with shapes is not a requirement on a file with nothing to judge.
	cfg := Config{Kernels: []Rule{{Match: "flash_fwd", Shapes: []string{"huge"}}}}
	if g := evaluate(t, f, "bench.json", cfg); g.Verdict != result.Skip {
		t.Errorf("with a required shape: %s %q", g.Verdict, messages(g, result.Error))
	}
	// A harness error fails even a bench-mode file: the kernel crashed.
	f.Results[1].Error = "CUDA error: unspecified launch failure"
	g = evaluate(t, f, "bench.json", Config{})
	if g.Verdict != result.Fail || !slices.Equal(findings(g, result.Error), []string{"flash_fwd harness_error"}) {
		t.Errorf("verdict %s, errors %q", g.Verdict, messages(g, result.Error))
	}
	// Without a request, no measurement: skip, saying the mode is unknown.
	f = readFixture(t, "bench_only.json")
	f.Request = nil
	g = evaluate(t, f, "", Config{})
	if g.Verdict != result.Skip || !strings.Contains(g.Findings[0].Message, "the harness file does not say its mode (no request.mode)") {
		t.Errorf("verdict %s, findings %q", g.Verdict, messages(g, result.Notice))
	}
	// A check-mode file whose results hold nothing fails: nothing to judge is not a pass.
	f = readFixture(t, "bench_only.json")
	f.Request.Mode = benchfile.ModeCheck
	g = evaluate(t, f, "check.json", Config{})
	if g.Verdict != result.Fail || len(findings(g, result.Error)) != 3 {
		t.Errorf("verdict %s, errors %q", g.Verdict, messages(g, result.Error))
	}
}

// TestEvaluateOverrides judges check_clean.json (flash_fwd max_err 0.000244 / 0.00035 /
// 0.00041 for small / mission / long) against configs decoded from YAML: every message
// names the line its limit came from.
func TestEvaluateOverrides(t *testing.T) {
	tests := []struct {
		name   string
		yaml   string
		errors []string // messages
		warns  []string // messages
	}{
		{"top level", "correctness:\n  max_err: 0.0003\n", []string{
			"flash_fwd × mission: max_err 0.00035 > 0.0003 (limit from kernel-gate.yml:2)",
			"flash_fwd × long: max_err 0.00041 > 0.0003 (limit from kernel-gate.yml:2)",
		}, nil},
		{"per kernel", `correctness:
  max_err: 0.0001
  kernels:
    - match: "flash_fwd*"
      max_err: 0.0004
      reason: fp16 attention
`, []string{
			`flash_fwd × long: max_err 0.00041 > 0.0004 (limit from kernel-gate.yml:4 (flash_fwd*): "fp16 attention")`,
		}, nil},
		{"per shape, later rule wins", `correctness:
  kernels:
    - match: "flash_fwd*"
      max_err: 0.0003
    - match: flash_fwd
      shapes: [long]
      max_err: 0.0005
`, []string{
			"flash_fwd × mission: max_err 0.00035 > 0.0003 (limit from kernel-gate.yml:3 (flash_fwd*))",
		}, nil},
		{"general rule after a shape rule wins", `correctness:
  kernels:
    - match: flash_fwd
      shapes: [long]
      max_err: 0.0005
    - match: "flash_fwd*"
      max_err: 0.0003
`, []string{
			"flash_fwd × mission: max_err 0.00035 > 0.0003 (limit from kernel-gate.yml:6 (flash_fwd*))",
			"flash_fwd × long: max_err 0.00041 > 0.0003 (limit from kernel-gate.yml:6 (flash_fwd*))",
		}, nil},
		// Relative: 0.000244/3.71 = 6.6e-5, 0.00035/4.02 = 8.7e-5, 0.00041/4.33 = 9.5e-5;
		// gemm 2.3e-6 and softmax 5.1e-6 pass.
		{"rtol", "correctness:\n  rtol: 0.00008\n", []string{
			"flash_fwd × mission: max_err 0.00035 > rtol 8e-05 × ref_max_abs 4.02 = 0.0003216 (relative error 8.71e-05) (limit from kernel-gate.yml:2)",
			"flash_fwd × long: max_err 0.00041 > rtol 8e-05 × ref_max_abs 4.33 = 0.0003464 (relative error 9.47e-05) (limit from kernel-gate.yml:2)",
		}, nil},
		{"rtol per shape", "correctness:\n  kernels:\n    - match: flash_fwd\n      shapes: [small]\n      rtol: 0.00005\n", []string{
			"flash_fwd × small: max_err 0.000244 > rtol 5e-05 × ref_max_abs 3.71 = 0.0001855 (relative error 6.58e-05) (limit from kernel-gate.yml:3 (flash_fwd × small))",
		}, nil},
		{"mean_err", "correctness:\n  mean_err: 1.15e-05\n", []string{
			"flash_fwd × small: mean_err 1.18e-05 > 1.15e-05 (limit from kernel-gate.yml:2)",
			"flash_fwd × mission: mean_err 1.21e-05 > 1.15e-05 (limit from kernel-gate.yml:2)",
		}, nil},
		{"min_checks over the request", "correctness:\n  kernels:\n    - match: gemm_wmma\n      min_checks: 10\n", []string{
			"gemm_wmma × 256x192x320: ran 3 of 10 checks (limit from kernel-gate.yml:3 (gemm_wmma))",
		}, nil},
		{"min_checks under the request", "correctness:\n  min_checks: 1\n", nil, nil},
		{"required shape missing", "correctness:\n  kernels:\n    - match: \"flash_*\"\n      shapes: [long, huge]\n", []string{
			"flash_fwd × huge: required by rule kernel-gate.yml:3 (flash_* × long, huge) but not reported (a shape that disappears must not pass)",
		}, nil},
		{"required kernel missing", "correctness:\n  kernels:\n    - match: flash_bwd\n      shapes: [long]\n      max_err: 0.001\n", []string{
			"rule kernel-gate.yml:3 (flash_bwd × long) requires a kernel matching flash_bwd with shapes long, but no such kernel is in check.json (a kernel that disappears must not pass)",
		}, nil},
		{"rule matching nothing", "correctness:\n  kernels:\n    - match: \"flash_fwd<*>\"\n      max_err: 0.001\n", nil, []string{
			"rule kernel-gate.yml:3 (flash_fwd<*>) matches no result in check.json: its tolerances were not used (was the kernel renamed?)",
		}},
	}
	f := readFixture(t, "check_clean.json")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := decodeConfig(t, tt.yaml)
			g := evaluate(t, f, "check.json", cfg)
			if got := messages(g, result.Error); !slices.Equal(got, tt.errors) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.errors)
			}
			if got := messages(g, result.Warning); !slices.Equal(got, tt.warns) {
				t.Errorf("warnings:\n got %q\nwant %q", got, tt.warns)
			}
			if want := result.Pass; len(tt.errors) > 0 {
				if g.Verdict != result.Fail {
					t.Errorf("verdict %s", g.Verdict)
				}
			} else if g.Verdict != want {
				t.Errorf("verdict %s", g.Verdict)
			}
		})
	}
}

func TestEvaluateRepeatTol(t *testing.T) {
	f := readFixture(t, "check_repeat_disagree.json")
	// A kernel with floating-point atomics gets a repeat_tol of its own.
	cfg := decodeConfig(t, "correctness:\n  kernels:\n    - match: row_softmax\n      repeat_tol: 0.004\n      reason: atomicAdd of row sums\n")
	if g := evaluate(t, f, "check.json", cfg); g.Verdict != result.Pass {
		t.Errorf("with repeat_tol: %s %q", g.Verdict, messages(g, result.Error))
	}
	cfg = decodeConfig(t, "correctness:\n  repeat_tol: 0.001\n")
	g := evaluate(t, f, "check.json", cfg)
	want := []string{"row_softmax × 64x1000: repeated launches disagree (the first call passes, later calls fail): repeat_max_diff 0.00390625 > 0.001 over 3 launches (limit from kernel-gate.yml:2)"}
	if got := messages(g, result.Error); !slices.Equal(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
}

// clean returns a passing result for edge cases to spoil.
func clean(kernel, shape string) benchfile.Result {
	return benchfile.Result{Kernel: kernel, Shape: shape, MaxErr: fl(0.00035), MeanErr: fl(1.2e-5), RefMaxAbs: fl(4),
		BadFraction: fl(0), NaNCount: i64(0), InfCount: i64(0), Checks: intp(3), RepeatLaunches: intp(3), RepeatMaxDiff: fl(0)}
}

func checkFile(results ...benchfile.Result) *benchfile.File {
	return &benchfile.File{Schema: benchfile.Schema, Device: benchfile.Device{Name: "NVIDIA H200"},
		Request: &benchfile.Request{Mode: benchfile.ModeCheck, Rounds: 3}, Results: results}
}

func TestEvaluateEdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		spoil  func(r *benchfile.Result)
		cfg    Config
		errors []string
		warns  []string
	}{
		{"clean", func(*benchfile.Result) {}, Config{}, nil, nil},
		{"negative max_err", func(r *benchfile.Result) { r.MaxErr = fl(-0.5) }, Config{}, []string{"k max_err -0.5"}, nil},
		{"negative nan_count", func(r *benchfile.Result) { r.NaNCount = i64(-1) }, Config{}, []string{"k nan_count -1"}, nil},
		{"negative inf_count", func(r *benchfile.Result) { r.InfCount = i64(-3) }, Config{}, []string{"k inf_count -3"}, nil},
		{"-Inf max_err", func(r *benchfile.Result) { r.MaxErr = fl(math.Inf(-1)) }, Config{}, []string{"k max_err"}, nil},
		{"NaN reference", func(r *benchfile.Result) { r.RefMaxAbs = fl(math.NaN()) }, Config{}, []string{"k ref_max_abs"}, nil},
		{"NaN bad_fraction", func(r *benchfile.Result) { r.BadFraction = fl(math.NaN()) }, Config{}, []string{"k bad_fraction"}, nil},
		{"bad_fraction over 1", func(r *benchfile.Result) { r.BadFraction = fl(3) }, Config{}, []string{"k bad_fraction 3"}, nil},
		{"bad_fraction over its limit", func(r *benchfile.Result) { r.BadFraction = fl(0.002) },
			Config{Tolerance: Tolerance{BadFraction: f64(0.001)}}, []string{"k bad_fraction 0.002>0.001"}, nil},
		{"bad_fraction not reported", func(r *benchfile.Result) { r.BadFraction = nil },
			Config{Tolerance: Tolerance{BadFraction: f64(0)}}, nil, []string{"k bad_fraction"}},
		{"bad_fraction without a limit", func(r *benchfile.Result) { r.BadFraction = fl(0.5) }, Config{}, nil, nil},
		{"mean_err not reported", func(r *benchfile.Result) { r.MeanErr = nil },
			Config{Tolerance: Tolerance{MeanErr: f64(1e-4)}}, nil, []string{"k mean_err"}},
		{"rtol without ref_max_abs", func(r *benchfile.Result) { r.RefMaxAbs = nil },
			Config{Tolerance: Tolerance{RTol: f64(0.01)}}, nil, []string{"k rtol"}},
		{"rtol with an all-zero reference", func(r *benchfile.Result) { r.RefMaxAbs = fl(0) },
			Config{Tolerance: Tolerance{RTol: f64(0.01)}}, nil, []string{"k rtol"}},
		{"rtol met", func(*benchfile.Result) {}, Config{Tolerance: Tolerance{RTol: f64(0.0001)}}, nil, nil},
		{"rtol and max_err both apply", func(r *benchfile.Result) { r.MaxErr = fl(0.07) },
			Config{Tolerance: Tolerance{RTol: f64(0.01)}}, []string{"k max_err 0.07>0.06", "k rtol 0.0175>0.01"}, nil},
		{"checks not reported", func(r *benchfile.Result) { r.Checks = nil }, Config{}, []string{"k checks"}, nil},
		{"zero checks", func(r *benchfile.Result) { r.Checks = intp(0) }, Config{}, []string{"k checks 0>3"}, nil},
		{"one launch", func(r *benchfile.Result) { r.RepeatLaunches = intp(1) }, Config{}, nil, []string{"k repeat_max_diff"}},
		{"launches without a diff", func(r *benchfile.Result) { r.RepeatMaxDiff = nil }, Config{}, nil, []string{"k repeat_max_diff"}},
		{"negative repeat diff", func(r *benchfile.Result) { r.RepeatMaxDiff = fl(-1) }, Config{}, []string{"k repeat_max_diff -1"}, nil},
		{"white-space harness error", func(r *benchfile.Result) { r.Error = " \n" }, Config{}, []string{"k harness_error"}, nil},
		{"relative error beyond float64", func(r *benchfile.Result) { r.MaxErr, r.RefMaxAbs = fl(0.05), fl(5e-324) },
			Config{Tolerance: Tolerance{RTol: f64(0.01)}}, []string{"k rtol"}, nil},
		{"repeat diff without launches", func(r *benchfile.Result) { r.RepeatLaunches, r.RepeatMaxDiff = nil, fl(1e-7) }, Config{},
			[]string{"k repeat_max_diff 1e-07>0"}, nil},
		{"nothing measured", func(r *benchfile.Result) { *r = benchfile.Result{Kernel: r.Kernel, Shape: r.Shape} }, Config{}, []string{"k missing_result"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := clean("k", "s")
			tt.spoil(&r)
			f := checkFile(r)
			g := evaluate(t, f, "check.json", tt.cfg)
			if got := findings(g, result.Error); !slices.Equal(got, tt.errors) {
				t.Errorf("errors:\n got %q\nwant %q\n%q", got, tt.errors, messages(g, result.Error))
			}
			if got := findings(g, result.Warning); !slices.Equal(got, tt.warns) {
				t.Errorf("warnings:\n got %q\nwant %q", got, tt.warns)
			}
		})
	}
}

func TestEvaluateMessages(t *testing.T) {
	r := clean("kg::flash_fwd<64, 64, true>", "long")
	r.Error = "x" + strings.Repeat("é", 1500) + "\n"
	g := evaluate(t, checkFile(r), "check.json", Config{})
	msg := g.Findings[0].Message
	if g.Findings[0].Kernel != "kg::flash_fwd<64, 64, true>" || !strings.HasPrefix(msg, "kg::flash_fwd<64, 64, true> × long: the harness failed: xéé") ||
		!strings.HasSuffix(msg, "…") || len(msg) > benchfile.MaxErrorMessage+100 || !utf8.ValidString(msg) {
		t.Errorf("finding %+v", g.Findings[0])
	}
	// Globs match C++ names as in the other gates.
	r = clean("kg::flash_fwd<64, 64, true>", "long")
	r.MaxErr = fl(0.05)
	cfg := Config{Kernels: []Rule{{Match: "flash_fwd<*, true>", Tolerance: Tolerance{MaxErr: f64(0.01)}, Item: configpos.Item{Line: 9}}}}
	cfg.File = "k.yml"
	g = evaluate(t, checkFile(r), "check.json", cfg)
	want := []string{"kg::flash_fwd<64, 64, true> × long: max_err 0.05 > 0.01 (limit from k.yml:9 (flash_fwd<*, true>))"}
	if got := messages(g, result.Error); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if !strings.HasPrefix(g.Summary, "1 kernel × shape result(s) from check.json on NVIDIA H200; 1 error(s)") {
		t.Errorf("summary %q", g.Summary)
	}
}

func TestEvaluateErrors(t *testing.T) {
	if _, err := Evaluate(nil, "x.json", Config{}); err == nil {
		t.Error("nil file accepted")
	}
	bad := Config{Kernels: []Rule{{Match: "", Tolerance: Tolerance{MaxErr: f64(1)}}}}
	if _, err := Evaluate(checkFile(clean("k", "s")), "x.json", bad); err == nil || !strings.Contains(err.Error(), "non-empty kernel glob") {
		t.Errorf("invalid config: %v", err)
	}
	// No results at all in check mode (benchfile.Read refuses it; Evaluate fails closed).
	g := evaluate(t, checkFile(), "x.json", Config{})
	if g.Verdict != result.Fail {
		t.Errorf("empty check file: %s", g.Verdict)
	}
	// Without a request, measurements make the file judged, with a notice.
	f := checkFile(clean("k", "s"))
	f.Request = nil
	g = evaluate(t, f, "x.json", Config{})
	if g.Verdict != result.Pass || !slices.ContainsFunc(messages(g, result.Notice), func(m string) bool {
		return strings.Contains(m, "does not say its mode") && strings.Contains(m, "judged as a check-mode run")
	}) {
		t.Errorf("verdict %s, notices %q", g.Verdict, messages(g, result.Notice))
	}
	// Requested shapes that no kernel reports fail, even when every kernel has shapes of
	// its own.
	f = checkFile(clean("gemm_wmma", "256x192x320"))
	f.Request.Shapes = []string{"small", "long", "small"}
	g = evaluate(t, f, "x.json", Config{})
	want := []string{"shape small was requested (request.shapes) but no kernel reported it", "shape long was requested (request.shapes) but no kernel reported it"}
	if got := messages(g, result.Error); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// min_checks defaults to 1 without request rounds.
	r := clean("k", "s")
	r.Checks = intp(1)
	f = checkFile(r)
	f.Request.Rounds = 0
	if g := evaluate(t, f, "x.json", Config{}); g.Verdict != result.Pass {
		t.Errorf("one check, no rounds: %s %q", g.Verdict, messages(g, result.Error))
	}
}

func TestEvaluateTableAndData(t *testing.T) {
	f := readFixture(t, "check_nan_bare.json")
	f.Results[3].MaxErr = fl(0.05) // gemm_wmma: close to the limit, but passing
	g := evaluate(t, f, "nan.json", Config{})
	wantCols := []string{"kernel", "shape", "max_err", "limit", "mean_err", "nan", "checks", "repeat diff"}
	if !slices.Equal(g.Table.Columns, wantCols) {
		t.Errorf("columns %q", g.Table.Columns)
	}
	var got []string
	for _, r := range g.Table.Rows {
		got = append(got, string(r.Status)+" "+strings.Join(r.Cells, " "))
	}
	want := []string{
		"fail flash_fwd long NaN 0.06 NaN 12288 3/3 0",
		"pass gemm_wmma 256x192x320 0.05 0.06 1.9e-06 0 3/3 0",
		"pass flash_fwd mission 0.00035 0.06 1.21e-05 0 3/3 0",
		"pass flash_fwd small 0.000244 0.06 1.18e-05 0 3/3 0",
		"pass row_softmax 64x1000 5.96e-08 0.06 3.1e-09 0 3/3 0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}

	// Data keeps NaN as a string; absent fields stay absent.
	var d struct {
		Source  string `json:"source"`
		Device  map[string]string
		Results []map[string]any
	}
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatalf("%v: %s", err, g.Data)
	}
	if d.Source != "nan.json" || d.Device["name"] != "NVIDIA H200" || d.Device["cuda"] != "13.0" {
		t.Errorf("data %s", g.Data)
	}
	long := d.Results[2]
	for k, v := range map[string]any{"kernel": "flash_fwd", "shape": "long", "verdict": "fail", "max_err": "NaN", "mean_err": "NaN",
		"limit": 0.06, "limit_from": "default", "nan_count": 12288.0, "inf_count": 0.0, "checks": 3.0, "checks_required": 3.0, "repeat_max_diff": 0.0, "ref_max_abs": 4.33, "bad_fraction": 0.0} {
		if long[k] != v {
			t.Errorf("data %s = %v, want %v", k, long[k], v)
		}
	}
	if _, ok := long["error"]; ok {
		t.Error("error present without a harness error")
	}

	// rtol's bound is the limit when it is the smaller.
	f = readFixture(t, "check_clean.json")
	g = evaluate(t, f, "c.json", decodeConfig(t, "correctness:\n  rtol: 0.001\n"))
	_ = json.Unmarshal(g.Data, &d)
	if lim := d.Results[4]["limit"].(float64); math.Abs(lim-0.0117e-3) > 1e-12 || d.Results[4]["limit_from"] != "kernel-gate.yml:2, rtol × ref_max_abs" {
		t.Errorf("row_softmax limit %v from %v", d.Results[4]["limit"], d.Results[4]["limit_from"])
	}
}

// TestEvaluateAllFixtures runs every fixture through several configs: the invariants hold
// and nothing NaN passes.
func TestEvaluateAllFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures, "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	cfgs := []Config{{}, decodeConfig(t, configYAML), decodeConfig(t, "correctness:\n  rtol: 0.5\n  mean_err: 1\n  bad_fraction: 1\n  repeat_tol: 1\n  max_err: 1000\n")}
	for _, p := range files {
		f := readFixture(t, filepath.Base(p))
		for i, cfg := range cfgs {
			g := evaluate(t, f, filepath.Base(p), cfg)
			if nonFinite(f) && g.Verdict != result.Fail {
				t.Errorf("%s config %d: NaN/Inf passed (%s)", p, i, g.Verdict)
			}
		}
	}
}

// nonFinite reports whether any result holds a NaN or Inf measurement or count.
func nonFinite(f *benchfile.File) bool {
	for _, r := range f.Results {
		for _, v := range []*benchfile.Float{r.MaxErr, r.MeanErr, r.RefMaxAbs, r.BadFraction, r.RepeatMaxDiff} {
			if v != nil && !v.Finite() {
				return true
			}
		}
		if r.NaNCount != nil && *r.NaNCount > 0 || r.InfCount != nil && *r.InfCount > 0 {
			return true
		}
	}
	return false
}

// TestDuplicateKeysRefused: a result that says max_err twice (or nan_count) was judged on
// the last value, so a failing kernel passed. Read refuses the file, naming the key, its
// line and its path; the file without the second key fails the gate.
func TestDuplicateKeysRefused(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "check_over_default.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g := evaluate(t, readFixture(t, "check_over_default.json"), "check_over_default.json", Config{}); g.Verdict != result.Fail {
		t.Fatalf("the fixture passes: %s", g.Verdict)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"max_err": 0.0712`, `"max_err": 0.0712, "max_err": 0.0003`, `duplicate key "max_err" at results[`},
		{`"max_err": 0.0712`, `"max_err": 0.0712, "Max_Err": 0.0003`, `duplicate key "Max_Err" at results[`},
		{`"nan_count": 0`, `"nan_count": 12, "nan_count": 0`, `duplicate key "nan_count" at results[0].nan_count`},
	} {
		if !bytes.Contains(raw, []byte(tc.old)) {
			t.Fatalf("the fixture has no %s", tc.old)
		}
		in := bytes.Replace(raw, []byte(tc.old), []byte(tc.new), 1)
		_, err := benchfile.Read(bytes.NewReader(in))
		if !errors.Is(err, benchfile.ErrNotBenchFile) || !strictjson.IsDuplicate(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: %v", tc.new, err)
		}
	}
}
