package sass

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
const Name = "sass"

// Metric names, as they appear in findings.
const (
	// MetricRequire: a required pattern matched no instruction; Value is 0.
	MetricRequire = "sass_require"
	// MetricForbid: a forbidden pattern matched instructions; Value is their count.
	MetricForbid = "sass_forbid"
	// MetricMatch: a rule's glob matched no function; Value is 0.
	MetricMatch = "sass_match"
	// MetricIncomplete: a forbid rule could not be judged on a function because the dump
	// does not show all its instructions (grep-filtered, or none at all).
	MetricIncomplete = "sass_incomplete"
)

// Data is the gate's machine-readable record (result.Gate.Data).
type Data struct {
	Format    string         `json:"format,omitempty"`
	Functions []FunctionData `json:"functions"`
	Rules     []RuleData     `json:"rules,omitempty"`
}

// FunctionData is one function of the dump.
type FunctionData struct {
	Name      string `json:"name"`
	Demangled string `json:"demangled"`
	Arch      string `json:"arch"`
	// Entry is null when the dump does not say whether the function is a kernel.
	Entry        *bool `json:"entry"`
	Instructions int   `json:"instructions"`
	// Matches counts, per configured pattern that applies to the function, the
	// instructions it matches.
	Matches map[string]int `json:"matches"`
	// Digest is Function.Digest, the one the pipeline's "unchanged SASS" check compares:
	// the baseline store keeps it, so that a later run can tell identical code from
	// changed code without the dump.
	Digest string `json:"digest,omitempty"`
	// Registers is Function.Registers: what nvdisasm of CUDA 12 and older states (0: not
	// stated), for comparison with ptxas's count of the same build.
	Registers int `json:"registers,omitempty"`
	// Mix is Function.Mix, the instructions per class, so that an explanation can be
	// built from two saved results (kernel-gate explain BASE.json HEAD.json) as from the
	// dumps: 16 counts at most, where one per opcode would be hundreds. It is nil where
	// the dump shows only part of the function, and in results written before it was
	// kept; ReadData checks it.
	Mix Mix `json:"mix,omitempty"`
	// ClockReads is Function.ClockReads, kept with Mix (absent: none, or no Mix).
	ClockReads int `json:"clock_reads,omitempty"`
}

// RuleData says how many functions a kernels rule matched.
type RuleData struct {
	Line      int      `json:"line,omitempty"`
	Match     string   `json:"match"`
	Arch      []string `json:"arch,omitempty"`
	Functions int      `json:"functions"`
}

// maxListed is how many opcodes or names a message lists.
const maxListed = 4

// Evaluate applies cfg to the dump and returns the "sass" gate. It fails only on an
// invalid config or a nil dump; rule violations are findings.
func Evaluate(d *Dump, cfg Config) (result.Gate, error) {
	g := result.Gate{Name: Name, Findings: []result.Finding{}}
	if d == nil {
		return g, errors.New("sass gate: no SASS dump to evaluate")
	}
	cc, err := cfg.compiled()
	if err != nil {
		return g, fmt.Errorf("sass gate: invalid config: %w", err)
	}
	data := Data{Format: string(d.Format), Functions: make([]FunctionData, 0, len(d.Functions))}

	if cc.empty() {
		for _, f := range d.Functions {
			data.Functions = append(data.Functions, functionData(f, map[string]int{}))
		}
		g.Findings = append(g.Findings, result.Finding{
			Severity: result.Notice,
			File:     cc.file,
			Message: fmt.Sprintf("no SASS rules are configured (sass.require, sass.forbid or sass.kernels in %s); read %d functions, checked none",
				cc.file, len(d.Functions)),
		})
		g.Summary = "no SASS rules configured"
		g.Decide(false)
		return g, g.SetData(data)
	}

	e := evaluation{cc: cc, matched: make([]int, len(cc.rules)), otherArchs: make([][]string, len(cc.rules))}
	for _, f := range d.Functions {
		e.function(f, &data)
	}
	e.unmatched(d)

	for i, r := range cc.rules {
		data.Rules = append(data.Rules, RuleData{Line: r.Line, Match: r.Match, Arch: r.archs, Functions: e.matched[i]})
	}
	if err := g.SetData(data); err != nil {
		return g, err
	}
	g.Findings = e.findings
	if e.checks == 0 && len(e.findings) == 0 {
		g.Findings = append(g.Findings, result.Finding{
			Severity: result.Warning,
			File:     cc.file,
			Message: fmt.Sprintf("no function to check: sass.require applies to kernels (sass.forbid to every function), and all %d functions in the SASS are device functions",
				len(d.Functions)),
		})
	}
	g.Table = e.table()
	g.Summary = e.summary(len(d.Functions))
	g.Decide(e.checks > 0)
	return g, nil
}

