package report

import (
	"cmp"
	"math"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
)

// Trend is the markdown summary's optional last section: the newest points of the run's
// GPU's baseline history, per kernel × shape their median times and per kernel × arch
// their registers, and a link to the page that draws all of it (kernel-gate trend).
type Trend struct {
	// History is the run's GPU's history (trend.FromEntries of the store's newest
	// entries); its last Points commits are shown.
	History trend.History
	// URL links the trend page: only an absolute http or https URL is linked.
	URL string
	// Points is how many of the newest commits are shown; DefaultTrendPoints when 0.
	Points int
}

// DefaultTrendPoints is how many commits the trend section shows when told nothing else:
// enough to see a step, few enough for a table to fit a summary's width.
const DefaultTrendPoints = 5

// sparkBars draw a sparkline, lowest to highest.
var sparkBars = []rune("▁▂▃▄▅▆▇█")

// mdTrendSection renders the trend section; false when there is nothing to show.
func mdTrendSection(t *Trend) (mdSection, bool) {
	if t == nil || len(t.History.Points) == 0 {
		return mdSection{}, false
	}
	h := t.History
	n := min(cmp.Or(t.Points, DefaultTrendPoints), len(h.Points))
	if n <= 0 {
		n = min(DefaultTrendPoints, len(h.Points))
	}
	from := len(h.Points) - n
	pts := h.Points[from:]
	s := mdSection{name: "trend", short: "the trend", aside: true}

	var head strings.Builder
	head.WriteString("\n### 📈 Trend on " + md(h.Key.String()) + "\n\n")
	if n == 1 {
		head.WriteString("The last commit of the baseline.")
	} else {
		head.WriteString("The last " + numtext.Count(n, "commit") + " of the baseline, oldest first; the change is the last shown against the first.")
	}
	replays := 0
	for _, p := range pts {
		if p.Replay != "" {
			replays++
		}
	}
	switch {
	case replays == 1 && n == 1:
		head.WriteString(" It is a replay of a recorded run, not a live measurement.")
	case replays == 1:
		head.WriteString(" One of them is a replay of a recorded run, not a live measurement.")
	case replays == n:
		head.WriteString(" They are replays of recorded runs, not live measurements.")
	case replays > 1:
		head.WriteString(" " + strconv.Itoa(replays) + " of them are replays of recorded runs, not live measurements.")
	}
	if link := mdURL(t.URL); link != "" {
		head.WriteString(" Every commit the baseline keeps is drawn on the [trend page](" + link + ").")
	}
	head.WriteString("\n")
	s.blocks = append(s.blocks, mdBlock{text: head.String()})

	cols := make([]string, n)
	for i, p := range pts {
		cols[i] = md(p.Label()) + "<br><sub>" + p.Time.UTC().Format("01-02") + "</sub>"
	}
	var timeRows [][]string
	for _, sh := range h.Shapes {
		vals := sh.Time.Series[0].Values[from:]
		if !anySet(vals) {
			continue
		}
		row := []string{md(truncMiddle(clean(sh.Title()), 60)), md(sh.Target)}
		for _, v := range vals {
			row = append(row, trendCell(trend.UnitMicros, v))
		}
		timeRows = append(timeRows, append(row, sparkline(vals), trendChange(vals, true)))
	}
	if len(timeRows) > 0 {
		header := append(append([]string{"Kernel × shape", "Target"}, cols...), "Trend", "Change")
		right := append(append([]bool{false, false}, repeat(true, n)...), false, true)
		header, right, timeRows = dropEmptyColumns(header, right, timeRows, 0)
		fold := ""
		if len(timeRows) > foldRows {
			fold = "Median times (" + strconv.Itoa(len(timeRows)) + " kernels × shapes)"
		}
		s.blocks = append(s.blocks, mdTableBlock("median times", header, right, timeRows, fold))
	}
	// Registers: the kernels × archs whose count changed over these commits; the others
	// are counted, and the page has them all.
	var regRows [][]string
	steady := 0
	for _, k := range h.Kernels {
		for _, sr := range k.Registers.Series {
			vals := sr.Values[from:]
			if !anySet(vals) {
				continue
			}
			if !varies(vals) {
				steady++
				continue
			}
			row := []string{md(truncMiddle(clean(k.Name), 60)), md(sr.Label)}
			for _, v := range vals {
				row = append(row, trendCell(trend.UnitCount, v))
			}
			regRows = append(regRows, append(row, trendChange(vals, false)))
		}
	}
	if len(regRows) > 0 {
		header := append(append([]string{"Kernel", "Arch"}, cols...), "Registers change")
		right := append(append([]bool{false, false}, repeat(true, n)...), true)
		fold := ""
		if len(regRows) > foldRows {
			fold = "Registers (" + strconv.Itoa(len(regRows)) + " kernels × archs changed)"
		}
		s.blocks = append(s.blocks, mdTableBlock("registers", header, right, regRows, fold))
	}
	if steady > 0 {
		kernels := strconv.Itoa(steady) + " kernels × archs"
		if steady == 1 {
			kernels = "1 kernel × arch"
		}
		note := "The registers of the other " + kernels + " did not change over these commits."
		if len(regRows) == 0 {
			note = "The registers of the " + kernels + " did not change over these commits."
		}
		s.blocks = append(s.blocks, mdBlock{what: "registers note", text: "\n" + note + "\n"})
	}
	if len(s.blocks) == 1 {
		s.blocks[0].text += "\nThe baseline's last commits recorded no median time and no registers.\n"
	}
	return s, true
}

