package report

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// ANSI SGR codes used by the text format.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrReplay = "1;33"
)

const (
	indent = "  "
	gap    = "  "
	// minColumn is the narrowest a table column is truncated to.
	minColumn = 10
)

// painter colours text when enabled.
type painter bool

func (p painter) paint(sgr, s string) string {
	if !p || sgr == "" || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

// verdictStyle is the label and colour of a verdict.
func verdictStyle(v result.Verdict) (string, string) {
	switch v {
	case result.Fail:
		return "FAIL", sgrRed
	case result.Pass:
		return "PASS", sgrGreen
	case result.Skip:
		return "SKIP", sgrDim
	case "":
		return "UNKNOWN", ""
	}
	return strings.ToUpper(clean(string(v))), ""
}

// rowStatusStyle labels a table row: FAIL stands out, pass and skip stay quiet.
func rowStatusStyle(v result.Verdict) (string, string) {
	switch v {
	case result.Fail:
		return "FAIL", sgrRed
	case result.Pass:
		return "pass", sgrGreen
	case result.Skip:
		return "skip", sgrDim
	}
	return clean(string(v)), ""
}

func severityStyle(s result.Severity) (string, string) {
	switch s {
	case result.Error:
		return "error", sgrRed
	case result.Warning:
		return "warning", sgrYellow
	case result.Notice:
		return "notice", sgrDim
	case "":
		return "?", ""
	}
	return clean(string(s)), ""
}

func renderText(r result.Result, o Options) string {
	p := painter(o.Color)
	var b strings.Builder

	label, style := verdictStyle(r.Verdict)
	b.WriteString("kernel-gate: " + p.paint(joinSGR(sgrBold, style), label))
	if len(r.Gates) == 0 {
		b.WriteString(" (no gates ran)")
	} else {
		b.WriteString(" (" + gateCounts(r.Gates) + ")")
	}
	if r.Tool != "" {
		b.WriteString(" " + p.paint(sgrDim, "· "+clean(r.Tool)))
	}
	b.WriteString("\n")
	if r.Replay != "" {
		b.WriteString(p.paint(sgrReplay, "*** REPLAY of a recorded run ("+clean(r.Replay)+"): not a live run ***") + "\n")
	}

	for _, i := range failingFirst(r.Gates) {
		b.WriteString("\n")
		writeGateText(&b, i, r.Gates[i], o.Width, p)
	}
	writeStagesText(&b, r, o.Width, p)
	return b.String()
}

// failingFirst is the order the text report shows gates in, as indexes: the failed ones
// first, so that what to fix is at the top of a terminal, then the others, each group in
// the result's order.
func failingFirst(gates []result.Gate) []int {
	var failed, rest []int
	for i, g := range gates {
		if g.Verdict == result.Fail {
			failed = append(failed, i)
		} else {
			rest = append(rest, i)
		}
	}
	return append(failed, rest...)
}

func writeGateText(b *strings.Builder, i int, g result.Gate, w int, p painter) {
	name := strings.TrimSpace(clean(g.Name))
	if name == "" {
		name = "gate " + strconv.Itoa(i+1)
	}
	label, style := verdictStyle(g.Verdict)
	head := "== " + name + ": " + p.paint(style, label)
	if c := findingCounts(g); c != "" {
		head += " (" + c + ")"
	}
	b.WriteString(head + " ==\n")
	if s := strings.TrimSpace(clean(g.Summary)); s != "" {
		b.WriteString(indent + s + "\n")
	}
	if len(g.Findings) > 0 {
		b.WriteString("\n")
		writeFindingsText(b, g.Findings, w, p)
	}
	if g.Table != nil && tableShape(g.Table) > 0 {
		b.WriteString("\n")
		writeTableText(b, g.Table, w, p)
	}
}

// tcell is one cell of an aligned block: cleaned text, its colour and alignment.
type tcell struct {
	text  string
	style string
	right bool
}

// writeFindingsText writes one line per finding, worst first, in aligned columns:
// severity, kernel, arch, metric, comparison (with the baseline delta) and message.
// Columns that are empty for every finding are left out. Names are printed in full; a name
// wider than its column's cap just pushes the rest of its line to the right.
func writeFindingsText(b *strings.Builder, fs []result.Finding, w int, p painter) {
	caps := []int{0, max(24, w*2/5), 16, 24, 0, 0} // per column; 0: no cap
	var rows [][]tcell
	for _, f := range sortedFindings(fs) {
		sev, style := severityStyle(f.Severity)
		cmpText := comparison(f)
		switch {
		case f.Delta != nil && f.Baseline != nil:
			cmpText = strings.TrimSpace(cmpText + " (" + formatDelta(*f.Delta) + " vs baseline " + formatNum(*f.Baseline) + ")")
		case f.Delta != nil:
			cmpText = strings.TrimSpace(cmpText + " (" + formatDelta(*f.Delta) + " vs baseline)")
		case f.Baseline != nil:
			cmpText = strings.TrimSpace(cmpText + " (baseline " + formatNum(*f.Baseline) + ")")
		}
		msg := clean(f.MessageWhy(true))
		if loc := clean(location(f)); loc != "" {
			msg = loc + ": " + msg
		}
		rows = append(rows, []tcell{
			{text: sev, style: style},
			{text: clean(f.Kernel)},
			{text: clean(f.Arch)},
			{text: clean(f.Metric)},
			{text: cmpText},
			{text: strings.TrimSpace(msg)},
		})
	}
	// Drop the optional columns (kernel .. comparison) that no finding uses.
	keep := []int{0}
	for c := 1; c < 5; c++ {
		for _, r := range rows {
			if r[c].text != "" {
				keep = append(keep, c)
				break
			}
		}
	}
	keep = append(keep, 5)
	for i, r := range rows {
		kept := make([]tcell, len(keep))
		for j, c := range keep {
			kept[j] = r[c]
		}
		rows[i] = kept
	}
	widths := naturalWidths(rows)
	for j, c := range keep {
		if caps[c] > 0 {
			widths[j] = min(widths[j], caps[c])
		}
	}
	writeAligned(b, rows, widths, p)
}

// writeTableText writes a gate's table with the row status first, fitted to w.
func writeTableText(b *strings.Builder, t *result.Table, w int, p painter) {
	n, more := shownColumns(t)
	header := make([]tcell, n+1)
	header[0] = tcell{}
	for i := range n {
		header[i+1] = tcell{text: clean(cellAt(t.Columns, i)), style: sgrBold, right: numericColumn(t, i)}
	}
	rows := [][]tcell{header}
	for _, r := range t.Rows {
		label, style := rowStatusStyle(r.Status)
		row := make([]tcell, n+1)
		row[0] = tcell{text: label, style: style}
		for i := range n {
			row[i+1] = tcell{text: clean(cellAt(r.Cells, i)), right: header[i+1].right}
		}
		rows = append(rows, row)
	}

	widths := naturalWidths(rows)
	fitWidths(widths, w)
	for _, row := range rows {
		for i := range row {
			row[i].text = truncMiddle(row[i].text, widths[i])
		}
	}
	// Underline the header.
	rule := make([]tcell, n+1)
	for i := 1; i <= n; i++ {
		rule[i] = tcell{text: strings.Repeat("-", widths[i]), style: sgrDim}
	}
	rows = append(rows[:1], append([][]tcell{rule}, rows[1:]...)...)
	writeAligned(b, rows, widths, p)
	if more > 0 {
		b.WriteString(indent + columnsNote(more) + "\n")
	}
}

// naturalWidths is the widest text of each column.
func naturalWidths(rows [][]tcell) []int {
	var ws []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(ws) {
				ws = append(ws, 0)
			}
			ws[i] = max(ws[i], width(c.text))
		}
	}
	return ws
}

