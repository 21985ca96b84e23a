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

// durationMetric and achievedMetric are the profile's kernel duration and achieved
// occupancy, which other clauses read.
const (
	durationMetric = "gpu__time_duration.sum"
	achievedMetric = "sm__warps_active.avg.pct_of_peak_sustained_active"
)

// profileNames names the fixed metric set for people, in the order clauses are made, and
// says which way is worse: +1 higher, -1 lower, 0 neither (a throughput falls as a kernel
// slows, or rises as it does more).
var profileNames = []struct {
	metric, name string
	worse        int
}{
	{durationMetric, "duration", +1},
	{"sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput", 0},
	{"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory throughput", 0},
	{achievedMetric, "achieved occupancy", -1},
	{"l1tex__t_sector_hit_rate.pct", "L1 hit rate", -1},
	{"lts__t_sector_hit_rate.pct", "L2 hit rate", -1},
	{"dram__bytes.sum", "DRAM bytes", +1},
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
	var out []result.Change
	for _, name := range ProfileMetrics() {
		b, okB := metricOf(base, name)
		h, okH := metricOf(head, name)
		if okB && okH {
			out = append(out, result.Change{Name: name, Unit: h.Unit, Base: b.Value, Head: h.Value})
		}
	}
	return out
}

// metricOf is the metric of that name among ms.
func metricOf(ms []Metric, name string) (Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// relChange is head's change relative to base (0 where base is 0).
func relChange(c result.Change) float64 {
	if c.Base == 0 {
		return 0
	}
	return (c.Head - c.Base) / c.Base
}

// profileClause says a profiled change that matters, or nothing: duration and DRAM bytes
// by 3% or more, a percentage of peak by 2 points or more, a stall reason by 10% or more
// of a figure that is at least 0.1 warps per issue.
func profileClause(c result.Change) string {
	rel := relChange(c)
	if reason, ok := stallReason(c.Name); ok {
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
		if c.Unit == "byte" {
			return fmt.Sprintf("%s %s → %s (%+.0f%%)", p.name, bytesText(c.Base), bytesText(c.Head), 100*rel)
		}
		return fmt.Sprintf("%s %s → %s %s (%+.0f%%)", p.name, num(c.Base), num(c.Head), c.Unit, 100*rel)
	}
	return ""
}

// stallReason is a stall metric's reason as a clause says it ("long-scoreboard").
func stallReason(metric string) (string, bool) {
	reason, ok := strings.CutPrefix(metric, stallPrefix)
	return strings.ReplaceAll(strings.TrimSuffix(reason, stallSuffix), "_", "-"), ok
}

// profileRank is how a profiled change ranks (rank): the duration and achieved occupancy
// by their own roles, stall reasons after the other metrics and by how much they moved;
// a change goes against a finding where it is better (a stall reason, the duration or
// DRAM bytes that fell, a hit rate or achieved occupancy that rose).
func profileRank(c result.Change) ranked {
	r := ranked{source: "ncu", role: roleProfile}
	worse := 0
	if _, ok := stallReason(c.Name); ok {
		worse, r.sub, r.weight = +1, 1, math.Abs(c.Head-c.Base)
	}
	for _, p := range profileNames {
		if p.metric == c.Name {
			worse = p.worse
		}
	}
	switch c.Name {
	case durationMetric:
		r.role = roleDuration
	case achievedMetric:
		r.role, r.sub = roleOccupancy, 2
	}
	r.against = worse > 0 && c.Head < c.Base || worse < 0 && c.Head > c.Base
	return r
}

// bytesText is a byte count in decimal units, three significant digits ("58.9 MB"): Nsight
// Compute's DRAM bytes run to tens of millions, which %g would print as 5.8865792e+07.
func bytesText(v float64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%g bytes", v)
	}
	return fmt.Sprintf("%.3g %s", v, units[i])
}
