package speedup

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

var h200 = benchfile.Device{Name: "NVIDIA H200", ComputeCap: "9.0", Driver: "580.159.04", CUDA: "13.0"}

func toFloats(rounds [][]float64) [][]benchfile.Float {
	out := make([][]benchfile.Float, len(rounds))
	for i, r := range rounds {
		for _, v := range r {
			out[i] = append(out[i], benchfile.Float(v))
		}
	}
	return out
}

// files builds base and head files from kernel → head/base factor, 16 rounds each.
func files(t *testing.T, factors map[string]float64, noise float64) (*benchfile.File, *benchfile.File) {
	return filesN(t, factors, noise, 16)
}

// filesN is files with n rounds.
func filesN(t *testing.T, factors map[string]float64, noise float64, n int) (*benchfile.File, *benchfile.File) {
	t.Helper()
	base := &benchfile.File{Schema: benchfile.Schema, Device: h200, Request: &benchfile.Request{Mode: benchfile.ModeBench}}
	head := &benchfile.File{Schema: benchfile.Schema, Device: h200, Request: &benchfile.Request{Mode: benchfile.ModeBench}}
	names := make([]string, 0, len(factors))
	for k := range factors {
		names = append(names, k)
	}
	slices.Sort(names)
	for i, k := range names {
		b, h := sideBySide(uint64(i+10), n, factors[k], noise)
		base.Results = append(base.Results, benchfile.Result{Kernel: k, Shape: "mission", RoundsUs: toFloats(b)})
		head.Results = append(head.Results, benchfile.Result{Kernel: k, Shape: "mission", RoundsUs: toFloats(h)})
	}
	return base, head
}

func records(t *testing.T, g result.Gate) ([]Record, map[string]any) {
	t.Helper()
	var d Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(g.Data, &raw); err != nil {
		t.Fatal(err)
	}
	return d.Comparisons, raw
}

func findings(g result.Gate, sev result.Severity, substr string) []result.Finding {
	var out []result.Finding
	for _, f := range g.Findings {
		if f.Severity == sev && strings.Contains(f.Message, substr) {
			out = append(out, f)
		}
	}
	return out
}

