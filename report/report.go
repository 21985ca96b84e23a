// Package report renders a kernel-gate result for people and machines: a terminal view
// (text), the machine contract (json), a GitHub job summary (markdown) and a SARIF 2.1.0
// log for code scanning (sarif).
//
// Reporters know nothing about individual gates: every gate is rendered from the generic
// fields of result.Gate (verdict, summary, findings, table), so a new gate renders without
// changes here. The one exception adds to that: the markdown summary also reads the speedup
// gate's documented data.comparisons[] for its verdicts in words and its chart, and shows
// neither when that data is absent or does not parse. Kernel names, messages and table
// cells come from tool logs and are treated as untrusted: text output escapes control
// characters so they cannot drive the terminal, markdown output escapes HTML and markdown
// syntax so they render literally, and chart labels are Mermaid entities where Mermaid
// would read them.
package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Format is an output format.
type Format string

const (
	// Text is the terminal view.
	Text Format = "text"
	// JSON is the machine contract: exactly result.Write.
	JSON Format = "json"
	// Markdown is a GitHub job summary.
	Markdown Format = "markdown"
	// SARIF is a SARIF 2.1.0 log, for GitHub code scanning and other SARIF readers.
	SARIF Format = "sarif"
)

const validFormats = "text, json, markdown, sarif"

// ParseFormat parses a format name (case-insensitive; "md" is short for markdown).
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "text":
		return Text, nil
	case "json":
		return JSON, nil
	case "markdown", "md":
		return Markdown, nil
	case "sarif":
		return SARIF, nil
	}
	return "", fmt.Errorf("unknown format %q (valid formats: %s)", s, validFormats)
}

// Options control the text, markdown and sarif formats; json ignores them.
type Options struct {
	// Color enables ANSI colour in text output. The caller decides (see ColorWanted).
	Color bool
	// Width is the terminal width that tables are fitted to; 0 means 100.
	Width int
	// Root is the repository's checkout (GITHUB_WORKSPACE) for sarif: a finding's absolute
	// path under it is written relative to it. Any other absolute path, and any path that
	// leaves the repository, is not posted (see Fallback).
	Root string
	// Fallback, for sarif, is the repository file (relative to its root) a result is
	// located at when its finding names no file, or one that cannot be posted (GitHub code
	// scanning shows no result without a location): DefaultFallback when empty.
	Fallback string
	// ArtifactsURL, for markdown, links the run's artifacts (its logs, tool output and JSON
	// result: the workflow run's artifacts page) under the verdict table and in the note of
	// a cut summary. Only an absolute http or https URL is linked; anything else is left out.
	ArtifactsURL string
	// Limit, for markdown, is the most bytes the summary may take; 0 means no limit. A
	// longer summary is cut after a gate's section, a part of one or a table row, keeping
	// the verdict table and the failing gates' sections (which come first) before the
	// others, and ends in a line that says what was left out and where it is (the
	// artifacts when ArtifactsURL is set). GitHub takes at most 65,535 characters in a
	// check run's text and less than 1 MiB in a job summary; bytes never undercount
	// characters.
	Limit int
	// Trend, for markdown, adds a last section with the newest points of the run's GPU's
	// baseline history and a link to the trend page; nil leaves it out.
	Trend *Trend
}

const defaultWidth = 100

// Render writes r to w in format f.
func Render(w io.Writer, r result.Result, f Format, o Options) error {
	var out string
	switch f {
	case JSON:
		return result.Write(w, r)
	case Text:
		if o.Width <= 0 {
			o.Width = defaultWidth
		}
		out = renderText(r, o)
	case Markdown:
		out = renderMarkdown(r, o)
	case SARIF:
		return renderSARIF(w, r, o.Root, o.Fallback)
	default:
		return fmt.Errorf("unknown format %q (valid formats: %s)", f, validFormats)
	}
	_, err := io.WriteString(w, out)
	return err
}

// ColorWanted reports whether text output to f should be coloured: only when f is a
// terminal (a character device), NO_COLOR is unset or empty and TERM is not "dumb".
// env looks up environment variables (os.Getenv when nil).
func ColorWanted(f *os.File, env func(string) string) bool {
	if f == nil {
		return false
	}
	if env == nil {
		env = os.Getenv
	}
	if env("NO_COLOR") != "" || env("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

// sortedFindings returns the findings worst first: by severity, then by how far over the
// limit (Value/Limit, descending; findings with both come first), then kernel and arch.
// The input is not modified; ties keep their order.
func sortedFindings(fs []result.Finding) []result.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b result.Finding) int {
		if c := cmp.Compare(a.Severity.Rank(), b.Severity.Rank()); c != 0 {
			return c
		}
		ra, oka := overRatio(a)
		rb, okb := overRatio(b)
		switch {
		case oka && !okb:
			return -1
		case !oka && okb:
			return 1
		case oka && okb && ra != rb:
			return cmp.Compare(rb, ra)
		}
		if c := strings.Compare(a.Kernel, b.Kernel); c != 0 {
			return c
		}
		return strings.Compare(a.Arch, b.Arch)
	})
	return out
}

