package report

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// foldRows is the most rows a markdown table shows unfolded; larger ones go in <details>.
const foldRows = 20

func mdVerdict(v result.Verdict) string {
	switch v {
	case result.Pass:
		return "✅ pass"
	case result.Fail:
		return "❌ fail"
	case result.Skip:
		return "⏭️ skip"
	case "":
		return "❔ unknown"
	}
	return "❔ " + md(string(v))
}

func mdSeverity(s result.Severity) string {
	switch s {
	case result.Error:
		return "❌ error"
	case result.Warning:
		return "⚠️ warning"
	case result.Notice:
		return "ℹ️ notice"
	case "":
		return "❔"
	}
	return "❔ " + md(string(s))
}

// mdGateName is the escaped name of gate i, numbered when it has none.
func mdGateName(i int, g result.Gate) string {
	if n := md(strings.TrimSpace(g.Name)); n != "" {
		return n
	}
	return "gate " + strconv.Itoa(i+1)
}

// mdBlock is one piece of a gate's section that a cut keeps or leaves out whole; a table
// (rows set) may also be cut after any of its rows.
type mdBlock struct {
	// what names the block in the cut note ("findings", "table", "chart", ...); "" for the
	// heading, which is never cut from its section.
	what string
	text string // a block that is not a table
	// A table: head (from the blank line before it to its separator row), one line per row,
	// tail (what closes its <details>).
	head, tail string
	rows       []string
	// deltas: the block shows a change against the baseline (▲/▼), so the legend is needed.
	deltas bool
}

func (b mdBlock) String() string {
	if b.rows == nil {
		return b.text
	}
	return b.head + strings.Join(b.rows, "") + b.tail
}

// mdSection is one gate's part of the summary.
type mdSection struct {
	name    string // escaped
	short   string // escaped, at most 40 characters: for the cut note
	verdict result.Verdict
	blocks  []mdBlock
	// aside is a section that is no gate's (the trend): the cut note names it without a
	// verdict.
	aside bool
}

func renderMarkdown(r result.Result, o Options) string {
	var top strings.Builder
	top.WriteString("## kernel-gate: " + mdVerdict(r.Verdict) + "\n")
	if r.Replay != "" {
		top.WriteString("\n> 🔁 **Replay** of a recorded run (" + md(r.Replay) +
			"): these results come from recorded tool output, not a live run.\n")
	}
	link := mdURL(o.ArtifactsURL)
	if len(r.Gates) == 0 {
		top.WriteString("\nNo gates ran.\n")
		writeMDArtifacts(&top, link)
		return fitMarkdown(top.String(), nil, mdTool(r.Tool), link, o.Limit)
	}

	rows := make([][]string, len(r.Gates))
	for i, g := range r.Gates {
		rows[i] = []string{mdGateName(i, g), mdVerdict(g.Verdict),
			strconv.Itoa(g.Count(result.Error)), strconv.Itoa(g.Count(result.Warning))}
	}
	top.WriteString("\n")
	writeMDTable(&top, []string{"Gate", "Verdict", "Errors", "Warnings"}, []bool{false, false, true, true}, rows)
	writeMDArtifacts(&top, link)

	secs := make([]mdSection, 0, len(r.Gates))
	deltas := false
	for _, i := range failuresFirst(r.Gates) {
		s := mdGateSection(i, r.Gates[i])
		for _, b := range s.blocks {
			deltas = deltas || b.deltas
		}
		secs = append(secs, s)
	}
	if deltas {
		top.WriteString("\n" + deltaLegend + "\n")
	}
	if s, ok := mdStagesSection(r); ok {
		secs = append(secs, s) // where the time went: context, cut before any gate
	}
	if s, ok := mdTrendSection(o.Trend); ok {
		secs = append(secs, s) // last: the history is context, cut before any gate
	}
	return fitMarkdown(top.String(), secs, mdTool(r.Tool), link, o.Limit)
}

// failuresFirst is the order of the gates' sections: failed gates first, then the rest, each
// in the run's order.
func failuresFirst(gates []result.Gate) []int {
	order := make([]int, 0, len(gates))
	for i, g := range gates {
		if g.Verdict == result.Fail {
			order = append(order, i)
		}
	}
	for i, g := range gates {
		if g.Verdict != result.Fail {
			order = append(order, i)
		}
	}
	return order
}

