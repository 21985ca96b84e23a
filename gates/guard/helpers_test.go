package guard

import (
	"fmt"
	"strings"
	"testing"
)

// want is one expected finding: on line, starting where the text at first occurs on that
// line (so the column is exact without counting by hand), with the rule and the command.
type want struct {
	line int
	at   string
	rule string
	cmd  string
	via  string // checked when set
}

type scanCase struct {
	name    string
	path    string // default x.sh
	src     string
	want    []want
	allowed []bool // per want, when set
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

func describeFindings(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n\t%d:%d-%d %s %q via %q allowed=%v", f.Line, f.Column, f.EndLine, f.Rule, f.Command, f.Via, f.Allowed)
	}
	if b.Len() == 0 {
		return " none"
	}
	return b.String()
}

func runScanCases(t *testing.T, cases []scanCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path
			if p == "" {
				p = "x.sh"
			}
			fs, ws := ScanFile(p, []byte(tc.src), Config{})
			for _, w := range ws {
				t.Errorf("unexpected warning: %+v", w)
			}
			if len(fs) != len(tc.want) {
				t.Fatalf("got %d findings, want %d:%s", len(fs), len(tc.want), describeFindings(fs))
			}
			for i, w := range tc.want {
				f := fs[i]
				c := col(tc.src, w.line, w.at)
				if c < 0 {
					t.Fatalf("bad test: %q not on line %d", w.at, w.line)
				}
				if f.Line != w.line || f.Column != c || f.Rule != w.rule || f.Command != w.cmd {
					t.Errorf("finding %d = %d:%d %s %q, want %d:%d %s %q", i, f.Line, f.Column, f.Rule, f.Command, w.line, c, w.rule, w.cmd)
				}
				if w.via != "" && f.Via != w.via {
					t.Errorf("finding %d via %q, want %q", i, f.Via, w.via)
				}
				if f.EndLine < f.Line {
					t.Errorf("finding %d: EndLine %d < Line %d", i, f.EndLine, f.Line)
				}
				if f.What == "" || f.Why == "" {
					t.Errorf("finding %d has no what/why", i)
				}
				if tc.allowed != nil && f.Allowed != tc.allowed[i] {
					t.Errorf("finding %d allowed=%v, want %v (%q)", i, f.Allowed, tc.allowed[i], f.AllowReason)
				}
			}
		})
	}
}

// runNone checks that each source (one per case) gives no finding and no warning.
func runNone(t *testing.T, path string, srcs []string) {
	t.Helper()
	for _, src := range srcs {
		t.Run(src, func(t *testing.T) {
			fs, ws := ScanFile(path, []byte(src), Config{})
			if len(fs) > 0 {
				t.Errorf("want no finding, got:%s", describeFindings(fs))
			}
			for _, w := range ws {
				t.Errorf("unexpected warning: %+v", w)
			}
		})
	}
}
