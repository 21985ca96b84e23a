package speedup

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Name is the gate's name in results.
const Name = "speedup"

// Metric names, as they appear in findings.
const (
	// MetricSlowdown is head versus base; value: the ratio head / base, limit: 1 + max_slowdown.
	MetricSlowdown = "slowdown"
	// MetricReference is a reference goal; value: the speedup, limit: the goal.
	MetricReference = "speedup_vs_reference"
	// MetricDevice marks base and head run on different GPUs or software.
	MetricDevice = "device"
	// MetricHarnessError marks a result whose harness reported its own failure.
	MetricHarnessError = "harness_error"
	// MetricMissing marks a kernel × shape that one side lacks, or that has no timings.
	MetricMissing = "missing_result"
	// MetricSamples marks timings the judge could not use: summary-only results (noise not
	// assessed) and NaN, Inf, zero or negative timings (dropped).
	MetricSamples = "samples"
	// MetricRule marks a config rule that matched nothing.
	MetricRule = "rule"
)

// Data is the gate's machine-readable output.
type Data struct {
	BaseDevice benchfile.Device `json:"base_device"`
	HeadDevice benchfile.Device `json:"head_device"`
	// Confidence is the family-wide level; Family how many comparisons were judged together;
	// Looks how many looks the add-rounds loop may take; Level the confidence of each
	// interval after both corrections (Limits.Level).
	Confidence  float64  `json:"confidence"`
	Family      int      `json:"family"`
	Looks       int      `json:"looks"`
	Level       float64  `json:"level"`
	Comparisons []Record `json:"comparisons"`
}

// Record is one kernel × shape compared. Numbers that do not apply (an interval of a
// summary-only comparison, a bound too few rounds cannot give) are null.
type Record struct {
	Kernel  string  `json:"kernel"`
	Shape   string  `json:"shape"`
	Verdict Verdict `json:"verdict"`
	// Ratio is head / base: the median of per-round ratios, or the plain ratio of summaries.
	Ratio  *float64 `json:"ratio"`
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
	// PValue is the sign test of "head no slower than base by more than the margin".
	PValue        *float64 `json:"p_value"`
	Rounds        int      `json:"rounds"`
	DroppedRounds int      `json:"dropped_rounds"`
	// Samples counts the valid timings judged, both sides.
	Samples int `json:"samples"`
	// GPUSeconds is the time of every valid timing recorded for this kernel × shape (base,
	// head and reference).
	GPUSeconds *float64 `json:"gpu_seconds"`
	// BaseMedianUs and HeadMedianUs are each side's median time of one launch, in µs, over
	// every valid timing (or the summary's p50): what a chart of head against base draws. The
	// verdict is the ratio's, per round, not the ratio of these.
	BaseMedianUs       *float64         `json:"base_median_us"`
	HeadMedianUs       *float64         `json:"head_median_us"`
	SpeedupVsReference *ReferenceRecord `json:"speedup_vs_reference"`
	// WallSeconds is the wall time the A/B runner took to this verdict: from starting the
	// harnesses to the look that decided it, or to the end of the timing for one left
	// inconclusive (every pair of a run is timed in the same rounds). Absent where no runner
	// timed it (speedup compare of two files).
	WallSeconds *float64 `json:"wall_seconds,omitempty"`
	// Stopped says, for an inconclusive comparison the runner timed, why it got no more
	// rounds: "wall_budget" or "run_wall_budget" (speedup.wall_budget, speedup.run_wall_budget),
	// "rounds_budget", "budget_spent" (max_rounds or gpu_seconds_budget). Absent otherwise.
	Stopped string `json:"stopped,omitempty"`
}

// CompareOptions are what the A/B runner tells the judge about how the timings ended.
type CompareOptions struct {
	// NoMoreRounds, when set, says why the runner added no more rounds although an
	// inconclusive comparison could have had them ("the wall budget speedup.wall_budget of 5m0s
	// was spent after 48 rounds"); the comparison's message says so instead of asking for
	// more. Empty for a one-shot comparison of two files.
	NoMoreRounds string
}

// medianUs is a side's median valid timing, or its summary's p50; nil when it has none.
func medianUs(t timings) *float64 {
	var v []float64
	for _, r := range t.rounds {
		for _, x := range r {
			if x > 0 && !math.IsInf(x, 0) {
				v = append(v, x)
			}
		}
	}
	if len(v) == 0 {
		if p50, ok := t.summary["p50_us"]; ok && p50 > 0 && !math.IsInf(p50, 0) {
			return &p50
		}
		return nil
	}
	slices.Sort(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = v[len(v)/2-1]/2 + v[len(v)/2]/2 // halves first: two huge timings must not sum to +Inf
	}
	return &m
}

