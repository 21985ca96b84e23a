package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// hostileKernel tries to end the Mermaid string and list, the line and the code fence, to
// set a Mermaid directive and to inject a script.
const hostileKernel = "k\"]\n```\n<script>alert(1)</script> %%{init: {\"theme\": \"dark\"}}%% #lt; ` [x] & \\ | \u202e"

// shortHostile is short enough to be charted whole.
const shortHostile = "\"]\n<i>"

// hostileSpeedResult is a failing speedup gate whose data names hostile kernels and shapes.
func hostileSpeedResult(t testing.TB) result.Result {
	g := result.Gate{Name: "speedup", Summary: "2 kernel × shape pairs compared: 1 slower",
		Findings: []result.Finding{{Severity: result.Error, Kernel: hostileKernel, Metric: "slowdown",
			Value: result.Num(1.25), Limit: result.Num(1.02), Message: "25% slower"}}}
	g.Decide(true)
	ratio, lo, hi := 1.25, 1.2, 1.3
	same, slo, shi := 0.999, 0.99, 1.01
	if err := g.SetData(map[string]any{"comparisons": []map[string]any{
		{"kernel": "plain", "shape": "mission", "verdict": "same", "ratio": same, "ci_low": slo, "ci_high": shi, "rounds": 16},
		{"kernel": hostileKernel, "shape": "s`]\r\n%%", "verdict": "slower", "ratio": ratio, "ci_low": lo, "ci_high": hi, "rounds": 32},
		{"kernel": shortHostile, "shape": "s`", "verdict": "faster", "ratio": 0.8, "ci_low": 0.75, "ci_high": 0.85, "rounds": 32},
	}}); err != nil {
		t.Fatal(err)
	}
	return result.New("kernel-gate test", g)
}

// mermaidBlock returns the lines inside the one mermaid fence of out, failing unless
// there is exactly one fence, opened and closed.
func mermaidBlock(t *testing.T, out string) []string {
	t.Helper()
	var fences []int
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```") || strings.HasPrefix(strings.TrimLeft(l, " "), "~~~") {
			fences = append(fences, i)
		}
	}
	if len(fences) != 2 || lines[fences[0]] != "```mermaid" || lines[fences[1]] != "```" {
		t.Fatalf("want one mermaid fence, got fence lines %v:\n%s", fences, out)
	}
	return lines[fences[0]+1 : fences[1]]
}

// mermaidSafe reports whether q is a quoted Mermaid string with nothing Mermaid, markdown
// or HTML could read in it but its entities.
func mermaidSafe(q string) bool {
	inner, ok := strings.CutPrefix(q, `"`)
	if inner, ok = strings.CutSuffix(inner, `"`); !ok || !strings.HasPrefix(q, `"`) {
		return false
	}
	inner = regexp.MustCompile(`#[0-9]+;`).ReplaceAllString(inner, "")
	return !strings.ContainsAny(inner, "\"%#&<>`\n\r\u2028\u2029\x00")
}

