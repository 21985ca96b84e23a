package report

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

func FuzzRender(f *testing.F) {
	f.Add("kg::flash_fwd<64, 64, false>", "uses 153 registers", "45056", "sm_90a", 153.0, 128.0)
	f.Add("</details><img src=x>", "[link](http://x) @octocat", "a|b\\", "sm_80\x1b[31m", 1676.0, 0.0)
	f.Add("evil\x1b[2J\r\n", "msg\u009b\u202e`x`", "\x07\x00\xff", "|", -1.5, 0.25)
	f.Add("https://evil.example/k", "see www.evil.example and mailto:a@evil.example", "../../etc/passwd", "file:///etc/passwd", 1.0, 2.0)
	f.Add("k", "m", "txt\u202eexe.cu", "C:\\x", 1.0, 2.0)
	f.Fuzz(func(t *testing.T, kernel, message, cell, arch string, value, limit float64) {
		g := result.Gate{
			Name:    kernel,
			Summary: message,
			Findings: []result.Finding{
				{Severity: result.Error, Kernel: kernel, Arch: arch, File: cell, Line: 3, Metric: cell,
					Value: &value, Limit: &limit, Baseline: &limit, Delta: &value, Message: message,
					// Clauses enough that the summary lists them (mdWhy) after the findings.
					Explain: &result.Explanation{Sentence: message, Clauses: []result.Clause{
						{Text: kernel, Source: arch}, {Text: message, Source: cell}, {Text: cell, Source: kernel}, {Text: arch},
						{Text: "# " + message}, {Text: "1. " + kernel}, {Text: "</details>" + cell}}}},
				{Severity: result.Severity(arch), Kernel: cell, Message: kernel},
			},
			Table: &result.Table{
				Columns: []string{kernel, cell},
				Rows: []result.Row{
					{Status: result.Fail, Cells: []string{kernel, arch, cell}},
					{Status: result.Verdict(message), Cells: []string{cell}},
				},
			},
		}
		g.Decide(true)
		r := result.New(message, g, result.Gate{Name: cell, Verdict: result.Verdict(kernel)})
		r.Replay = arch + kernel

		for _, w := range []int{0, 20, 60} {
			for _, color := range []bool{false, true} {
				var buf bytes.Buffer
				if err := Render(&buf, r, Text, Options{Color: color, Width: w}); err != nil {
					t.Fatal(err)
				}
				checkTextSafe(t, buf.String(), color)
			}
		}
		var buf bytes.Buffer
		if err := Render(&buf, r, Markdown, Options{}); err != nil {
			t.Fatal(err)
		}
		checkMarkdownSafe(t, buf.String())
		// Rendered as GitHub renders it, untrusted text makes no link (autolinks included).
		if m := hrefRE.FindStringSubmatch(githubHTML(t, buf.String())); m != nil {
			t.Fatalf("a link %q from names %q, %q, %q, %q", m[1], kernel, message, cell, arch)
		}

		// The speedup gate's chart and words from hostile names and numbers, whole and cut.
		speed := result.Gate{Name: "speedup", Verdict: result.Fail}
		if err := speed.SetData(map[string]any{"comparisons": []map[string]any{
			{"kernel": kernel, "shape": cell, "verdict": message, "ratio": finiteOr(value), "ci_low": finiteOr(limit), "ci_high": finiteOr(value), "rounds": 3},
			{"kernel": arch, "shape": kernel, "verdict": "slower", "ratio": 1.5, "ci_low": 1.2, "ci_high": 1.8, "rounds": 32},
		}}); err != nil {
			t.Fatal(err)
		}
		rs := result.New(message, speed, g)
		buf.Reset()
		if err := Render(&buf, rs, Markdown, Options{ArtifactsURL: "https://x.test/" + cell}); err != nil {
			t.Fatal(err)
		}
		full := buf.String()
		checkMarkdownSafe(t, full)
		for _, m := range hrefRE.FindAllStringSubmatch(githubHTML(t, full), -1) {
			if !strings.HasPrefix(m[1], "https://x.test/") {
				t.Fatalf("a link %q besides the artifacts' from names %q, %q, %q, %q", m[1], kernel, message, cell, arch)
			}
		}
		for _, l := range mermaidBlock(t, full)[2:] {
			for _, q := range regexp.MustCompile(`"[^"]*"`).FindAllString(l, -1) {
				if !mermaidSafe(q) {
					t.Fatalf("chart string %s from names %q, %q, %q", q, kernel, cell, arch)
				}
			}
		}
		for _, limit := range []int{1, 200, 700, len(full) / 2, len(full) - 1} {
			buf.Reset()
			if err := Render(&buf, rs, Markdown, Options{ArtifactsURL: "https://x.test/" + cell, Limit: limit}); err != nil {
				t.Fatal(err)
			}
			checkCut(t, rs, full, buf.String(), max(limit, 1), mdURL("https://x.test/"+cell))
		}
		buf.Reset()
		if err := Render(&buf, r, JSON, Options{}); err != nil {
			t.Fatal(err)
		}
		buf.Reset()
		o := Options{Root: "/w/" + cell, Fallback: arch}
		if err := Render(&buf, r, SARIF, o); err != nil {
			t.Fatal(err)
		}
		validateSARIF(t, buf.Bytes(), r, o)
	})
}

// finiteOr is v, or 1 when JSON cannot hold it (NaN, ±Inf).
func finiteOr(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	return v
}