// evaluation accumulates the findings and table rows of one Evaluate.
type evaluation struct {
	cc         compiled
	findings   []result.Finding
	rows       []result.Row
	checks     int
	failed     int
	matched    []int      // per rule: functions matched (glob and arch)
	otherArchs [][]string // per rule: archs of functions the glob matched but the arch filter did not
	unmatchedN int
}

func (e *evaluation) function(f Function, data *Data) {
	var applied []check
	for _, c := range e.cc.top {
		// A device function's code runs inside the kernels that call it, so what the
		// config forbids is forbidden there too; what it requires, a kernel must have.
		if !f.EntryKnown || f.Entry || c.kind == kindForbid {
			applied = append(applied, c)
		}
	}
	for i, r := range e.cc.rules {
		if !f.Name.Matches(r.glob) {
			continue
		}
		if !r.matchesArch(f.Arch) {
			if !slices.Contains(e.otherArchs[i], f.Arch) {
				e.otherArchs[i] = append(e.otherArchs[i], f.Arch)
			}
			continue
		}
		e.matched[i]++
		applied = append(applied, r.checks...)
	}
	counts := map[string]int{}
	cells := make([]string, 3+len(e.cc.columns))
	cells[0], cells[1], cells[2] = f.Name.Short, cmp.Or(f.Arch, "?"), strconv.Itoa(f.Instructions)
	for i := range e.cc.columns {
		cells[3+i] = "-"
	}
	status := result.Pass
	for _, c := range applied {
		n, ok := counts[c.pat.src]
		if !ok {
			n = f.Count(c.pat)
			counts[c.pat.src] = n
		}
		e.checks++
		cells[3+c.column] = strconv.Itoa(n)
		switch {
		case c.kind == kindForbid && n == 0 && (f.Filtered || f.Instructions == 0):
			// Absence proves nothing where the dump does not show every instruction.
			cells[3+c.column] = "?"
			e.unjudged(f, c)
			status = result.Fail
		case c.kind == kindRequire && n == 0:
			e.fail(f, c, 0, fmt.Sprintf("required instruction %s not found in %s: 0 of %d instructions match; %s",
				c.pat.src, describe(f), f.Instructions, c.source()))
			status = result.Fail
		case c.kind == kindForbid && n > 0:
			e.fail(f, c, n, fmt.Sprintf("forbidden instruction %s found in %s: %d of %d instructions match (%s); %s",
				c.pat.src, describe(f), n, f.Instructions, topOpcodes(f, c.pat), c.source()))
			status = result.Fail
		}
	}
	data.Functions = append(data.Functions, functionData(f, counts))
	if len(applied) > 0 {
		e.rows = append(e.rows, result.Row{Status: status, Cells: cells})
	}
}

func (e *evaluation) fail(f Function, c check, value int, msg string) {
	e.failed++
	fd := result.Finding{
		Severity: result.Error,
		Kernel:   f.Name.Short,
		Arch:     f.Arch,
		File:     e.cc.file,
		Line:     c.line,
		Metric:   MetricRequire,
		Value:    result.Num(value),
		Message:  msg,
	}
	if c.kind == kindForbid {
		fd.Metric = MetricForbid
		fd.Limit = result.Num(0)
	}
	e.findings = append(e.findings, fd)
}

// unjudged fails a forbid check that the dump cannot decide for f.
func (e *evaluation) unjudged(f Function, c check) {
	e.failed++
	why := fmt.Sprintf("%s has no instructions in the dump", describe(f))
	if f.Filtered {
		why = fmt.Sprintf("the dump of %s is filtered (no cuobjdump end line or .headerflags, no nvdisasm .size): it shows %d of its instructions, not all",
			describe(f), f.Instructions)
	}
	e.findings = append(e.findings, result.Finding{
		Severity: result.Error,
		Kernel:   f.Name.Short,
		Arch:     f.Arch,
		File:     e.cc.file,
		Line:     c.line,
		Metric:   MetricIncomplete,
		Message: fmt.Sprintf("forbidden instruction %s cannot be ruled out: %s; dump the whole binary (cuobjdump --dump-sass, nvdisasm) to judge %s",
			c.pat.src, why, c.source()),
	})
}

