package explain

import (
	"fmt"
	"math"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// stallPrefix and stallSuffix frame a warp-stall metric: the average number of warps
// stalled for one reason per issued instruction.
const (
	stallPrefix = "smsp__average_warps_issue_stalled_"
	stallSuffix = "_per_issue_active.ratio"
)

// stallReasons are the stall reasons profiled: the ones that explain most slow kernels.
var stallReasons = []string{"long_scoreboard", "short_scoreboard", "barrier", "mio_throttle", "math_pipe_throttle", "wait", "lg_throttle", "not_selected", "membar", "no_instruction"}

// profileNames names the fixed metric set for people, in the order clauses are made.
var profileNames = []struct{ metric, name string }{
	{"gpu__time_duration.sum", "duration"},
	{"sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput"},
	{"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory throughput"},
	{"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy"},
	{"l1tex__t_sector_hit_rate.pct", "L1 hit rate"},
	{"lts__t_sector_hit_rate.pct", "L2 hit rate"},
	{"dram__bytes.sum", "DRAM bytes"},
}

// ProfileMetrics is the fixed metric set of a base-vs-head profile: what one Nsight Compute
// run of each side collects (ncu --metrics).
func ProfileMetrics() []string {
	var out []string
	for _, p := range profileNames {
		out = append(out, p.metric)
	}
	for _, r := range stallReasons {
		out = append(out, stallPrefix+r+stallSuffix)
	}
	return out
}

// profileChanges pairs the metrics both sides have, in ProfileMetrics' order.
func profileChanges(base, head []Metric) []result.Change {
	if base == nil || head == nil {
		return nil
	}
	find := func(ms []Metric, name string) (Metric, bool) {
		for _, m := range ms {
			if m.Name == name {
				return m, true
			}
		}
		return Metric{}, false
	}
	var out []result.Change
	for _, name := range ProfileMetrics() {
		b, okB := find(base, name)
		h, okH := find(head, name)
		if okB && okH {
			out = append(out, result.Change{Name: name, Unit: h.Unit, Base: b.Value, Head: h.Value})
		}
	}
	return out
}

// profileClause says a profiled change that matters, or nothing: duration and DRAM bytes
// by 3% or more, a percentage of peak by 2 points or more, a stall reason by 10% or more
// of a figure that is at least 0.1 warps per issue.
func profileClause(c result.Change) string {
	rel := 0.0
	if c.Base != 0 {
		rel = (c.Head - c.Base) / c.Base
	}
	if reason, ok := strings.CutPrefix(c.Name, stallPrefix); ok {
		reason = strings.ReplaceAll(strings.TrimSuffix(reason, stallSuffix), "_", "-")
		if math.Max(c.Base, c.Head) < 0.1 || math.Abs(rel) < 0.10 {
			return ""
		}
		return fmt.Sprintf("%s stalls %+.0f%% (%.2f → %.2f warps per issued instruction)", reason, 100*rel, c.Base, c.Head)
	}
	for _, p := range profileNames {
		if p.metric != c.Name {
			continue
		}
		if strings.HasSuffix(c.Name, "pct") || strings.Contains(c.Name, "pct_of_peak") {
			if math.Abs(c.Head-c.Base) < 2 {
				return ""
			}
			return fmt.Sprintf("%s %.1f%% → %.1f%%", p.name, c.Base, c.Head)
		}
		if math.Abs(rel) < 0.03 {
			return ""
		}
		return fmt.Sprintf("%s %s → %s %s (%+.0f%%)", p.name, num(c.Base), num(c.Head), c.Unit, 100*rel)
	}
	return ""
}
