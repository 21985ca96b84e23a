package report

import (
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Where the time went: a live run's stages (result.Stages) as one table, each stage with
// the stages it ran at once with, and the critical path under it. A result without stages
// (a replay, a merge, an older result) shows nothing.

// maxStageRows is the most stages shown; the rest are counted.
const maxStageRows = 200

// atOnceSlack is how far two stages may overlap and still count as one after the other
// (the pipeline's own rounding).
const atOnceSlack = 0.05

// stageTable is the stages as a table (cells raw: each renderer escapes them), and the
// run's wall time (the last stage's end).
func stageTable(r result.Result) (*result.Table, float64) {
	t := &result.Table{Columns: []string{"stage", "target", "side", "start s", "wall s", "at once with"}}
	wall := 0.0
	for i, s := range r.Stages {
		wall = max(wall, s.StartSeconds+s.WallSeconds)
		if i < maxStageRows {
			t.Rows = append(t.Rows, result.Row{Cells: []string{s.Name, s.Target, s.Side,
				strconv.FormatFloat(s.StartSeconds, 'f', 1, 64), strconv.FormatFloat(s.WallSeconds, 'f', 1, 64), atOnceWith(r.Stages, i)}})
		}
	}
	if n := len(r.Stages) - maxStageRows; n > 0 {
		t.Rows = append(t.Rows, result.Row{Cells: []string{"… and " + strconv.Itoa(n) + " more stages", "", "", "", "", ""}})
	}
	return t, wall
}

// atOnceWith names the stages that overlapped stage i (not one inside the other: a
// sanitizer tool and the sanitizer's stage), at most three, then how many more.
func atOnceWith(stages []result.Stage, i int) string {
	s := stages[i]
	var with []string
	for j, o := range stages {
		if j == i || strings.HasPrefix(o.ID, s.ID+"/") || strings.HasPrefix(s.ID, o.ID+"/") {
			continue
		}
		if o.StartSeconds < s.StartSeconds+s.WallSeconds-atOnceSlack && s.StartSeconds < o.StartSeconds+o.WallSeconds-atOnceSlack {
			with = append(with, o.ID)
		}
	}
	if len(with) > 3 {
		with = append(with[:3], "+"+strconv.Itoa(len(with)-3))
	}
	return strings.Join(with, ", ")
}

// criticalPathText is the critical path's stages joined by arrows, and their wall time.
func criticalPathText(r result.Result) (string, float64) {
	sum := 0.0
	for _, id := range r.CriticalPath {
		for _, s := range r.Stages {
			if s.ID == id {
				sum += s.WallSeconds
				break
			}
		}
	}
	path := r.CriticalPath
	if len(path) > 30 {
		path = append(path[:30:30], "…")
	}
	return strings.Join(path, " → "), sum
}

// writeStagesText is the text report's "where the time went".
func writeStagesText(b *strings.Builder, r result.Result, w int, p painter) {
	if len(r.Stages) == 0 {
		return
	}
	t, wall := stageTable(r)
	b.WriteString("\n== where the time went: " + strconv.FormatFloat(wall, 'f', 1, 64) + " s ==\n\n")
	writeTableText(b, t, w, p)
	if path, sum := criticalPathText(r); path != "" {
		b.WriteString("\n" + indent + "critical path (" + strconv.FormatFloat(sum, 'f', 1, 64) + " s): " + clean(path) + "\n")
	}
}

// mdStagesSection is the job summary's "where the time went", folded: context, cut before
// any gate.
func mdStagesSection(r result.Result) (mdSection, bool) {
	if len(r.Stages) == 0 {
		return mdSection{}, false
	}
	t, wall := stageTable(r)
	s := mdSection{name: "where the time went", short: "where the time went", aside: true}
	head := "\n### ⏱️ Where the time went: " + strconv.FormatFloat(wall, 'f', 1, 64) + " s\n"
	if path, sum := criticalPathText(r); path != "" {
		head += "\nCritical path (" + strconv.FormatFloat(sum, 'f', 1, 64) + " s): " + md(path) + "\n"
	}
	s.blocks = append(s.blocks, mdBlock{text: head})
	rows := make([][]string, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = make([]string, len(row.Cells))
		for j, c := range row.Cells {
			rows[i][j] = md(c)
		}
	}
	s.blocks = append(s.blocks, mdTableBlock("stages", t.Columns, []bool{false, false, false, true, true, false}, rows, "every stage"))
	return s, true
}
