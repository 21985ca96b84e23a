package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A finding's explanation follows its message in every format: the whole sentence in a
// report (text, markdown, SARIF); JSON keeps the explain object itself.
func TestExplanationIsShown(t *testing.T) {
	e := &result.Explanation{
		Sentence: "5.0% slower: clock reads 0 → 2; occupancy unchanged (12 warps/SM, limited by registers)",
		Clauses:  []result.Clause{{Text: "clock reads 0 → 2", Source: "sass"}, {Text: "occupancy unchanged (12 warps/SM, limited by registers)", Source: "occupancy"}},
	}
	r := result.Result{Tool: "kernel-gate", Verdict: result.Fail, Gates: []result.Gate{{Name: "speedup", Verdict: result.Fail, Findings: []result.Finding{
		{Severity: result.Error, Kernel: "flash_fwd", Metric: "time", Message: "head is 5.0% slower", Explain: e}}}}}
	for _, f := range []Format{Text, Markdown, SARIF, JSON} {
		var b bytes.Buffer
		if err := Render(&b, r, f, Options{}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		want := "why: 5.0% slower: clock reads 0 → 2; occupancy unchanged"
		if f == JSON {
			want = `"sentence": "5.0% slower: clock reads 0 → 2; occupancy unchanged`
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s lacks %q:\n%s", f, want, b.String())
		}
	}
	fd := r.Gates[0].Findings[0]
	if got := fd.MessageWhy(false); got != "head is 5.0% slower\nwhy: clock reads 0 → 2" {
		t.Errorf("annotation message %q", got)
	}
	fd.Explain = nil
	if fd.MessageWhy(true) != fd.Message || fd.Why(true) != "" {
		t.Errorf("no explanation: %q", fd.MessageWhy(true))
	}
}
