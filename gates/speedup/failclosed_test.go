package speedup

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// TestCompareFailClosed: head timings that cannot be judged are a failed comparison (an
// error finding, the gate fails); a comparison base cannot give is a skipped one (a
// warning, the gate skips unless something failed): never a pass. Each case is a clean
// pair of 20 side-by-side rounds ("k", head as fast as base, which alone passes) beside
// "other", with head's side of "k" spoilt.
func TestCompareFailClosed(t *testing.T) {
	nan, inf := benchfile.Float(math.NaN()), benchfile.Float(math.Inf(1))
	cases := []struct {
		name   string
		spoil  func(base, head *benchfile.Result)
		want   result.Verdict
		sev    result.Severity
		metric string
		msg    string
	}{
		{"head all NaN, Inf, zero or negative", func(_, h *benchfile.Result) {
			for i := range h.RoundsUs {
				h.RoundsUs[i] = []benchfile.Float{nan, inf, 0, -3}
			}
		}, result.Fail, result.Error, MetricSamples, "k × mission: head has no valid timing (80 timing(s) in 20 round(s), every one NaN, Inf, zero or negative)"},
		{"head rounds all empty", func(_, h *benchfile.Result) {
			h.RoundsUs = make([][]benchfile.Float, 20)
		}, result.Fail, result.Error, MetricSamples, "k × mission: head has no valid timing (20 round(s), all empty)"},
		{"head samples all NaN", func(_, h *benchfile.Result) {
			h.RoundsUs, h.SamplesUs = nil, []benchfile.Float{nan, nan}
		}, result.Fail, result.Error, MetricSamples, "head has no valid timing (2 timing(s) in 1 round(s)"},
		{"head far fewer rounds", func(_, h *benchfile.Result) {
			h.RoundsUs = h.RoundsUs[:4]
		}, result.Fail, result.Error, MetricSamples, "k × mission: head has valid timings in 4 round(s), base in 20, and only 4 round(s) have both: far fewer than base's"},
		{"head valid only where base is not", func(b, h *benchfile.Result) {
			for i := range h.RoundsUs {
				if i%2 == 0 {
					h.RoundsUs[i] = nil
				} else {
					b.RoundsUs[i] = nil
				}
			}
		}, result.Fail, result.Error, MetricSamples, "head has valid timings in 10 round(s), base in 10, and only 0 round(s) have both"},
		{"head missing", nil, result.Skip, result.Warning, MetricMissing, "k × mission: in base but not in head, so not compared"},
		{"base all NaN", func(b, _ *benchfile.Result) {
			for i := range b.RoundsUs {
				b.RoundsUs[i] = []benchfile.Float{nan}
			}
		}, result.Skip, result.Warning, MetricMissing, "k × mission: base has no valid timing for it (20 timing(s) in 20 round(s)"},
		{"base rounds empty", func(b, _ *benchfile.Result) { b.RoundsUs = make([][]benchfile.Float, 3) },
			result.Skip, result.Warning, MetricMissing, "base has no valid timing for it (3 round(s), all empty)"},
		{"base harness failed", func(b, _ *benchfile.Result) { b.Error = "an illegal memory access" },
			result.Skip, result.Warning, MetricMissing, "the harness failed in base"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, head := filesN(t, map[string]float64{"k": 1.0, "other": 1.0}, 0.002, 20)
			if tc.spoil == nil {
				head.Results = head.Results[1:]
			} else {
				tc.spoil(&base.Results[0], &head.Results[0])
			}
			g, err := Compare(base, head, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != tc.want {
				t.Errorf("verdict %s, want %s: %+v", g.Verdict, tc.want, g.Findings)
			}
			if f := findings(g, tc.sev, tc.msg); len(f) != 1 || f[0].Metric != tc.metric {
				t.Errorf("no %s %s finding %q in %+v", tc.sev, tc.metric, tc.msg, g.Findings)
			}
			// The table shows it, worst first.
			word := map[result.Verdict]string{result.Fail: "failed", result.Skip: "skipped"}[tc.want]
			found := false
			for _, r := range g.Table.Rows {
				if r.Cells[0] == "k" {
					found = r.Cells[2] == word && (r.Status == result.Fail) == (tc.want == result.Fail)
				}
			}
			if !found {
				t.Errorf("no %q row for k: %+v", word, g.Table.Rows)
			}
			if !strings.Contains(g.Summary, "1 failed, 0 skipped") && !strings.Contains(g.Summary, "0 failed, 1 skipped") {
				t.Errorf("summary %q", g.Summary)
			}
			// "other" is still compared.
			if recs, _ := records(t, g); len(recs) != 1 || recs[0].Kernel != "other" || recs[0].Verdict != Same {
				t.Errorf("records %+v", recs)
			}
		})
	}
	// Half of base's rounds is enough to judge (the runner's throttled rounds are
	// dropped on both sides, and a round lost on one side is dropped and counted).
	base, head := filesN(t, map[string]float64{"k": 1.0}, 0.002, 32)
	head.Results[0].RoundsUs = head.Results[0].RoundsUs[:16]
	g, err := Compare(base, head, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if recs, _ := records(t, g); g.Verdict != result.Pass || len(recs) != 1 || recs[0].Rounds != 16 || recs[0].DroppedRounds != 16 {
		t.Errorf("half the rounds: %s %+v", g.Verdict, recs)
	}
	// A kernel new in head is not a skipped comparison: nothing was there to compare.
	base, head = filesN(t, map[string]float64{"k": 1.0, "new": 1.0}, 0.002, 20)
	base.Results = base.Results[:1]
	if g, err := Compare(base, head, Config{}); err != nil || g.Verdict != result.Pass || len(findings(g, result.Notice, "new × mission: new in head")) != 1 {
		t.Errorf("new in head: %v %s %+v", err, g.Verdict, g.Findings)
	}
}

// TestBenchCompareExit runs `kernel-gate bench compare` on files written as a harness
// writes them: a head whose timings are all NaN exits 1, a missing kernel is a skip, the
// untouched pair passes.
func TestBenchCompareExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "kernel-gate")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kernel-gate").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	doc := func(kernels map[string]string) string {
		var rs []string
		for _, k := range []string{"k", "other"} {
			if v, ok := kernels[k]; ok {
				rs = append(rs, fmt.Sprintf(`{"kernel": %q, "shape": "mission", "rounds_us": [%s]}`, k, v))
			}
		}
		return `{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"},
 "request": {"mode": "bench"}, "results": [` + strings.Join(rs, ",\n") + "]}\n"
	}
	rounds := func(v string) string {
		r := make([]string, 20)
		for i := range r {
			r[i] = fmt.Sprintf("[%s, %s, %s]", v, v, v)
		}
		return strings.Join(r, ", ")
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.json", doc(map[string]string{"k": rounds("10.0"), "other": rounds("20.0")}))
	for _, tc := range []struct {
		name string
		head map[string]string
		exit int
		out  string
	}{
		{"same", map[string]string{"k": rounds("10.0"), "other": rounds("20.0")}, 0, "pass"},
		{"head all NaN", map[string]string{"k": rounds("NaN"), "other": rounds("20.0")}, 1, "head has no valid timing"},
		{"head rounds empty", map[string]string{"k": strings.Repeat("[], ", 19) + "[]", "other": rounds("20.0")}, 1, "all empty"},
		{"head missing k", map[string]string{"other": rounds("20.0")}, 0, `"verdict": "skip"`},
	} {
		cmd := exec.Command(bin, "bench", "compare", "--format", "json", base, write(tc.name+".json", doc(tc.head)))
		cmd.Dir = dir
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.exit || !strings.Contains(string(out), tc.out) {
			t.Errorf("%s: exit %d, want %d and %q:\n%s", tc.name, code, tc.exit, tc.out, out)
		}
	}
}
