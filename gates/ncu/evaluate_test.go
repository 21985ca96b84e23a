package ncu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

func evaluate(t *testing.T, rep *Report, cfg Config) result.Gate {
	t.Helper()
	g, err := Evaluate(rep, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "ncu" || g.Table == nil || g.Findings == nil || !json.Valid(g.Data) {
		t.Fatalf("gate shape: %s %s findings %v table %v data %s", g.Name, g.Verdict, g.Findings, g.Table, g.Data)
	}
	return g
}

func errorsOf(g result.Gate) []result.Finding {
	var out []result.Finding
	for _, f := range g.Findings {
		if f.Severity == result.Error {
			out = append(out, f)
		}
	}
	return out
}

func messages(g result.Gate) string {
	var ms []string
	for _, f := range g.Findings {
		ms = append(ms, string(f.Severity)+": "+f.Message)
	}
	return strings.Join(ms, "\n")
}

// Both captures together: the issue's rules hold on the H200. flash_fwd is far from
// Tensor Core bound (5.3% of the pipe) but not DRAM bound either (1.8%): it passes through
// the any rule's DRAM branch. row_softmax streams 42.9% of DRAM peak.
func TestEvaluateIssueRulesOnCaptures(t *testing.T) {
	rep := Merge(parse(t, capture(t, "ncu-metrics.csv"), "ncu-metrics.csv"), parse(t, capture(t, "ncu-base-units.csv"), "ncu-base-units.csv"))
	g := evaluate(t, rep, config(t, issueConfig))
	if g.Verdict != result.Pass || len(errorsOf(g)) != 0 {
		t.Fatalf("verdict %s\n%s", g.Verdict, messages(g))
	}
	if g.Summary != "3 rule checks passed on 3 kernels (7 launches profiled)" {
		t.Errorf("summary %q", g.Summary)
	}
	want := [][]string{
		{"flash_fwd<64, 64, 0>", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "5.405 %", "5.32..5.43 (4)", "any >= 50", "no", "line 6"},
		{"flash_fwd<64, 64, 0>", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "1.8 %", "1.78..1.8 (4)", "any <= 50", "yes", "line 6"},
		{"flash_fwd<64, 64, 1>", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "5.18 %", "5.18..5.18 (2)", "any >= 50", "no", "line 6"},
		{"flash_fwd<64, 64, 1>", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "2.015 %", "2..2.03 (2)", "any <= 50", "yes", "line 6"},
		{"row_softmax<256>", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "42.93 %", "42.93..42.93 (1)", "all >= 30", "yes", "line 13"},
		{"row_softmax<256>", "gpu__time_duration.sum", "22592 ns", "22592..22592 (1)", "all <= 1000000 ns", "yes", "line 13"},
	}
	if len(g.Table.Rows) != len(want) {
		t.Fatalf("%d rows: %+v", len(g.Table.Rows), g.Table.Rows)
	}
	for i, w := range want {
		r := g.Table.Rows[i]
		if r.Status != result.Pass || strings.Join(r.Cells, "|") != strings.Join(w, "|") {
			t.Errorf("row %d = %s %q\nwant %q", i, r.Status, r.Cells, w)
		}
	}
	var d Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Kernels) != 3 || d.Kernels[0].Short != "flash_fwd<64, 64, 0>" || len(d.Kernels[0].Launches) != 4 || len(d.Rules) != 2 ||
		len(d.Rules[0].Kernels) != 2 || len(d.Rules[0].Failed) != 0 {
		t.Fatalf("data %+v", d)
	}
	for _, m := range d.Kernels[0].Metrics {
		if m.Name == "dram__bytes_read.sum" && (*m.Min != 3176192 || *m.Max != 3178240 || m.Values[0] != "3,176,448" || m.Unit != "byte") {
			t.Errorf("dram__bytes_read.sum: %+v", m)
		}
		if m.Name == "gpu__time_duration.sum" && (*m.Median != 36768 || m.Unit != "ns") {
			t.Errorf("gpu__time_duration.sum: %+v", m)
		}
	}
}