// ReferenceRecord is the speedup over the head run's reference implementation.
type ReferenceRecord struct {
	Name    string      `json:"name"`
	Speedup *float64    `json:"speedup"`
	CILow   *float64    `json:"ci_low"`
	CIHigh  *float64    `json:"ci_high"`
	Goal    *float64    `json:"goal"`
	Verdict GoalVerdict `json:"verdict"`
	Rounds  int         `json:"rounds"`
}

// timings is one result's timings: rounds when it has samples, else a summary.
type timings struct {
	rounds  [][]float64
	summary map[string]float64 // "p50_us", "mean_us", "min_us"
}

func (t timings) any() bool { return t.rounds != nil || len(t.summary) > 0 }

func floats(v []benchfile.Float) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func readTimings(roundsUs [][]benchfile.Float, samplesUs []benchfile.Float, p50, mean, minUs *benchfile.Float) timings {
	var t timings
	switch {
	case len(roundsUs) > 0:
		t.rounds = make([][]float64, len(roundsUs))
		for i, r := range roundsUs {
			t.rounds[i] = floats(r)
		}
	case len(samplesUs) > 0:
		t.rounds = [][]float64{floats(samplesUs)}
	}
	for k, v := range map[string]*benchfile.Float{"p50_us": p50, "mean_us": mean, "min_us": minUs} {
		if v != nil {
			if t.summary == nil {
				t.summary = map[string]float64{}
			}
			t.summary[k] = float64(*v)
		}
	}
	return t
}

// summaryOf returns the summary field (p50 first, then mean, then min) that both sides can
// give: reported, or computed from the samples of a side that has them.
func summaryOf(a, b timings) (field string, av, bv float64, ok bool) {
	for _, f := range []string{"p50_us", "mean_us", "min_us"} {
		x, okA := summaryValue(a, f)
		y, okB := summaryValue(b, f)
		if okA && okB {
			return f, x, y, true
		}
	}
	return "", 0, 0, false
}

func summaryValue(t timings, field string) (float64, bool) {
	if v, ok := t.summary[field]; ok {
		return v, true
	}
	if t.rounds == nil {
		return 0, false
	}
	var all []float64
	for _, r := range t.rounds {
		v, _ := clean(r)
		all = append(all, v...)
	}
	if len(all) == 0 {
		return 0, false
	}
	switch field {
	case "p50_us":
		return median(all), true
	case "mean_us":
		return sum(all) / float64(len(all)), true
	}
	return slices.Min(all), true
}

// item is one head result and what it will be compared with.
type item struct {
	res          benchfile.Result
	name         kernelname.Name
	lim          resolved
	base         *benchfile.Result
	head, baseT  timings
	ref          timings
	refName      string
	sampled      bool // both sides have rounds: judged with intervals, else by plain ratio
	refSampled   bool // the goal is judged with an interval
	refSummary   bool // the goal is judged by plain ratio
	skip, errMsg string
	metric       string // errMsg's metric, when not MetricMissing
}

// Compare judges head against base, kernel × shape by kernel × shape (bench-mode files read
// with benchfile.Read), and returns the "speedup" gate. Base and head must come from the
// same device, driver and toolkit, measured side by side; otherwise nothing is compared and
// the gate fails. The error is for a config that does not validate or a missing file;
// everything wrong with the timings is a finding.
func Compare(base, head *benchfile.File, cfg Config) (result.Gate, error) {
	return CompareWith(base, head, cfg, CompareOptions{})
}

// CompareWith is Compare with what the runner says about how its timings ended. Its steps:
// refuse timings from different setups (sameDevice), read head's results into items (each
// with its limits and how it can be compared), judge each item into a record and a table
// row, report what base has and head does not and the rules that went unused, and sum it
// up.
func CompareWith(base, head *benchfile.File, cfg Config, o CompareOptions) (result.Gate, error) {
	g := result.Gate{Name: Name, Findings: []result.Finding{}}
	if base == nil || head == nil {
		return g, errors.New("speedup: need a base and a head harness file")
	}
	cc, err := cfg.compiled()
	if err != nil {
		return g, err
	}
	c := &comparison{g: &g, cc: cc, counts: map[Verdict]int{}, data: Data{BaseDevice: base.Device, HeadDevice: head.Device,
		Confidence: cc.top.Confidence, Looks: cc.top.Looks(), Comparisons: []Record{}}}

	if msg, same := sameDevice(base.Device, head.Device); !same {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Metric: MetricDevice, Message: msg})
		return c.finish(true, "no comparison: "+msg)
	} else if msg != "" {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Warning, Metric: MetricDevice, Message: msg})
	}
	items, inHead, used := c.readHead(base, head)
	for _, it := range items {
		if err := c.judgeItem(it, o); err != nil {
			return g, err
		}
	}
	c.missingFromHead(base, inHead)
	c.checkRules(base, head, used)
	c.table()
	judged := len(c.data.Comparisons) > 0
	if !judged && g.Count(result.Error) == 0 {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, Metric: MetricMissing,
			Message: "nothing to compare: no kernel × shape has timings in both base and head (run the harness with KG_MODE=bench)"})
	}
	// A skipped comparison leaves the gate a skip, never a pass: something base had was
	// not judged.
	return c.finish(judged && c.skipped == 0 || g.Count(result.Error) > 0, c.summary(head))
}

