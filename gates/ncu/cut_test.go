package ncu

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// flashOnly is the issue's flash_fwd rule alone: an any of two metrics, so a launch that
// lacks one still holds through the other.
const flashOnly = `ncu:
  kernels:
    - match: "flash_fwd<*>"
      any:
        - {metric: sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active, min: 50}
        - {metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}
`

// bothCaptures is the two real captures as one log, as two profiled processes print it
// (flash_fwd's 6 launches, then row_softmax's): the whole passes the issue's rules.
func bothCaptures(t *testing.T) string {
	return capture(t, "ncu-metrics.csv") + capture(t, "ncu-base-units.csv")
}

// The real output cut after every line (a CSV cut on a row boundary: no partial row for
// Parse to see). Whatever the cut leaves, the gate passes only when every launch still has
// every metric the config names and every rule still finds its kernel: a launch cut short
// fails naming its kernel, launch and metric, a kernel cut off fails the rule that names it.
func TestEvaluateCutOnRowBoundary(t *testing.T) {
	full := bothCaptures(t)
	lines := strings.SplitAfter(full, "\n")
	for _, cfgText := range []string{issueConfig, flashOnly} {
		cfg := config(t, cfgText)
		requested := Metrics(cfg)
		passes := 0
		for n := 1; n <= len(lines); n++ {
			in := strings.Join(lines[:n], "")
			rep, err := Parse(strings.NewReader(in), "both.csv")
			if err != nil {
				continue // no table and no ncu message yet
			}
			g := evaluate(t, rep, cfg)
			// What the cut left, computed apart from Evaluate.
			var gaps []string
			for _, l := range rep.Launches {
				for _, m := range requested {
					if _, ok := l.Metric(m); !ok {
						gaps = append(gaps, fmt.Sprintf("%s|%d|%s", l.Name.Short, l.ID, m))
					}
				}
			}
			softmaxGone := !slices.ContainsFunc(rep.Launches, func(l Launch) bool { return strings.Contains(l.Kernel, "row_softmax") })
			if len(gaps) == 0 && (!softmaxGone || cfgText == flashOnly) && len(rep.Launches) > 0 && len(rep.Problems) == 0 {
				if g.Verdict == result.Pass {
					passes++
				}
				continue
			}
			if g.Verdict != result.Fail {
				t.Fatalf("cut after line %d: verdict %s with launches lacking %q\n%s", n, g.Verdict, gaps, messages(g))
			}
			for _, gp := range gaps {
				parts := strings.Split(gp, "|")
				if !slices.ContainsFunc(g.Findings, func(f result.Finding) bool {
					return f.Severity == result.Error && f.Kernel == parts[0] && strings.Contains(f.Message, parts[2]) &&
						(strings.Contains(f.Message, "launch "+parts[1]+" ") || strings.Contains(f.Message, "launch "+parts[1]+",") ||
							strings.Contains(f.Message, "launches ") && strings.Contains(f.Message, parts[1]+" (both.csv:"))
				}) {
					t.Errorf("cut after line %d: no finding names kernel %s, launch %s and metric %s:\n%s", n, parts[0], parts[1], parts[2], messages(g))
				}
			}
			if softmaxGone && cfgText == issueConfig && !slices.ContainsFunc(g.Findings, func(f result.Finding) bool {
				return f.Metric == MetricMatch && strings.Contains(f.Message, "row_softmax<*>")
			}) && len(rep.Launches) > 0 {
				t.Errorf("cut after line %d: row_softmax is gone and its rule does not fail:\n%s", n, messages(g))
			}
		}
		if passes == 0 {
			t.Errorf("no cut passed, not even the whole output")
		}
	}
}

// The adversary's cut: the output ends inside flash_fwd<64, 64, 1>'s last launch and
// row_softmax, profiled after it, is gone. Launch 5 has two of its seven metrics;
// sm__pipe_tensor_cycles_active is not among them, and before, the any rule held
// through DRAM throughput and the gate passed.
func TestEvaluateLaunchCutShort(t *testing.T) {
	lines := strings.SplitAfter(capture(t, "ncu-metrics.csv"), "\n")
	cut := -1
	for i, l := range lines {
		if strings.HasPrefix(l, `"5",`) && strings.Contains(l, `"dram__throughput.avg.pct_of_peak_sustained_elapsed"`) {
			cut = i + 1
		}
	}
	if cut < 0 {
		t.Fatal("no launch 5 dram__throughput row in the capture")
	}
	rep := parse(t, strings.Join(lines[:cut], ""), "ncu-metrics.csv")
	if len(rep.Problems) != 0 || len(rep.Launches) != 6 {
		t.Fatalf("problems %q, %d launches: a row-boundary cut leaves no trace for Parse", rep.Problems, len(rep.Launches))
	}
	g := evaluate(t, rep, config(t, flashOnly))
	es := errorsOf(g)
	want := "flash_fwd<64, 64, 1>: launch 5 (ncu-metrics.csv:40) of 2 has no sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active, which k.yml asks ncu for: " +
		"the ncu output is cut short or garbled, and a launch without its metrics cannot be judged (launch 5 has dram__bytes_read.sum, dram__throughput.avg.pct_of_peak_sustained_elapsed)"
	if g.Verdict != result.Fail || len(es) != 1 || es[0].Message != want || es[0].Kernel != "flash_fwd<64, 64, 1>" ||
		es[0].Metric != "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active" || es[0].Arch != "sm_90" {
		t.Errorf("verdict %s, errors %+v\nwant %s", g.Verdict, es, want)
	}
	// The issue's rules: row_softmax's rule fails too, its kernel is gone.
	g = evaluate(t, rep, config(t, issueConfig))
	var metrics []string
	for _, f := range errorsOf(g) {
		metrics = append(metrics, f.Metric)
	}
	wantMetrics := []string{MetricMatch, "gpu__time_duration.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"}
	slices.Sort(metrics)
	slices.Sort(wantMetrics)
	if !slices.Equal(metrics, wantMetrics) {
		t.Errorf("errors on %q, want %q:\n%s", metrics, wantMetrics, messages(g))
	}
}

// A kernel a rule names, cut off whole (the output ends after flash_fwd<64, 64, 0>'s
// launches): the rule fails, whether it names the kernel exactly or by a glob that matches
// nothing left. A glob that still matches another kernel cannot tell that one of its
// kernels is gone: nothing in the output says how many it should match.
func TestEvaluateKernelCutOff(t *testing.T) {
	lines := strings.SplitAfter(capture(t, "ncu-metrics.csv"), "\n")
	cut := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, `"4",`) })
	rep := parse(t, strings.Join(lines[:cut], ""), "ncu-metrics.csv")
	for _, match := range []string{"flash_fwd<64, 64, 1>", "flash_fwd<*, 1>"} {
		g := evaluate(t, rep, config(t, "ncu:\n  kernels:\n    - match: \""+match+"\"\n      all: [{metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}]\n"))
		es := errorsOf(g)
		if g.Verdict != result.Fail || len(es) != 1 || es[0].Metric != MetricMatch || !strings.Contains(es[0].Message, "matched no profiled kernel") {
			t.Errorf("%s: %s\n%s", match, g.Verdict, messages(g))
		}
	}
}
