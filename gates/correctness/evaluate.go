package correctness

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Name is the gate's name in results.
const Name = "correctness"

// Metric names, as they appear in findings.
const (
	MetricMaxErr      = "max_err"
	MetricMeanErr     = "mean_err"
	MetricRTol        = "rtol" // value: max_err / ref_max_abs
	MetricRefMaxAbs   = "ref_max_abs"
	MetricBadFraction = "bad_fraction"
	MetricNaN         = "nan_count"
	MetricInf         = "inf_count"
	MetricChecks      = "checks"
	MetricRepeat      = "repeat_max_diff"
	// MetricHarnessError marks a result whose harness reported its own failure.
	MetricHarnessError = "harness_error"
	// MetricMissing marks a kernel × shape that was requested or required but not reported,
	// and a result with no measurement at all.
	MetricMissing = "missing_result"
	// MetricRule marks a config rule that matched no result.
	MetricRule = "rule"
	// MetricMode marks what the gate says about the file's mode (a skip, a bench file judged).
	MetricMode = "mode"
)

// Data is the gate's machine-readable output.
type Data struct {
	Source  string             `json:"source,omitempty"`
	Device  benchfile.Device   `json:"device"`
	Request *benchfile.Request `json:"request,omitempty"`
	Results []Record           `json:"results"`
}

// Record is one kernel × shape as judged. A field the harness did not report is absent;
// non-finite numbers are written as the strings "NaN", "Infinity", "-Infinity".
type Record struct {
	Kernel  string           `json:"kernel"`
	Shape   string           `json:"shape"`
	Verdict result.Verdict   `json:"verdict"`
	MaxErr  *benchfile.Float `json:"max_err,omitempty"`
	// Limit is the bound max_err was judged against: max_err's limit, or rtol × ref_max_abs
	// when that is smaller. LimitFrom says where it came from.
	Limit          *float64         `json:"limit,omitempty"`
	LimitFrom      string           `json:"limit_from,omitempty"`
	MeanErr        *benchfile.Float `json:"mean_err,omitempty"`
	RefMaxAbs      *benchfile.Float `json:"ref_max_abs,omitempty"`
	BadFraction    *benchfile.Float `json:"bad_fraction,omitempty"`
	NaNCount       *int64           `json:"nan_count,omitempty"`
	InfCount       *int64           `json:"inf_count,omitempty"`
	Checks         *int             `json:"checks,omitempty"`
	ChecksRequired int              `json:"checks_required,omitempty"`
	RepeatLaunches *int             `json:"repeat_launches,omitempty"`
	RepeatMaxDiff  *benchfile.Float `json:"repeat_max_diff,omitempty"`
	// Error is the harness's own failure message for this kernel × shape.
	Error string `json:"error,omitempty"`
}

// limit is one resolved threshold and where it came from.
type limit struct {
	value float64
	set   bool
	from  string // "default", "kernel-gate.yml:4" or "kernel-gate.yml:12 (flash_fwd* × long)"
	// reason is the reason of the rule that set it, for messages.
	reason string
}

// text is "(limit from X)" with the rule's reason when it has one.
func (l limit) text() string {
	if l.reason != "" {
		return fmt.Sprintf("(limit from %s: %q)", l.from, l.reason)
	}
	return "(limit from " + l.from + ")"
}

type limits struct {
	maxErr, meanErr, rtol, badFraction, repeatTol, minChecks limit
}

// apply sets the limits a level sets; from(key) says where, reason is the rule's.
func (l *limits) apply(t Tolerance, from func(key string) string, reason string) {
	set := func(dst *limit, key string, v *float64) {
		if v != nil {
			*dst = limit{value: *v, set: true, from: from(key), reason: reason}
		}
	}
	set(&l.maxErr, "max_err", t.MaxErr)
	set(&l.meanErr, "mean_err", t.MeanErr)
	set(&l.rtol, "rtol", t.RTol)
	set(&l.badFraction, "bad_fraction", t.BadFraction)
	set(&l.repeatTol, "repeat_tol", t.RepeatTol)
	if t.MinChecks != nil {
		l.minChecks = limit{value: float64(*t.MinChecks), set: true, from: from("min_checks"), reason: reason}
	}
}