// overRatio is Value/Limit when both are present and the ratio is a number; a value over a
// zero limit is infinitely far over it.
func overRatio(f result.Finding) (float64, bool) {
	if f.Value == nil || f.Limit == nil {
		return 0, false
	}
	v, l := *f.Value, *f.Limit
	var r float64
	switch {
	case l != 0:
		r = v / l
	case v > 0:
		r = math.Inf(1)
	case v < 0:
		r = math.Inf(-1)
	default:
		r = 1
	}
	if math.IsNaN(r) {
		return 0, false
	}
	return r, true
}

// formatNum renders integral numbers as integers and others with at most 4 decimals
// (4 significant digits below 1, so that 0.00012345 keeps its digits).
func formatNum(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return numtext.Short(v)
	case v == 0:
		return "0" // also -0
	case math.Abs(v) >= 1e15:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	prec := 4
	if a := math.Abs(v); a < 1e-6 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	} else if a < 1 {
		prec = 3 - int(math.Floor(math.Log10(a))) // 4 significant digits
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// formatDelta renders a difference with an explicit sign.
func formatDelta(d float64) string {
	switch {
	case d == 0:
		return "±0"
	case d > 0 && !math.IsInf(d, 1):
		return "+" + formatNum(d)
	}
	return formatNum(d)
}

// comparison renders "value > limit" (or = / <), the value or the limit alone; "" when the
// finding has neither.
func comparison(f result.Finding) string {
	switch {
	case f.Value != nil && f.Limit != nil:
		v, l := *f.Value, *f.Limit
		op := "vs"
		switch {
		case v > l:
			op = ">"
		case v == l:
			op = "="
		case v < l:
			op = "<"
		}
		return formatNum(v) + " " + op + " " + formatNum(l)
	case f.Value != nil:
		return formatNum(*f.Value)
	case f.Limit != nil:
		return "limit " + formatNum(*f.Limit)
	}
	return ""
}

// location is "file:line:col", "file:line" or "file" (the form compilers print, which
// editors and terminals turn into links); "" without a file.
func location(f result.Finding) string {
	switch {
	case f.File == "":
		return ""
	case f.Line > 0 && f.Column > 0:
		return f.File + ":" + strconv.Itoa(f.Line) + ":" + strconv.Itoa(f.Column)
	case f.Line > 0:
		return f.File + ":" + strconv.Itoa(f.Line)
	}
	return f.File
}

// findingCounts is "2 errors, 1 warning" over the non-zero counts; "" when none.
func findingCounts(g result.Gate) string {
	var parts []string
	for _, s := range []struct {
		sev  result.Severity
		word string
	}{{result.Error, "error"}, {result.Warning, "warning"}, {result.Notice, "notice"}} {
		if n := g.Count(s.sev); n > 0 {
			parts = append(parts, numtext.Count(n, s.word))
		}
	}
	return strings.Join(parts, ", ")
}

// gateCounts is "1 failed, 2 passed" over the non-zero verdict counts.
func gateCounts(gates []result.Gate) string {
	var fail, pass, skip, other int
	for _, g := range gates {
		switch g.Verdict {
		case result.Fail:
			fail++
		case result.Pass:
			pass++
		case result.Skip:
			skip++
		default:
			other++
		}
	}
	var parts []string
	for _, c := range []struct {
		n    int
		word string
	}{{fail, "failed"}, {pass, "passed"}, {skip, "skipped"}, {other, "other"}} {
		if c.n > 0 {
			parts = append(parts, strconv.Itoa(c.n)+" "+c.word)
		}
	}
	return numtext.Count(len(gates), "gate") + ": " + strings.Join(parts, ", ")
}

// tableShape returns the number of columns of t: the most of its header and any row.
func tableShape(t *result.Table) int {
	n := len(t.Columns)
	for _, r := range t.Rows {
		n = max(n, len(r.Cells))
	}
	return n
}

// maxTableColumns is the most columns of a table a report shows (kernel-gate's gates make
// about ten). Every row is rendered as wide as the widest, so that one row of a million
// cells in a result made elsewhere would otherwise make each row a million cells wide.
const maxTableColumns = 64

// shownColumns is how many of t's columns a report shows, and how many more it has.
func shownColumns(t *result.Table) (shown, more int) {
	n := tableShape(t)
	return min(n, maxTableColumns), max(n-maxTableColumns, 0)
}

// columnsNote says that more columns were left out.
func columnsNote(more int) string {
	verb := "are"
	if more == 1 {
		verb = "is"
	}
	return fmt.Sprintf("%s %s not shown: a report shows at most %d columns; the result file has them all.",
		numtext.Count(more, "more column"), verb, maxTableColumns)
}

// cellAt returns cell i of row, "" when the row is short.
func cellAt(cells []string, i int) string {
	if i < len(cells) {
		return cells[i]
	}
	return ""
}

// numericColumn reports whether every non-empty cell of column i is a number (optionally
// with a trailing %), and at least one is: such columns are right-aligned.
func numericColumn(t *result.Table, i int) bool {
	seen := false
	for _, r := range t.Rows {
		c := strings.TrimSpace(cellAt(r.Cells, i))
		if c == "" {
			continue
		}
		c = strings.TrimSuffix(c, "%")
		if _, err := strconv.ParseFloat(c, 64); err != nil {
			return false
		}
		seen = true
	}
	return seen
}

// failingRows counts the rows whose status is fail.
func failingRows(t *result.Table) int {
	n := 0
	for _, r := range t.Rows {
		if r.Status == result.Fail {
			n++
		}
	}
	return n
}