// varies reports whether vals hold two different values (a value against none counts).
func varies(vals []trend.Value) bool {
	var first *trend.Value
	for i := range vals {
		v := &vals[i]
		if first == nil {
			first = v
			continue
		}
		if v.Set != first.Set || v.Set && v.V != first.V {
			return true
		}
	}
	return false
}

func anySet(vals []trend.Value) bool {
	for _, v := range vals {
		if v.Set {
			return true
		}
	}
	return false
}

func repeat(v bool, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// trendCell writes one value of the trend table; "–" for a commit that did not measure it.
func trendCell(unit string, v trend.Value) string {
	if !v.Set {
		return "–"
	}
	return md(trend.FormatValue(unit, v.V))
}

// sparkline draws finite values as bars from the lowest to the highest; a commit without
// one is a space. Equal values are a row of middle bars.
func sparkline(vals []trend.Value) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v.Set && !math.IsNaN(v.V) && !math.IsInf(v.V, 0) {
			lo, hi = min(lo, v.V), max(hi, v.V)
		}
	}
	if lo > hi {
		return ""
	}
	var b strings.Builder
	for _, v := range vals {
		switch {
		case !v.Set || math.IsNaN(v.V) || math.IsInf(v.V, 0):
			b.WriteRune('·')
		case hi == lo || hi/2-lo/2 <= 0:
			b.WriteRune(sparkBars[len(sparkBars)/2])
		default:
			f := (v.V/2 - lo/2) / (hi/2 - lo/2)
			b.WriteRune(sparkBars[min(len(sparkBars)-1, int(f*float64(len(sparkBars)-1)+0.5))])
		}
	}
	return "`" + b.String() + "`"
}

// trendChange is the last finite value against the first: a percentage for times, a
// difference for counts; ▲ in bold when it grew (more time, more registers), "" with
// fewer than two values.
func trendChange(vals []trend.Value, percent bool) string {
	first, last := -1, -1
	for i, v := range vals {
		if v.Set && !math.IsNaN(v.V) && !math.IsInf(v.V, 0) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 || first == last {
		return ""
	}
	a, z := vals[first].V, vals[last].V
	if !percent {
		return deltaMark(z-a, false)
	}
	if a <= 0 {
		return ""
	}
	d := 100 * (z/a - 1)
	if math.Abs(d) < 0.05 {
		return "±0%"
	}
	return markArrow(strconv.FormatFloat(math.Abs(d), 'f', 1, 64)+"%", d > 0, false)
}