// unmatched reports the rules whose glob matched no function of their archs.
func (e *evaluation) unmatched(d *Dump) {
	noArch := 0
	for _, f := range d.Functions {
		if f.Arch == "" {
			noArch++
		}
	}
	for i, r := range e.cc.rules {
		if e.matched[i] > 0 {
			continue
		}
		e.unmatchedN++
		label := r.Match
		var msg string
		if len(r.archs) == 0 {
			msg = fmt.Sprintf("rule %s (%s) matched no kernel in the SASS: a renamed kernel must not pass silently; the SASS has %s",
				e.cc.where(r.Line), label, listNames(d))
		} else {
			archs := strings.Join(r.archs, ", ")
			label += ", arch " + archs
			msg = fmt.Sprintf("rule %s (%s) matched no kernel of arch %s in the SASS: a renamed kernel must not pass silently",
				e.cc.where(r.Line), label, archs)
			if other := e.otherArchs[i]; len(other) > 0 {
				msg += fmt.Sprintf("; %s matches kernels of %s only", r.Match, joinArchs(other))
			} else {
				msg += "; the SASS has " + listNames(d)
			}
			if noArch > 0 {
				msg += fmt.Sprintf("; %d functions have no arch because the dump names none (a grep-filtered dump?): keep its \"code for sm_XX\" line or give the arch", noArch)
			}
		}
		if r.Reason != "" {
			msg += " (reason: " + r.Reason + ")"
		}
		e.findings = append(e.findings, result.Finding{
			Severity: result.Error,
			Arch:     strings.Join(r.archs, ","),
			File:     e.cc.file,
			Line:     r.Line,
			Metric:   MetricMatch,
			Value:    result.Num(0),
			Message:  msg,
		})
		cells := make([]string, 3+len(e.cc.columns))
		cells[0] = fmt.Sprintf("%s (rule %s): no match", r.Match, e.cc.where(r.Line))
		cells[1] = cmp.Or(strings.Join(r.archs, ","), "any")
		for j := 2; j < len(cells); j++ {
			cells[j] = "-"
		}
		e.rows = append(e.rows, result.Row{Status: result.Fail, Cells: cells})
	}
}

func (e *evaluation) table() *result.Table {
	cols := append([]string{"kernel", "arch", "instructions"}, e.cc.columns...)
	rows := slices.Clone(e.rows)
	slices.SortStableFunc(rows, func(a, b result.Row) int { return cmp.Compare(a.Status.Rank(), b.Status.Rank()) })
	if rows == nil {
		rows = []result.Row{}
	}
	return &result.Table{Columns: cols, Rows: rows}
}

func (e *evaluation) summary(functions int) string {
	var parts []string
	if e.failed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d checks failed", e.failed, e.checks))
	} else {
		parts = append(parts, fmt.Sprintf("%d checks passed", e.checks))
	}
	parts[0] += fmt.Sprintf(" on %d functions", functions)
	if e.unmatchedN == 1 {
		parts = append(parts, "1 rule matched no kernel")
	} else if e.unmatchedN > 1 {
		parts = append(parts, fmt.Sprintf("%d rules matched no kernel", e.unmatchedN))
	}
	return strings.Join(parts, "; ")
}

// source names where a check comes from, with its reason.
func (c check) source() string {
	if c.reason == "" {
		return c.from
	}
	return c.from + " (reason: " + c.reason + ")"
}

func describe(f Function) string {
	return fmt.Sprintf("%s (%s)", f.Name.Short, cmp.Or(f.Arch, "arch unknown"))
}

// topOpcodes lists the opcodes p matches in f, most frequent first: "LDL.64 x8, STL x2".
func topOpcodes(f Function, p Pattern) string {
	type oc struct {
		op string
		n  int
	}
	var ops []oc
	for op, n := range f.Opcodes {
		if p.Match(op) {
			ops = append(ops, oc{op, n})
		}
	}
	slices.SortFunc(ops, func(a, b oc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.op, b.op)) })
	var parts []string
	for i, o := range ops {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(ops)-maxListed))
			break
		}
		parts = append(parts, fmt.Sprintf("%s x%d", o.op, o.n))
	}
	return strings.Join(parts, ", ")
}

// listNames names the first few distinct functions of the dump.
func listNames(d *Dump) string {
	var names []string
	for _, f := range d.Functions {
		if !slices.Contains(names, f.Name.Short) {
			names = append(names, f.Name.Short)
		}
	}
	if len(names) == 0 {
		return "no functions"
	}
	s := strings.Join(names[:min(len(names), maxListed)], ", ")
	if len(names) > maxListed {
		s += fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return s
}

func joinArchs(archs []string) string {
	out := make([]string, len(archs))
	for i, a := range archs {
		out[i] = cmp.Or(a, "unknown arch")
	}
	return strings.Join(out, ", ")
}

func functionData(f Function, matches map[string]int) FunctionData {
	fd := f.Data()
	fd.Matches = matches
	return fd
}

// Data is f as the gate's data records it (FunctionData), without pattern matches, which
// only Evaluate counts.
func (f Function) Data() FunctionData {
	fd := FunctionData{
		Name:         f.Name.Mangled,
		Demangled:    f.Name.Demangled,
		Arch:         f.Arch,
		Instructions: f.Instructions,
		Digest:       f.Digest,
		Registers:    f.Registers,
		Mix:          f.Mix(),
	}
	if fd.Mix != nil {
		fd.ClockReads = f.ClockReads
	}
	if f.EntryKnown {
		entry := f.Entry
		fd.Entry = &entry
	}
	return fd
}