// comparison is one CompareWith under way: the gate it fills, the data it records and the
// table rows, with the counts its summary gives.
type comparison struct {
	g      *result.Gate
	cc     compiled
	data   Data
	rows   []result.Ranked
	counts map[Verdict]int
	// failed and skipped count the comparisons that could not be made: see the package doc.
	failed, skipped int
}

// finish sets the gate's data, verdict and summary: every way out of CompareWith ends so.
func (c *comparison) finish(judged bool, summary string) (result.Gate, error) {
	if err := c.g.SetData(c.data); err != nil {
		return *c.g, err
	}
	c.g.Decide(judged)
	c.g.Summary = summary
	return *c.g, nil
}

// readHead makes an item of each head result, with base's result of the same kernel ×
// shape, its limits and how it can be compared, and sets the family of comparisons judged
// together: the confidence of each interval depends on how many there are. inHead is the
// kernel × shapes head reports, used the rules some result matched.
func (c *comparison) readHead(base, head *benchfile.File) (items []*item, inHead map[string]bool, used []bool) {
	baseBy := map[string]*benchfile.Result{}
	for i := range base.Results {
		r := &base.Results[i]
		baseBy[r.Kernel+"\x00"+r.Shape] = r
	}
	inHead = map[string]bool{}
	used = make([]bool, len(c.cc.rules))
	family := 0
	for _, r := range head.Results {
		key := r.Kernel + "\x00" + r.Shape
		inHead[key] = true
		it := &item{res: r, name: kernelname.Parse(r.Kernel), base: baseBy[key]}
		it.lim = c.cc.resolve(it.name, r.Shape)
		for _, i := range it.lim.matched {
			used[i] = true
		}
		it.head = readTimings(r.RoundsUs, r.SamplesUs, r.P50Us, r.MeanUs, r.MinUs)
		if r.Reference != nil {
			it.ref = readTimings(r.Reference.RoundsUs, r.Reference.SamplesUs, r.Reference.P50Us, nil, nil)
			it.refName = r.Reference.Name
		}
		classify(it)
		if it.sampled {
			family++
		}
		if it.refSampled && it.lim.MinSpeedupVsReference > 0 {
			family++
		}
		items = append(items, it)
	}
	c.data.Family = max(family, 1)
	c.data.Level = c.cc.top.Level(c.data.Family)
	return items, inHead, used
}

// judgeItem judges one item, or reports why it is not compared, and adds its table row.
func (c *comparison) judgeItem(it *item, o CompareOptions) error {
	j := &judge{Subject: result.Subject{Gate: c.g, Kernel: it.name.Short, Label: it.name.Short + " × " + it.res.Shape}, noMore: o.NoMoreRounds}
	cells := []string{it.name.Short, it.res.Shape, "-", "-", "-"}
	status, order := result.Skip, math.Inf(-1)
	switch {
	case it.errMsg != "":
		j.Add(result.Error, it.errMetric(), nil, nil, "%s", it.errMsg)
		cells[2], status, order = "failed", result.Fail, math.Inf(1)
		c.failed++
	case it.skip != "" && it.base == nil:
		j.Add(result.Notice, MetricMissing, nil, nil, "%s", it.skip)
		cells[2] = "new"
	case it.skip != "":
		j.Add(result.Warning, MetricMissing, nil, nil, "%s", it.skip)
		cells[2] = "skipped"
		c.skipped++
	default:
		rec, ok, err := j.compare(it, c.data.Family)
		if err != nil {
			return err
		}
		c.counts[rec.Verdict]++
		c.data.Comparisons = append(c.data.Comparisons, rec)
		cells[2] = string(rec.Verdict)
		cells[3] = j.changeCell
		cells[4] = j.refCell
		switch {
		case !ok:
			status = result.Fail
		case rec.Verdict == Inconclusive:
			status = result.Skip
		default:
			status = result.Pass
		}
		order = 0
		if rec.Ratio != nil {
			order = *rec.Ratio
		}
	}
	c.rows = append(c.rows, result.Ranked{Fail: status == result.Fail, Worst: order, Row: result.Row{Status: status, Cells: cells}})
	return nil
}