func TestCompare(t *testing.T) {
	base, head := files(t, map[string]float64{"kg::gemm<128>": 1.10, "softmax": 1.0, "layernorm": 1.021, "rope": 0.9}, 0.004)
	g, err := Compare(base, head, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "speedup" || g.Verdict != result.Fail {
		t.Fatalf("gate %s verdict %s, want speedup fail", g.Name, g.Verdict)
	}
	recs, raw := records(t, g)
	want := map[string]Verdict{"kg::gemm<128>": Slower, "softmax": Same, "layernorm": Inconclusive, "rope": Faster}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for _, r := range recs {
		if r.Verdict != want[r.Kernel] {
			t.Errorf("%s: %s, want %s", r.Kernel, r.Verdict, want[r.Kernel])
		}
		if r.Rounds != 16 || r.Samples != 16*40 || r.DroppedRounds != 0 || r.PValue == nil || r.CILow == nil || r.GPUSeconds == nil {
			t.Errorf("%s: record %+v", r.Kernel, r)
		}
	}
	// The record's fields, exactly.
	keys := []string{}
	for k := range raw["comparisons"].([]any)[0].(map[string]any) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if got := strings.Join(keys, ","); got != "base_median_us,ci_high,ci_low,dropped_rounds,gpu_seconds,head_median_us,kernel,p_value,ratio,rounds,samples,shape,speedup_vs_reference,verdict" {
		t.Errorf("record keys %s", got)
	}
	if raw["family"].(float64) != 4 || raw["looks"].(float64) != 6 {
		t.Errorf("family %v looks %v, want 4 and 6", raw["family"], raw["looks"])
	}

	// Findings: slower is an error, inconclusive a warning, same and faster notices.
	if f := findings(g, result.Error, "kg::gemm<128> × mission: 9.9% slower (9.7–10.1%), 16 rounds; the whole 99.96% interval is above 1 + max_slowdown 2% (from default)"); len(f) != 1 || f[0].Metric != MetricSlowdown || *f[0].Limit != 1.02 {
		t.Errorf("slower finding: %+v", g.Findings)
	}
	if f := findings(g, result.Warning, "layernorm × mission: inconclusive"); len(f) != 1 || !strings.Contains(f[0].Message, "the runner should add 16 round(s)") {
		t.Errorf("inconclusive finding: %+v", f)
	}
	if len(findings(g, result.Notice, "softmax × mission: same")) != 1 || len(findings(g, result.Notice, "rope × mission: faster")) != 1 {
		t.Errorf("notices: %+v", g.Findings)
	}

	// The table: worst first, plain words.
	rows := g.Table.Rows
	if len(rows) != 4 || rows[0].Status != result.Fail || rows[0].Cells[0] != "kg::gemm<128>" {
		t.Fatalf("rows %+v", rows)
	}
	if ok, _ := regexp.MatchString(`^9\.\d% slower \(\d+\.\d–\d+\.\d%\), 16 rounds$`, rows[0].Cells[3]); !ok {
		t.Errorf("slower cell %q", rows[0].Cells[3])
	}
	for _, r := range rows {
		switch r.Cells[0] {
		case "layernorm":
			if r.Status != result.Skip || r.Cells[2] != "inconclusive" || !strings.HasPrefix(r.Cells[3], "2.1% slower") {
				t.Errorf("inconclusive row %+v", r)
			}
		case "rope":
			if ok, _ := regexp.MatchString(`^10\.\d% faster \(\d+\.\d–\d+\.\d%\), 16 rounds$`, r.Cells[3]); !ok || r.Status != result.Pass {
				t.Errorf("faster row %+v", r)
			}
		}
	}
	if !strings.Contains(g.Summary, "4 kernel × shape pair(s) compared on NVIDIA H200: 1 slower, 1 inconclusive, 1 same, 1 faster") {
		t.Errorf("summary %q", g.Summary)
	}
}

func TestCompareDevice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mod    func(*benchfile.Device)
		want   result.Verdict
		reason string
	}{
		{"driver", func(d *benchfile.Device) { d.Driver = "575.57.08" }, result.Fail, `driver "580.159.04" in base, "575.57.08" in head`},
		{"gpu", func(d *benchfile.Device) { d.Name = "NVIDIA H100 80GB HBM3" }, result.Fail, "device"},
		{"toolkit", func(d *benchfile.Device) { d.CUDA = "12.8" }, result.Fail, "CUDA"},
		{"missing on one side", func(d *benchfile.Device) { d.CUDA = "" }, result.Fail, "CUDA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := files(t, map[string]float64{"k": 1.0}, 0.002)
			tc.mod(&head.Device)
			g, err := Compare(base, head, Config{})
			if err != nil {
				t.Fatal(err)
			}
			recs, _ := records(t, g)
			if g.Verdict != tc.want || len(recs) != 0 {
				t.Fatalf("verdict %s, %d records", g.Verdict, len(recs))
			}
			if f := findings(g, result.Error, tc.reason); len(f) != 1 || f[0].Metric != MetricDevice {
				t.Errorf("findings %+v", g.Findings)
			}
		})
	}
	// Both files silent about the device: compared, with a warning.
	base, head := files(t, map[string]float64{"k": 1.0}, 0.002)
	base.Device, head.Device = benchfile.Device{}, benchfile.Device{}
	g, err := Compare(base, head, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Pass || len(findings(g, result.Warning, "cannot verify")) != 1 {
		t.Errorf("verdict %s findings %+v", g.Verdict, g.Findings)
	}
}

func ptr(v float64) *benchfile.Float { f := benchfile.Float(v); return &f }