// resolve computes the limits for one kernel × shape: the defaults and the top level, then
// each matching rule in order. It also returns the indices of the rules that matched.
func (cc compiled) resolve(name kernelname.Name, shape string) (limits, []int) {
	l := cc.top
	var matched []int
	for i, r := range cc.rules {
		if !r.Matches(name, shape) {
			continue
		}
		matched = append(matched, i)
		l.apply(r.Tolerance, func(string) string { return r.From }, r.Reason)
	}
	return l, matched
}

// measured reports whether a result holds any correctness measurement.
func measured(r benchfile.Result) bool {
	return r.MaxErr != nil || r.MeanErr != nil || r.RefMaxAbs != nil || r.BadFraction != nil ||
		r.NaNCount != nil || r.InfCount != nil || r.Checks != nil || r.RepeatLaunches != nil ||
		r.RepeatMaxDiff != nil
}

// judge collects the findings about one result.
type judge struct{ result.Subject }

// value judges that a reported number is finite and not negative; it reports whether the
// number can be compared with a limit.
func (j *judge) value(metric string, v *benchfile.Float, what string) bool {
	if v == nil {
		return false
	}
	x := float64(*v)
	switch {
	case !v.Finite():
		j.Add(result.Error, metric, nil, nil, "%s is %s: NaN and Inf never pass, whatever the tolerance", metric, numtext.Short(x))
		return false
	case x < 0:
		j.Add(result.Error, metric, result.Number(x), nil, "%s is negative (%s), which %s cannot be: the harness's measurement is wrong", metric, numtext.Short(x), what)
		return false
	}
	return true
}

