package report

import (
	"bytes"
	"fmt"
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

// An explanation whose sentence leaves clauses out: the text report shows the sentence,
// the markdown summary the sentence and then every clause, in order, with its source.
func TestEveryClauseInTheSummary(t *testing.T) {
	e := &result.Explanation{Sentence: "5.0% slower: c1; c2; c3; c4; c5; and 2 more clauses"}
	for i := range 7 {
		e.Clauses = append(e.Clauses, result.Clause{Text: fmt.Sprintf("c%d", i+1), Source: "sass"})
	}
	r := result.Result{Tool: "kernel-gate", Verdict: result.Fail, Gates: []result.Gate{{Name: "speedup", Verdict: result.Fail, Findings: []result.Finding{
		{Severity: result.Error, Kernel: "flash_fwd", Metric: "slowdown", Message: "head is 5.0% slower", Explain: e}}}}}
	var md, text bytes.Buffer
	if err := Render(&md, r, Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Render(&text, r, Text, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "<details><summary>Why flash_fwd · slowdown: 7 clauses, most telling first</summary>\n\n1. c1 — sass\n2. c2 — sass\n3. c3 — sass\n4. c4 — sass\n5. c5 — sass\n6. c6 — sass\n7. c7 — sass\n\n</details>\n"
	if !strings.Contains(md.String(), want) || !strings.Contains(md.String(), "why: 5.0% slower: c1; c2; c3; c4; c5; and 2 more clauses") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if strings.Contains(text.String(), "c6") || !strings.Contains(text.String(), "and 2 more clauses") {
		t.Errorf("text:\n%s", text.String())
	}
	// Six clauses: the sentence shows them all, and the summary lists none again.
	e.Clauses = e.Clauses[:6]
	md.Reset()
	if err := Render(&md, r, Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "<details><summary>Why") {
		t.Errorf("six clauses listed:\n%s", md.String())
	}
}
