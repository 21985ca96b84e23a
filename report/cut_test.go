package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

const testArtifacts = "https://github.com/kernel-gate/kernel-gate/actions/runs/1#artifacts"

// bigResult is a failing ptxas gate with more findings and rows than a check run takes, and
// two passing gates after it.
func bigResult() result.Result {
	ptxas := result.Gate{Name: "ptxas", Summary: "3000 kernels: 3000 over the register limit",
		Table: &result.Table{Columns: []string{"kernel", "arch", "regs"}}}
	for i := range 3000 {
		k := "kg::flash_fwd<" + strconv.Itoa(i) + ", 64, true>"
		ptxas.Findings = append(ptxas.Findings, result.Finding{Severity: result.Error, Kernel: k, Arch: "sm_90a",
			Metric: "registers", Value: result.Num(200 + i%50), Limit: result.Num(128), Baseline: result.Num(128),
			Delta: result.Num(72 + i%50), Message: "uses too many registers, over the limit of 128"})
		ptxas.Table.Rows = append(ptxas.Table.Rows, result.Row{Status: result.Fail,
			Cells: []string{k, "sm_90a", strconv.Itoa(200+i%50) + " (+" + strconv.Itoa(72+i%50) + ")"}})
	}
	ptxas.Decide(true)
	sass := result.Gate{Name: "sass", Summary: "no forbidden instructions"}
	sass.Decide(true)
	guard := result.Gate{Name: "guard", Summary: "29 files scanned"}
	guard.Decide(true)
	return result.New("kernel-gate test", sass, ptxas, guard)
}

