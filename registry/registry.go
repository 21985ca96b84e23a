// Package registry is the one table of kernel-gate's gates: for each, its name in results,
// its section of kernel-gate.yml, the command that runs it alone, the step of
// `kernel-gate run` that judges it, the part of a baseline entry its data fills and what the
// report shows of it. Every other package takes a gate's name from its package's Name
// constant or from here, never from a literal.
//
// # The table
//
//	gate         section      command          step    entry part   report adds
//	ptxas        ptxas        ptxas            build   ptxas        -
//	toolkit      cuda         ptxas            build   -            -
//	sass         sass         sass             build   sass         -
//	sanitizer    sanitizer    sanitize         target  sanitizer    -
//	correctness  correctness  check            target  correctness  -
//	speedup      speedup      speedup compare  target  timings      speed chart
//	ncu          ncu          ncu              target  -            -
//	guard        guard        guard            change  -            -
//
// Every gate's report shows its verdict, summary and findings; "report adds" is what more.
// The toolkit gate fills no part of an entry, but the version it found is the entry's
// fingerprint's CUDA.
//
// Builtin returns it; TestTable checks the doc against it.
//
// # Adding a gate
//
// A gate is its package under gates/ (which exports Name, its section type with Resolve,
// and its judgement) plus one line in builtin (and its row above, which TestTable holds to
// the line). A gate whose step is StepResult is wired by the registry alone: config decodes
// and resolves its section (NewSection, beside the built-in sections, refusing unknown keys
// the same way), `kernel-gate run` and its replay call its Judge after the target steps with
// the gates judged so far, Options.Gates and the action's gates input can name it, the
// report renders it like any gate, and a baseline entry leaves it out. TestAddingAGate
// registers a toy gate with With and runs it through config, a replay, every report format
// and a baseline entry, changing no other file.
//
// The built-in gates predate StepResult: their judgements take different inputs (ptxas
// logs, SASS dumps, harness files, sanitizer logs, ncu reports) that the pipeline's steps
// make, so the pipeline adapts each itself (pipeline/gates.go for the gates judged from
// files, pipeline/targets.go for the order of the GPU steps, which TestGPUStepsAreTheRegistrys
// holds to this table), and config holds their sections as fields of its own, under the keys
// listed here (TestSectionsAreTheRegistrys). A baseline entry has a typed field per part, so
// a gate that is to fill one also adds its part to baseline's entryParts; Entry reads it back
// (baseline.PartOf).
//
// # Where it sits
//
// The layers are internal < gates < explain < baseline < registry < config < pipeline <
// report < action < cli < cmd (TestLayers). The registry sits above baseline, whose parts it
// lists, and below config, which decodes the sections of the gates it lists. It is modelled
// on actionlint's rule list (one registration list that the linter iterates), as a table of
// plain values rather than an interface: most columns are data, and the one behaviour a new
// gate brings, Judge, is a field.
package registry

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/gates/toolkit"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Step is where `kernel-gate run` judges a gate.
type Step string

// The steps, in the order a run takes them.
const (
	// StepBuild gates are judged from the builds: the ptxas logs, nvcc's banner, the SASS.
	StepBuild Step = "build"
	// StepTarget gates are GPU steps of each target, merged over the targets.
	StepTarget Step = "target"
	// StepResult gates are judged after the target steps by their Judge, from the config
	// and the gates judged before them.
	StepResult Step = "result"
	// StepChange gates judge the change's files, beside the run (the action runs them).
	StepChange Step = "change"
)

// Section is a gate's section of kernel-gate.yml: config decodes it from YAML, then
// Resolve tells it its file, checks it and keeps what its gate uses. A pointer to the
// gate's Config type implements it.
type Section interface {
	Resolve(file string) error
}

// Input is what a StepResult gate's Judge is given.
type Input struct {
	// Section is the gate's section, resolved (nil when the gate has none).
	Section Section
	// Targets are the names of the run's targets, in the config's order.
	Targets []string
	// Gates are the gates judged before this one, in report order.
	Gates []result.Gate
}

// Gate is one row of the table.
type Gate struct {
	// Name is the gate's name in results, reports and the gates input: the gate package's
	// Name constant.
	Name string
	// Section is the key of its settings in kernel-gate.yml ("" when it has none).
	Section string
	// Command is the kernel-gate command that runs it alone on files it is given ("" when
	// none does).
	Command string
	// Step is where `kernel-gate run` judges it.
	Step Step
	// Report says what the report shows of it besides its verdict, summary and findings
	// ("" when nothing more).
	Report string
	// NewSection returns an empty section for config to decode into. Nil for the built-in
	// gates, whose sections are fields of config.Config, and for a gate without one.
	NewSection func() Section
	// Judge judges a StepResult gate; nil for every other step.
	Judge func(ctx context.Context, in Input) (result.Gate, error)
}