func TestMermaidString(t *testing.T) {
	for in, want := range map[string]string{
		"flash_fwd × mission: head +6.0%": `"flash_fwd × mission: head +6.0#37;"`,
		"kg::flash_fwd<64, 64, true>":     `"kg::flash_fwd#60;64, 64, true#62;"`,
		`a"b`:                             `"a#34;b"`,
		"x]\n```<script>":                 `"x] #96;#96;#96;#60;script#62;"`,
		"%%{init}%%":                      `"#37;#37;{init}#37;#37;"`,
		"#lt; ; & \u2028":                 `"#35;lt; ; #38; #8232;"`,
		"evil\x1b[31m\u202e":              `"evil\x1b[31m\u202e"`,
	} {
		if got := mermaidString(in); got != want {
			t.Errorf("mermaidString(%q) = %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{hostileKernel, "\x00\x1b[31m\u2028\u202e", "\xff\xfe", strings.Repeat("\"", 100)} {
		if got := mermaidString(in); !mermaidSafe(got) {
			t.Errorf("mermaidString(%q) = %s: a character Mermaid or markdown could read", in, got)
		}
	}
	// Labels fit what Mermaid draws, however many entities a name needs.
	for _, k := range []string{"kg::flash_fwd<64, 64, true>", hostileKernel, strings.Repeat("<", 100), strings.Repeat("a", 100)} {
		if w := mermaidWidth(chartName(k, "mission")) + len(": head +12.3%"); w > maxLabelWidth {
			t.Errorf("chartName(%q) = %q: %d wide", k, chartName(k, "mission"), w)
		}
	}
}

func TestSpeedChartHostile(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, hostileSpeedResult(t), Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	checkMarkdownSafe(t, out)
	block := mermaidBlock(t, out)
	want := []*regexp.Regexp{
		regexp.MustCompile(`^%%\{init: \{"xyChart": \{"width": 900, "height": \d+, "plotReservedSpacePercent": 45, "yAxis": \{"showLabel": false\}\}, "themeVariables": \{"xyChart": \{"plotColorPalette": "#8c959f, #0969da"\}\}\}\}%%$`),
		regexp.MustCompile(`^xychart-beta horizontal$`),
		regexp.MustCompile(`^  title "[^"]*"$`),
		regexp.MustCompile(`^  x-axis "[^"]*" \[("[^"]*", ){5}"[^"]*"\]$`),
		regexp.MustCompile(`^  y-axis "[^"]*" 0 --> \d+$`),
		regexp.MustCompile(`^  bar \[100, 0, 100, 0, 100, 0\]$`),
		regexp.MustCompile(`^  bar \[0, 125\.00, 0, 99\.90, 0, 80\.00\]$`),
	}
	if len(block) != len(want) {
		t.Fatalf("chart has %d lines, want %d:\n%s", len(block), len(want), strings.Join(block, "\n"))
	}
	for i, re := range want {
		if !re.MatchString(block[i]) {
			t.Errorf("chart line %d = %q, want %s", i, block[i], re)
		}
	}
	for _, l := range block[2:] {
		for _, q := range regexp.MustCompile(`"[^"]*"`).FindAllString(l, -1) {
			if !mermaidSafe(q) {
				t.Errorf("chart string carries Mermaid or markdown syntax from a name: %s", q)
			}
		}
		if strings.Contains(l, "%%") {
			t.Errorf("chart line has a Mermaid comment or directive: %q", l)
		}
	}
	// The hostile pair is worst (slower) and comes first, in words too.
	if !strings.Contains(out, "- ❌ **k\"\\] &#96;&#96;&#96; &lt;script&gt;") || !strings.Contains(out, ": 25.0% slower (20.0–30.0%), 32 rounds\n") {
		t.Errorf("the verdict in words is missing or unescaped:\n%s", out)
	}
	if !strings.Contains(out, "- ✅ **plain × mission**: −0.1% (−1.0% to +1.0%), 16 rounds (same: within the margin)\n") {
		t.Errorf("the 'same' comparison is not in words:\n%s", out)
	}
}

// The wall time the runner took to each verdict, and why an inconclusive pair got no more
// rounds, are said beside the verdict.
func TestSpeedWallTime(t *testing.T) {
	g := result.Gate{Name: "speedup", Summary: "2 kernel × shape pairs compared"}
	g.Decide(true)
	if err := g.SetData(map[string]any{"comparisons": []map[string]any{
		{"kernel": "gemm", "shape": "small", "verdict": "inconclusive", "ratio": 1.02, "ci_low": 1.0, "ci_high": 1.04, "rounds": 48,
			"wall_seconds": 300.2, "stopped": "wall_budget"},
		{"kernel": "softmax", "shape": "small", "verdict": "same", "ratio": 1.0, "ci_low": 0.99, "ci_high": 1.01, "rounds": 48, "wall_seconds": 4.25},
	}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Render(&buf, result.New("kernel-gate test", g), Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"- ⚠️ **gemm × small**: 2.0% slower (0.0–4.0%), 48 rounds, 300.2 s of wall time (inconclusive: the wall budget was spent)\n",
		"- ✅ **softmax × small**: 0.0% (−1.0% to +1.0%), 48 rounds, 4.2 s of wall time (same: within the margin)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

func TestSpeedChartNeedsData(t *testing.T) {
	for name, data := range map[string]string{
		"absent":         ``,
		"empty":          `{}`,
		"not JSON":       `{"comparisons": [`,
		"wrong type":     `{"comparisons": "many"}`,
		"ratio a string": `{"comparisons": [{"kernel": "k", "shape": "s", "ratio": "1.1"}]}`,
		"no ratio":       `{"comparisons": [{"kernel": "k", "shape": "s", "ratio": null, "verdict": "inconclusive"}]}`,
		"zero ratio":     `{"comparisons": [{"kernel": "k", "shape": "s", "ratio": 0}]}`,
	} {
		g := result.Gate{Name: "speedup", Verdict: result.Pass, Data: []byte(data)}
		var buf bytes.Buffer
		if err := Render(&buf, result.New("", g), Markdown, Options{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "```") {
			t.Errorf("%s: a chart from data %q:\n%s", name, data, buf.String())
		}
		checkMarkdownSafe(t, buf.String())
	}
	// Another gate's comparisons are not the speedup gate's.
	r := hostileSpeedResult(t)
	r.Gates[0].Name = "ncu"
	var buf bytes.Buffer
	if err := Render(&buf, r, Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "```") || strings.Contains(buf.String(), "Head vs base") {
		t.Errorf("a chart for a gate other than speedup:\n%s", buf.String())
	}
}

func TestSpeedWords(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		c    speedRecord
		want string
	}{
		{speedRecord{Ratio: f(1.0601), CILow: f(1.0572), CIHigh: f(1.0629), Rounds: 32}, "6.0% slower (5.7–6.3%), 32 rounds"},
		{speedRecord{Ratio: f(0.9), CILow: f(0.85), CIHigh: f(0.95), Rounds: 1}, "10.0% faster (5.0–15.0%), 1 round"},
		{speedRecord{Ratio: f(1.01), CILow: f(0.99), CIHigh: f(1.03), Rounds: 512}, "+1.0% (−1.0% to +3.0%), 512 rounds"},
		{speedRecord{Ratio: f(1.05), Rounds: 3}, "+5.0% (no interval), 3 rounds"},
		{speedRecord{Ratio: f(1.05)}, "+5.0% (no interval), no rounds with samples: noise not assessed"},
		{speedRecord{}, "no ratio"},
	} {
		if got := speedWords(tt.c); got != tt.want {
			t.Errorf("speedWords(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestDeltaCells(t *testing.T) {
	for _, tt := range []struct {
		in     string
		better bool
		want   string
		delta  bool
	}{
		{"150 (+21)", false, "150 **▲21**", true},
		{"148 (-5)", false, "148 ▼5", true},
		{"1.2 ms (+0.1 ms)", false, "1.2 ms **▲0.1 ms**", true},
		{"0.42 (−0.05)", false, "0.42 ▼0.05", true},
		{"0.42 (+0.05)", true, "0.42 ▲0.05", true},
		{"0.42 (-0.05)", true, "0.42 **▼0.05**", true},
		{"150 (+0)", false, "150 (+0)", false},
		{"6.0% slower (5.7–6.3%), 32 rounds", false, "6.0% slower (5.7–6.3%), 32 rounds", false},
		{"0.0% (−1.2% to +1.1%)", false, "0.0% (−1.2% to +1.1%)", false},
		{"sm_90 (+1)", false, `sm\_90 (+1)`, false},
		{"45056", false, "45056", false},
	} {
		got, d := mdCell(tt.in, tt.better)
		if got != tt.want || d != tt.delta {
			t.Errorf("mdCell(%q, %v) = %q, %v; want %q, %v", tt.in, tt.better, got, d, tt.want, tt.delta)
		}
	}
	for _, tt := range []struct {
		d      float64
		better bool
		want   string
	}{
		{3, false, "**▲3**"}, {-2, false, "▼2"}, {0, false, "±0"}, {0.5, true, "▲0.5"}, {-0.5, true, "**▼0.5**"},
	} {
		if got := deltaMark(tt.d, tt.better); got != tt.want {
			t.Errorf("deltaMark(%v, %v) = %q, want %q", tt.d, tt.better, got, tt.want)
		}
	}
	for name, want := range map[string]bool{"registers": false, "spill_stores": false, "regs": false,
		"speedup_vs_reference": true, "vs reference": true, "slowdown": false, "time": false} {
		if got := higherIsBetter(name); got != want {
			t.Errorf("higherIsBetter(%q) = %v", name, got)
		}
	}
}

func TestArtifactsLink(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/o/r/actions/runs/1#artifacts": "https://github.com/o/r/actions/runs/1#artifacts",
		"https://x.test/a b/(c)?q=<d>|e`":                 "https://x.test/a%20b/%28c%29?q=%3Cd%3E%7Ce%60",
		"https://x.test/a_b*c[d]":                         "https://x.test/a%5Fb%2Ac%5Bd%5D",
		"javascript:alert(1)":                             "",
		"/relative/path":                                  "",
		"http://":                                         "",
		"https://x.test/\n[x](y)":                         "",
	} {
		if got := mdURL(in); got != want {
			t.Errorf("mdURL(%q) = %q, want %q", in, got, want)
		}
	}
	var buf bytes.Buffer
	if err := Render(&buf, sampleResult(t), Markdown, Options{ArtifactsURL: "https://x.test/run (1)"}); err != nil {
		t.Fatal(err)
	}
	if want := "\n📦 Logs, tool output and the JSON result of this run: [artifacts](https://x.test/run%20%281%29)\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, buf.String())
	}
	buf.Reset()
	if err := Render(&buf, sampleResult(t), Markdown, Options{ArtifactsURL: "javascript:alert(1)"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "artifacts") || strings.Contains(buf.String(), "javascript") {
		t.Errorf("a URL that is not http(s) was linked:\n%s", buf.String())
	}
}

// With both sides' medians recorded, the chart draws times in µs.
func TestSpeedChartMicroseconds(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	chart := mermaidSpeedChart([]speedRecord{
		{Kernel: "flash_fwd", Shape: "mission", Ratio: f(1.054), BaseMedianUs: f(812.5), HeadMedianUs: f(856.4)},
		{Kernel: "flash_fwd", Shape: "long", Ratio: f(1.043), BaseMedianUs: f(3010), HeadMedianUs: f(3139.4)},
	})
	for _, want := range []string{`y-axis "time, µs" 0 --> 3300`, "bar [812.5, 0, 3010, 0]", "bar [0, 856.40, 0, 3139.40]", "head +5.4#37;"} {
		if !strings.Contains(chart, want) {
			t.Errorf("chart lacks %q:\n%s", want, chart)
		}
	}
	// One pair without medians (an older result): relative times for all.
	chart = mermaidSpeedChart([]speedRecord{{Kernel: "k", Shape: "s", Ratio: f(1.1), BaseMedianUs: f(10)}})
	if !strings.Contains(chart, "time, #37; of base") {
		t.Errorf("chart:\n%s", chart)
	}
}
