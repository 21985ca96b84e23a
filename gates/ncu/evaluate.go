package ncu

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Name is the gate's name in results.
const Name = "ncu"

// Metric names of findings that carry no ncu metric.
const (
	// MetricRun: the run or its output failed (ncu missing, exit status, ==ERROR==, hang,
	// truncated or unreadable table, no kernel profiled).
	MetricRun = "ncu_run"
	// MetricMatch: a rule's glob matched no profiled kernel.
	MetricMatch = "ncu_match"
	// MetricRule: a rule failed on more than one threshold (its message lists them).
	MetricRule = "ncu_rule"
)

// maxGaps bounds the findings of launches that lack a metric (one per kernel and metric).
const maxGaps = 50

// clocksNote is the warning ncu prints for --clock-control none, which Run always asks for.
const clocksNote = "Running with unmodified GPU clocks"

// maxListed is how many names a message lists.
const maxListed = 4

// Data is the gate's machine-readable record (result.Gate.Data).
type Data struct {
	Inputs []string `json:"inputs"`
	// Args is the ncu command line of a run.
	Args     []string     `json:"args,omitempty"`
	ExitCode *int         `json:"exit_code,omitempty"`
	TimedOut bool         `json:"timed_out,omitempty"`
	Log      string       `json:"log,omitempty"`
	Limit    int          `json:"launch_limit,omitempty"`
	Kernels  []KernelData `json:"kernels"`
	Rules    []RuleData   `json:"rules,omitempty"`
	Errors   []string     `json:"errors,omitempty"`
	Warnings []string     `json:"warnings,omitempty"`
	Problems []string     `json:"problems,omitempty"`
}

// KernelData is one kernel (one name as ncu printed it) over its profiled launches.
type KernelData struct {
	Name      string       `json:"name"`
	Short     string       `json:"short"`
	Launches  []int        `json:"launches"`
	BlockSize string       `json:"block_size,omitempty"`
	GridSize  string       `json:"grid_size,omitempty"`
	Device    string       `json:"device,omitempty"`
	CC        string       `json:"cc,omitempty"`
	Metrics   []MetricData `json:"metrics"`
	Advice    []AdviceData `json:"ncu_rules,omitempty"`
}