// missingFromHead reports the kernel × shapes base has and head does not: an error where a
// rule requires the shape (a shape that disappears must not pass), else a skipped
// comparison, which keeps the gate from passing.
func (c *comparison) missingFromHead(base *benchfile.File, inHead map[string]bool) {
	for _, r := range base.Results {
		if inHead[r.Kernel+"\x00"+r.Shape] {
			continue
		}
		short := kernelname.Parse(r.Kernel).Short
		if rule, ok := requiredBy(c.cc, r.Kernel, r.Shape); ok {
			c.g.Findings = append(c.g.Findings, result.Finding{Severity: result.Error, Kernel: short, File: c.cc.FileName(), Line: rule.Line, Metric: MetricMissing,
				Message: fmt.Sprintf("%s × %s: in base but not in head, and required by rule %s: a shape that disappears must not pass", short, r.Shape, rule.From)})
			c.rows = append(c.rows, result.Ranked{Fail: true, Worst: math.Inf(1), Row: result.Row{Status: result.Fail, Cells: []string{short, r.Shape, "failed", "in base, not in head", "-"}}})
			c.failed++
			continue
		}
		c.g.Findings = append(c.g.Findings, result.Finding{Severity: result.Warning, Kernel: short, Metric: MetricMissing,
			Message: fmt.Sprintf("%s × %s: in base but not in head, so not compared (was it removed or renamed?): a skipped comparison, so the gate cannot pass", short, r.Shape)})
		c.rows = append(c.rows, result.Ranked{Worst: math.Inf(-1), Row: result.Row{Status: result.Skip, Cells: []string{short, r.Shape, "skipped", "in base, not in head", "-"}}})
		c.skipped++
	}
}

// checkRules reports the rules with shapes whose kernel × shapes neither side reports, and
// the rules no head result matched: a renamed kernel would otherwise lose its limits
// silently.
func (c *comparison) checkRules(base, head *benchfile.File, used []bool) {
	for i, r := range c.cc.rules {
		if len(r.Shapes) > 0 {
			requireShapes(c.g, c.cc, r, head, base)
			continue
		}
		if !used[i] {
			c.g.Findings = append(c.g.Findings, result.Finding{Severity: result.Warning, File: c.cc.FileName(), Line: r.Line, Metric: MetricRule,
				Message: fmt.Sprintf("rule %s (%s) matches no result in head: its limits were not used (was the kernel renamed?)", c.cc.Where(r.Line), r.Match)})
		}
	}
}

// table sets the gate's table: failures first, then the slowest ratio first.
func (c *comparison) table() {
	c.g.Table = &result.Table{Columns: []string{"kernel", "shape", "verdict", "head vs base", "vs reference"}, Rows: result.WorstFirst(c.rows)}
}

// summary is the gate's one line: the pairs compared and their verdicts, those that could
// not be compared, and the finding counts (which abrun.Judge recounts with its own).
func (c *comparison) summary(head *benchfile.File) string {
	on := ""
	if head.Device.Name != "" {
		on = " on " + head.Device.Name
	}
	var parts []string
	for _, v := range []Verdict{Slower, Inconclusive, Same, Faster} {
		if c.counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.counts[v], v))
		}
	}
	summary := fmt.Sprintf("%d kernel × shape pair(s) compared%s", len(c.data.Comparisons), on)
	if len(parts) > 0 {
		summary += ": " + strings.Join(parts, ", ")
	}
	if c.failed > 0 || c.skipped > 0 {
		summary += fmt.Sprintf("; %d failed, %d skipped (not compared)", c.failed, c.skipped)
	}
	return summary + fmt.Sprintf("; %d error(s), %d warning(s)", c.g.Count(result.Error), c.g.Count(result.Warning))
}