// Evaluate judges a harness file read with benchfile.Read (source names it in messages)
// against cfg and returns the "correctness" gate. The error is for a config that does not
// validate or a nil file; everything wrong with the results is a finding.
func Evaluate(f *benchfile.File, source string, cfg Config) (result.Gate, error) {
	g := result.Gate{Name: Name, Findings: []result.Finding{}}
	if f == nil {
		return g, errors.New("correctness: no harness file to judge")
	}
	cc, err := cfg.compiled()
	if err != nil {
		return g, err
	}
	src := cmp.Or(source, "the harness file")
	mode := ""
	if f.Request != nil {
		mode = f.Request.Mode
	}
	anyMeasured := slices.ContainsFunc(f.Results, measured)
	judging := mode == benchfile.ModeCheck || anyMeasured
	rounds := 0 // checks asked of each result; a bench request's rounds are timing rounds
	if mode == benchfile.ModeCheck && f.Request.Rounds > 0 {
		rounds = f.Request.Rounds
	}

	rows := make([]result.Ranked, 0, len(f.Results)) // sized once: a file may hold 10^6 results
	data := Data{Source: source, Device: f.Device, Request: f.Request, Results: make([]Record, 0, len(f.Results))}
	used := make([]bool, len(cc.rules))
	reported := map[string]map[string]bool{} // kernel → shapes
	var kernels []string                     // in order of first appearance
	for _, r := range f.Results {
		name := kernelname.Parse(r.Kernel)
		if reported[r.Kernel] == nil {
			reported[r.Kernel] = map[string]bool{}
			kernels = append(kernels, r.Kernel)
		}
		reported[r.Kernel][r.Shape] = true
		lim, matched := cc.resolve(name, r.Shape)
		for _, i := range matched {
			used[i] = true
		}
		j := &judge{result.Subject{Gate: &g, File: source, Kernel: name.Short, Label: name.Short + " × " + r.Shape}}
		rec := Record{
			Kernel: r.Kernel, Shape: r.Shape, MaxErr: r.MaxErr, MeanErr: r.MeanErr, RefMaxAbs: r.RefMaxAbs,
			BadFraction: r.BadFraction, NaNCount: r.NaNCount, InfCount: r.InfCount, Checks: r.Checks,
			RepeatLaunches: r.RepeatLaunches, RepeatMaxDiff: r.RepeatMaxDiff, Error: r.Error,
		}
		eff := lim.maxErr // the bound max_err is judged against, for the table
		need, needFrom := int(lim.minChecks.value), lim.minChecks.text()
		if rounds >= need {
			need, needFrom = rounds, fmt.Sprintf("(the request asked for %d rounds)", rounds)
		}
		switch {
		case r.Error != "":
			j.Add(result.Error, MetricHarnessError, nil, nil, "the harness failed: %s", benchfile.ErrorMessage(r.Error))
		case !judging:
		case !measured(r):
			j.Add(result.Error, MetricMissing, nil, nil,
				"the result holds no correctness measurement (max_err, nan_count, ...) in a file that %s: nothing to judge is not a pass", whyJudged(mode))
		default:
			eff = j.judge(r, lim, need, needFrom)
		}
		st := result.Pass
		switch {
		case j.Errors > 0:
			st = result.Fail
		case !judging:
			st = result.Skip
		}
		rec.Verdict = st
		if judging {
			rec.Limit, rec.LimitFrom, rec.ChecksRequired = result.Number(eff.value), eff.from, need
		}
		data.Results = append(data.Results, rec)
		rows = append(rows, result.Ranked{Fail: j.Errors > 0, Worst: ratio(r.MaxErr, eff.value), Row: result.Row{Status: st, Cells: []string{
			name.Short, r.Shape, fcell(r.MaxErr), limitCell(judging, eff.value), fcell(r.MeanErr),
			nanCell(r.NaNCount, r.InfCount), checksCell(r.Checks, need, judging), fcell(r.RepeatMaxDiff),
		}}})
	}

	if judging && len(f.Results) == 0 {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Error, File: source, Metric: MetricMissing,
			Message: fmt.Sprintf("%s %s but holds no results: nothing to judge is not a pass", src, modeText(mode))})
	}
	if judging {
		requirements(&g, f, cc, source, kernels, reported)
		for i, r := range cc.rules {
			if !used[i] && len(r.Shapes) == 0 {
				g.Findings = append(g.Findings, result.Finding{Severity: result.Warning, File: cc.FileName(), Line: r.Line, Metric: MetricRule,
					Message: fmt.Sprintf("rule %s (%s) matches no result in %s: its tolerances were not used (was the kernel renamed?)", cc.Where(r.Line), r.Match, src)})
			}
		}
		if mode != benchfile.ModeCheck {
			g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, File: source, Metric: MetricMode,
				Message: fmt.Sprintf("%s %s, but its results hold error measurements: judged as a check-mode run", src, modeText(mode))})
		}
	} else {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, File: source, Metric: MetricMode,
			Message: fmt.Sprintf("nothing to judge: %s %s and holds no error measurement (run the harness with KG_MODE=check)", src, modeText(mode))})
	}

	// Worst first: failing rows, then by max_err over its limit.
	g.Table = &result.Table{Columns: []string{"kernel", "shape", "max_err", "limit", "mean_err", "nan", "checks", "repeat diff"}, Rows: result.WorstFirst(rows)}
	rows = nil
	if err := g.SetData(data); err != nil {
		return g, err
	}
	g.Decide(judging)
	on := ""
	if f.Device.Name != "" {
		on = " on " + f.Device.Name
	}
	if judging {
		g.Summary = fmt.Sprintf("%d kernel × shape result(s) from %s%s; %d error(s), %d warning(s)",
			len(f.Results), src, on, g.Count(result.Error), g.Count(result.Warning))
	} else {
		g.Summary = fmt.Sprintf("nothing to judge: %s %s; %d error(s)", src, modeText(mode), g.Count(result.Error))
	}
	return g, nil
}