func TestEvaluateFailures(t *testing.T) {
	metrics := parse(t, capture(t, "ncu-metrics.csv"), "ncu-metrics.csv")
	tests := []struct {
		name   string
		rep    *Report
		cfg    string
		checks func(t *testing.T, g result.Gate)
	}{
		{"tensor pipe required", metrics, `ncu:
  kernels:
    - match: "flash_fwd<64, 64, 0>"
      all:
        - metric: sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
          min: 50
      reason: "must be Tensor Core bound"
`, func(t *testing.T, g result.Gate) {
			es := errorsOf(g)
			if len(es) != 1 {
				t.Fatalf("%s", messages(g))
			}
			f := es[0]
			want := "flash_fwd<64, 64, 0> (4 launches, grid (8, 16, 1), block (128, 1, 1), sm_90): rule k.yml:3 (flash_fwd<64, 64, 0>) fails: " +
				"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active = 5.405 % (median of 4 launches, 5.32..5.43) < min 50 (k.yml:5) (reason: must be Tensor Core bound)"
			if f.Message != want || f.Kernel != "flash_fwd<64, 64, 0>" || f.Arch != "sm_90" || f.Line != 5 || f.File != "k.yml" ||
				f.Metric != "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active" || *f.Value != 5.405 || *f.Limit != 50 {
				t.Errorf("finding %+v\nmessage %s\nwant    %s", f, f.Message, want)
			}
			if g.Summary != "1 of 1 rule checks failed on 2 kernels (6 launches profiled)" || g.Table.Rows[0].Status != result.Fail {
				t.Errorf("summary %q", g.Summary)
			}
		}},
		{"any: none holds", metrics, `ncu:
  kernels:
    - match: "flash_fwd<*, 1>"
      any:
        - {metric: sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active, min: 50}
        - {metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 2}
`, func(t *testing.T, g result.Gate) {
			es := errorsOf(g)
			if len(es) != 1 || es[0].Metric != MetricRule || es[0].Value != nil || es[0].Line != 3 ||
				!strings.Contains(es[0].Message, "none of any holds: sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active = 5.18 % (median of 2 launches, 5.18..5.18) < min 50 (k.yml:5); "+
					"dram__throughput.avg.pct_of_peak_sustained_elapsed = 2.015 % (median of 2 launches, 2..2.03) > max 2 (k.yml:6)") {
				t.Errorf("%s", messages(g))
			}
		}},
		{"all and any: both must hold", metrics, `ncu:
  kernels:
    - match: "flash_fwd<*>"
      any:
        - {metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}
      all:
        - {metric: launch__registers_per_thread, max: 153}
`, func(t *testing.T, g result.Gate) {
			es := errorsOf(g)
			if len(es) != 1 || es[0].Kernel != "flash_fwd<64, 64, 1>" || es[0].Metric != "launch__registers_per_thread" || *es[0].Value != 154 || *es[0].Limit != 153 {
				t.Errorf("%s", messages(g))
			}
		}},
		{"inclusive bounds", metrics, `ncu:
  kernels:
    - match: "flash_fwd<64, 64, 0>"
      all: [{metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, min: 1.8, max: 1.8}]
`, func(t *testing.T, g result.Gate) {
			if g.Verdict != result.Pass {
				t.Errorf("%s", messages(g))
			}
		}},
		{"a rule that matches no profiled kernel", metrics, `ncu:
  launches: 6
  kernels:
    - match: "row_softmax<*>"
      all: [{metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, min: 30}]
`, func(t *testing.T, g result.Gate) {
			es := errorsOf(g)
			if len(es) != 1 || es[0].Metric != MetricMatch || es[0].Line != 4 ||
				!strings.Contains(es[0].Message, "rule k.yml:4 (row_softmax<*>) matched no profiled kernel: a renamed or unprofiled kernel must not pass silently; ncu profiled flash_fwd<64, 64, 0>, flash_fwd<64, 64, 1>") {
				t.Errorf("%s", messages(g))
			}
			if g.Verdict != result.Fail || g.Table.Rows[0].Cells[0] != "row_softmax<*>: not profiled" {
				t.Errorf("%s %+v", g.Verdict, g.Table.Rows)
			}
		}},
		{"a metric ncu did not collect", metrics, `ncu:
  kernels:
    - match: "flash_fwd<*>"
      any: [{metric: sm__throughput.avg.pct_of_peak_sustained_elapsed, min: 1}]
`, func(t *testing.T, g result.Gate) {
			es := errorsOf(g)
			if len(es) != 2 || !strings.Contains(es[0].Message, "sm__throughput.avg.pct_of_peak_sustained_elapsed is not in the ncu output (it has dram__bytes_read.sum, dram__throughput") {
				t.Errorf("%s", messages(g))
			}
		}},
		{"a unit that is not the printed one", metrics, `ncu:
  kernels:
    - match: "flash_fwd<*>"
      all: [{metric: gpu__time_duration.sum, max: 100, unit: usecond}]
`, func(t *testing.T, g result.Gate) {
			es := errorsOf(g)
			if len(es) != 2 || !strings.Contains(es[0].Message, `gpu__time_duration.sum is printed in "ns", the threshold is in "usecond"`) {
				t.Errorf("%s", messages(g))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.checks(t, evaluate(t, tt.rep, config(t, tt.cfg))) })
	}
}

// Values ncu could not collect never pass, even where a number could not fail.
func TestEvaluateNAFails(t *testing.T) {
	const m = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
	in := hdr + row("0", "1", "void k<1>(int)", m, "%", "1.5") + row("1", "1", "void k<1>(int)", m, "%", "n/a") + row("2", "1", "void j(int)", "other__x.sum", "", "1")
	g := evaluate(t, parse(t, in, "x"), config(t, "ncu:\n  kernels:\n    - match: 'k<*>'\n      all: [{metric: "+m+", max: 100}]\n    - match: j\n      all: [{metric: "+m+", max: 100}]\n"))
	es := errorsOf(g)
	if len(es) != 2 || !strings.Contains(es[0].Message, m+` is not a number: "n/a" in launch 1 (n/a: ncu could not collect it)`) ||
		!strings.Contains(es[1].Message, m+" is not in the ncu output (it has other__x.sum)") {
		t.Errorf("%s", messages(g))
	}
	// A metric missing from one launch of several.
	in = hdr + row("0", "1", "void k<1>(int)", m, "%", "1.5") + row("1", "1", "void k<1>(int)", "other__x.sum", "", "1")
	g = evaluate(t, parse(t, in, "x"), config(t, "ncu:\n  kernels:\n    - match: 'k<*>'\n      all: [{metric: "+m+", max: 100}]\n"))
	if es := errorsOf(g); len(es) != 1 || !strings.Contains(es[0].Message, m+" is missing from launch 1 of 2") {
		t.Errorf("%s", messages(g))
	}
}

func TestEvaluateRunFailures(t *testing.T) {
	cfg := config(t, issueConfig)
	tests := []struct {
		name, in string
		want     string
	}{
		{"ncu's errors (an unknown metric, exit 9)", capture(t, "ncu-badmetric.csv"),
			`ncu reported errors: Failed to find metric regex:^no_such_metric_xyz\.(sum|min|max|avg|pct|ratio|max_rate)$; Failed to profile "flash_fwd" in process 767; The application returned an error code (9).`},
		{"no kernels profiled", "==PROF== Connected to process 9 (/x/h)\n==PROF== Disconnected from process 9\n==WARNING== No kernels were profiled.\n",
			`ncu profiled no kernel ("No kernels were profiled."): the -k filter matched no launched kernel, or the program launched none`},
		{"a table without rows", hdr, "the ncu output has no metric rows (1 table headers, 0 other lines): nothing was profiled"},
		{"truncated", strings.TrimSuffix(capture(t, "ncu-metrics.csv"), "\n")[:len(capture(t, "ncu-metrics.csv"))-20],
			"ncu-metrics.csv:46: the last line is a partial table row (the output was cut off)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := evaluate(t, parse(t, tt.in, "ncu-metrics.csv"), cfg)
			es := errorsOf(g)
			if g.Verdict != result.Fail || len(es) == 0 || es[0].Metric != MetricRun || !strings.Contains(es[0].Message, tt.want) {
				t.Errorf("verdict %s\n%s\nwant %s", g.Verdict, messages(g), tt.want)
			}
		})
	}
}

