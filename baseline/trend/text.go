package trend

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// WriteText says what the page draws in a few lines per key, for a terminal: the commits,
// each kernel × shape's first and last median time, the kernels whose registers changed
// or that spilled, and the errors over their limit. At most maxLines lines per key follow
// its first (0: no limit); the last says how many more the page has.
func WriteText(w io.Writer, hs []History, maxLines int) error {
	var b strings.Builder
	for _, h := range hs {
		n := len(h.Points)
		if n == 0 {
			fmt.Fprintf(&b, "%s: no commits\n", plain(h.Key.String()))
			continue
		}
		first, last := h.Points[0], h.Points[n-1]
		fmt.Fprintf(&b, "%s: %s, %s (%s)", plain(h.Key.String()), numtext.CountForms(n, "commit", "commits"), plain(first.Label()), first.Date())
		if n > 1 {
			fmt.Fprintf(&b, " … %s (%s)", plain(last.Label()), last.Date())
		}
		b.WriteString("\n")
		lines := textLines(h)
		shown := lines
		if maxLines > 0 && len(lines) > maxLines {
			shown = lines[:maxLines-1]
		}
		for _, l := range shown {
			b.WriteString("  " + l + "\n")
		}
		if len(shown) < len(lines) {
			fmt.Fprintf(&b, "  … and %d more on the page\n", len(lines)-len(shown))
		}
	}
	// A key, kernel or target name may begin a line, and a line beginning "::" is a
	// workflow command when this text reaches a runner's log (the demo prints it there).
	_, err := io.WriteString(w, workflowcmd.Neutralize(b.String()))
	return err
}

// textLines are a history's lines: times, then resources, then errors.
func textLines(h History) []string {
	n := len(h.Points)
	label := func(i int) string { return plain(h.Points[i].Label()) }
	var times, res, errs []string
	for _, s := range h.Shapes {
		title := plain(s.Title())
		if s.Target != "" {
			title += " (" + plain(s.Target) + ")"
		}
		vals := s.Time.Series[0].Values
		if i, j, count := ends(vals); count > 0 {
			line := fmt.Sprintf("%s: median %s", title, FormatValue(UnitMicros, vals[i].V))
			if j != i {
				line += fmt.Sprintf(" (%s) → %s (%s)", label(i), FormatValue(UnitMicros, vals[j].V), label(j))
				if vals[i].V > 0 {
					line += fmt.Sprintf(", %+.1f%%", 100*(vals[j].V/vals[i].V-1))
				}
			} else {
				line += " (" + label(i) + ")"
			}
			times = append(times, line+fmt.Sprintf("; measured at %d of %d commits", count, n))
		}
		errV, limV := s.MaxErr.Series[0].Values, s.MaxErr.Series[1].Values
		worst, over := -1, 0
		for i, v := range errV {
			if !v.Set {
				continue
			}
			bad := !finite(v.V) || limV[i].Set && v.V > limV[i].V
			if !bad {
				continue
			}
			over++
			if worst < 0 || !finite(v.V) || finite(errV[worst].V) && v.V > errV[worst].V {
				worst = i
			}
		}
		if worst >= 0 {
			line := fmt.Sprintf("%s: max_err over its limit at %d of %d commits, worst %s (%s)", title, over, n,
				FormatValue(UnitError, errV[worst].V), label(worst))
			if limV[worst].Set {
				line += ", limit " + FormatValue(UnitError, limV[worst].V)
			}
			errs = append(errs, line)
		}
	}
	for _, k := range h.Kernels {
		for si, rs := range k.Registers.Series {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, v := range rs.Values {
				if v.Set {
					lo, hi = min(lo, v.V), max(hi, v.V)
				}
			}
			var parts []string
			if i, j, count := ends(rs.Values); count > 1 && lo != hi {
				parts = append(parts, fmt.Sprintf("registers %s → %s (%s to %s)", FormatValue(UnitCount, rs.Values[i].V),
					FormatValue(UnitCount, rs.Values[j].V), FormatValue(UnitCount, lo), FormatValue(UnitCount, hi)))
			}
			if si < len(k.Spills.Series) {
				sp := k.Spills.Series[si].Values
				peak := -1
				for i, v := range sp {
					if v.Set && v.V > 0 && (peak < 0 || v.V > sp[peak].V) {
						peak = i
					}
				}
				if peak >= 0 {
					parts = append(parts, fmt.Sprintf("spills up to %s (%s)", FormatValue(UnitBytes, sp[peak].V), label(peak)))
				}
			}
			if len(parts) > 0 {
				res = append(res, fmt.Sprintf("%s (%s): %s", plain(k.Name), plain(rs.Label), strings.Join(parts, "; ")))
			}
		}
	}
	return append(append(times, res...), errs...)
}

// ends are the first and last points at which vals has a finite value, and how many do.
func ends(vals []Value) (first, last, count int) {
	first, last = -1, -1
	for i, v := range vals {
		if !v.Set || !finite(v.V) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
		count++
	}
	return first, last, count
}