// judge applies every rule to a result that reports measurements and no harness error. It
// returns the bound max_err was judged against.
func (j *judge) judge(r benchfile.Result, lim limits, need int, needFrom string) limit {
	eff := lim.maxErr

	// NaN and Inf never pass.
	switch {
	case r.NaNCount == nil:
		j.Add(result.Error, MetricNaN, nil, nil, "the harness did not report nan_count: NaN cannot be ruled out (a max taken with fmax skips NaN)")
	case *r.NaNCount < 0:
		j.Add(result.Error, MetricNaN, result.Num(*r.NaNCount), nil, "nan_count is negative (%d): the harness's count is wrong", *r.NaNCount)
	case *r.NaNCount > 0:
		j.Add(result.Error, MetricNaN, result.Num(*r.NaNCount), result.Num(0), "%d NaN output element(s): NaN never passes, whatever the tolerance", *r.NaNCount)
	}
	if r.InfCount != nil {
		switch {
		case *r.InfCount < 0:
			j.Add(result.Error, MetricInf, result.Num(*r.InfCount), nil, "inf_count is negative (%d): the harness's count is wrong", *r.InfCount)
		case *r.InfCount > 0:
			j.Add(result.Error, MetricInf, result.Num(*r.InfCount), result.Num(0), "%d Inf output element(s): Inf never passes, whatever the tolerance", *r.InfCount)
		}
	}

	// Absolute and relative max error.
	maxOK := false
	if r.MaxErr == nil {
		j.Add(result.Error, MetricMaxErr, nil, result.Number(lim.maxErr.value), "the harness did not report max_err: nothing to judge is not a pass (its limit is %s %s)",
			numtext.Short(lim.maxErr.value), lim.maxErr.text())
	} else if j.value(MetricMaxErr, r.MaxErr, "an absolute error") {
		maxOK = true
		if v := float64(*r.MaxErr); v > lim.maxErr.value {
			j.Add(result.Error, MetricMaxErr, result.Number(v), result.Number(lim.maxErr.value), "max_err %s > %s %s", numtext.Short(v), numtext.Short(lim.maxErr.value), lim.maxErr.text())
		}
	}
	refOK := j.value(MetricRefMaxAbs, r.RefMaxAbs, "the largest absolute reference value")
	if lim.rtol.set {
		switch {
		case r.RefMaxAbs == nil:
			j.Add(result.Warning, MetricRTol, nil, result.Number(lim.rtol.value), "rtol is set %s but the harness did not report ref_max_abs: the relative error was not checked", lim.rtol.text())
		case refOK && float64(*r.RefMaxAbs) == 0:
			j.Add(result.Warning, MetricRTol, nil, result.Number(lim.rtol.value), "rtol is set %s but ref_max_abs is 0 (the reference is all zeros): the relative error was not checked", lim.rtol.text())
		case refOK && maxOK:
			v, ref := float64(*r.MaxErr), float64(*r.RefMaxAbs)
			bound := lim.rtol.value * ref
			if bound < eff.value {
				eff = limit{value: bound, set: true, from: lim.rtol.from + ", rtol × ref_max_abs", reason: lim.rtol.reason}
			}
			if v > bound {
				j.Add(result.Error, MetricRTol, result.Number(v/ref), result.Number(lim.rtol.value), "max_err %s > rtol %s × ref_max_abs %s = %s (relative error %.3g) %s",
					numtext.Short(v), numtext.Short(lim.rtol.value), numtext.Short(ref), numtext.Short(bound), v/ref, lim.rtol.text())
			}
		}
	}

	// Mean error and the fraction of bad elements.
	if j.value(MetricMeanErr, r.MeanErr, "an absolute error") && lim.meanErr.set {
		if v := float64(*r.MeanErr); v > lim.meanErr.value {
			j.Add(result.Error, MetricMeanErr, result.Number(v), result.Number(lim.meanErr.value), "mean_err %s > %s %s", numtext.Short(v), numtext.Short(lim.meanErr.value), lim.meanErr.text())
		}
	} else if r.MeanErr == nil && lim.meanErr.set {
		j.Add(result.Warning, MetricMeanErr, nil, result.Number(lim.meanErr.value), "mean_err is limited %s but the harness did not report it: not checked", lim.meanErr.text())
	}
	if j.value(MetricBadFraction, r.BadFraction, "a fraction") {
		v := float64(*r.BadFraction)
		switch {
		case v > 1:
			j.Add(result.Error, MetricBadFraction, result.Number(v), nil, "bad_fraction %s is over 1, which a fraction cannot be: the harness's measurement is wrong", numtext.Short(v))
		case lim.badFraction.set && v > lim.badFraction.value:
			j.Add(result.Error, MetricBadFraction, result.Number(v), result.Number(lim.badFraction.value), "bad_fraction %s > %s: that share of the output is outside the harness's tolerance %s",
				numtext.Short(v), numtext.Short(lim.badFraction.value), lim.badFraction.text())
		}
	} else if r.BadFraction == nil && lim.badFraction.set {
		j.Add(result.Warning, MetricBadFraction, nil, result.Number(lim.badFraction.value), "bad_fraction is limited %s but the harness did not report it: not checked", lim.badFraction.text())
	}

	// How many checks ran.
	switch {
	case r.Checks == nil && need > 1:
		j.Add(result.Error, MetricChecks, nil, result.Num(need), "the harness did not report checks: cannot tell whether it ran the %d asked %s", need, needFrom)
	case r.Checks != nil && *r.Checks < need:
		j.Add(result.Error, MetricChecks, result.Num(*r.Checks), result.Num(need), "ran %d of %d checks %s", *r.Checks, need, needFrom)
	}

	// Repeated launches on the same input. j.value reports a non-finite or negative
	// difference itself.
	switch {
	case r.RepeatMaxDiff == nil:
		j.Add(result.Warning, MetricRepeat, nil, result.Number(lim.repeatTol.value), "repeated launches were not checked (the harness reports no repeat_max_diff)")
	case !j.value(MetricRepeat, r.RepeatMaxDiff, "a difference between launches"):
	case float64(*r.RepeatMaxDiff) > lim.repeatTol.value:
		v := float64(*r.RepeatMaxDiff)
		hint := ""
		if lim.repeatTol.from == "default" {
			hint = "; a kernel with floating-point atomics may differ in the last bits: give it a repeat_tol in a kernel rule"
		}
		j.Add(result.Error, MetricRepeat, result.Number(v), result.Number(lim.repeatTol.value), "repeated launches disagree (the first call passes, later calls fail): repeat_max_diff %s > %s%s %s%s",
			numtext.Short(v), numtext.Short(lim.repeatTol.value), launches(r.RepeatLaunches), lim.repeatTol.text(), hint)
	case r.RepeatLaunches != nil && *r.RepeatLaunches < 2:
		j.Add(result.Warning, MetricRepeat, nil, result.Number(lim.repeatTol.value), "repeated launches were not checked (repeat_launches %d: the harness should launch at least twice on the same input)", *r.RepeatLaunches)
	}
	return eff
}