func TestEvaluateNoRules(t *testing.T) {
	g := evaluate(t, parse(t, capture(t, "ncu-metrics.csv"), "x"), Config{})
	if g.Verdict != result.Skip || len(g.Findings) != 1 || g.Findings[0].Severity != result.Notice ||
		!strings.Contains(g.Findings[0].Message, "no ncu rules are configured (ncu.kernels in kernel-gate.yml); read 6 launches of 2 kernels") {
		t.Errorf("%s %s", g.Verdict, messages(g))
	}
	// ncu's errors fail the gate even without rules.
	g = evaluate(t, parse(t, capture(t, "ncu-badmetric.csv"), "x"), Config{})
	if g.Verdict != result.Fail {
		t.Errorf("%s %s", g.Verdict, messages(g))
	}
}

// ncu's own advice (section mode) is a notice; a section CSV's labels are not metric names.
func TestEvaluateSectionCapture(t *testing.T) {
	g := evaluate(t, parse(t, capture(t, "ncu-sol.csv"), "ncu-sol.csv"), config(t, "ncu:\n  kernels:\n    - match: 'flash_fwd<*>'\n      all: [{metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}]\n"))
	var notice bool
	for _, f := range g.Findings {
		if f.Severity == result.Notice && strings.HasPrefix(f.Message, "ncu rule SOLBottleneck (OPT) on flash_fwd<64, 64, 0>: This kernel grid is too small") {
			notice = true
		}
	}
	es := errorsOf(g)
	if !notice || len(es) != 1 || !strings.Contains(es[0].Message, "names metrics by their section labels") {
		t.Errorf("%s", messages(g))
	}
}