// mdGateSection renders one gate: its heading and summary, for the speedup gate the verdict
// per kernel × shape in words and a chart of head vs base, its findings and its table.
func mdGateSection(i int, g result.Gate) mdSection {
	s := mdSection{name: mdGateName(i, g), short: mdGateName(i, result.Gate{Name: truncMiddle(clean(strings.TrimSpace(g.Name)), 40)}),
		verdict: g.Verdict}
	heading := "\n### " + s.name + ": " + mdVerdict(g.Verdict) + "\n"
	if p := mdParagraph(g.Summary); p != "" {
		heading += "\n" + p + "\n"
	}
	s.blocks = append(s.blocks, mdBlock{text: heading})
	if cs := speedComparisons(g); len(cs) > 0 {
		s.blocks = append(s.blocks, mdBlock{what: "verdicts per kernel × shape", text: mdSpeedVerdicts(cs)})
		if chart := mermaidSpeedChart(cs); chart != "" {
			s.blocks = append(s.blocks, mdBlock{what: "chart", text: chart})
		}
	}
	if len(g.Findings) > 0 {
		s.blocks = append(s.blocks, mdFindings(g.Findings))
		if why := mdFindingsWhy(g.Findings); why != "" {
			s.blocks = append(s.blocks, mdBlock{what: "explanations", text: why})
		}
	}
	if g.Table != nil && tableShape(g.Table) > 0 {
		s.blocks = append(s.blocks, mdGateTable(g.Table))
	}
	return s
}

// mdTool notes the tool that produced the result in small print; "" without one.
func mdTool(tool string) string {
	if t := md(strings.TrimSpace(tool)); t != "" {
		return "\n<sub>" + t + "</sub>\n"
	}
	return ""
}

// writeMDArtifacts links the run's artifacts when there is a link.
func writeMDArtifacts(b *strings.Builder, link string) {
	if link != "" {
		b.WriteString("\n📦 Logs, tool output and the JSON result of this run: [artifacts](" + link + ")\n")
	}
}

