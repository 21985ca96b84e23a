package ncu

import (
	"fmt"
	"strconv"
)

// layout is the shape of the CSV table under a header. ncu prints three:
//
//   - details (the default page, --metrics or --section): one metric or rule result per
//     row, the launch's ID first;
//   - raw (--page raw): one launch per row, one column per metric, and under the header a
//     line of each column's unit;
//   - summary (--print-summary per-kernel or per-gpu): one metric per row and kernel (with
//     its block and grid), its Minimum, Maximum and Average over the kernel's Invocations,
//     and no ID.
//
// Each is read into the same Report: a raw row is a Launch with every metric of its
// columns; a summary's kernel is a Launch with Invocations set, each metric's Value its
// average and Min, Max its range.
type layout int

const (
	layoutDetails layout = iota
	layoutRaw
	layoutSummary
)

// layoutOf tells the layout from a header's columns.
func layoutOf(cols map[string]int) layout {
	_, id := cols[colID]
	_, metric := cols[colMetric]
	_, avg := cols[colAverage]
	switch {
	case !id && avg:
		return layoutSummary
	case id && !metric:
		return layoutRaw
	}
	return layoutDetails
}

// required are the columns without which a row of the layout cannot be judged.
func (l layout) required() []string {
	switch l {
	case layoutRaw:
		return []string{colID, colKernel}
	case layoutSummary:
		return []string{colKernel, colInvocations, colMetric, colUnit, colMinimum, colMaximum, colAverage}
	}
	return []string{colID, colKernel, colMetric, colUnit, colValue}
}

// launchColumns are the raw page's columns that describe the launch, not a metric.
var launchColumns = map[string]bool{
	colID: true, colPID: true, colProcess: true, colHost: true, colKernel: true, colContext: true,
	colStream: true, colBlock: true, colGrid: true, colDevice: true, colCC: true,
}

// units reads the raw page's line of units under its header.
func (p *parser) units(s string) {
	rec, err := readRecord(s)
	if err != nil || len(rec) != p.hdr.width {
		p.rep.problem(fmt.Sprintf("%s:%d: unreadable units line of ncu's raw page (%d fields, the header has %d)", p.name, p.line, len(rec), p.hdr.width))
		p.hdr = nil
		return
	}
	p.hdr.units = rec
}

// rawMetrics adds a raw page row's metric columns to its launch.
func (p *parser) rawMetrics(l *Launch, rec []string) {
	h := p.hdr
	for _, i := range h.metrics {
		m := Metric{Name: h.names[i], Raw: rec[i], Line: p.line}
		if i < len(h.units) {
			m.Unit = h.units[i]
		}
		m.Kind, m.Value = parseValue(m.Raw)
		l.Metrics = append(l.Metrics, m)
	}
}

// summaryRow adds a row of ncu's summary to the launch that stands for its kernel, block
// and grid.
func (p *parser) summaryRow(rec []string) {
	h := p.hdr
	if h.get(rec, colMetric) == "" {
		p.rep.problem(fmt.Sprintf("%s:%d: ncu summary row without a metric name", p.name, p.line))
		return
	}
	inv, err := strconv.Atoi(h.get(rec, colInvocations))
	if err != nil || inv <= 0 {
		p.rep.problem(fmt.Sprintf("%s:%d: malformed ncu summary row (Invocations %q)", p.name, p.line, h.get(rec, colInvocations)))
		return
	}
	group := launchKey{input: p.name, pid: h.get(rec, colPID), kernel: h.get(rec, colKernel), block: h.get(rec, colBlock), grid: h.get(rec, colGrid)}
	if p.summaryIDs == nil {
		p.summaryIDs = map[launchKey]int{}
	}
	id, ok := p.summaryIDs[group]
	if !ok {
		id = len(p.summaryIDs) // a summary has no ID: its launches are numbered in order
		p.summaryIDs[group] = id
	}
	group.id = id
	l := p.launch(rec, group)
	l.Invocations = inv
	m := Metric{Section: h.get(rec, colSection), Name: h.get(rec, colMetric), Unit: h.get(rec, colUnit), Raw: h.get(rec, colAverage), Line: p.line}
	m.Kind, m.Value = parseValue(m.Raw)
	minKind, minV := parseValue(h.get(rec, colMinimum))
	maxKind, maxV := parseValue(h.get(rec, colMaximum))
	if m.Kind == Number && (minKind != Number || maxKind != Number) {
		m.Kind, m.Value = Text, 0
	}
	m.Min, m.Max = minV, maxV
	l.Metrics = append(l.Metrics, m)
}