func TestEvaluateNil(t *testing.T) {
	if _, err := Evaluate(nil, Config{}); err == nil {
		t.Error("a nil report must be an error")
	}
	if _, err := Evaluate(&Report{}, config(t, "ncu:\n  kernels:\n    - match: a\n")); err == nil || !strings.Contains(err.Error(), "invalid config") {
		t.Errorf("an invalid config: %v", err)
	}
}

// The NCU gate example of the configuration reference (docs/configuration.md) is a config
// this package accepts.
func TestConfigReferenceExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "\n## NCU gate\n")
	if !ok {
		t.Fatal("docs/configuration.md has no NCU gate section")
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatal("the NCU gate section has no yaml block")
	}
	block, _, _ = strings.Cut(block, "```")
	c := config(t, block)
	if err := validate(c); err != nil || len(c.Kernels) == 0 {
		t.Fatalf("%v %+v", err, c)
	}
}

// A summary (--print-summary per-kernel) is judged on ncu's average over a kernel's
// invocations, and says so; its range is the summary's Minimum..Maximum. The raw page's
// launches are judged like the details page's.
func TestEvaluateOtherLayouts(t *testing.T) {
	const cfg = `ncu:
  kernels:
    - match: "flash_fwd<*>"
      all:
        - {metric: gpu__time_duration.sum, max: 36000, unit: ns}
`
	g := evaluate(t, parse(t, capture(t, "ncu-summary-per-kernel.csv"), "ncu-summary-per-kernel.csv"), config(t, cfg))
	errs := errorsOf(g)
	if g.Verdict != result.Fail || len(errs) != 1 {
		t.Fatalf("verdict %s\n%s", g.Verdict, messages(g))
	}
	want := "flash_fwd<64, 64, 0> (ncu's summary of 4 launches, grid (8, 16, 1), block (128, 1, 1), sm_90): rule k.yml:3 (flash_fwd<*>) fails: gpu__time_duration.sum = 36400 ns (average of 4 launches as ncu --print-summary printed it, 35712..37120) > max 36000 (k.yml:5)"
	if errs[0].Message != want || errs[0].Value == nil || *errs[0].Value != 36400 {
		t.Errorf("finding %q (value %v), want %q", errs[0].Message, errs[0].Value, want)
	}
	g = evaluate(t, parse(t, capture(t, "ncu-raw.csv"), "ncu-raw.csv"), config(t, cfg))
	errs = errorsOf(g)
	if g.Verdict != result.Fail || len(errs) != 1 || !strings.Contains(errs[0].Message, "gpu__time_duration.sum = 36384 ns (median of 4 launches, 35840..36512) > max 36000") {
		t.Fatalf("verdict %s\n%s", g.Verdict, messages(g))
	}
}
