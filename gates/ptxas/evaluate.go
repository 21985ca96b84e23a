package ptxas

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Name is the gate's name in results.
const Name = "ptxas"

// Metric names, as they appear in findings.
const (
	MetricRegisters        = "registers"
	MetricSpillStores      = "spill_stores"
	MetricSpillLoads       = "spill_loads"
	MetricStackFrame       = "stack_frame"
	MetricLmem             = "lmem"
	MetricSmem             = "smem"
	MetricRegisterIncrease = "register_increase"
)

// Data is the gate's machine-readable output (data.kernels and friends).
type Data struct {
	Kernels     []Kernel     `json:"kernels"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	Inputs      []Input      `json:"inputs"`
	// Baseline names the baseline result the deltas are against.
	Baseline string `json:"baseline,omitempty"`
}

// Baseline is the previous result's records, looked up by kernel × arch. A kernel is known
// by its kernelname identity (the demangled signature without per-file hashes), so that a
// kernel in an anonymous namespace built from another checkout's path is the same kernel.
type Baseline struct {
	Name    string
	records map[string]Kernel
}

// NewBaseline indexes a previous run's kernel records.
func NewBaseline(name string, kernels []Kernel) *Baseline {
	b := &Baseline{Name: name, records: map[string]Kernel{}}
	for _, k := range kernels {
		b.records[baselineKey(k)] = k
	}
	return b
}

func baselineKey(k Kernel) string {
	return k.Source + "\x00" + kernelname.Parse(k.Name).Identity() + "\x00" + k.Arch
}

func (b *Baseline) find(k Kernel) (Kernel, bool) {
	if b == nil {
		return Kernel{}, false
	}
	old, ok := b.records[baselineKey(k)]
	return old, ok
}

// Evaluate applies the limits to every record and returns the "ptxas" gate.
func Evaluate(log *Log, cfg Config, base *Baseline) (result.Gate, error) {
	// A rule with an empty glob matches no kernel; Evaluate has never refused a config built
	// in Go for one, and config.Parse refuses it in a file.
	cc, _ := configpos.Resolved(cfg, Config.compile)
	g := result.Gate{Name: Name, Findings: []result.Finding{}}
	for _, d := range log.Diagnostics {
		if d.Severity == "notice" && d.Kind != "unknown-item" {
			continue // repeats a record's properties
		}
		g.Findings = append(g.Findings, diagnosticFinding(d))
	}
	var rows []result.Ranked
	missing := map[string]int{} // metric with a limit that the input does not report → records
	noBaseline := 0             // records with max_register_increase but no baseline to compare
	seen := map[string]bool{}
	for _, k := range log.Kernels {
		name := kernelname.Parse(k.Name)
		lim := cc.resolve(name, k.Arch)
		old, hasOld := base.find(k)
		seen[baselineKey(k)] = true
		// A kernel that had a stack frame in the baseline keeps it without a config entry.
		if l := lim[MetricStackFrame]; l.from == "default" && hasOld && old.StackFrame != nil && *old.StackFrame > 0 {
			lim[MetricStackFrame] = limit{*old.StackFrame, "baseline " + base.Name}
		}
		before := len(g.Findings)
		check := func(metric string, v, was *int64) {
			l, ok := lim[metric]
			if !ok {
				return
			}
			if v == nil {
				missing[metric]++
				return
			}
			if *v <= l.value {
				return
			}
			f := result.Finding{
				Severity: result.Error, Kernel: name.Short, Arch: k.Arch, File: k.File, Metric: metric,
				Value: result.Num(*v), Limit: result.Num(l.value),
			}
			delta := ""
			if was != nil {
				f.Baseline, f.Delta = result.Num(*was), result.Num(*v-*was)
				delta = fmt.Sprintf(", %+d vs baseline %d", *v-*was, *was)
			}
			f.Message = fmt.Sprintf("%s %s %d > %d (limit from %s%s)%s", kind(k), metricText(metric), *v, l.value, l.from, delta, provenance(k, metric))
			g.Findings = append(g.Findings, f)
		}
		oldv := func(f func(Kernel) *int64) *int64 {
			if !hasOld {
				return nil
			}
			return f(old)
		}
		check(MetricRegisters, k.Registers, oldv(func(k Kernel) *int64 { return k.Registers }))
		check(MetricSpillStores, k.SpillStores, oldv(func(k Kernel) *int64 { return k.SpillStores }))
		check(MetricSpillLoads, k.SpillLoads, oldv(func(k Kernel) *int64 { return k.SpillLoads }))
		check(MetricStackFrame, k.StackFrame, oldv(func(k Kernel) *int64 { return k.StackFrame }))
		check(MetricLmem, k.Lmem, oldv(func(k Kernel) *int64 { return k.Lmem }))
		check(MetricSmem, k.Smem, oldv(func(k Kernel) *int64 { return k.Smem }))
		if l, ok := lim[MetricRegisterIncrease]; ok {
			switch {
			case base == nil:
				noBaseline++
			case !hasOld:
				g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, Kernel: name.Short, Arch: k.Arch, File: k.File,
					Metric: MetricRegisterIncrease, Message: fmt.Sprintf("%s is new: not in baseline %s", name.Short, base.Name)})
			case k.Registers != nil && old.Registers != nil && *k.Registers-*old.Registers > l.value:
				inc := *k.Registers - *old.Registers
				g.Findings = append(g.Findings, result.Finding{
					Severity: result.Error, Kernel: name.Short, Arch: k.Arch, File: k.File, Metric: MetricRegisterIncrease,
					Value: result.Num(inc), Limit: result.Num(l.value), Baseline: result.Num(*old.Registers), Delta: result.Num(inc),
					Message: fmt.Sprintf("%s registers grew by %d (%d → %d), more than %d (limit from %s)",
						kind(k), inc, *old.Registers, *k.Registers, l.value, l.from),
				})
			}
		}
		fail := false
		for _, f := range g.Findings[before:] {
			fail = fail || f.Severity == result.Error
		}
		st := result.Pass
		if fail {
			st = result.Fail
		}
		regs := int64(-1)
		if k.Registers != nil {
			regs = *k.Registers
		}
		rows = append(rows, result.Ranked{Fail: fail, Worst: float64(regs), Row: result.Row{Status: st, Cells: []string{
			name.Short, k.Arch,
			cell(k.Registers, oldv(func(k Kernel) *int64 { return k.Registers })),
			cell(k.SpillStores, oldv(func(k Kernel) *int64 { return k.SpillStores })),
			cell(k.SpillLoads, oldv(func(k Kernel) *int64 { return k.SpillLoads })),
			cell(k.StackFrame, oldv(func(k Kernel) *int64 { return k.StackFrame })),
			cell(k.Smem, oldv(func(k Kernel) *int64 { return k.Smem })),
			cell(k.Lmem, oldv(func(k Kernel) *int64 { return k.Lmem })),
		}}})
	}
	for _, m := range slices.Sorted(maps.Keys(missing)) {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Warning, Metric: m,
			Message: fmt.Sprintf("max_%s is set but %d record(s) do not report %s, so it was not checked for them%s", m, missing[m], metricText(m), whyMissing(m))})
	}
	if noBaseline > 0 {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, Metric: MetricRegisterIncrease,
			Message: fmt.Sprintf("max_register_increase is set but there is no baseline (--baseline, or base in kernel-gate run): register growth of %d record(s) was not checked", noBaseline)})
	}
	if base != nil {
		for key, k := range base.records {
			if !seen[key] && k.Source == sourceOf(log) {
				g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, Kernel: kernelname.Parse(k.Name).Short, Arch: k.Arch,
					Message: fmt.Sprintf("%s (%s) is in baseline %s but not in this build", kernelname.Parse(k.Name).Short, k.Arch, base.Name)})
			}
		}
	}
	// Worst first: failing rows, then by registers.
	g.Table = &result.Table{Columns: []string{"kernel", "arch", "regs", "spill st", "spill ld", "stack", "smem", "lmem"}, Rows: result.WorstFirst(rows)}
	data := Data{Kernels: log.Kernels, Diagnostics: log.Diagnostics, Inputs: log.Inputs}
	if data.Kernels == nil {
		data.Kernels = []Kernel{}
	}
	if base != nil {
		data.Baseline = base.Name
	}
	if err := g.SetData(data); err != nil {
		return g, err
	}
	g.Decide(len(log.Kernels) > 0 || g.Count(result.Error) > 0)
	errs := g.Count(result.Error)
	g.Summary = fmt.Sprintf("%d kernel records from %d input(s); %d error(s), %d warning(s)", len(log.Kernels), len(log.Inputs), errs, g.Count(result.Warning))
	return g, nil
}

// sourceOf is the record source of a log when all its records share one ("" otherwise).
func sourceOf(l *Log) string {
	s := ""
	for i, k := range l.Kernels {
		if i > 0 && k.Source != s {
			return ""
		}
		s = k.Source
	}
	return s
}

func kind(k Kernel) string {
	if k.Entry != nil && !*k.Entry {
		return "device function " + kernelname.Parse(k.Name).Short + " (" + k.Arch + ")"
	}
	return kernelname.Parse(k.Name).Short + " (" + k.Arch + ")"
}

// provenance says where a record's figure came from when it is not ptxas's own words: a
// cuobjdump record (read from a binary, not from the build's log), and spills counted in
// the SASS.
func provenance(k Kernel, metric string) string {
	var parts []string
	if k.Source == SourceCuobjdump {
		parts = append(parts, "from cuobjdump --dump-resource-usage of "+k.Input)
	}
	if k.SpillsFrom == SpillsFromSASS && (metric == MetricSpillStores || metric == MetricSpillLoads) {
		parts = append(parts, "counted as the bytes of its STL/LDL instructions in the SASS, since cuobjdump prints no spill figure: a local array's loads and stores count too")
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// whyMissing says which input reports a metric that a record lacks.
func whyMissing(m string) string {
	switch m {
	case MetricSpillStores, MetricSpillLoads:
		return " (cuobjdump --dump-resource-usage does not print spills; ptxas -v does)"
	case MetricLmem:
		return " (ptxas since CUDA 9 prints local memory as the stack frame: gate it with max_stack_frame; cuobjdump prints LOCAL)"
	}
	return ""
}

func metricText(m string) string {
	switch m {
	case MetricSpillStores:
		return "spill stores (bytes)"
	case MetricSpillLoads:
		return "spill loads (bytes)"
	case MetricStackFrame:
		return "stack frame (bytes)"
	case MetricLmem:
		return "local memory (bytes)"
	case MetricSmem:
		return "shared memory (bytes)"
	}
	return m
}

// cell renders a value with its change against the baseline: "153 (+3)"; "-" when absent.
func cell(v, was *int64) string {
	if v == nil {
		return "-"
	}
	s := strconv.FormatInt(*v, 10)
	if was != nil && *was != *v {
		s += fmt.Sprintf(" (%+d)", *v-*was)
	}
	return s
}

func diagnosticFinding(d Diagnostic) result.Finding {
	sev := result.Severity(d.Severity)
	f := result.Finding{Severity: sev, File: d.File, Line: d.Line, Column: d.Column, Metric: d.Kind, Message: d.Text}
	if d.Kernel != "" {
		f.Kernel = kernelname.Parse(d.Kernel).Short
	}
	if f.File == "" {
		f.Message = fmt.Sprintf("%s (%s:%d)", d.Text, d.Input, d.InputLn)
	}
	return f
}
