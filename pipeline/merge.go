package pipeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// TargetData is one target's entry in a merged gate's data.targets.
type TargetData struct {
	Target  string          `json:"target"`
	Verdict result.Verdict  `json:"verdict"`
	Skipped string          `json:"skipped,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// mergeTargetGates makes one gate of a GPU gate's per-target parts. Its verdict fails when
// a part failed, passes when a part passed, and skips when every part was skipped (each
// with its reason as a notice). Findings and table rows are kept in target order, the
// summary says each target's, table rows gain a "target" column; data.targets[] holds every part's data, and a list that every
// part's data has at its top level (the speedup gate's comparisons[], say) is also joined
// at the top, so data.comparisons reads as it does for one target.
func mergeTargetGates(name string, outs []*targetOutcome) (result.Gate, error) {
	g := result.Gate{Name: name, Findings: []result.Finding{}}
	var summaries []string
	var targets []TargetData
	lists := map[string][]json.RawMessage{}
	var listOrder []string
	judged := false
	for _, o := range outs {
		part := o.parts[name]
		if part == nil {
			continue
		}
		if part.gate == nil {
			targets = append(targets, TargetData{Target: o.name, Verdict: result.Skip, Skipped: part.skipped})
			g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, Metric: "skipped",
				Message: fmt.Sprintf("%s: %s", o.name, part.skipped)})
			summaries = append(summaries, o.name+": skipped")
			continue
		}
		pg := part.gate
		if pg.Verdict != result.Skip {
			judged = true
		}
		g.Findings = append(g.Findings, pg.Findings...)
		if pg.Table != nil {
			// One table for all targets, each row saying whose it is.
			cols := append([]string{"target"}, pg.Table.Columns...)
			if g.Table == nil {
				g.Table = &result.Table{Columns: cols}
			}
			if slices.Equal(g.Table.Columns, cols) {
				for _, r := range pg.Table.Rows {
					g.Table.Rows = append(g.Table.Rows, result.Row{Status: r.Status, Cells: append([]string{o.name}, r.Cells...)})
				}
			}
		}
		s := pg.Summary
		if s == "" {
			s = string(pg.Verdict)
		}
		summaries = append(summaries, o.name+": "+s)
		targets = append(targets, TargetData{Target: o.name, Verdict: pg.Verdict, Data: pg.Data})
		var top map[string]json.RawMessage
		if len(pg.Data) > 0 && json.Unmarshal(pg.Data, &top) == nil {
			for k, v := range top {
				var items []json.RawMessage
				if json.Unmarshal(v, &items) == nil {
					if _, seen := lists[k]; !seen {
						listOrder = append(listOrder, k)
					}
					lists[k] = append(lists[k], items...)
				}
			}
		}
	}
	data := map[string]any{"targets": targets}
	for _, k := range listOrder {
		if k != "targets" {
			data[k] = lists[k]
		}
	}
	if targets == nil {
		data["targets"] = []TargetData{}
	}
	if err := g.SetData(data); err != nil {
		return g, err
	}
	g.Decide(judged)
	g.Summary = strings.Join(summaries, "; ")
	return g, nil
}