// requirements reports kernel × shapes that were requested (request.shapes) or required (a
// rule with shapes) but not reported.
func requirements(g *result.Gate, f *benchfile.File, cc compiled, source string, kernels []string, reported map[string]map[string]bool) {
	flagged := map[string]bool{}
	var requested []string
	if f.Request != nil {
		for _, s := range f.Request.Shapes {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(requested, s) {
				requested = append(requested, s)
			}
		}
	}
	if len(requested) > 0 {
		var own []string // kernels with shapes of their own (a GEMM beside attention shapes)
		for _, k := range kernels {
			short := kernelname.Parse(k).Short
			var missing []string
			for _, s := range requested {
				if !reported[k][s] {
					missing = append(missing, s)
				}
			}
			if len(missing) == len(requested) {
				own = append(own, short)
				continue
			}
			for _, s := range missing {
				flagged[k+"\x00"+s] = true
				g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Kernel: short, File: source, Metric: MetricMissing,
					Message: fmt.Sprintf("%s × %s: shape %s was requested but not reported (did the harness crash or skip it?)", short, s, s)})
			}
		}
		for _, s := range requested {
			if !slices.ContainsFunc(kernels, func(k string) bool { return reported[k][s] || flagged[k+"\x00"+s] }) {
				g.Findings = append(g.Findings, result.Finding{Severity: result.Error, File: source, Metric: MetricMissing,
					Message: fmt.Sprintf("shape %s was requested (request.shapes) but no kernel reported it", s)})
			}
		}
		if len(own) > 0 {
			g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, File: source, Metric: MetricMissing,
				Message: fmt.Sprintf("%s reported none of the requested shapes (%s): their own shapes were judged, and the request could not be checked for them",
					strings.Join(own, ", "), strings.Join(requested, ", "))})
		}
	}
	for _, r := range cc.rules {
		if len(r.Shapes) == 0 {
			continue
		}
		var matching []string
		for _, k := range kernels {
			if kernelname.Parse(k).Matches(r.Glob) {
				matching = append(matching, k)
			}
		}
		rule := r.From
		if len(matching) == 0 {
			g.Findings = append(g.Findings, result.Finding{Severity: result.Error, File: cc.FileName(), Line: r.Line, Metric: MetricMissing,
				Message: fmt.Sprintf("rule %s requires a kernel matching %s with shapes %s, but no such kernel is in %s (a kernel that disappears must not pass)",
					rule, r.Match, strings.Join(r.Shapes, ", "), cmp.Or(source, "the harness file"))})
			continue
		}
		for _, k := range matching {
			short := kernelname.Parse(k).Short
			for _, s := range r.Shapes {
				if reported[k][s] || flagged[k+"\x00"+s] {
					continue
				}
				flagged[k+"\x00"+s] = true
				g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Kernel: short, File: cc.FileName(), Line: r.Line, Metric: MetricMissing,
					Message: fmt.Sprintf("%s × %s: required by rule %s but not reported (a shape that disappears must not pass)", short, s, rule)})
			}
		}
	}
}

