// Package guardtest runs the guard's table tests: each case is a file and the findings it
// must give, each at an exact line and column, with its rule and command. The front ends'
// tests and the gate's own run their cases through the gate's scan of one file
// (guard.ScanFile) with the default config, which each passes in: guardtest cannot import
// the gate, whose own tests use it.
package guardtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard/finding"
)

// WorkflowPath is where the cases' workflows are.
const WorkflowPath = ".github/workflows/ci.yml"

// Want is one expected finding: on Line, starting where the text At first occurs on that
// line (so the column is exact without counting by hand), with the Rule and the command.
type Want struct {
	Line int
	At   string
	Rule string
	Cmd  string
	Via  string // checked when set
}

// Case is one file and the findings it must give.
type Case struct {
	Name    string
	Path    string // default x.sh
	Src     string
	Want    []Want
	Allowed []bool // per Want, when set
}

// col is the 1-based column where at first occurs on the line.
func col(src string, line int, at string) int {
	lines := strings.Split(src, "\n")
	if line < 1 || line > len(lines) {
		return -1
	}
	i := strings.Index(lines[line-1], at)
	if i < 0 {
		return -1
	}
	return i + 1
}

// Describe lists findings for a test's message.
func Describe(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n\t%d:%d-%d %s %q via %q allowed=%v", f.Line, f.Column, f.EndLine, f.Rule, f.Command, f.Via, f.Allowed)
	}
	if b.Len() == 0 {
		return " none"
	}
	return b.String()
}

// Run checks that each case, scanned with the zero (default) config, gives exactly its findings and no warning.
func Run[C any](t *testing.T, scan func(path string, content []byte, cfg C) ([]finding.Finding, []finding.Warning), cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			p := tc.Path
			if p == "" {
				p = "x.sh"
			}
			var cfg C
			fs, ws := scan(p, []byte(tc.Src), cfg)
			for _, w := range ws {
				t.Errorf("unexpected warning: %+v", w)
			}
			if len(fs) != len(tc.Want) {
				t.Fatalf("got %d findings, want %d:%s", len(fs), len(tc.Want), Describe(fs))
			}
			for i, w := range tc.Want {
				f := fs[i]
				c := col(tc.Src, w.Line, w.At)
				if c < 0 {
					t.Fatalf("bad test: %q not on line %d", w.At, w.Line)
				}
				if f.Line != w.Line || f.Column != c || f.Rule != w.Rule || f.Command != w.Cmd {
					t.Errorf("finding %d = %d:%d %s %q, want %d:%d %s %q", i, f.Line, f.Column, f.Rule, f.Command, w.Line, c, w.Rule, w.Cmd)
				}
				if w.Via != "" && f.Via != w.Via {
					t.Errorf("finding %d via %q, want %q", i, f.Via, w.Via)
				}
				if f.EndLine < f.Line {
					t.Errorf("finding %d: EndLine %d < Line %d", i, f.EndLine, f.Line)
				}
				if f.What == "" || f.Why == "" {
					t.Errorf("finding %d has no what/why", i)
				}
				if tc.Allowed != nil && f.Allowed != tc.Allowed[i] {
					t.Errorf("finding %d allowed=%v, want %v (%q)", i, f.Allowed, tc.Allowed[i], f.AllowReason)
				}
			}
		})
	}
}

// RunNone checks that each source (one per case) gives no finding and no warning.
func RunNone[C any](t *testing.T, scan func(path string, content []byte, cfg C) ([]finding.Finding, []finding.Warning), path string, srcs []string) {
	t.Helper()
	for _, src := range srcs {
		t.Run(src, func(t *testing.T) {
			var cfg C
			fs, ws := scan(path, []byte(src), cfg)
			if len(fs) > 0 {
				t.Errorf("want no finding, got:%s", Describe(fs))
			}
			for _, w := range ws {
				t.Errorf("unexpected warning: %+v", w)
			}
		})
	}
}
