package sanitizer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoTestdata holds the real captures shared by every gate; testdata/ holds this
// package's own (testdata/probe).
const repoTestdata = "../../testdata"

// capturePath resolves a table's file name: "probe/..." and "public/..." live in this package's testdata,
// everything else under the repository's testdata.
func capturePath(name string) string {
	if strings.HasPrefix(name, "probe/") || strings.HasPrefix(name, "public/") {
		return filepath.Join("testdata", filepath.FromSlash(name))
	}
	return filepath.Join(repoTestdata, filepath.FromSlash(name))
}

func readCapture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(capturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// render writes a run as the lines the tables compare: a header, then one line per record
// group, problem and note.
func render(r Run) []string {
	exit := "-"
	if r.ExitCode != nil {
		exit = fmt.Sprint(*r.ExitCode)
	}
	sum := "no-summary"
	if r.Summary {
		sum = "summary"
	}
	h := fmt.Sprintf("%s %s %s errors=%d warnings=%d not_printed=%d exit=%s", orDash(r.Tool), r.Source, sum, r.Errors, r.Warnings, r.NotPrinted, exit)
	if r.LaunchSeen {
		h += " launch"
	}
	if r.TimedOut {
		h += " timed-out"
	}
	out := []string{h}
	for _, rec := range r.Records {
		out = append(out, renderRecord(rec))
	}
	for _, p := range r.Problems {
		out = append(out, "  problem: "+p)
	}
	for _, n := range r.Notes {
		out = append(out, "  note: "+n)
	}
	return out
}

func renderRecord(rec Record) string {
	loc := "-"
	if rec.File != "" {
		loc = fmt.Sprintf("%s:%d", rec.File, rec.Line)
	}
	dims := "-"
	if rec.Thread != "" || rec.Block != "" {
		dims = orDash(rec.Thread) + "/" + orDash(rec.Block)
	}
	hz := ""
	if rec.Hazards > 0 {
		hz = fmt.Sprintf(" h%d", rec.Hazards)
	}
	return fmt.Sprintf("  %s %s x%d%s %s %s %s | %s", rec.Kind, rec.Severity, rec.Count, hz, loc, dims, orDash(rec.Kernel), rec.Access)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// renderAll renders every run.
func renderAll(runs []Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, render(r)...)
	}
	return out
}

// matchLines compares rendered lines with expected ones: equal, except that an expected
// "  problem: X" or "  note: X" line matches an actual one that contains X.
func matchLines(got, want []string) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d lines, want %d\n got:\n%s\nwant:\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range got {
		w, g := want[i], got[i]
		for _, p := range []string{"  problem: ", "  note: "} {
			if strings.HasPrefix(w, p) && strings.HasPrefix(g, p) && strings.Contains(g, strings.TrimPrefix(w, p)) {
				g = w
			}
		}
		if g != w {
			return fmt.Errorf("line %d:\n got %s\nwant %s\nall:\n%s", i, got[i], w, strings.Join(got, "\n"))
		}
	}
	return nil
}

// consistent checks the counting rule of a run that has no problems: the printed records
// plus those past the print limit are what the summary counts.
func consistent(r Run) error {
	if len(r.Problems) > 0 || !r.Summary {
		return nil
	}
	if got := r.Printed() + r.NotPrinted; got != r.Errors+r.Warnings {
		return fmt.Errorf("%s: Σcount %d + not_printed %d = %d, summary errors %d + warnings %d", r.Tool, r.Printed(), r.NotPrinted, got, r.Errors, r.Warnings)
	}
	return nil
}

func lines(b []byte, from, to int) []byte {
	all := bytes.SplitAfter(b, []byte("\n"))
	from, to = min(from, len(all)), min(to, len(all))
	return bytes.Join(all[from:to], nil)
}

// toolFromName reads the tool from a capture's file name: cs_<tool>_*, xml_<tool>_*,
// xmlrun_<tool>_* (the shared captures and testdata/sanitizer-kernels-h200), the probe's
// mc_, rc_, ic_ and sc_ prefixes, or rt_<case>_<tool>.log|xml; "" when the name does not say.
func toolFromName(name string) string {
	base := filepath.Base(name)
	for _, p := range []string{"cs_", "xmlrun_", "xml_"} {
		if rest, ok := strings.CutPrefix(base, p); ok {
			for _, t := range AllTools() {
				if strings.HasPrefix(rest, t+"_") || strings.HasPrefix(rest, t+".") {
					return t
				}
			}
			return ""
		}
	}
	if rest, ok := strings.CutPrefix(base, "rt_"); ok { // rt_<case>_<tool>.log|xml
		rest = strings.TrimSuffix(rest, filepath.Ext(rest))
		if i := strings.LastIndexByte(rest, '_'); i >= 0 && validTool(rest[i+1:]) {
			return rest[i+1:]
		}
		return ""
	}
	switch {
	case strings.HasPrefix(base, "mc_"):
		return ToolMemcheck
	case strings.HasPrefix(base, "rc_"):
		return ToolRacecheck
	case strings.HasPrefix(base, "ic_"):
		return ToolInitcheck
	case strings.HasPrefix(base, "sc_"):
		return ToolSynccheck
	}
	return ""
}
