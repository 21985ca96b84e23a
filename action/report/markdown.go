package report

import (
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

func renderMarkdown(r result.Result) string {
	var b strings.Builder
	b.WriteString("## kernel-gate: " + mdVerdict(r.Verdict) + "\n")
	if r.Replay != "" {
		b.WriteString("\n> 🔁 **Replay** of a recorded run (" + md(r.Replay) +
			"): these results come from recorded tool output, not a live run.\n")
	}
	if len(r.Gates) == 0 {
		b.WriteString("\nNo gates ran.\n")
		writeMDTool(&b, r.Tool)
		return b.String()
	}

	rows := make([][]string, len(r.Gates))
	for i, g := range r.Gates {
		rows[i] = []string{mdGateName(i, g), mdVerdict(g.Verdict),
			strconv.Itoa(g.Count(result.Error)), strconv.Itoa(g.Count(result.Warning))}
	}
	b.WriteString("\n")
	writeMDTable(&b, []string{"Gate", "Verdict", "Errors", "Warnings"}, []bool{false, false, true, true}, rows)

	for i, g := range r.Gates {
		b.WriteString("\n### " + mdGateName(i, g) + ": " + mdVerdict(g.Verdict) + "\n")
		if s := mdParagraph(g.Summary); s != "" {
			b.WriteString("\n" + s + "\n")
		}
		if len(g.Findings) > 0 {
			writeMDFindings(&b, g.Findings)
		}
		if g.Table != nil && tableShape(g.Table) > 0 {
			writeMDGateTable(&b, g.Table)
		}
	}
	writeMDTool(&b, r.Tool)
	return b.String()
}

// writeMDTool notes the tool that produced the result in small print.
func writeMDTool(b *strings.Builder, tool string) {
	if t := md(strings.TrimSpace(tool)); t != "" {
		b.WriteString("\n<sub>" + t + "</sub>\n")
	}
}

func writeMDFindings(b *strings.Builder, fs []result.Finding) {
	header := []string{"Severity", "Kernel", "Arch", "Metric", "Value", "Limit", "Δ baseline", "Message"}
	right := []bool{false, false, false, false, true, true, true, false}
	rows := make([][]string, 0, len(fs))
	for _, f := range sortedFindings(fs) {
		var value, limit, delta string
		if f.Value != nil {
			value = formatNum(*f.Value)
		}
		if f.Limit != nil {
			limit = formatNum(*f.Limit)
		}
		switch {
		case f.Delta != nil && f.Baseline != nil:
			delta = formatDelta(*f.Delta) + " (baseline " + formatNum(*f.Baseline) + ")"
		case f.Delta != nil:
			delta = formatDelta(*f.Delta)
		case f.Baseline != nil:
			delta = "baseline " + formatNum(*f.Baseline)
		}
		msg := md(strings.TrimSpace(f.Message))
		if loc := md(location(f)); loc != "" {
			msg = loc + ": " + msg
		}
		rows = append(rows, []string{mdSeverity(f.Severity), md(f.Kernel), md(f.Arch), md(f.Metric),
			value, limit, delta, msg})
	}
	header, right, rows = dropEmptyColumns(header, right, rows, 0, len(header)-1)
	b.WriteString("\n")
	if len(rows) > foldRows {
		b.WriteString("<details><summary>Findings (" + strconv.Itoa(len(rows)) + ")</summary>\n\n")
		writeMDTable(b, header, right, rows)
		b.WriteString("\n</details>\n")
		return
	}
	writeMDTable(b, header, right, rows)
}

func writeMDGateTable(b *strings.Builder, t *result.Table) {
	n := tableShape(t)
	header := []string{"Status"}
	right := []bool{false}
	for i := range n {
		header = append(header, md(cellAt(t.Columns, i)))
		right = append(right, numericColumn(t, i))
	}
	rows := make([][]string, 0, len(t.Rows))
	for _, r := range t.Rows {
		row := []string{mdVerdict(r.Status)}
		for i := range n {
			row = append(row, md(cellAt(r.Cells, i)))
		}
		rows = append(rows, row)
	}
	b.WriteString("\n")
	if len(rows) > foldRows {
		b.WriteString("<details><summary>Table (" + strconv.Itoa(len(rows)) + " rows, " +
			strconv.Itoa(failingRows(t)) + " failing)</summary>\n\n")
		writeMDTable(b, header, right, rows)
		b.WriteString("\n</details>\n")
		return
	}
	writeMDTable(b, header, right, rows)
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
