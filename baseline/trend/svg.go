package trend

// The charts: one inline <svg class="chart"> per metric, points evenly spaced by commit
// (a history is ordered, not timed: a week without merges is no gap), a tooltip (<title>)
// on every point, and the values again in a table beside it.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The chart's size in SVG units; the page scales it to its column.
const (
	chartW = 420
	chartH = 200
	padL   = 52
	padR   = 12
	padT   = 12
	padB   = 40
	plotW  = chartW - padL - padR
	plotH  = chartH - padT - padB
	// maxXLabels is the most commits the x axis names; tooltips and the table name all.
	maxXLabels = 6
	// palette is how many series colours the page's CSS defines (.s0 ... .s5).
	palette = 6
)

// scale maps values to the plot's height: linear, or log10 for errors that span decades.
type scale struct {
	lo, hi float64 // in the scale's space (log10 of the value when log)
	log    bool
	ticks  []float64 // values, in the value's space
	// decimals is how many the ticks of a linear scale need (their step's), -1 when the
	// ticks are the scale's ends and are written in full.
	decimals int
}

// newScale fits the values and bands of m. ok is false when m has no finite value.
func newScale(m Metric) (scale, bool) {
	var vals []float64
	for _, s := range m.Series {
		for _, v := range s.Values {
			if !v.Set || !finite(v.V) {
				continue
			}
			vals = append(vals, v.V)
			if v.Band && finite(v.Low) && finite(v.High) {
				vals = append(vals, v.Low, v.High)
			}
		}
	}
	if len(vals) == 0 {
		return scale{}, false
	}
	lo, hi := vals[0], vals[0]
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	if m.Unit == UnitError && lo > 0 && hi/lo >= 100 {
		return logScale(lo, hi), true
	}
	return linearScale(lo, hi, m.Unit == UnitCount || m.Unit == UnitBytes), true
}

// linearScale spans [lo, hi] with round ticks, whole ones for counts (whole). Values near
// the float64 limits, where a difference overflows, get the two ends as ticks.
func linearScale(lo, hi float64, whole bool) scale {
	if lo == hi {
		pad := math.Abs(lo) * 0.05
		if pad == 0 || !finite(lo-pad) || !finite(hi+pad) {
			pad = 1
		}
		lo, hi = lo-pad, hi+pad
	}
	span := hi/2 - lo/2 // halves: hi - lo may overflow
	step := niceStep(span * 2 / 4)
	if whole && step < 1 && step > 0 {
		step = 1
	}
	if !finite(step) || step <= 0 || !finite(hi-lo) {
		return scale{lo: lo, hi: hi, ticks: []float64{lo, hi}, decimals: -1}
	}
	a, z := math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	if !finite(a) || !finite(z) || (z-a)/step > 12 {
		return scale{lo: lo, hi: hi, ticks: []float64{lo, hi}, decimals: -1}
	}
	s := scale{lo: a, hi: z, decimals: max(0, int(-math.Floor(math.Log10(step))))}
	for i := 0; i <= 12; i++ {
		t := a + float64(i)*step
		if t > z+step/2 {
			break
		}
		if math.Abs(t) < step*1e-9 {
			t = 0 // 0.30000000000000004 - 0.3
		}
		s.ticks = append(s.ticks, t)
	}
	return s
}