// mdURL returns u as a markdown link destination when it is an absolute http or https URL,
// with every character that could end the destination or the line percent-encoded; ""
// otherwise (a URL that is not one is not linked).
func mdURL(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	s := p.String()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>[]\"'`\\|*_{}", c) >= 0 {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func mdFindings(fs []result.Finding) mdBlock {
	header := []string{"Severity", "Kernel", "Arch", "Metric", "Value", "Limit", "Δ vs base", "Message"}
	right := []bool{false, false, false, false, true, true, true, false}
	rows := make([][]string, 0, len(fs))
	deltas := false
	for _, f := range sortedFindings(fs) {
		var value, limit, delta string
		if f.Value != nil {
			value = formatNum(*f.Value)
		}
		if f.Limit != nil {
			limit = formatNum(*f.Limit)
		}
		switch {
		case f.Delta != nil:
			delta = deltaMark(*f.Delta, higherIsBetter(f.Metric))
			deltas = true
			if f.Baseline != nil {
				delta += " (base " + formatNum(*f.Baseline) + ")"
			}
		case f.Baseline != nil:
			delta = "base " + formatNum(*f.Baseline)
		}
		msg := md(strings.TrimSpace(f.MessageWhy(true)))
		if loc := md(location(f)); loc != "" {
			msg = loc + ": " + msg
		}
		rows = append(rows, []string{mdSeverity(f.Severity), md(f.Kernel), md(f.Arch), md(f.Metric),
			value, limit, delta, msg})
	}
	header, right, rows = dropEmptyColumns(header, right, rows, 0, len(header)-1)
	fold := ""
	if len(rows) > foldRows {
		fold = "Findings (" + strconv.Itoa(len(rows)) + ")"
	}
	b := mdTableBlock("findings", header, right, rows, fold)
	b.deltas = deltas
	return b
}

func mdGateTable(t *result.Table) mdBlock {
	n, more := shownColumns(t)
	header := []string{"Status"}
	right := []bool{false}
	better := make([]bool, n)
	for i := range n {
		header = append(header, md(cellAt(t.Columns, i)))
		right = append(right, mdNumericColumn(t, i))
		better[i] = higherIsBetter(cellAt(t.Columns, i))
	}
	rows := make([][]string, 0, len(t.Rows))
	deltas := false
	for _, r := range t.Rows {
		row := []string{mdVerdict(r.Status)}
		for i := range n {
			c, d := mdCell(cellAt(r.Cells, i), better[i])
			deltas = deltas || d
			row = append(row, c)
		}
		rows = append(rows, row)
	}
	fold := ""
	if len(rows) > foldRows {
		fold = "Table (" + strconv.Itoa(len(rows)) + " rows, " + strconv.Itoa(failingRows(t)) + " failing)"
	}
	b := mdTableBlock("table", header, right, rows, fold)
	b.deltas = deltas
	if more > 0 {
		b.tail += "\n*" + columnsNote(more) + "*\n"
	}
	return b
}

// mdTableBlock renders a table as a block; fold, when set, is the summary of the <details>
// that holds it. Cells must already be escaped.
func mdTableBlock(what string, header []string, right []bool, rows [][]string, fold string) mdBlock {
	var h strings.Builder
	h.WriteString("\n")
	tail := ""
	if fold != "" {
		h.WriteString("<details><summary>" + fold + "</summary>\n\n")
		tail = "\n</details>\n"
	}
	writeMDTable(&h, header, right, nil)
	lines := make([]string, len(rows))
	for i, r := range rows {
		var l strings.Builder
		writeMDRow(&l, r)
		lines[i] = l.String()
	}
	return mdBlock{what: what, head: h.String(), rows: lines, tail: tail}
}

// Changes against the baseline: a table cell "150 (+21)" (a number, optionally with a unit,
// and its signed change in parentheses) is shown as "150 ▲21".
var (
	numText   = `[0-9][0-9.,]*(?:[eE][-+]?[0-9]+)?(?: ?[A-Za-zµ%]+)?`
	deltaCell = regexp.MustCompile(`^([-−]?` + numText + `) \(([-+−])(` + numText + `)\)$`)
)

// deltaLegend explains ▲ and ▼; it is shown once, when some block has them.
const deltaLegend = "Δ against base: ▲ more, ▼ less; **bold** when the change is worse " +
	"(more registers, spills, stack, memory or time; less speedup)."

// higherIsBetter reports whether an increase of the metric or column named name is an
// improvement. kernel-gate's metrics are mostly costs (registers, spills, stack, shared and
// local memory, time, slowdown, errors), where more is worse; a speedup or an occupancy is
// better when it grows.
func higherIsBetter(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"speedup", "occupancy", "vs reference", "vs_reference"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// deltaMark renders a change with ▲ (increase) or ▼ (decrease) and its size, in bold when
// the change is worse for a metric of that direction; "±0" when there is none.
func deltaMark(d float64, higherBetter bool) string {
	switch {
	case d == 0:
		return "±0"
	case d > 0:
		return markArrow(formatNum(d), true, higherBetter)
	case d < 0:
		return markArrow(formatNum(-d), false, higherBetter)
	}
	return formatNum(d) // NaN
}

// markArrow puts ▲ (up) or ▼ before s, in bold when that direction is worse.
func markArrow(s string, up, higherBetter bool) string {
	arrow := "▼"
	if up {
		arrow = "▲"
	}
	if up != higherBetter {
		return "**" + arrow + s + "**"
	}
	return arrow + s
}

// mdCell escapes a table cell, showing a change against the baseline ("150 (+21)") as
// "150 ▲21"; d reports whether it did.
func mdCell(c string, higherBetter bool) (string, bool) {
	m := deltaCell.FindStringSubmatch(strings.TrimSpace(c))
	if m == nil || !startsNonZero(m[3]) {
		return md(c), false
	}
	return md(m[1]) + " " + markArrow(md(m[3]), m[2] == "+", higherBetter), true
}

// startsNonZero reports whether the number that s starts with is not zero.
func startsNonZero(s string) bool {
	for _, r := range s {
		switch {
		case r >= '1' && r <= '9':
			return true
		case r == '0' || r == '.' || r == ',':
		default:
			return false
		}
	}
	return false
}

// mdNumericColumn reports whether column i is numbers (with changes against the baseline,
// units or "-" for an absent value), so that it is right-aligned.
func mdNumericColumn(t *result.Table, i int) bool {
	seen := false
	for _, r := range t.Rows {
		c := strings.TrimSpace(cellAt(r.Cells, i))
		if c == "" || c == "-" {
			continue
		}
		if m := deltaCell.FindStringSubmatch(c); m != nil {
			c = m[1]
		}
		c = strings.TrimSuffix(c, "%")
		if _, err := strconv.ParseFloat(strings.TrimSpace(c), 64); err != nil {
			return false
		}
		seen = true
	}
	return seen
}

// dropEmptyColumns leaves out the columns that are empty in every row, except those listed
// in keep.
func dropEmptyColumns(header []string, right []bool, rows [][]string, keep ...int) ([]string, []bool, [][]string) {
	var cols []int
	for c := range header {
		used := slices.Contains(keep, c)
		for _, r := range rows {
			if used {
				break
			}
			used = r[c] != ""
		}
		if used {
			cols = append(cols, c)
		}
	}
	pick := func(in []string) []string {
		out := make([]string, len(cols))
		for i, c := range cols {
			out[i] = in[c]
		}
		return out
	}
	newRight := make([]bool, len(cols))
	for i, c := range cols {
		newRight[i] = right[c]
	}
	newRows := make([][]string, len(rows))
	for i, r := range rows {
		newRows[i] = pick(r)
	}
	return pick(header), newRight, newRows
}

// writeMDTable writes a GitHub table. Cells must already be escaped (md), so that none
// contains an unescaped '|' or a line break.
func writeMDTable(b *strings.Builder, header []string, right []bool, rows [][]string) {
	writeMDRow(b, header)
	b.WriteString("|")
	for _, r := range right {
		if r {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		writeMDRow(b, r)
	}
}

// writeMDRow writes one table row; cells are padded with spaces so that a trailing
// backslash in a cell cannot escape the closing '|'.
func writeMDRow(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n")
}