// classify decides how an item is compared, or why it is not.
func classify(it *item) {
	r := it.res
	if r.Error != "" {
		it.errMsg = "the harness failed in head: " + benchfile.ErrorMessage(r.Error)
		return
	}
	if !it.head.any() {
		it.errMsg = "head has no timings (rounds_us, samples_us or p50_us/mean_us/min_us): nothing to compare is not a pass"
		return
	}
	if it.head.rounds != nil {
		if _, valid, _ := roundCounts(nil, it.head.rounds); valid == 0 {
			it.errMsg, it.metric = fmt.Sprintf("head has no valid timing (%s): nothing to judge is not a pass; is the harness's timer right?", invalidText(it.head.rounds)), MetricSamples
			return
		}
	}
	if it.base == nil {
		it.skip = "new in head: no base timings to compare with"
		return
	}
	if it.base.Error != "" {
		it.skip = "the harness failed in base, so there is nothing to compare with: " + benchfile.ErrorMessage(it.base.Error)
		return
	}
	it.baseT = readTimings(it.base.RoundsUs, it.base.SamplesUs, it.base.P50Us, it.base.MeanUs, it.base.MinUs)
	switch {
	case it.head.rounds != nil && it.baseT.rounds != nil:
		baseValid, headValid, paired := roundCounts(it.baseT.rounds, it.head.rounds)
		switch {
		case baseValid == 0:
			it.skip = fmt.Sprintf("base has no valid timing for it (%s), so there is nothing to compare with", invalidText(it.baseT.rounds))
			return
		case paired < (baseValid+1)/2:
			it.errMsg, it.metric = fmt.Sprintf("head has valid timings in %d round(s), base in %d, and only %d round(s) have both: far fewer than base's (under half), so the runs were not side by side or head's was cut short; a comparison on what is left is not a pass",
				headValid, baseValid, paired), MetricSamples
			return
		}
		it.sampled = true
	case it.baseT.any():
		if _, _, _, ok := summaryOf(it.baseT, it.head); !ok {
			it.skip = "base and head report no common timing (rounds, p50_us, mean_us or min_us)"
			return
		}
	default:
		it.skip = "base has no timings for it, so there is nothing to compare with"
		return
	}
	if it.ref.any() {
		if it.sampled && it.ref.rounds != nil {
			it.refSampled = true
		} else if _, _, _, ok := summaryOf(it.ref, it.head); ok {
			it.refSummary = true
		}
	}
}

// roundCounts counts the rounds with at least one valid timing on each side, and the
// rounds (by index) valid on both.
func roundCounts(base, head [][]float64) (baseValid, headValid, paired int) {
	valid := func(r []float64) bool {
		return slices.ContainsFunc(r, func(v float64) bool { return v > 0 && !math.IsInf(v, 1) })
	}
	for i := range max(len(base), len(head)) {
		b := i < len(base) && valid(base[i])
		h := i < len(head) && valid(head[i])
		if b {
			baseValid++
		}
		if h {
			headValid++
		}
		if b && h {
			paired++
		}
	}
	return baseValid, headValid, paired
}

// invalidText says what a side without a valid timing holds.
func invalidText(rounds [][]float64) string {
	n := 0
	for _, r := range rounds {
		n += len(r)
	}
	if n == 0 {
		return fmt.Sprintf("%d round(s), all empty", len(rounds))
	}
	return fmt.Sprintf("%d timing(s) in %d round(s), every one NaN, Inf, zero or negative", n, len(rounds))
}

func (it *item) errMetric() string {
	switch {
	case it.res.Error != "":
		return MetricHarnessError
	case it.metric != "":
		return it.metric
	}
	return MetricMissing
}

// judge collects one kernel × shape's findings.
type judge struct {
	result.Subject
	// changeCell and refCell are the table's words for head vs base and vs reference.
	changeCell, refCell string
	// noMore is CompareOptions.NoMoreRounds.
	noMore string
}