func TestCompareSummaryOnly(t *testing.T) {
	base := &benchfile.File{Schema: benchfile.Schema, Device: h200, Results: []benchfile.Result{
		{Kernel: "a", Shape: "s", P50Us: ptr(100)},
		{Kernel: "b", Shape: "s", P50Us: ptr(100)},
		{Kernel: "c", Shape: "s", MeanUs: ptr(50)},
		{Kernel: "d", Shape: "s", RoundsUs: [][]benchfile.Float{{10, 10, 11}, {10}}},
	}}
	head := &benchfile.File{Schema: benchfile.Schema, Device: h200, Results: []benchfile.Result{
		{Kernel: "a", Shape: "s", P50Us: ptr(110)},
		{Kernel: "b", Shape: "s", P50Us: ptr(101)},
		{Kernel: "c", Shape: "s", MeanUs: ptr(49), P50Us: ptr(48)},
		{Kernel: "d", Shape: "s", P50Us: ptr(10.1)},
	}}
	g, err := Compare(base, head, Config{})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := records(t, g)
	want := map[string]Verdict{"a": Slower, "b": Same, "c": Same, "d": Same}
	for _, r := range recs {
		if r.Verdict != want[r.Kernel] || r.PValue != nil || r.CILow != nil || r.CIHigh != nil || r.Ratio == nil {
			t.Errorf("%s: %+v, want %s by plain ratio with no interval or p-value", r.Kernel, r, want[r.Kernel])
		}
	}
	if n := len(findings(g, result.Warning, "no samples: noise not assessed")); n != 4 {
		t.Errorf("%d 'no samples' warnings, want 4: %+v", n, g.Findings)
	}
	if f := findings(g, result.Error, "a × s: 10% slower by the plain ratio of p50_us"); len(f) != 1 {
		t.Errorf("findings %+v", g.Findings)
	}
	if g.Verdict != result.Fail {
		t.Errorf("verdict %s", g.Verdict)
	}
	// c compares mean_us? No: p50 first, but base has only mean_us, so mean_us it is.
	if f := findings(g, result.Warning, "c × s: no samples: noise not assessed; judged by the plain ratio of mean_us"); len(f) != 1 {
		t.Errorf("c: %+v", g.Findings)
	}
	// d: base's samples give its p50 (10), head reports 10.1.
	if f := findings(g, result.Warning, "d × s: no samples: noise not assessed; judged by the plain ratio of p50_us (head/base 1.01)"); len(f) != 1 {
		t.Errorf("d: %+v", g.Findings)
	}
}

func TestCompareReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	mk := func(f float64) [][]benchfile.Float { return toFloats(rounds(rng, 32, 20, 10, f, 0.01)) }
	base := &benchfile.File{Schema: benchfile.Schema, Device: h200}
	head := &benchfile.File{Schema: benchfile.Schema, Device: h200}
	for _, k := range []struct {
		name string
		ref  float64
		has  bool
	}{{"flash_fwd", 15.6, true}, {"flash_slow", 12, true}, {"flash_noref", 0, false}, {"flash_p50", 0, false}} {
		base.Results = append(base.Results, benchfile.Result{Kernel: k.name, Shape: "mission", RoundsUs: mk(1)})
		r := benchfile.Result{Kernel: k.name, Shape: "mission", RoundsUs: mk(1)}
		if k.has {
			r.Reference = &benchfile.Reference{Name: "torch.sdpa.flash", RoundsUs: mk(k.ref)}
		}
		if k.name == "flash_p50" {
			r.Reference = &benchfile.Reference{Name: "torch.sdpa.flash", P50Us: ptr(140)}
		}
		head.Results = append(head.Results, r)
	}
	goal := 15.0
	cfg := Config{Kernels: []Rule{{Match: "flash_*", MinSpeedupVsReference: &goal, Reason: "the 15x we promised", Item: configpos.Item{Line: 7}}}}
	cfg.File = "kernel-gate.yml"
	g, err := Compare(base, head, cfg)
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := records(t, g)
	got := map[string]*ReferenceRecord{}
	for _, r := range recs {
		got[r.Kernel] = r.SpeedupVsReference
		if r.Verdict != Same {
			t.Errorf("%s vs base: %s", r.Kernel, r.Verdict)
		}
	}
	if r := got["flash_fwd"]; r == nil || r.Verdict != GoalMet || r.CILow == nil || *r.CILow < 15 || *r.Goal != 15 || r.Name != "torch.sdpa.flash" || r.Rounds != 32 {
		t.Errorf("flash_fwd: %+v", r)
	}
	if r := got["flash_slow"]; r == nil || r.Verdict != GoalMissed || *r.CIHigh >= 15 {
		t.Errorf("flash_slow: %+v", r)
	}
	if got["flash_noref"] != nil {
		t.Errorf("flash_noref: %+v", got["flash_noref"])
	}
	if r := got["flash_p50"]; r == nil || r.Verdict != GoalMissed || r.CILow != nil || math.Abs(*r.Speedup-14) > 0.5 {
		t.Errorf("flash_p50: %+v", r)
	}
	if f := findings(g, result.Error, "flash_slow × mission: 12"); len(f) != 1 || f[0].Metric != MetricReference || !strings.Contains(f[0].Message, `kernel-gate.yml:7 (flash_*): "the 15x we promised"`) {
		t.Errorf("missed goal: %+v", g.Findings)
	}
	if f := findings(g, result.Warning, "flash_noref × mission: min_speedup_vs_reference 15× is set"); len(f) != 1 {
		t.Errorf("goal without reference: %+v", g.Findings)
	}
	if f := findings(g, result.Error, "flash_p50 × mission: 14"); len(f) != 1 || !strings.Contains(f[0].Message, "no samples: noise not assessed") {
		t.Errorf("summary-only goal: %+v", g.Findings)
	}
	// Four pairs with rounds, two goals judged with rounds.
	var d Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Family != 6 {
		t.Errorf("family %d, want 6", d.Family)
	}
	if !strings.Contains(g.Table.Rows[0].Cells[4], "× torch.sdpa.flash") {
		t.Errorf("reference cell %q", g.Table.Rows[0].Cells[4])
	}
}

