package action

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// writeUntrusted writes r as another job's result file.
func writeUntrusted(t *testing.T, r result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := result.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gatesFailingAt is a result of n gates, each with a notice, the failing-th (1-based) with
// an error too.
func gatesFailingAt(n, failing int) result.Result {
	var gates []result.Gate
	for i := 1; i <= n; i++ {
		g := result.Gate{Name: fmt.Sprintf("g%d", i), Findings: []result.Finding{{Severity: result.Notice, Message: "ok"}}}
		if i == failing {
			g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Message: "planted failure"})
		}
		g.Decide(true)
		gates = append(gates, g)
	}
	return result.New("kernel-gate test", gates...)
}

// A result is judged from every gate it holds, up to the largest a merge makes (every GPU's
// gates), and refused beyond: never judged from its first gates alone. It was cut to its
// first 64 and a later failing gate reported as a pass.
func TestReadUntrustedJudgesEveryGate(t *testing.T) {
	for _, tc := range []struct{ n, failing int }{{70, 70}, {71, 70}, {maxGates, maxGates}} {
		res, notes, err := ReadUntrusted(writeUntrusted(t, gatesFailingAt(tc.n, tc.failing)))
		if err != nil {
			t.Fatalf("%d gates: %v", tc.n, err)
		}
		if res.Verdict != result.Fail || len(res.Gates) != tc.n || res.Gates[tc.failing-1].Verdict != result.Fail {
			t.Errorf("%d gates, gate %d failing: verdict %s from %d gates (notes %q)", tc.n, tc.failing, res.Verdict, len(res.Gates), notes)
		}
	}
	_, _, err := ReadUntrusted(writeUntrusted(t, gatesFailingAt(maxGates+1, maxGates+1)))
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), fmt.Sprintf("has %d gates, more than the %d", maxGates+1, maxGates)) {
		t.Errorf("%d gates: %v, want a refusal (exit 2)", maxGates+1, err)
	}
	if maxGates < 1+10*7 {
		t.Errorf("maxGates %d does not fit a merge of 10 GPUs of 7 gates", maxGates)
	}
}

// The findings shown are cut to maxFindings, errors kept first, then warnings: the gate a
// late error failed still shows it, and a result whose only warning comes after the cut
// still shows a warning (fail-on: warning reads the shown findings). The verdicts are those
// of all the findings, and a gate that lost findings says how many.
func TestFindingsCutKeepsVerdicts(t *testing.T) {
	notices := make([]result.Finding, maxFindings)
	for i := range notices {
		notices[i] = result.Finding{Severity: result.Notice, Message: "fine"}
	}
	for _, tc := range []struct {
		name    string
		late    result.Severity
		verdict result.Verdict
	}{{"a late error", result.Error, result.Fail}, {"a late warning", result.Warning, result.Pass}} {
		t.Run(tc.name, func(t *testing.T) {
			first := result.Gate{Name: "ptxas", Findings: append([]result.Finding(nil), notices...)}
			first.Decide(true)
			last := result.Gate{Name: "sass", Findings: []result.Finding{{Severity: result.Notice, Message: "fine"}, {Severity: tc.late, Message: "the late one"}}}
			last.Decide(true)
			r := result.New("kernel-gate test", first, last)
			notes := sanitizeResult(&r)
			if r.Verdict != tc.verdict || r.Gates[1].Verdict != tc.verdict || r.Gates[0].Verdict != result.Pass {
				t.Errorf("verdicts %s, %s, %s; want %s", r.Verdict, r.Gates[0].Verdict, r.Gates[1].Verdict, tc.verdict)
			}
			if r.Gates[1].Count(tc.late) != 1 {
				t.Errorf("the %s is not shown: %+v", tc.late, r.Gates[1].Findings)
			}
			shown := 0
			for _, g := range r.Gates {
				shown += len(g.Findings)
			}
			if shown > maxFindings+len(r.Gates) || !strings.Contains(strings.Join(notes, " "), fmt.Sprintf("the result has %d findings", maxFindings+2)) {
				t.Errorf("%d findings shown, notes %q", shown, notes)
			}
			lost := r.Gates[0].Findings[len(r.Gates[0].Findings)-1]
			if lost.Severity != result.Notice || !strings.Contains(lost.Message, "are not shown") {
				t.Errorf("the cut gate does not say what it lost: %+v", lost)
			}
		})
	}
}

// A result over the size limit is refused (exit 2), not read in part; the limit fits a
// merged result of every GPU.
func TestReadUntrustedRefusesOverSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, maxResultBytes+1); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	_, _, err := ReadUntrusted(p)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "more than 128 MiB is not a kernel-gate result") {
		t.Errorf("ReadUntrusted: %v", err)
	}
}

// A fork's result may carry an explanation on any finding (threat-model T4): its texts
// are cleaned like a message (no control characters, so no new log line can start a
// workflow command) and cut, and its lists are cut.
func TestReadUntrustedCleansExplanations(t *testing.T) {
	evil := "3% slower\n::set-output name=verdict::pass\r\x1b[2J"
	var clauses []result.Clause
	for i := 0; i < 1000; i++ {
		clauses = append(clauses, result.Clause{Text: evil, Source: "ncu\n::error::x"})
	}
	r := gatesFailingAt(1, 1)
	r.Gates[0].Findings = []result.Finding{{Severity: result.Error, Message: "slower", Explain: &result.Explanation{
		Sentence: evil + strings.Repeat("x", 1<<20), Clauses: clauses,
		Mix:       make([]result.Change, 500),
		Occupancy: &result.OccupancyChange{GPU: "9.0\n::warning::y", Base: result.Occupancy{Limiter: "regs\x00"}},
	}}}
	res, _, err := ReadUntrusted(writeUntrusted(t, r))
	if err != nil {
		t.Fatal(err)
	}
	e := res.Gates[0].Findings[0].Explain
	if e == nil || len(e.Clauses) != maxExplained || len(e.Mix) != maxExplained || len(e.Sentence) > maxMessageBytes+8 {
		t.Fatalf("explanation not cut: %d clauses, %d mix, sentence %d bytes", len(e.Clauses), len(e.Mix), len(e.Sentence))
	}
	for _, s := range []string{e.Sentence, e.Clauses[0].Text, e.Clauses[0].Source, e.Occupancy.GPU, e.Occupancy.Base.Limiter} {
		if strings.ContainsAny(s, "\n\r\x1b\x00") {
			t.Errorf("uncleaned text %q", s)
		}
	}
	if w := res.Gates[0].Findings[0].Why(false); strings.Contains(w, "\n") {
		t.Errorf("first clause %q", w)
	}
}

// A fork's stage timings are cleaned and cut like its messages.
func TestReadUntrustedCleansStages(t *testing.T) {
	r := gatesFailingAt(1, 1)
	for i := 0; i < 3000; i++ {
		r.Stages = append(r.Stages, result.Stage{ID: "build\n::error::x", Name: "b\r", Target: "t\x1b[2J", WallSeconds: 1})
	}
	r.CriticalPath = []string{"build\n::warning::y"}
	res, _, err := ReadUntrusted(writeUntrusted(t, r))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stages) != maxStages || strings.ContainsAny(res.Stages[0].ID+res.Stages[0].Name+res.Stages[0].Target+res.CriticalPath[0], "\n\r\x1b") {
		t.Errorf("%d stages, the first %+v, path %q", len(res.Stages), res.Stages[0], res.CriticalPath)
	}
}