// compare judges one item and returns its record; ok is false when it fails the gate.
func (j *judge) compare(it *item, family int) (Record, bool, error) {
	lim := it.lim.Limits
	t := 1 + lim.MaxSlowdown
	var jd Judgement
	if it.sampled {
		p := Pair{Base: it.baseT.rounds, Head: it.head.rounds}
		if it.refSampled {
			p.Reference = it.ref.rounds
		}
		var err error
		if jd, err = JudgePair(p, lim, family); err != nil {
			return Record{}, false, err
		}
	} else {
		field, b, h, _ := summaryOf(it.baseT, it.head)
		c, err := judgeSummary(b, h, field, lim)
		if err != nil {
			j.Add(result.Error, MetricSamples, nil, nil, "%s is %s in base and %s in head: a timing must be a finite number > 0", field, numtext.Short(b), numtext.Short(h))
			return Record{Kernel: it.res.Kernel, Shape: it.res.Shape, Verdict: Inconclusive}, false, nil
		}
		jd.Comparison = c
	}
	c := jd.Comparison
	rec := Record{Kernel: it.res.Kernel, Shape: it.res.Shape, Verdict: c.Verdict, Ratio: result.Number(c.Center),
		CILow: result.Number(c.Lo), CIHigh: result.Number(c.Hi), PValue: result.Number(c.PValue), Rounds: c.Rounds,
		DroppedRounds: c.DroppedRounds, Samples: c.Samples, GPUSeconds: result.Number(jd.GPUSeconds),
		BaseMedianUs: medianUs(it.baseT), HeadMedianUs: medianUs(it.head)}
	j.changeCell = changeText(c)
	margin := fmt.Sprintf("max_slowdown %s %s", pctNum(lim.MaxSlowdown), it.lim.margin.text())

	if c.InvalidSamples > 0 {
		j.Add(result.Warning, MetricSamples, result.Num(c.InvalidSamples), nil,
			"%d timing(s) were NaN, Inf, zero or negative: dropped and not judged (is the harness's timer right?)", c.InvalidSamples)
	}
	dropped := ""
	if c.DroppedRounds > 0 {
		dropped = fmt.Sprintf("; %d round(s) dropped (a side had no valid timing in them)", c.DroppedRounds)
	}
	switch {
	case c.SummaryOnly:
		j.Add(result.Warning, MetricSamples, nil, nil, "no samples: noise not assessed; judged by the plain ratio of %s (head/base %s), never claimed significant: report rounds_us to get a confidence interval",
			c.SummaryField, ratioNum(c.Center))
		if c.Verdict == Slower {
			j.Add(result.Error, MetricSlowdown, result.Number(c.Center), result.Number(t), "%s slower by the plain ratio of %s, more than %s (no samples: noise not assessed)",
				pctNum(c.Center-1), c.SummaryField, margin)
		}
	case c.Verdict == Slower:
		j.Add(result.Error, MetricSlowdown, result.Number(c.Center), result.Number(t), "%s; the whole %s interval is above 1 + %s (sign test p = %s <= %s)%s",
			j.changeCell, pct(c.Level), margin, fnumShort(c.PValue), fnumShort(c.PThreshold), dropped)
	case c.Verdict == Inconclusive:
		next := NeedMore(jd, lim)
		tail := fmt.Sprintf("the runner should add %d round(s) and judge again", next)
		switch {
		case next > 0 && j.noMore != "":
			tail = fmt.Sprintf("no more rounds were run: %s; reported as a warning, not a pass", j.noMore)
		case next == 0:
			tail = fmt.Sprintf("the budget is spent (max_rounds %d, gpu_seconds_budget %s s, %.3g s used): reported as a warning, not a pass", lim.MaxRounds, numtext.Short(lim.GPUSecondsBudget), jd.GPUSeconds)
		}
		j.Add(result.Warning, MetricSlowdown, result.Number(c.Center), result.Number(t), "inconclusive: %s; %s, at %s confidence (%s; sign test p = %s); %s%s",
			j.changeCell, c.Why, pct(c.Level), margin, fnumShort(c.PValue), tail, dropped)
	default:
		j.Add(result.Notice, MetricSlowdown, result.Number(c.Center), result.Number(t), "%s: %s; the whole %s interval is below 1 + %s%s",
			c.Verdict, j.changeCell, pct(c.Level), margin, dropped)
	}

	// The reference goal.
	g := it.lim.MinSpeedupVsReference
	switch {
	case jd.Reference != nil:
		s := *jd.Reference
		s.Name = it.refName
		rec.SpeedupVsReference = &ReferenceRecord{Name: s.Name, Speedup: result.Number(s.Center), CILow: result.Number(s.Lo), CIHigh: result.Number(s.Hi),
			Goal: goalNum(g), Verdict: s.Verdict, Rounds: s.Rounds}
		j.refCell = refText(s)
		j.judgeGoal(s, it.lim.goal)
	case it.refSummary:
		field, rv, hv, _ := summaryOf(it.ref, it.head)
		s := Speedup{Estimate: Estimate{Center: rv / hv, Lo: math.NaN(), Hi: math.NaN(), SummaryOnly: true, SummaryField: field},
			Name: it.refName, Goal: g, Verdict: NoGoal}
		if !(s.Center > 0) || math.IsInf(s.Center, 0) {
			j.Add(result.Warning, MetricReference, nil, goalNum(g), "the reference's %s (%s) or head's (%s) is not a finite number > 0: speedup not measured", field, numtext.Short(rv), numtext.Short(hv))
			break
		}
		if g > 0 {
			s.Verdict = GoalMet
			if s.Center < g {
				s.Verdict = GoalMissed
			}
		}
		rec.SpeedupVsReference = &ReferenceRecord{Name: s.Name, Speedup: result.Number(s.Center), Goal: goalNum(g), Verdict: s.Verdict}
		j.refCell = refText(s)
		if g > 0 {
			j.Add(result.Warning, MetricSamples, nil, nil, "no samples: noise not assessed for the speedup over %s (plain ratio of %s)", refLabel(s.Name), field)
			j.judgeGoal(s, it.lim.goal)
		}
	case g > 0:
		j.Add(result.Warning, MetricReference, nil, result.Number(g), "min_speedup_vs_reference %s× is set %s but head reports no usable reference timings: the goal was not checked",
			numtext.Short(g), it.lim.goal.text())
	}
	return rec, j.Errors == 0, nil
}