func renderMD(t *testing.T, r result.Result, o Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, r, Markdown, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// checkCut checks a summary cut to limit: it fits, it is safe and balanced markdown, it
// keeps the verdict table whenever the table and the note fit, failing gates' sections come
// before passing ones, and its last line says what was cut and where the rest is.
func checkCut(t *testing.T, r result.Result, full, out string, limit int, link string) {
	t.Helper()
	if len(out) > limit {
		t.Fatalf("limit %d: %d bytes", limit, len(out))
	}
	if !utf8.ValidString(out) {
		t.Fatalf("limit %d: invalid UTF-8", limit)
	}
	if out == full || (strings.HasPrefix(full, out) && strings.HasPrefix(full[len(out):], "\n<sub>") &&
		strings.Count(full[len(out):], "\n") == 2) {
		return // whole, or only the tool's line left out
	}
	checkMarkdownSafe(t, out)
	if n := strings.Count(out, "<details>"); n != strings.Count(out, "</details>") {
		t.Fatalf("limit %d: %d <details> and %d </details>:\n%s", limit, n, strings.Count(out, "</details>"), out)
	}
	if strings.Count(out, "\n```")%2 != 0 {
		t.Fatalf("limit %d: a code fence is left open:\n%s", limit, out)
	}
	if first, _, _ := strings.Cut(full, "\n"); out == "" || out == first+"\n" {
		return // a limit too small for the first line and the note: the verdict alone, or nothing
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "> ✂️ **Cut to fit "+strconv.Itoa(limit)+" bytes**: ") {
		t.Fatalf("limit %d: the last line does not say what was cut: %q", limit, last)
	}
	if link != "" && !strings.Contains(last, "[artifacts]("+link+")") {
		t.Errorf("limit %d: the note does not link the artifacts: %q", limit, last)
	}
	if link == "" && !strings.Contains(last, "`kernel-gate report FILE`") {
		t.Errorf("limit %d: the note does not say where the rest is: %q", limit, last)
	}
	if !strings.Contains(out, "| Gate | Verdict | Errors | Warnings |") {
		if strings.Contains(last, "left out") {
			t.Errorf("limit %d: the verdict table was cut but the note says %q", limit, last)
		}
		return
	}
	for i, g := range r.Gates {
		row := "| " + mdGateName(i, g) + " | " + mdVerdict(g.Verdict) + " |"
		if !strings.Contains(out, row) {
			t.Errorf("limit %d: the verdict table lacks %q", limit, row)
		}
	}
	// A passing gate's section only after every failing gate's heading.
	passing, failing := false, false
	for i, g := range r.Gates {
		h := "\n### " + mdGateName(i, g) + ": " + mdVerdict(g.Verdict) + "\n"
		in := strings.Contains(out, h)
		if g.Verdict == result.Fail && !in {
			failing = true
		}
		if g.Verdict != result.Fail && in {
			passing = true
		}
		if short := mdGateName(i, result.Gate{Name: truncMiddle(clean(strings.TrimSpace(g.Name)), 40)}); !in && !strings.Contains(last, short) && !strings.Contains(last, "more gate") {
			t.Errorf("limit %d: gate %s left out without a word: %q", limit, g.Name, last)
		}
	}
	if passing && failing {
		t.Errorf("limit %d: a passing gate's section is kept while a failing one's is not:\n%s", limit, out)
	}
}

func TestLimitEveryCut(t *testing.T) {
	for name, r := range map[string]result.Result{
		"slow5": readReplay(t, "slow5"), "race": readReplay(t, "race"), "clean": readReplay(t, "clean"),
		"sample": sampleResult(t), "hostile": hostileResult(), "hostile speed": hostileSpeedResult(t), "empty": emptyResult(),
	} {
		for _, link := range []string{"", testArtifacts} {
			full := renderMD(t, r, Options{ArtifactsURL: link})
			if got := renderMD(t, r, Options{ArtifactsURL: link, Limit: len(full)}); got != full {
				t.Errorf("%s: a summary that fits its limit was cut", name)
			}
			step := max(len(full)/150, 1)
			for limit := 1; limit < len(full); limit += step {
				out := renderMD(t, r, Options{ArtifactsURL: link, Limit: limit})
				checkCut(t, r, full, out, limit, mdURL(link))
				if t.Failed() {
					t.Fatalf("%s, link %q, limit %d:\n%s", name, link, limit, out)
				}
			}
		}
	}
}

func TestLimitCheckRun(t *testing.T) {
	r := bigResult()
	full := renderMD(t, r, Options{ArtifactsURL: testArtifacts})
	if len(full) < 4*65535 {
		t.Fatalf("the big result is only %d bytes", len(full))
	}
	for _, limit := range []int{65535, len(full) / 2} {
		out := renderMD(t, r, Options{Limit: limit, ArtifactsURL: testArtifacts})
		checkCut(t, r, full, out, limit, testArtifacts)
		if len(out) < limit-2000 {
			t.Errorf("limit %d: cut to %d bytes, far below the limit", limit, len(out))
		}
		last := out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:]
		for _, want := range []string{"from ptxas: ", " of the 3000 rows of its ", "the sections of sass (pass), guard (pass)"} {
			if !strings.Contains(last, want) {
				t.Errorf("limit %d: the note lacks %q: %s", limit, want, last)
			}
		}
		// The failing gate comes first and shows its worst findings.
		if i, j := strings.Index(out, "### ptxas: ❌ fail"), strings.Index(out, "| Severity | Kernel |"); i < 0 || j < i {
			t.Errorf("limit %d: the failing section or its findings are missing", limit)
		}
	}
	out := renderMD(t, r, Options{Limit: 65535})
	note := regexp.MustCompile(`\n\n> ✂️ \*\*Cut to fit 65535 bytes\*\*: left out from ptxas: the last \d+ of the 3000 rows of its findings, ` +
		`its table \(3000 rows\); the sections of sass \(pass\), guard \(pass\)\. ` +
		"The JSON result has everything \\(`kernel-gate report FILE` renders it\\)\\.\n$")
	if !note.MatchString(out) {
		t.Errorf("cut note:\n%s", out[max(len(out)-400, 0):])
	}
}

func TestLimitTiny(t *testing.T) {
	r := readReplay(t, "race")
	full := renderMD(t, r, Options{})
	for _, limit := range []int{1, 10, 40, 120, 200} {
		out := renderMD(t, r, Options{Limit: limit, ArtifactsURL: testArtifacts})
		checkCut(t, r, full, out, limit, testArtifacts)
	}
	out := renderMD(t, r, Options{Limit: 250})
	if want := "## kernel-gate: ❌ fail\n\n> ✂️ **Cut to fit 250 bytes**: only the verdict fits."; !strings.HasPrefix(out, want) {
		t.Errorf("tiny limit: got %q, want it to start %q", out, want)
	}
}

func TestSectionsFailuresFirst(t *testing.T) {
	out := renderMD(t, readReplay(t, "race"), Options{})
	i, j := strings.Index(out, "### sanitizer: ❌ fail"), strings.Index(out, "### ptxas: ✅ pass")
	if i < 0 || j < 0 || i > j {
		t.Errorf("the failing sanitizer's section is not first:\n%s", out)
	}
	// The verdict table keeps the run's order.
	if i, j := strings.Index(out, "| ptxas |"), strings.Index(out, "| sanitizer |"); i < 0 || j < 0 || i > j {
		t.Errorf("the verdict table is not in the run's order:\n%s", out)
	}
}