// fitWidths shrinks the data columns (all but the first, the status) so that a table row
// fits in total: the widest columns are cut first, down to minColumn.
func fitWidths(ws []int, total int) {
	if len(ws) < 2 {
		return
	}
	fixed := width(indent) + ws[0] + width(gap)*(len(ws)-1)
	budget := total - fixed
	data := ws[1:]
	used := func(limit int) int {
		s := 0
		for _, w := range data {
			s += min(w, max(limit, min(w, minColumn)))
		}
		return s
	}
	widest := 0
	for _, w := range data {
		widest = max(widest, w)
	}
	if used(widest) <= budget {
		return
	}
	// The largest cap under which the row fits (0 when even the minimum does not).
	limit := sort.Search(widest+1, func(c int) bool { return used(c) > budget }) - 1
	limit = max(limit, 0)
	slack := budget - used(limit)
	for i, w := range data {
		nw := min(w, max(limit, min(w, minColumn)))
		if nw < w && slack > 0 {
			nw++
			slack--
		}
		data[i] = nw
	}
}

// writeAligned writes rows with columns padded to widths; the last column is not padded
// and trailing spaces are trimmed.
func writeAligned(b *strings.Builder, rows [][]tcell, widths []int, p painter) {
	for _, r := range rows {
		var line strings.Builder
		line.WriteString(indent)
		for i, c := range r {
			if i > 0 {
				line.WriteString(gap)
			}
			pad := max(widths[i]-width(c.text), 0)
			if c.right {
				line.WriteString(strings.Repeat(" ", pad))
			}
			line.WriteString(p.paint(c.style, c.text))
			if !c.right && i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", pad))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// joinSGR combines SGR codes, skipping empty ones.
func joinSGR(codes ...string) string {
	var nonEmpty []string
	for _, c := range codes {
		if c != "" {
			nonEmpty = append(nonEmpty, c)
		}
	}
	return strings.Join(nonEmpty, ";")
}