// judgeGoal reports a reference goal's verdict.
func (j *judge) judgeGoal(s Speedup, from setting) {
	if s.Goal <= 0 {
		return
	}
	what := fmt.Sprintf("min_speedup_vs_reference %s× over %s %s", numtext.Short(s.Goal), refLabel(s.Name), from.text())
	switch s.Verdict {
	case GoalMissed:
		if s.SummaryOnly {
			j.Add(result.Error, MetricReference, result.Number(s.Center), result.Number(s.Goal), "%s, below %s (plain ratio of %s; no samples: noise not assessed)", refText(s), what, s.SummaryField)
			return
		}
		j.Add(result.Error, MetricReference, result.Number(s.Center), result.Number(s.Goal), "%s: the whole %s interval is below %s", refText(s), pct(s.Level), what)
	case GoalInconclusive:
		j.Add(result.Warning, MetricReference, result.Number(s.Center), result.Number(s.Goal), "inconclusive: %s; %s (%s interval, against %s): reported as a warning, not a pass", refText(s), s.Why, pct(s.Level), what)
	case GoalMet:
		j.Add(result.Notice, MetricReference, result.Number(s.Center), result.Number(s.Goal), "%s meets %s", refText(s), what)
	}
}

// requiredBy returns the rule with shapes that requires kernel × shape.
func requiredBy(cc compiled, kernel, shape string) (compiledRule, bool) {
	name := kernelname.Parse(kernel)
	for _, r := range cc.rules {
		if len(r.Shapes) > 0 && r.Matches(name, shape) {
			return r, true
		}
	}
	return compiledRule{}, false
}

// requireShapes reports a rule with shapes whose kernel × shapes head does not report.
// Those base has are reported already (in base, not in head).
func requireShapes(g *result.Gate, cc compiled, r compiledRule, head, base *benchfile.File) {
	has := func(f *benchfile.File, kernel, shape string) bool {
		return slices.ContainsFunc(f.Results, func(x benchfile.Result) bool { return x.Kernel == kernel && x.Shape == shape })
	}
	var kernels []string
	for _, x := range head.Results {
		if kernelname.Parse(x.Kernel).Matches(r.Glob) && !slices.Contains(kernels, x.Kernel) {
			kernels = append(kernels, x.Kernel)
		}
	}
	rule := r.From
	if len(kernels) == 0 {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Error, File: cc.FileName(), Line: r.Line, Metric: MetricMissing,
			Message: fmt.Sprintf("rule %s requires a kernel matching %s with shapes %s, but head has none (a kernel that disappears must not pass)", rule, r.Match, strings.Join(r.Shapes, ", "))})
		return
	}
	for _, k := range kernels {
		for _, s := range r.Shapes {
			if has(head, k, s) || has(base, k, s) {
				continue
			}
			short := kernelname.Parse(k).Short
			g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Kernel: short, File: cc.FileName(), Line: r.Line, Metric: MetricMissing,
				Message: fmt.Sprintf("%s × %s: required by rule %s but reported by neither base nor head", short, s, rule)})
		}
	}
}

// sameDevice compares the devices: different names, compute capabilities, drivers or
// toolkits mean the timings were not taken side by side. msg is a warning when they agree
// but a field is missing on both sides.
func sameDevice(a, b benchfile.Device) (msg string, same bool) {
	var diff, unknown []string
	for _, f := range []struct{ key, a, b string }{
		{"device", a.Name, b.Name}, {"compute capability", a.ComputeCap, b.ComputeCap},
		{"driver", a.Driver, b.Driver}, {"CUDA", a.CUDA, b.CUDA},
	} {
		switch {
		case f.a != f.b:
			diff = append(diff, fmt.Sprintf("%s %q in base, %q in head", f.key, f.a, f.b))
		case f.a == "":
			unknown = append(unknown, f.key)
		}
	}
	if len(diff) > 0 {
		return "base and head did not run on the same device, driver and toolkit (" + strings.Join(diff, "; ") +
			"): timings from different setups are not a side-by-side comparison, so nothing was compared", false
	}
	if len(unknown) > 0 {
		return "neither harness file reports the " + strings.Join(unknown, ", ") + ": cannot verify that base and head ran side by side on the same setup", true
	}
	return "", true
}