func whyJudged(mode string) string {
	if mode == benchfile.ModeCheck {
		return "is a check-mode run"
	}
	return "holds error measurements"
}

func modeText(mode string) string {
	switch mode {
	case "":
		return "does not say its mode (no request.mode)"
	case benchfile.ModeCheck:
		return "is a check-mode run"
	}
	return fmt.Sprintf("is a %s-mode run (request.mode %q)", mode, mode)
}

// launches is " over N launches" when the harness reports how many ran.
func launches(n *int) string {
	if n == nil {
		return ""
	}
	return fmt.Sprintf(" over %d launches", *n)
}

// ratio orders rows: max_err over its limit; +Inf for a missing or non-finite max_err.
func ratio(v *benchfile.Float, lim float64) float64 {
	switch {
	case v == nil || !v.Finite():
		return math.Inf(1)
	case float64(*v) <= 0:
		return 0
	case lim <= 0:
		return math.Inf(1)
	}
	return float64(*v) / lim
}

// fcell renders a reported number for the table: 3 significant digits, "-" when absent.
func fcell(v *benchfile.Float) string {
	if v == nil {
		return "-"
	}
	if !v.Finite() {
		return numtext.Short(float64(*v))
	}
	return strconv.FormatFloat(float64(*v), 'g', 3, 64)
}

func limitCell(judging bool, v float64) string {
	if !judging {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func nanCell(nan, inf *int64) string {
	s := "-"
	if nan != nil {
		s = strconv.FormatInt(*nan, 10)
	}
	if inf != nil && *inf != 0 {
		s += fmt.Sprintf(" (%d inf)", *inf)
	}
	return s
}

func checksCell(checks *int, need int, judging bool) string {
	c := "-"
	if checks != nil {
		c = strconv.Itoa(*checks)
	}
	if !judging {
		return c
	}
	return c + "/" + strconv.Itoa(need)
}