// niceStep is the 1, 2 or 5 times a power of ten nearest above x.
func niceStep(x float64) float64 {
	if !finite(x) || x <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// logScale spans whole decades around [lo, hi] (both > 0).
func logScale(lo, hi float64) scale {
	a, z := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if a == z {
		z++
	}
	s := scale{lo: a, hi: z, log: true}
	every := math.Ceil((z - a) / 6)
	for d := a; d <= z; d += every {
		s.ticks = append(s.ticks, math.Pow(10, d))
	}
	return s
}

// y is v's height in the plot; values beyond the scale (the top of a NaN's marker) are
// clamped to its edges.
func (s scale) y(v float64) float64 {
	if s.log {
		if v <= 0 {
			return padT + plotH
		}
		v = math.Log10(v)
	}
	f := 0.5
	if d := s.hi/2 - s.lo/2; d > 0 {
		f = (v/2 - s.lo/2) / d
	}
	f = max(0, min(1, f))
	return padT + plotH*(1-f)
}

// x is the position of point i of n.
func x(i, n int) float64 {
	if n <= 1 {
		return padL + plotW/2
	}
	return padL + plotW*float64(i)/float64(n-1)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// writeChart draws m over pts as an <svg class="chart">; label names the chart for a
// screen reader (plain text, escaped here).
func writeChart(b *strings.Builder, label string, m Metric, pts []Point) {
	sc, ok := newScale(m)
	if !ok {
		sc = linearScale(0, 1, false) // only non-finite values: their markers on an empty scale
	}
	n := len(pts)
	fmt.Fprintf(b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s">`+"\n", chartW, chartH, esc(label))
	fmt.Fprintf(b, "<title>%s</title>\n", esc(label))
	// Grid and y axis.
	for _, t := range sc.ticks {
		y := num(sc.y(t))
		fmt.Fprintf(b, `<line class="grid" x1="%d" x2="%d" y1="%s" y2="%s"/>`, padL, chartW-padR, y, y)
		fmt.Fprintf(b, `<text class="ytick" x="%d" y="%s">%s</text>`+"\n", padL-6, y, esc(sc.tickLabel(m.Unit, t)))
	}
	fmt.Fprintf(b, `<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>`+"\n", padL, chartW-padR, padT+plotH, padT+plotH)
	// The commits where the driver or the toolkit changed.
	for i := 1; i < n; i++ {
		if what := softwareChange(pts[i-1], pts[i]); what != "" {
			xc := num((x(i-1, n) + x(i, n)) / 2)
			fmt.Fprintf(b, `<line class="change" x1="%s" x2="%s" y1="%d" y2="%d"><title>%s</title></line>`+"\n",
				xc, xc, padT, padT+plotH, esc(what))
		}
	}
	// x axis: at most maxXLabels commits, always the newest.
	for i := 0; i < n; i++ {
		if !labelled(i, n) {
			continue
		}
		xs, anchor := num(x(i, n)), ""
		if i == n-1 && n > 1 {
			xs, anchor = num(x(i, n)+4), " end" // the newest is not cut at the right edge
		}
		fmt.Fprintf(b, `<text class="xtick%s" x="%s" y="%d">%s</text>`, anchor, xs, padT+plotH+15, esc(cut(pts[i].Label(), 10)))
		fmt.Fprintf(b, `<text class="xdate%s" x="%s" y="%d">%s</text>`+"\n", anchor, xs, padT+plotH+28, esc(pts[i].Time.UTC().Format("01-02")))
	}
	// Bands, then lines, then points on top.
	for si, s := range m.Series {
		if !s.Limit {
			writeBands(b, si, s, sc, n)
		}
	}
	for si, s := range m.Series {
		writeLines(b, si, s, sc, n)
	}
	for si, s := range m.Series {
		if s.Limit {
			continue
		}
		for i, v := range s.Values {
			if !v.Set {
				continue
			}
			// &#10; breaks the tooltip's line without a line break in the page.
			tip := esc(pts[i].Label()) + " · " + esc(pts[i].Date()) + " UTC&#10;" + esc(seriesName(m, s)) + ": " + esc(formatValue(m.Unit, v))
			if lim := limitAt(m, i); lim != "" {
				tip += " (limit " + esc(lim) + ")"
			}
			if pts[i].Replay != "" {
				tip += "&#10;replay of a recorded run"
			}
			if !finite(v.V) {
				fmt.Fprintf(b, `<path class="nonfinite" d="M%s,%d l-5,-9 h10 z"><title>%s</title></path>`+"\n", num(x(i, n)), padT+9, tip)
				continue
			}
			fmt.Fprintf(b, `<circle class="pt %s" cx="%s" cy="%s" r="3.5"><title>%s</title></circle>`+"\n",
				seriesClass(si, s), num(x(i, n)), num(sc.y(v.V)), tip)
		}
	}
	b.WriteString("</svg>\n")
}

// labelled reports whether the x axis names point i of n: every k-th so that at most
// maxXLabels are named, and the newest, which the one before it must not crowd.
func labelled(i, n int) bool {
	every := (n + maxXLabels - 1) / maxXLabels
	switch {
	case i == n-1:
		return true
	case i%every != 0:
		return false
	}
	return n-1-i >= every
}

// seriesClass is the CSS class that colours series si.
func seriesClass(si int, s Series) string {
	if s.Limit {
		return "limit"
	}
	return "s" + strconv.Itoa(si%palette)
}

// seriesName is how a tooltip names a series: the metric, and the series when the chart
// has several ("sm_90a registers").
func seriesName(m Metric, s Series) string {
	if len(m.Series) > 1 && !(len(m.Series) == 2 && m.Series[1].Limit) {
		return s.Label + " " + m.Name
	}
	return m.Name
}

// limitAt is the limit series' value at point i, written; "" without one.
func limitAt(m Metric, i int) string {
	for _, s := range m.Series {
		if s.Limit && i < len(s.Values) && s.Values[i].Set {
			return FormatValue(m.Unit, s.Values[i].V)
		}
	}
	return ""
}

// runs are the maximal runs of consecutive points for which ok holds: [start, end).
func runs(n int, ok func(i int) bool) [][2]int {
	var out [][2]int
	for i := 0; i < n; {
		if !ok(i) {
			i++
			continue
		}
		j := i
		for j < n && ok(j) {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// writeLines joins consecutive finite values; across commits that did not measure the
// series (or measured NaN) a faint dashed line joins the values on either side, so that a
// trend still reads as one.
func writeLines(b *strings.Builder, si int, s Series, sc scale, n int) {
	vals := s.Values
	rs := runs(min(n, len(vals)), func(i int) bool { return vals[i].Set && finite(vals[i].V) })
	at := func(i int) string { return num(x(i, n)) + "," + num(sc.y(vals[i].V)) }
	for k, r := range rs {
		if k > 0 {
			fmt.Fprintf(b, `<path class="gap %s" d="M%s L%s"/>`+"\n", seriesClass(si, s), at(rs[k-1][1]-1), at(r[0]))
		}
		if r[1]-r[0] < 2 {
			continue // a lone point is its marker
		}
		var d strings.Builder
		for i := r[0]; i < r[1]; i++ {
			cmd := "L"
			if i == r[0] {
				cmd = "M"
			}
			d.WriteString(cmd + at(i) + " ")
		}
		fmt.Fprintf(b, `<path class="line %s" d="%s"/>`+"\n", seriesClass(si, s), strings.TrimSpace(d.String()))
	}
	if s.Limit && len(rs) == 1 && rs[0][1]-rs[0][0] == 1 {
		i := rs[0][0] // one limit alone: a short dash
		fmt.Fprintf(b, `<path class="line limit" d="M%s,%s h-8 h16"/>`+"\n", num(x(i, n)), num(sc.y(vals[i].V)))
	}
}

// writeBands shades each run of intervals; a lone interval is an error bar.
func writeBands(b *strings.Builder, si int, s Series, sc scale, n int) {
	vals := s.Values
	ok := func(i int) bool { return vals[i].Set && vals[i].Band && finite(vals[i].Low) && finite(vals[i].High) }
	for _, r := range runs(min(n, len(vals)), ok) {
		if r[1]-r[0] == 1 {
			i := r[0]
			fmt.Fprintf(b, `<path class="bar %s" d="M%s,%s V%s"/>`+"\n", seriesClass(si, s), num(x(i, n)), num(sc.y(vals[i].High)), num(sc.y(vals[i].Low)))
			continue
		}
		var d strings.Builder
		for i := r[0]; i < r[1]; i++ {
			cmd := "L"
			if i == r[0] {
				cmd = "M"
			}
			d.WriteString(cmd + num(x(i, n)) + "," + num(sc.y(vals[i].High)) + " ")
		}
		for i := r[1] - 1; i >= r[0]; i-- {
			d.WriteString("L" + num(x(i, n)) + "," + num(sc.y(vals[i].Low)) + " ")
		}
		fmt.Fprintf(b, `<path class="band %s" d="%sZ"/>`+"\n", seriesClass(si, s), d.String())
	}
}

// tickLabel writes a y axis value: with the decimals of the scale's step, decades as
// 0.001, very large or small values as 1e+09.
func (s scale) tickLabel(unit string, v float64) string {
	switch {
	case v == 0:
		return "0"
	case s.log || unit == UnitError && s.decimals > 6:
		return strconv.FormatFloat(v, 'g', 2, 64)
	case s.decimals < 0 || math.Abs(v) >= 1e7 || s.decimals > 6:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', s.decimals, 64)
}

// softwareChange says what changed between two points' driver and toolkit, "" when
// nothing (or when either does not say): such a step in a chart may be the software's.
func softwareChange(a, b Point) string {
	var what []string
	if a.Driver != "" && b.Driver != "" && a.Driver != b.Driver {
		what = append(what, "driver "+a.Driver+" → "+b.Driver)
	}
	if a.CUDA != "" && b.CUDA != "" && a.CUDA != b.CUDA {
		what = append(what, "CUDA "+a.CUDA+" → "+b.CUDA)
	}
	return strings.Join(what, ", ")
}
