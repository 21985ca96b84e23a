package sanitizer

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Name is the gate's name in results.
const Name = "sanitizer"

// Metric names are "<tool>/<kind>" for records and "<tool>/<what>" for these.
const (
	// MetricRun: a Problem that makes a run prove less than it seems.
	MetricRun = "run"
	// MetricNotPrinted: errors the summary counts past the print limit; Value is their number.
	MetricNotPrinted = "not-printed"
	// MetricLaunch: no kernel was launched, or none could be confirmed.
	MetricLaunch = "launch"
	// MetricAfterFault: the API errors and leaks that followed a kernel's fault, which broke
	// the process's CUDA context, folded into one finding under the fault's; Value is their
	// number.
	MetricAfterFault = "after-fault"
	// MetricNote: something the sanitizer said that is not an error record.
	MetricNote = "note"
	// MetricSuppression: a suppression that matched nothing (tool "sanitizer").
	MetricSuppression = "sanitizer/suppression"
)

// Data is the gate's machine-readable record (result.Gate.Data).
type Data struct {
	Runs         []Run             `json:"runs"`
	Suppressions []SuppressionData `json:"suppressions,omitempty"`
}

// SuppressionData says how many records a suppression matched.
type SuppressionData struct {
	Line    int    `json:"line,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Kernel  string `json:"kernel,omitempty"`
	At      string `json:"at,omitempty"`
	Reason  string `json:"reason"`
	Matched int    `json:"matched"`
}

// Evaluate judges the runs and returns the "sanitizer" gate: every record not suppressed is
// a finding with the severity its policy gives (errors fail the gate), every run Problem is
// an error, errors past the print limit are an error, and a run with no kernel launch is an
// error (launches known to be 0) or a warning (launches unknown and no record proves one).
//
// launches maps a tool to the number of kernel launches the harness reported for that
// tool's run ("*" for every tool); a tool missing from it is unknown, because the
// sanitizer's output cannot show launches. It fails only on an invalid config.
func Evaluate(runs []Run, launches map[string]int, cfg Config) (result.Gate, error) {
	g := result.Gate{Name: Name, Findings: []result.Finding{}}
	cc, err := cfg.compiled()
	if err != nil {
		return g, fmt.Errorf("sanitizer gate: invalid config: %w", err)
	}
	e := evaluation{cc: cc, used: make([]int, len(cc.supp))}
	data := Data{Runs: make([]Run, 0, len(runs))}
	for _, r := range runs {
		n, ok := launches[r.Tool]
		if !ok {
			n, ok = launches["*"]
		}
		if ok {
			r.Launches = &n
		}
		e.run(r)
		data.Runs = append(data.Runs, r)
	}
	if cc.explicit {
		for _, t := range cc.tools {
			if !slices.ContainsFunc(runs, func(r Run) bool { return r.Tool == t }) {
				e.add(result.Error, t+"/"+MetricRun, nil, fmt.Sprintf("%s: no %s run was read, but sanitizer.tools (%s) lists it", t, t, cc.KeyWhere("tools")))
				e.rows = append(e.rows, scoredRow{Row: result.Row{Status: result.Fail, Cells: []string{t, "missing", "-", "-", "-", "no run"}}})
			}
		}
	}
	for i, s := range cc.supp {
		data.Suppressions = append(data.Suppressions, SuppressionData{Line: s.Line, Tool: s.Tool, Kind: s.Kind,
			Kernel: s.Kernel, At: s.At, Reason: s.Reason, Matched: e.used[i]})
		if e.used[i] == 0 && len(runs) > 0 {
			e.findings = append(e.findings, result.Finding{
				Severity: result.Warning, File: cc.FileName(), Line: s.Line, Metric: MetricSuppression, Value: result.Num(0),
				Message: fmt.Sprintf("suppression %s matched nothing; remove it (%s)", cc.Where(s.Line), describeSuppression(s.Suppression)),
			})
		}
	}
	if err := g.SetData(data); err != nil {
		return g, err
	}
	if len(runs) == 0 {
		e.findings = append(e.findings, result.Finding{Severity: result.Notice,
			Message: "no compute-sanitizer run to judge: give the gate sanitizer logs, or a command to run under compute-sanitizer"})
		g.Summary = "no sanitizer runs"
	} else {
		g.Summary = e.summary(runs)
	}
	if e.findings != nil {
		g.Findings = e.findings
	}
	g.Table = e.table()
	g.Decide(len(runs) > 0)
	return g, nil
}

type evaluation struct {
	cc       compiled
	findings []result.Finding
	rows     []scoredRow
	used     []int
}

type scoredRow struct {
	result.Row
	count int
}

func (e *evaluation) add(sev result.Severity, metric string, value *float64, msg string) {
	e.findings = append(e.findings, result.Finding{Severity: sev, Metric: metric, Value: value, Message: msg})
}

func label(r Run) string {
	l := cmp.Or(r.Tool, "compute-sanitizer (tool unknown)")
	if r.Input != "" {
		l += " (" + r.Input + ")"
	}
	return l
}

func (e *evaluation) run(r Run) {
	tool := cmp.Or(r.Tool, "unknown")
	lbl := label(r)
	for _, p := range r.Problems {
		e.add(result.Error, tool+"/"+MetricRun, nil, lbl+": "+p)
		e.rows = append(e.rows, scoredRow{Row: result.Row{Status: result.Fail, Cells: []string{tool, "problem", "-", "-", "-", msgtext.Clip(p, 120)}}})
	}
	for _, n := range r.Notes {
		e.add(result.Warning, tool+"/"+MetricNote, nil, lbl+": "+n)
	}
	printedErr, printedWarn := 0, 0
	fault, after := brokenContext(r.Records)
	faultAt := -1 // the fault's finding
	var fold folded
	for i, rec := range r.Records {
		if rec.Severity == SeverityWarning {
			printedWarn += rec.Count
		} else {
			printedErr += rec.Count
		}
		n := len(e.findings)
		e.record(rec)
		judged := len(e.findings) > n && e.findings[n].Severity != result.Notice
		switch {
		case i == fault && judged:
			faultAt = n
		case faultAt >= 0 && after[i] && judged:
			fold.add(rec, e.findings[n].Severity)
			e.findings = e.findings[:n]
		}
	}
	if fold.api+fold.leaks > 0 {
		f := e.findings[faultAt]
		e.findings = slices.Insert(e.findings, faultAt+1, result.Finding{Severity: fold.sev, Kernel: f.Kernel, File: f.File, Line: f.Line,
			Metric: tool + "/" + MetricAfterFault, Value: result.Num(fold.api + fold.leaks), Message: fold.message(tool)})
	}
	// Errors past the print limit have no site: they cannot be located or suppressed.
	errU, warnU := r.NotPrinted, 0
	if r.Tool == ToolRacecheck {
		errU, warnU = max(0, r.Errors-printedErr), max(0, r.Warnings-printedWarn)
	}
	if errU > 0 {
		e.add(result.Error, tool+"/"+MetricNotPrinted, result.Num(errU), fmt.Sprintf(
			"%s: %d more errors were counted but not printed (the print limit): their sites are unknown, so they can be neither located nor suppressed; raise --print-limit", lbl, errU))
	}
	if warnU > 0 && e.cc.raceWarn != PolicyIgnore {
		e.add(policySeverity(e.cc.raceWarn), tool+"/"+MetricNotPrinted, result.Num(warnU), fmt.Sprintf(
			"%s: %d more warnings were counted but not printed (the print limit); raise --print-limit to see them", lbl, warnU))
	}
	switch {
	case r.Launches != nil && *r.Launches == 0:
		e.add(result.Error, tool+"/"+MetricLaunch, result.Num(0), lbl+": no kernel was launched: a clean sanitizer run proves nothing")
	case r.Launches == nil && !r.LaunchSeen && len(r.Problems) == 0:
		e.add(result.Warning, tool+"/"+MetricLaunch, nil, lbl+": could not confirm that a kernel was launched (compute-sanitizer does not report launches and no launch count was given); a run that launched nothing passes without checking anything")
	}
	if len(r.Records) == 0 && len(r.Problems) == 0 {
		e.rows = append(e.rows, scoredRow{Row: result.Row{Status: result.Pass, Cells: []string{tool, "clean", "-", "-", "0", "-"}}})
	}
}

// policySeverity maps a policy word to a finding severity.
func policySeverity(p string) result.Severity {
	if p == PolicyWarning {
		return result.Warning
	}
	return result.Error
}

func (e *evaluation) record(rec Record) {
	sev, policy, key := result.Error, "", ""
	if rec.Severity == SeverityWarning {
		sev = result.Warning
	}
	switch {
	case rec.Kind == KindLeak:
		policy, key = e.cc.leaks, "leaks"
	case rec.Kind == KindAPIError:
		policy, key = e.cc.apiErrors, "api_errors"
	case rec.Tool == ToolRacecheck && rec.Severity == SeverityWarning:
		policy, key = e.cc.raceWarn, "racecheck_warnings"
	}
	note := ""
	if policy != "" {
		if policy != PolicyIgnore {
			sev = policySeverity(policy)
		}
		if def := map[string]string{"leaks": PolicyError, "api_errors": PolicyError, "racecheck_warnings": PolicyWarning}[key]; policy != def {
			note = fmt.Sprintf(" (sanitizer.%s: %s, %s)", key, policy, e.cc.KeyWhere(key))
		}
	}
	tool := cmp.Or(rec.Tool, "unknown")
	msg := describe(rec)
	cells := []string{tool, rec.Kind, cmp.Or(displayName(rec.Kernel), "-"), cmp.Or(locString(rec.File, rec.Line), "-"), countCell(rec), string(sev)}
	if rec.File == "" {
		cells[3] = "-"
	}
	f := result.Finding{Severity: sev, Kernel: displayName(rec.Kernel), File: rec.File, Line: rec.Line,
		Metric: tool + "/" + rec.Kind, Value: result.Num(rec.Count), Message: msg + note}
	for i, s := range e.cc.supp {
		if s.matches(rec) {
			e.used[i] += rec.Count
			f.Severity = result.Notice
			f.Message = fmt.Sprintf("suppressed by %s (%s): %s", e.cc.Where(s.Line), s.Reason, msg)
			e.findings = append(e.findings, f)
			cells[5] = "suppressed (" + e.cc.Where(s.Line) + ")"
			e.rows = append(e.rows, scoredRow{Row: result.Row{Status: result.Skip, Cells: cells}, count: rec.Count})
			return
		}
	}
	if rec.Kind == KindLeak && rec.HeldBy != "" {
		// Not the program's leak: the framework's allocator still held the block when the
		// process ended (a Python process frees tensors' memory with its CUDA context, not
		// before), so no leak policy can be right about it; an access outside it is still
		// memcheck's error.
		f.Severity = result.Notice
		f.Message = fmt.Sprintf("%s, held by %s's allocator when the process ended: not judged (a Python harness frees its tensors' memory only with the CUDA context)", msg, rec.HeldBy)
		e.findings = append(e.findings, f)
		cells[5] = "held by " + rec.HeldBy + " (not judged)"
		e.rows = append(e.rows, scoredRow{Row: result.Row{Status: result.Skip, Cells: cells}, count: rec.Count})
		return
	}
	if policy == PolicyIgnore {
		cells[5] = "ignored (sanitizer." + key + ")"
		e.rows = append(e.rows, scoredRow{Row: result.Row{Status: result.Skip, Cells: cells}, count: rec.Count})
		return
	}
	e.findings = append(e.findings, f)
	status := result.Fail
	if sev != result.Error {
		status = result.Pass
	}
	e.rows = append(e.rows, scoredRow{Row: result.Row{Status: status, Cells: cells}, count: rec.Count})
}

func countCell(r Record) string {
	s := strconv.Itoa(r.Count)
	if r.Hazards > 0 {
		s += fmt.Sprintf(" (%d hazards)", r.Hazards)
	}
	return s
}

// describe writes a record as one sentence: "memcheck: out-of-bounds __global__ write of
// size 4 bytes in oob_write(float *, int) at bugs.cu:10, thread (0,0,0) block (1,0,0); 100
// times".
func describe(r Record) string {
	var b strings.Builder
	b.WriteString(cmp.Or(r.Tool, "compute-sanitizer"))
	b.WriteString(": ")
	b.WriteString(r.Kind)
	switch r.Kind {
	case KindOutOfBounds, KindMisaligned, KindInvalidAddress, KindUninitializedRead:
		if r.Access != "" {
			b.WriteString(" " + r.Access)
		}
	case KindRace, KindRaceRAW, KindRaceWAR, KindRaceWAW:
		if r.Access != "" {
			b.WriteString(" between " + r.Access)
		}
	case KindLeak:
		if r.Access != "" {
			b.WriteString(": " + r.Access + ", never freed")
		}
		if l := libraryNamed(r.Library); l != nil {
			fmt.Fprintf(&b, " (%s's memory for a handle or plan the program created: call %s on it before the process ends)", l.Name, l.Free)
		}
	case KindAPIError, KindUnusedMemory:
		if r.Access != "" {
			b.WriteString(": " + r.Access)
		}
	default:
		if r.Access != "" {
			b.WriteString(" (" + r.Access + ")")
		}
	}
	if r.Function != "" {
		b.WriteString(" in " + r.Function)
	}
	if r.File != "" && !strings.HasPrefix(r.Kind, "race") {
		b.WriteString(" at " + locString(r.File, r.Line))
	}
	switch {
	case r.Thread != "" && r.Block != "":
		b.WriteString(", thread " + r.Thread + " block " + r.Block)
	case r.Block != "":
		b.WriteString(", block " + r.Block)
	}
	switch {
	case r.Hazards > 0 && r.Count > 1:
		fmt.Fprintf(&b, "; %d hazards in %d reports", r.Hazards, r.Count)
	case r.Hazards > 0:
		fmt.Fprintf(&b, "; %d hazards", r.Hazards)
	case r.Count == 1:
		b.WriteString("; once")
	default:
		fmt.Fprintf(&b, "; %d times", r.Count)
	}
	return b.String()
}

func describeSuppression(s Suppression) string {
	var parts []string
	for _, kv := range [][2]string{{"tool", s.Tool}, {"kind", s.Kind}, {"kernel", s.Kernel}, {"at", s.At}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+strconv.Quote(kv[1]))
		}
	}
	return strings.Join(parts, ", ")
}

func (e *evaluation) table() *result.Table {
	rows := slices.Clone(e.rows)
	slices.SortStableFunc(rows, func(a, b scoredRow) int {
		return cmp.Or(cmp.Compare(a.Status.Rank(), b.Status.Rank()), cmp.Compare(b.count, a.count))
	})
	out := make([]result.Row, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Row)
	}
	return &result.Table{Columns: []string{"tool", "kind", "kernel", "at", "count", "severity"}, Rows: out}
}

func (e *evaluation) summary(runs []Run) string {
	var parts []string
	for _, r := range runs {
		s := cmp.Or(r.Tool, "unknown tool") + ": "
		switch {
		case len(r.Problems) > 0:
			s += "incomplete (" + numtext.Count(len(r.Problems), "problem") + ")"
			if r.TimedOut {
				s += ", hung"
			}
		case r.Errors == 0 && r.Warnings == 0:
			s += "clean"
		default:
			s += numtext.Count(r.Errors, "error")
			if r.Warnings > 0 {
				s += ", " + numtext.Count(r.Warnings, "warning")
			}
			s += fmt.Sprintf(" at %s", numtext.Count(len(r.Records), "site"))
			if r.NotPrinted > 0 {
				s += fmt.Sprintf(" (%d not printed)", r.NotPrinted)
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