// changeText renders head vs base in plain words: "3.1% slower (2.4–3.8%), 12 rounds".
func changeText(c Comparison) string {
	if c.SummaryOnly {
		return fmt.Sprintf("%s by %s, no samples: noise not assessed", signedPct(c.Center-1), c.SummaryField)
	}
	if c.Rounds == 0 {
		return "no round with timings on both sides"
	}
	rounds := fmt.Sprintf("%d round", c.Rounds)
	if c.Rounds != 1 {
		rounds += "s"
	}
	d, lo, hi := 100*(c.Center-1), 100*(c.Lo-1), 100*(c.Hi-1)
	loInf, hiInf := math.IsInf(c.Lo, 0) || math.IsNaN(c.Lo), math.IsInf(c.Hi, 0) || math.IsNaN(c.Hi)
	switch {
	case loInf && hiInf:
		return fmt.Sprintf("%s (no interval: too few rounds), %s", signedPct(c.Center-1), rounds)
	case loInf:
		return fmt.Sprintf("%s (at most %s; too few rounds for a lower bound), %s", signedPct(c.Center-1), signedPct(c.Hi-1), rounds)
	case hiInf:
		return fmt.Sprintf("%s (at least %s; too few rounds for an upper bound), %s", signedPct(c.Center-1), signedPct(c.Lo-1), rounds)
	case lo >= 0 && d >= 0:
		return fmt.Sprintf("%.1f%% slower (%.1f–%.1f%%), %s", d, lo, hi, rounds)
	case hi <= 0 && d <= 0:
		return fmt.Sprintf("%.1f%% faster (%.1f–%.1f%%), %s", -d, -hi, -lo, rounds)
	}
	return fmt.Sprintf("%s (%s to %s), %s", signedPct(c.Center-1), signedPct(c.Lo-1), signedPct(c.Hi-1), rounds)
}

// refText renders the speedup over a reference: "15.3× torch.sdpa (14.9–15.8×), goal 15×".
func refText(s Speedup) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.3g× %s", s.Center, refLabel(s.Name))
	switch {
	case s.SummaryOnly:
		fmt.Fprintf(&b, " (by %s, no samples)", s.SummaryField)
	case (math.IsInf(s.Lo, 0) || math.IsNaN(s.Lo)) && (math.IsInf(s.Hi, 0) || math.IsNaN(s.Hi)):
		fmt.Fprintf(&b, " (no interval: too few rounds)")
	case math.IsInf(s.Lo, 0) || math.IsNaN(s.Lo):
		fmt.Fprintf(&b, " (at most %.3g×)", s.Hi)
	case math.IsInf(s.Hi, 0) || math.IsNaN(s.Hi):
		fmt.Fprintf(&b, " (at least %.3g×)", s.Lo)
	default:
		fmt.Fprintf(&b, " (%.3g–%.3g×)", s.Lo, s.Hi)
	}
	if s.Goal > 0 {
		fmt.Fprintf(&b, ", goal %s×", numtext.Short(s.Goal))
	}
	return b.String()
}

func refLabel(name string) string {
	if strings.TrimSpace(name) == "" {
		return "the reference"
	}
	return strings.ToValidUTF8(name, "\uFFFD")
}

// signedPct renders a fraction as a signed percentage: "+2.3%", "−0.4%".
func signedPct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return numtext.Short(f)
	}
	switch v := 100 * f; {
	case math.Abs(v) < 0.05:
		return "0.0%"
	case v < 0:
		return fmt.Sprintf("−%.1f%%", -v)
	default:
		return fmt.Sprintf("+%.1f%%", v)
	}
}

// pctNum renders a fraction as a percentage: "2%", "3.1%".
func pctNum(f float64) string { return fmt.Sprintf("%.3g%%", 100*f) }

func ratioNum(r float64) string { return fmt.Sprintf("%.4g", r) }

func fnumShort(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return numtext.Short(v)
	}
	return fmt.Sprintf("%.2g", v)
}

func goalNum(g float64) *float64 {
	if g <= 0 {
		return nil
	}
	return &g
}