// Entry names the part of a baseline entry the gate's data fills ("" when none).
func (g Gate) Entry() string {
	p, _ := baseline.PartOf(g.Name)
	return p
}

// Registry is a list of gates in report order. The zero Registry is Builtin.
type Registry struct {
	gates []Gate
}

// builtin is the table of the gates kernel-gate ships, in report order.
func builtin() []Gate {
	return []Gate{
		{Name: ptxas.Name, Section: "ptxas", Command: "ptxas", Step: StepBuild},
		{Name: toolkit.Name, Section: "cuda", Command: "ptxas", Step: StepBuild},
		{Name: sass.Name, Section: "sass", Command: "sass", Step: StepBuild},
		{Name: sanitizer.Name, Section: "sanitizer", Command: "sanitize", Step: StepTarget},
		{Name: correctness.Name, Section: "correctness", Command: "check", Step: StepTarget},
		{Name: speedup.Name, Section: "speedup", Command: "speedup compare", Step: StepTarget, Report: "speed chart"},
		{Name: ncu.Name, Section: "ncu", Command: "ncu", Step: StepTarget},
		{Name: guard.Name, Section: "guard", Command: "guard", Step: StepChange},
	}
}

// Builtin is the gates kernel-gate ships.
func Builtin() Registry { return Registry{gates: builtin()} }

// With returns r with more gates after its own (a test's, say; a gate kernel-gate ships is a
// line of builtin). Each must pass Check, and only a StepResult gate can be added: the other
// steps' gates are wired by the pipeline.
func (r Registry) With(gates ...Gate) (Registry, error) {
	out := Registry{gates: r.Gates()}
	for _, g := range gates {
		if g.Step != StepResult {
			return r, fmt.Errorf("registry: gate %q: step %q: a gate added to the registry is judged at step %q (the pipeline wires the others)", g.Name, g.Step, StepResult)
		}
		if err := out.Check(g); err != nil {
			return r, err
		}
		out.gates = append(out.gates, g)
	}
	return out, nil
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// Check says what is wrong with g as a gate of r besides its own: a name of lower-case
// letters, digits and '-', one of the steps, a Judge exactly when the step is StepResult,
// NewSection exactly when a StepResult gate has a section, and a name and section no other
// gate of r has.
func (r Registry) Check(g Gate) error {
	if err := r.check(g); err != nil {
		return fmt.Errorf("registry: gate %q: %w", g.Name, err)
	}
	return nil
}

func (r Registry) check(g Gate) error {
	result := g.Step == StepResult
	switch {
	case !namePattern.MatchString(g.Name):
		return fmt.Errorf("a name is lower-case letters, digits and '-', starting with a letter")
	case !slices.Contains([]Step{StepBuild, StepTarget, StepResult, StepChange}, g.Step):
		return fmt.Errorf("no step %q", g.Step)
	case result != (g.Judge != nil):
		return fmt.Errorf("a %q gate, and only one, has a Judge", StepResult)
	case result && g.Section != "" && g.NewSection == nil:
		return fmt.Errorf("section %q needs NewSection", g.Section)
	case (!result || g.Section == "") && g.NewSection != nil:
		return fmt.Errorf("NewSection is for the section of a %q gate", StepResult)
	}
	for _, o := range r.gates {
		if o.Name == g.Name {
			return fmt.Errorf("the name is taken")
		}
		if g.Section != "" && o.Section == g.Section {
			return fmt.Errorf("section %q is gate %q's", g.Section, o.Name)
		}
	}
	return nil
}

// Gates are the registry's gates, in report order.
func (r Registry) Gates() []Gate {
	if r.gates == nil {
		return builtin()
	}
	return slices.Clone(r.gates)
}

// Names are the gates' names, in report order.
func (r Registry) Names() []string {
	var out []string
	for _, g := range r.Gates() {
		out = append(out, g.Name)
	}
	return out
}

// Lookup finds a gate by name.
func (r Registry) Lookup(name string) (Gate, bool) {
	for _, g := range r.Gates() {
		if g.Name == name {
			return g, true
		}
	}
	return Gate{}, false
}

// SectionOf is the key of the gate's section ("" when it has none, or no such gate).
func (r Registry) SectionOf(gate string) string {
	g, _ := r.Lookup(gate)
	return g.Section
}

// Step is the registry's gates judged at step s, in report order.
func (r Registry) Step(s Step) []Gate {
	var out []Gate
	for _, g := range r.Gates() {
		if g.Step == s {
			out = append(out, g)
		}
	}
	return out
}

// CheckNames refuses a name that is no gate's; what names where the names came from
// ("input gates").
func (r Registry) CheckNames(what string, names []string) error {
	for _, n := range names {
		if _, ok := r.Lookup(n); !ok {
			return fmt.Errorf("%s: no gate %q (gates: %s)", what, n, strings.Join(r.Names(), ", "))
		}
	}
	return nil
}
