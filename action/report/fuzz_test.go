package report

import (
	"bytes"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

func FuzzRender(f *testing.F) {
	f.Add("kg::flash_fwd<64, 64, false>", "uses 153 registers", "45056", "sm_90a", 153.0, 128.0)
	f.Add("</details><img src=x>", "[link](http://x) @octocat", "a|b\\", "sm_80\x1b[31m", 1676.0, 0.0)
	f.Add("evil\x1b[2J\r\n", "msg\u009b\u202e`x`", "\x07\x00\xff", "|", -1.5, 0.25)
	f.Fuzz(func(t *testing.T, kernel, message, cell, arch string, value, limit float64) {
		g := result.Gate{
			Name:    kernel,
			Summary: message,
			Findings: []result.Finding{
				{Severity: result.Error, Kernel: kernel, Arch: arch, File: cell, Line: 3, Metric: cell,
					Value: &value, Limit: &limit, Baseline: &limit, Delta: &value, Message: message},
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
		buf.Reset()
		if err := Render(&buf, r, JSON, Options{}); err != nil {
			t.Fatal(err)
		}
		buf.Reset()
		if err := Render(&buf, r, SARIF, Options{Root: "/w/" + cell}); err != nil {
			t.Fatal(err)
		}
		validateSARIF(t, buf.Bytes(), r)
	})
}