// MetricData summarises one metric over a kernel's launches. Median, Min and Max are over
// the launches with a number; Values has every launch's value as printed.
type MetricData struct {
	Name   string   `json:"name"`
	Unit   string   `json:"unit"`
	Median *float64 `json:"median,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	Values []string `json:"values"`
}

// AdviceData is one of ncu's own rule results (section mode), once per kernel.
type AdviceData struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Speedup     string `json:"estimated_speedup,omitempty"`
}

// RuleData says which kernels a config rule matched and which of them failed it.
type RuleData struct {
	Line    int      `json:"line,omitempty"`
	Match   string   `json:"match"`
	Kernels []string `json:"kernels"`
	Failed  []string `json:"failed"`
}

// kernel is one kernel name's launches.
type kernel struct {
	launches []*Launch
}

func (k kernel) first() *Launch { return k.launches[0] }

func (k kernel) ids() []int {
	ids := make([]int, len(k.launches))
	for i, l := range k.launches {
		ids[i] = l.ID
	}
	return ids
}

// Evaluate applies cfg to the report and returns the "ncu" gate. Each rule is judged per
// kernel it matches (a kernel is one name as ncu printed it: flash_fwd<64, 64, 0> and
// flash_fwd<64, 64, 1> are two) on the median of each metric over that kernel's profiled
// launches; min and max over the launches are listed beside it. A metric missing, n/a or
// not a number in any launch of the kernel fails its threshold, as does a value printed in
// another unit than the threshold's unit. A rule that matches no profiled kernel fails.
// Anything in Report.Problems, ncu's ==ERROR== lines and a report without a single launch
// fail the gate too, whatever the rules say.
//
// The error is non-nil only for a nil report or an invalid config.
func Evaluate(rep *Report, cfg Config) (result.Gate, error) {
	g := result.Gate{Name: Name, Findings: []result.Finding{}}
	if rep == nil {
		return g, errors.New("ncu gate: no ncu report to evaluate")
	}
	cc, err := cfg.compiled()
	if err != nil {
		return g, fmt.Errorf("ncu gate: invalid config: %w", err)
	}
	e := evaluation{cc: cc, rep: rep}
	e.kernels()
	e.runFindings()
	if len(cc.rules) == 0 {
		e.findings = append(e.findings, result.Finding{
			Severity: result.Notice, File: cc.file,
			Message: fmt.Sprintf("no ncu rules are configured (ncu.kernels in %s); read %d launches of %d kernels, checked none",
				cc.file, len(rep.Launches), len(e.order)),
		})
	}
	for i := range cc.rules {
		e.rule(i)
	}
	e.completeness(Metrics(cfg))
	e.advice()
	if e.findings != nil {
		g.Findings = e.findings
	}
	g.Table = e.table()
	g.Summary = e.summary()
	if err := g.SetData(e.data()); err != nil {
		return g, err
	}
	g.Decide(e.checks > 0)
	return g, nil
}

type evaluation struct {
	cc       compiled
	rep      *Report
	order    []string // kernel names in input order
	byName   map[string]*kernel
	findings []result.Finding
	rows     []result.Row
	rules    []RuleData
	checks   int // rule × kernel
	failed   int
	noMatch  int
	runFail  bool
	// reported holds the kernel × metric pairs whose missing launches a failed rule's
	// finding already names.
	reported map[gap]bool
}

// gap is a metric that launches of a kernel lack.
type gap struct{ kernel, metric string }

// kernels groups the launches by kernel name.
func (e *evaluation) kernels() {
	e.byName = map[string]*kernel{}
	for i := range e.rep.Launches {
		l := &e.rep.Launches[i]
		k, ok := e.byName[l.Kernel]
		if !ok {
			k = &kernel{}
			e.byName[l.Kernel] = k
			e.order = append(e.order, l.Kernel)
		}
		k.launches = append(k.launches, l)
	}
}

func (e *evaluation) errorf(metric, format string, a ...any) {
	e.findings = append(e.findings, result.Finding{
		Severity: result.Error, File: e.cc.file, Metric: metric, Message: fmt.Sprintf(format, a...),
	})
}

// runFindings fails the gate on what makes the output prove less than it seems.
func (e *evaluation) runFindings() {
	rep := e.rep
	n0 := len(e.findings)
	for _, p := range rep.Problems {
		e.errorf(MetricRun, "%s", p)
	}
	if rep.droppedProblems > 0 {
		e.errorf(MetricRun, "and %d more problems with the ncu output", rep.droppedProblems)
	}
	if len(rep.Errors) > 0 {
		msg := "ncu reported errors: " + strings.Join(rep.Errors[:min(len(rep.Errors), maxListed)], "; ")
		if n := len(rep.Errors) + rep.droppedErrors - maxListed; n > 0 {
			msg += fmt.Sprintf("; and %d more", n)
		}
		e.errorf(MetricRun, "%s", msg)
	}
	switch {
	case len(rep.Launches) == 0 && rep.NoKernels:
		e.errorf(MetricRun, "ncu profiled no kernel (\"No kernels were profiled.\"): the -k filter matched no launched kernel, or the program launched none%s", e.runHint())
	case len(rep.Launches) == 0 && len(e.findings) == n0:
		e.errorf(MetricRun, "the ncu output has no metric rows (%d table headers, %d other lines): nothing was profiled%s", rep.Headers, rep.OtherLines, e.runHint())
	}
	e.runFail = len(e.findings) > n0
	seen := map[string]bool{}
	for _, w := range rep.Warnings {
		if strings.Contains(w, clocksNote) || strings.Contains(w, "No kernels were profiled") || seen[w] {
			continue
		}
		seen[w] = true
		e.findings = append(e.findings, result.Finding{Severity: result.Warning, File: e.cc.file, Metric: MetricRun, Message: "ncu: " + w})
	}
}

// runHint points at the run's log, when there is one.
func (e *evaluation) runHint() string {
	if e.rep.Log != "" {
		return "; see " + e.rep.Log
	}
	return ""
}

// judgement is one threshold judged on one kernel.
type judgement struct {
	t     Threshold
	group string // "any" or "all"
	ok    bool
	// why says why the value could not be judged (missing, n/a); the threshold then fails.
	why string
	// missing: some launch lacks the metric.
	missing          bool
	unit             string
	median, min, max float64
	n                int
	// summary: the values are the averages of ncu's --print-summary (no launch's own value
	// was printed); n counts the invocations, min and max are the summary's.
	summary bool
}

func (e *evaluation) rule(i int) {
	r := e.cc.rules[i]
	rd := RuleData{Line: r.Line, Match: r.Match, Kernels: []string{}, Failed: []string{}}
	for _, name := range e.order {
		k := e.byName[name]
		if !k.first().Name.Matches(r.glob) {
			continue
		}
		rd.Kernels = append(rd.Kernels, k.first().Name.Short)
		e.checks++
		var js []judgement
		allOK, anyOK := true, len(r.Any) == 0
		for _, t := range r.All {
			j := judge(k, t, "all")
			allOK = allOK && j.ok
			js = append(js, j)
		}
		for _, t := range r.Any {
			j := judge(k, t, "any")
			anyOK = anyOK || j.ok
			js = append(js, j)
		}
		status := result.Pass
		if !allOK || !anyOK {
			status = result.Fail
			e.failed++
			rd.Failed = append(rd.Failed, k.first().Name.Short)
			e.fail(r, k, js, allOK, anyOK)
			for _, j := range js {
				// fail names the missing launches of every failed all threshold and, when no
				// any threshold holds, of every any threshold.
				if j.missing && (j.group == "all" && !j.ok || j.group == "any" && !anyOK) {
					if e.reported == nil {
						e.reported = map[gap]bool{}
					}
					e.reported[gap{name, j.t.Metric}] = true
				}
			}
		}
		for _, j := range js {
			e.rows = append(e.rows, result.Row{Status: status, Cells: []string{
				k.first().Name.Short, j.t.Metric, j.value(), j.spread(), j.group + " " + j.t.String(), yesNo(j.ok),
				"line " + strconv.Itoa(r.Line),
			}})
		}
	}
	if len(rd.Kernels) == 0 {
		e.unmatched(r, !(e.runFail && len(e.rep.Launches) == 0))
	}
	e.rules = append(e.rules, rd)
}

// judge computes t's verdict on the median over k's launches.
func judge(k *kernel, t Threshold, group string) judgement {
	j := judgement{t: t, group: group}
	var values, lows, highs []float64
	var missing, notNumber []string
	units := []string{}
	for _, l := range k.launches {
		m, ok := l.Metric(t.Metric)
		switch {
		case !ok:
			missing = append(missing, strconv.Itoa(l.ID))
		case m.Kind != Number:
			notNumber = append(notNumber, fmt.Sprintf("%q in launch %d", cmp.Or(m.Raw, "(empty)"), l.ID))
		case l.Invocations > 0:
			j.summary = true
			j.n += l.Invocations
			values, lows, highs = append(values, m.Value), append(lows, m.Min), append(highs, m.Max)
			if !slices.Contains(units, m.Unit) {
				units = append(units, m.Unit)
			}
		default:
			j.n++
			values, lows, highs = append(values, m.Value), append(lows, m.Value), append(highs, m.Value)
			if !slices.Contains(units, m.Unit) {
				units = append(units, m.Unit)
			}
		}
	}
	j.missing = len(missing) > 0
	switch {
	case len(missing) == len(k.launches):
		j.why = fmt.Sprintf("%s is not in the ncu output (it has %s)", t.Metric, metricNames(k.first()))
		if slices.ContainsFunc(k.first().Metrics, func(m Metric) bool { return strings.Contains(m.Name, " ") }) {
			j.why += "; this output names metrics by their section labels (ncu --section): the gate reads ncu --metrics output"
		}
		return j
	case len(missing) > 0:
		j.why = fmt.Sprintf("%s is missing from launch %s of %d", t.Metric, strings.Join(missing, ", "), len(k.launches))
		return j
	case len(notNumber) > 0:
		j.why = fmt.Sprintf("%s is not a number: %s (n/a: ncu could not collect it)", t.Metric, strings.Join(notNumber[:min(len(notNumber), maxListed)], ", "))
		return j
	case len(units) > 1:
		j.why = fmt.Sprintf("%s is printed in different units (%s) across launches", t.Metric, quoteList(units))
		return j
	}
	j.unit = units[0]
	if t.Unit != "" && t.Unit != j.unit {
		j.why = fmt.Sprintf("%s is printed in %q, the threshold is in %q (run ncu with --print-units base, as kernel-gate does)", t.Metric, j.unit, t.Unit)
		return j
	}
	slices.Sort(values)
	j.min, j.max = slices.Min(lows), slices.Max(highs)
	j.median = median(values)
	j.ok = (t.Min == nil || j.median >= *t.Min) && (t.Max == nil || j.median <= *t.Max)
	return j
}

func (j judgement) value() string {
	if j.why != "" {
		return "-"
	}
	return withUnit(j.median, j.unit)
}

// spread is the range over the launches and their count: "5.32..5.43 (4)".
func (j judgement) spread() string {
	if j.why != "" {
		return "-"
	}
	return fmt.Sprintf("%s..%s (%d)", num(j.min), num(j.max), j.n)
}

// describe says what was measured against what, for a failure message.
func (j judgement) describe(where string) string {
	if j.why != "" {
		return j.why + " (" + where + ")"
	}
	var verdict string
	switch {
	case j.ok:
		verdict = "holds " + j.t.String()
	case j.t.Min != nil && j.median < *j.t.Min:
		verdict = "< min " + num(*j.t.Min)
	default:
		verdict = "> max " + num(*j.t.Max)
	}
	of := "1 launch"
	switch {
	case j.summary:
		of = fmt.Sprintf("average of %d launches as ncu --print-summary printed it, %s..%s", j.n, num(j.min), num(j.max))
	case j.n > 1:
		of = fmt.Sprintf("median of %d launches, %s..%s", j.n, num(j.min), num(j.max))
	}
	return fmt.Sprintf("%s = %s (%s) %s (%s)", j.t.Metric, withUnit(j.median, j.unit), of, verdict, where)
}

// fail adds the finding of a rule that kernel k fails.
func (e *evaluation) fail(r compiledRule, k *kernel, js []judgement, allOK, anyOK bool) {
	var parts []string
	var bad []judgement
	for _, j := range js {
		if j.group == "all" && !j.ok {
			parts = append(parts, j.describe(e.cc.where(cmp.Or(j.t.Line, r.Line))))
			bad = append(bad, j)
		}
	}
	if !anyOK {
		var anyParts []string
		for _, j := range js {
			if j.group == "any" {
				anyParts = append(anyParts, j.describe(e.cc.where(cmp.Or(j.t.Line, r.Line))))
				bad = append(bad, j)
			}
		}
		parts = append(parts, "none of any holds: "+strings.Join(anyParts, "; "))
	}
	l := k.first()
	msg := fmt.Sprintf("%s (%s): rule %s (%s) fails: %s", l.Name.Short, describeKernel(k), e.cc.where(r.Line), r.Match, strings.Join(parts, "; "))
	if r.Reason != "" {
		msg += " (reason: " + r.Reason + ")"
	}
	f := result.Finding{
		Severity: result.Error, Kernel: l.Name.Short, Arch: arch(l.CC), File: e.cc.file, Line: r.Line,
		Metric: MetricRule, Message: msg,
	}
	if len(bad) == 1 {
		j := bad[0]
		f.Metric, f.Line = j.t.Metric, cmp.Or(j.t.Line, r.Line)
		if j.why == "" {
			f.Value = result.Num(j.median)
			if j.t.Min != nil && j.median < *j.t.Min {
				f.Limit = result.Num(*j.t.Min)
			} else if j.t.Max != nil {
				f.Limit = result.Num(*j.t.Max)
			}
		}
	}
	e.findings = append(e.findings, f)
}

// completeness fails every launch that lacks a metric of the config: Run asks ncu for all
// of them on every launch it profiles, so a launch without one is output cut short (a CSV
// cut on a row boundary leaves its last launch with only its first metrics) or garbled.
// Such a launch must not pass because a rule holds through another metric of an any, or
// because no rule names its kernel. One finding per kernel and metric names the launches;
// pairs a failed rule already named are not repeated.
func (e *evaluation) completeness(requested []string) {
	if len(requested) == 0 {
		return
	}
	var gaps []gap
	lacking := map[gap][]*Launch{}
	for _, name := range e.order {
		for _, l := range e.byName[name].launches {
			for _, m := range requested {
				g := gap{name, m}
				if _, ok := l.Metric(m); ok || e.reported[g] {
					continue
				}
				if _, seen := lacking[g]; !seen {
					gaps = append(gaps, g)
				}
				lacking[g] = append(lacking[g], l)
			}
		}
	}
	for i, g := range gaps {
		if i == maxGaps {
			e.errorf(MetricRun, "and %d more kernels or metrics with launches that lack a metric of the config", len(gaps)-maxGaps)
			break
		}
		ls := lacking[g]
		first := ls[0]
		var which []string
		for _, l := range ls[:min(len(ls), maxListed)] {
			which = append(which, fmt.Sprintf("%d (%s:%d)", l.ID, l.Input, l.Line))
		}
		of, has := "launch "+strings.Join(which, ", "), "has"
		if len(ls) > 1 {
			of, has = "launches "+strings.Join(which, ", "), "have"
			if len(ls) > maxListed {
				of += fmt.Sprintf(" and %d more", len(ls)-maxListed)
			}
		}
		total := len(e.byName[g.kernel].launches)
		e.findings = append(e.findings, result.Finding{
			Severity: result.Error, Kernel: first.Name.Short, Arch: arch(first.CC), File: e.cc.file, Metric: g.metric,
			Message: fmt.Sprintf("%s: %s of %d %s no %s, which %s asks ncu for: the ncu output is cut short or garbled, and a launch without its metrics cannot be judged (launch %d has %s)",
				first.Name.Short, of, total, has, g.metric, e.cc.file, first.ID, metricNames(first)),
		})
	}
}

// unmatched reports a rule whose glob matched no profiled kernel; with finding unset
// (the run failed and profiled nothing, which a finding already says) only in the table.
func (e *evaluation) unmatched(r compiledRule, finding bool) {
	e.noMatch++
	e.rows = append(e.rows, result.Row{Status: result.Fail, Cells: []string{
		r.Match + ": not profiled", "-", "-", "-", "-", "no", "line " + strconv.Itoa(r.Line),
	}})
	if !finding {
		return
	}
	msg := fmt.Sprintf("rule %s (%s) matched no profiled kernel: a renamed or unprofiled kernel must not pass silently; ncu profiled %s",
		e.cc.where(r.Line), r.Match, e.listKernels())
	if e.rep.Limit > 0 && len(e.rep.Launches) >= e.rep.Limit {
		msg += fmt.Sprintf("; the run stopped at its launch limit (%d, ncu -c): raise ncu.launches if the kernel launches later", e.rep.Limit)
	}
	if r.Reason != "" {
		msg += " (reason: " + r.Reason + ")"
	}
	e.findings = append(e.findings, result.Finding{
		Severity: result.Error, File: e.cc.file, Line: r.Line, Metric: MetricMatch, Value: result.Num(0), Message: msg,
	})
}

// advice reports ncu's own rule results (section mode) once per kernel and rule.
func (e *evaluation) advice() {
	for _, name := range e.order {
		k := e.byName[name]
		seen := map[string]bool{}
		for _, l := range k.launches {
			for _, a := range l.Rules {
				if seen[a.Name] {
					continue
				}
				seen[a.Name] = true
				msg := fmt.Sprintf("ncu rule %s (%s) on %s: %s", a.Name, cmp.Or(a.Type, "?"), l.Name.Short, a.Description)
				if sp := strings.TrimSpace(a.Speedup + " " + a.SpeedupType); sp != "" {
					msg += " (estimated speedup: " + sp + ")"
				}
				e.findings = append(e.findings, result.Finding{Severity: result.Notice, Kernel: l.Name.Short, Arch: arch(l.CC), Message: msg})
			}
		}
	}
}

func (e *evaluation) table() *result.Table {
	rows := slices.Clone(e.rows)
	rank := func(v result.Verdict) int {
		if v == result.Fail {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(rows, func(a, b result.Row) int { return cmp.Compare(rank(a.Status), rank(b.Status)) })
	if rows == nil {
		rows = []result.Row{}
	}
	return &result.Table{Columns: []string{"kernel", "metric", "median", "min..max (launches)", "threshold", "holds", "rule"}, Rows: rows}
}

func (e *evaluation) summary() string {
	var parts []string
	switch {
	case e.checks == 0 && len(e.cc.rules) == 0:
		parts = append(parts, "no ncu rules configured")
	case e.failed > 0:
		parts = append(parts, fmt.Sprintf("%d of %d rule checks failed", e.failed, e.checks))
	default:
		parts = append(parts, fmt.Sprintf("%d rule checks passed", e.checks))
	}
	parts[0] += fmt.Sprintf(" on %d kernels (%d launches profiled)", len(e.order), len(e.rep.Launches))
	switch {
	case e.noMatch == 1:
		parts = append(parts, "1 rule matched no profiled kernel")
	case e.noMatch > 1:
		parts = append(parts, fmt.Sprintf("%d rules matched no profiled kernel", e.noMatch))
	}
	if e.runFail {
		parts = append(parts, "the ncu run or its output failed")
	}
	return strings.Join(parts, "; ")
}

func (e *evaluation) data() Data {
	rep := e.rep
	d := Data{Inputs: rep.Inputs, Args: rep.Args, ExitCode: rep.ExitCode, TimedOut: rep.TimedOut, Log: rep.Log, Limit: rep.Limit,
		Kernels: []KernelData{}, Rules: e.rules, Errors: rep.Errors, Warnings: rep.Warnings, Problems: rep.Problems}
	if d.Inputs == nil {
		d.Inputs = []string{}
	}
	for _, name := range e.order {
		k := e.byName[name]
		l := k.first()
		kd := KernelData{Name: l.Kernel, Short: l.Name.Short, Launches: k.ids(), BlockSize: l.BlockSize, GridSize: l.GridSize,
			Device: l.Device, CC: l.CC, Metrics: []MetricData{}}
		var names []string
		seen := map[string]bool{}
		for _, kl := range k.launches {
			for _, m := range kl.Metrics {
				if !seen[m.Name] {
					seen[m.Name] = true
					names = append(names, m.Name)
				}
			}
			for _, a := range kl.Rules {
				if !slices.ContainsFunc(kd.Advice, func(x AdviceData) bool { return x.Name == a.Name }) {
					kd.Advice = append(kd.Advice, AdviceData{Name: a.Name, Type: a.Type, Description: a.Description, Speedup: strings.TrimSpace(a.Speedup + " " + a.SpeedupType)})
				}
			}
		}
		for _, n := range names {
			kd.Metrics = append(kd.Metrics, metricData(k, n))
		}
		d.Kernels = append(d.Kernels, kd)
	}
	return d
}

func metricData(k *kernel, name string) MetricData {
	md := MetricData{Name: name, Values: []string{}}
	var values, lows, highs []float64
	for _, l := range k.launches {
		m, ok := l.Metric(name)
		if !ok {
			md.Values = append(md.Values, "")
			continue
		}
		if md.Unit == "" {
			md.Unit = m.Unit
		}
		md.Values = append(md.Values, m.Raw)
		if m.Kind == Number {
			low, high := m.Value, m.Value
			if l.Invocations > 0 {
				low, high = m.Min, m.Max
			}
			values, lows, highs = append(values, m.Value), append(lows, low), append(highs, high)
		}
	}
	if len(values) > 0 {
		slices.Sort(values)
		md.Median, md.Min, md.Max = result.Num(median(values)), result.Num(slices.Min(lows)), result.Num(slices.Max(highs))
	}
	return md
}

// median of sorted values (the mean of the middle two for an even count), to 12
// significant digits.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return round12((sorted[n/2-1] + sorted[n/2]) / 2)
}

// listKernels names the first few profiled kernels.
func (e *evaluation) listKernels() string {
	if len(e.order) == 0 {
		return "no kernel"
	}
	var names []string
	for _, n := range e.order[:min(len(e.order), maxListed)] {
		names = append(names, e.byName[n].first().Name.Short)
	}
	s := strings.Join(names, ", ")
	if len(e.order) > maxListed {
		s += fmt.Sprintf(" and %d more", len(e.order)-maxListed)
	}
	return s
}

// describeKernel says which launches a kernel's values come from.
func describeKernel(k *kernel) string {
	l := k.first()
	s := fmt.Sprintf("%d launches", len(k.launches))
	switch invocations := 0; {
	case l.Invocations > 0:
		for _, l := range k.launches {
			invocations += l.Invocations
		}
		s = fmt.Sprintf("ncu's summary of %d launches", invocations)
	case len(k.launches) == 1:
		s = fmt.Sprintf("launch %d", l.ID)
	}
	if l.GridSize != "" {
		s += ", grid " + l.GridSize
	}
	if l.BlockSize != "" {
		s += ", block " + l.BlockSize
	}
	if a := arch(l.CC); a != "" {
		s += ", " + a
	}
	return s
}

// metricNames lists a launch's metrics for a message.
func metricNames(l *Launch) string {
	if len(l.Metrics) == 0 {
		return "no metrics"
	}
	var names []string
	for _, m := range l.Metrics {
		if !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	s := strings.Join(names[:min(len(names), maxListed)], ", ")
	if len(names) > maxListed {
		s += fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return s
}

// arch turns ncu's compute capability ("9.0") into "sm_90"; empty when it is not one.
func arch(cc string) string {
	major, minor, ok := strings.Cut(cc, ".")
	if !ok || major == "" || len(minor) != 1 {
		return ""
	}
	for _, c := range []byte(major + minor) {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return "sm_" + major + minor
}

func withUnit(v float64, unit string) string {
	if unit == "" {
		return num(v)
	}
	return num(v) + " " + unit
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