func TestCompareMissingAndErrors(t *testing.T) {
	base, head := files(t, map[string]float64{"kept": 1.0, "renamed_old": 1.0, "crashed": 1.0, "required": 1.0}, 0.002)
	head.Results[slices.IndexFunc(head.Results, func(r benchfile.Result) bool { return r.Kernel == "renamed_old" })].Kernel = "renamed_new"
	head.Results[slices.IndexFunc(head.Results, func(r benchfile.Result) bool { return r.Kernel == "crashed" })].Error = "an illegal memory access was encountered"
	head.Results = slices.DeleteFunc(head.Results, func(r benchfile.Result) bool { return r.Kernel == "required" })
	head.Results = append(head.Results, benchfile.Result{Kernel: "empty", Shape: "mission"})
	base.Results = append(base.Results, benchfile.Result{Kernel: "empty", Shape: "mission", P50Us: ptr(3)})
	cfg := Config{Kernels: []Rule{
		{Match: "required", Shapes: []string{"mission"}, Item: configpos.Item{Line: 4}},
		{Match: "gone_*", MaxSlowdown: ptr64(0.05), Item: configpos.Item{Line: 9}},
	}}
	cfg.File = "kernel-gate.yml"
	g, err := Compare(base, head, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail {
		t.Errorf("verdict %s", g.Verdict)
	}
	for _, w := range []struct {
		sev result.Severity
		msg string
	}{
		{result.Error, "crashed × mission: the harness failed in head: an illegal memory access"},
		{result.Error, "required × mission: in base but not in head, and required by rule kernel-gate.yml:4"},
		{result.Warning, "renamed_old × mission: in base but not in head, so not compared"},
		{result.Notice, "renamed_new × mission: new in head"},
		{result.Error, "empty × mission: head has no timings"},
		{result.Warning, "rule kernel-gate.yml:9 (gone_*) matches no result in head"},
		{result.Notice, "kept × mission: same"},
	} {
		if len(findings(g, w.sev, w.msg)) != 1 {
			t.Errorf("no %s finding %q in %+v", w.sev, w.msg, g.Findings)
		}
	}
}

func ptr64(v float64) *float64 { return &v }

func TestCompareNothing(t *testing.T) {
	base := &benchfile.File{Schema: benchfile.Schema, Device: h200, Results: []benchfile.Result{{Kernel: "k", Shape: "s", MaxErr: ptr(0.001)}}}
	head := &benchfile.File{Schema: benchfile.Schema, Device: h200, Results: []benchfile.Result{{Kernel: "k2", Shape: "s", P50Us: ptr(1)}}}
	g, err := Compare(base, head, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Skip || len(findings(g, result.Notice, "nothing to compare")) != 1 {
		t.Errorf("verdict %s findings %+v", g.Verdict, g.Findings)
	}
	if _, err := Compare(nil, head, Config{}); err == nil {
		t.Error("a nil base was accepted")
	}
	bad := -1.0
	if _, err := Compare(base, head, Config{MaxSlowdown: &bad}); err == nil {
		t.Error("a bad config was accepted")
	}
}

// TestCompareManyPairs: Bonferroni in Compare: with 100 kernel × shape pairs the family is
// 100 and each interval is wider; a 3% slowdown that 16 rounds show alone can no longer be
// called slower (the interval has no lower bound), so it is inconclusive, not passed.
func TestCompareManyPairs(t *testing.T) {
	factors := map[string]float64{}
	for i := range 100 {
		factors[fmt.Sprintf("k%02d", i)] = 1.03
	}
	base, head := files(t, factors, 0.002)
	g, err := Compare(base, head, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var d Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Family != 100 || math.Abs(d.Level-(1-0.01/600)) > 1e-15 {
		t.Errorf("family %d level %v", d.Family, d.Level)
	}
	if n := RoundsForInterval(d.Level); n != 17 {
		t.Fatalf("RoundsForInterval(%v) = %d, want 17", d.Level, n)
	}
	for _, r := range d.Comparisons {
		if r.Verdict != Inconclusive || r.CILow != nil {
			t.Errorf("%s: %s, want inconclusive with no lower bound (16 rounds are too few for 100 pairs)", r.Kernel, r.Verdict)
		}
	}
	if g.Verdict != result.Pass || g.Count(result.Warning) != 100 {
		t.Errorf("verdict %s, %d warnings", g.Verdict, g.Count(result.Warning))
	}
	// One pair alone, the same rounds: slower.
	g1, err := Compare(&benchfile.File{Schema: benchfile.Schema, Device: h200, Results: base.Results[:1]},
		&benchfile.File{Schema: benchfile.Schema, Device: h200, Results: head.Results[:1]}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if recs, _ := records(t, g1); recs[0].Verdict != Slower {
		t.Errorf("alone: %s", recs[0].Verdict)
	}
}

// TestCompareInvalidTimings: NaN, Inf, zero and negative timings are dropped, counted and
// warned about; a round left empty is dropped.
func TestCompareInvalidTimings(t *testing.T) {
	base, head := filesN(t, map[string]float64{"k": 1.10}, 0.002, 20)
	head.Results[0].RoundsUs[2][0] = benchfile.Float(math.NaN())
	head.Results[0].RoundsUs[3] = []benchfile.Float{-1, 0, benchfile.Float(math.Inf(1))}
	base.Results[0].RoundsUs[4] = nil
	g, err := Compare(base, head, Config{})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := records(t, g)
	if recs[0].Rounds != 18 || recs[0].DroppedRounds != 2 || recs[0].Verdict != Slower {
		t.Errorf("record %+v", recs[0])
	}
	if len(findings(g, result.Warning, "k × mission: 4 timing(s) were NaN, Inf, zero or negative")) != 1 {
		t.Errorf("findings %+v", g.Findings)
	}
	if f := findings(g, result.Error, "2 round(s) dropped"); len(f) != 1 {
		t.Errorf("dropped rounds not mentioned: %+v", g.Findings)
	}
}

// TestCompareJSONRoundTrip reads harness files written as JSON, NaN tokens included.
func TestCompareJSONRoundTrip(t *testing.T) {
	doc := func(scale float64) string {
		var rs []string
		for i := range 16 {
			rs = append(rs, fmt.Sprintf("[%g, %g, NaN]", 10*scale*(1+0.001*float64(i%3)), 10.01*scale))
		}
		return `{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"},
 "request": {"mode": "bench", "shapes": ["mission"], "rounds": 16, "samples": 3},
 "results": [{"kernel": "flash_fwd", "shape": "mission", "rounds_us": [` + strings.Join(rs, ",") + `]}]}`
	}
	base, err := benchfile.Read(strings.NewReader(doc(1)))
	if err != nil {
		t.Fatal(err)
	}
	head, err := benchfile.Read(strings.NewReader(doc(1.05)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compare(base, head, Config{})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := records(t, g)
	if recs[0].Verdict != Slower || recs[0].Samples != 64 {
		t.Errorf("record %+v", recs[0])
	}
	r := result.New("test", g)
	var b strings.Builder
	if err := result.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	if _, err := result.Read(strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
}
