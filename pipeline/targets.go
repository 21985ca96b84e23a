package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/registry"
)

// targetOutcome is one target's part of the GPU gates.
type targetOutcome struct {
	name string
	// stopped says why the target's later GPU steps do not run ("" while they do).
	stopped string
	// unchanged is set when its SASS equals base's on every arch.
	unchanged bool
	parts     map[string]*targetPart
}

// targetPart is one gate's outcome for one target: a gate, or why it was skipped.
type targetPart struct {
	gate    *result.Gate
	skipped string
}

// skip records why a gate's step did not run for the target, unless its part is already
// decided.
func (o *targetOutcome) skip(why, gate string) {
	if o.parts[gate] == nil {
		o.parts[gate] = &targetPart{skipped: why}
	}
}

// target is what a GPU step is given: the target and its build.
type target struct {
	config.Target
	b *build
}

// gpuStep is one of a target's GPU gates, run in this order. Every step is skipped once
// the target has stopped; the rest of its rules are here.
type gpuStep struct {
	gate string
	// enabled is false when the config asks nothing of the gate at all (no part, no row).
	enabled func() bool
	// check says, before the step runs, why it is skipped, or returns the gate it already
	// failed; both empty: it runs.
	check func(t target) (skip string, failed *result.Gate)
	// onUnchangedSASS runs it also when the target's SASS is base's (without --all).
	onUnchangedSASS bool
	// atOnce lets the targets run it at the same time (earlyStepsAtOnce): it judges the
	// target's own processes, whatever else runs on the GPU beside them. The steps that
	// may are the first ones.
	atOnce bool
	// ofHeadAlone marks a step that judges head by itself, not against base: when base's
	// side came from the base cache, unchanged SASS does not skip it, since base's SASS is
	// then the entry's word, and whoever wrote the entry (on a pull request, an earlier
	// push of it) could have made it head's to switch the check off. A step that compares
	// with base keeps the skip: the entry stands in for base there anyway.
	// Why: docs/threat-model.md, threat-model T19.
	ofHeadAlone bool
	run         func(ctx context.Context, t target) (result.Gate, error)
	// stops names the step when its failure stops the target's later steps (an unsafe or
	// wrong kernel is not timed: that saves the runner's GPU time and keeps each defect's
	// report to its own gate); "" when it stops nothing.
	stops string
}

func (p *pipeline) gpuSteps() []gpuStep {
	wanted := func(gate string) func() bool { return func() bool { return p.wants(gate) } }
	runs := func(target) (string, *result.Gate) { return "", nil }
	return []gpuStep{
		{gate: sanitizer.Name, enabled: wanted(sanitizer.Name), check: runs, run: p.sanitize, ofHeadAlone: true, stops: "the sanitizer", atOnce: true},
		// The check is cheap and the harness's host code may have changed, so it runs also
		// for unchanged SASS.
		{gate: correctness.Name, enabled: wanted(correctness.Name), check: runs, run: p.check, onUnchangedSASS: true, stops: "the correctness check", atOnce: true},
		{gate: speedup.Name, enabled: wanted(speedup.Name), check: func(t target) (string, *result.Gate) {
			switch {
			case !p.hasBase():
				return "no base to compare with: " + p.decided.NoBase, nil
			case !t.b.ok[sideBase] && t.b.cmd != nil && t.b.cmd.sides[sideBase].failed != "":
				g := failedGate(speedup.Name, "build", "did not run", fmt.Sprintf("%s: head cannot be compared with base: %s", t.Name, strings.TrimPrefix(t.b.cmd.sides[sideBase].failed, t.Name+": ")))
				return "", &g
			case !t.b.ok[sideBase]:
				g := failedGate(speedup.Name, "build", "did not run", fmt.Sprintf("%s: base did not build, so head cannot be compared with it (log: %s)", t.Name, t.b.log[sideBase]))
				return "", &g
			}
			return "", nil
		}, run: p.benchExplained},
		{gate: ncu.Name, enabled: func() bool { return !p.cfg.NCU.Empty() && p.wants(ncu.Name) }, check: func(t target) (string, *result.Gate) {
			if p.targetNCU(t).Empty() {
				return "no ncu rule names its kernels", nil
			}
			return "", nil
		}, run: p.profile, ofHeadAlone: true},
	}
}

// resultGates judges the registry's StepResult gates, in its order, after the gates judged
// so far (before), and returns before with them.
func (p *pipeline) resultGates(ctx context.Context, before []result.Gate) ([]result.Gate, error) {
	gates := slices.Clone(before)
	for _, rg := range p.cfg.Registry().Step(registry.StepResult) {
		if !p.wants(rg.Name) {
			continue
		}
		in := registry.Input{Section: p.cfg.Section(rg.Name), Gates: slices.Clone(gates)}
		for _, t := range p.targets {
			in.Targets = append(in.Targets, t.Name)
		}
		g, err := rg.Judge(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("the %s gate: %w", rg.Name, err)
		}
		g.Name = rg.Name
		gates = append(gates, g)
	}
	return gates, nil
}

// targetGates runs every target's GPU steps, then merges each gate's per-target parts.
// Where the GPU holds them, the targets' sanitizers and checks run at once first
// (atonce.go); then each target's timing and profile, one target at a time.
func (p *pipeline) targetGates(ctx context.Context, static []result.Gate) ([]result.Gate, error) {
	steps := p.gpuSteps()
	runs := make([]*targetRun, len(p.targets))
	for i, t := range p.targets {
		runs[i] = &targetRun{t: target{Target: t, b: p.buildOf(t.Name)}, out: &targetOutcome{name: t.Name, parts: map[string]*targetPart{}}}
	}
	p.runs = runs
	defer func() { p.runs = nil }()
	early, late := splitSteps(steps)
	atOnce, err := p.earlyStepsAtOnce(ctx, runs, static, steps, early)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		err := p.group("target "+r.t.Name, func() error {
			if !atOnce {
				if !p.beginTarget(r, static, steps) {
					return nil
				}
				return p.runSteps(ctx, r, steps)
			}
			if r.begun && p.gpuLost != "" && r.out.stopped == "" {
				r.out.stopped = p.gpuLost
			}
			return p.runSteps(ctx, r, late)
		})
		if err != nil {
			return nil, err
		}
	}
	var gates []result.Gate
	outs := make([]*targetOutcome, len(runs))
	for i, r := range runs {
		outs[i] = r.out
	}
	for _, s := range steps {
		if !s.enabled() {
			continue
		}
		g, err := mergeTargetGates(s.gate, outs)
		if err != nil {
			return nil, err
		}
		gates = append(gates, g)
	}
	return gates, nil
}

// targetRun is one target's GPU steps as they go.
type targetRun struct {
	t   target
	out *targetOutcome
	// begun is set when beginTarget let its steps run.
	begun bool
	// afterGPUError says why only the sanitizer still runs: a harness target's first run
	// (its check) hit a GPU error.
	afterGPUError string
	// sass says how its SASS compares with base's (the progress line).
	sass string
	// profiledWith names the earlier target whose Nsight Compute run profiled this one's
	// kernels too (profileTogether): its ncu part is decided, its own run not needed.
	profiledWith string
}

// beginTarget decides whether a target's GPU steps run at all, filling the parts of those
// that do not; it reports whether any may run.
func (p *pipeline) beginTarget(r *targetRun, static []result.Gate, steps []gpuStep) bool {
	t, out := r.t, r.out
	if t.b.cmd != nil && t.b.cmd.checked != nil {
		// A harness target's check ran before the static gates (its first harness run):
		// what it found stands, whatever stops the target's other steps. A kernel that
		// crashed it is not timed or profiled, but compute-sanitizer still runs on it (on
		// the sanitizer's shapes): it is what says which line did it.
		out.parts[correctness.Name] = &targetPart{gate: t.b.cmd.checked}
		if why := gpuErrorIn(*t.b.cmd.checked); why != "" {
			r.afterGPUError = "a GPU error in the check run: " + why
		}
	}
	switch {
	case !t.b.ok[sideHead]:
		out.stopped = "head did not build (see the ptxas gate)"
	case p.gpuLost != "":
		out.stopped = p.gpuLost
	case p.gpuWhy != "":
		// No GPU: a failure, never a pass (the config asks for these gates).
		for _, s := range steps {
			gate := failedGate(s.gate, "gpu", "did not run", fmt.Sprintf("%s: no GPU to run on: %s", t.Name, p.gpuWhy))
			out.parts[s.gate] = &targetPart{gate: &gate}
		}
		return false
	}
	if out.stopped != "" {
		for _, s := range steps {
			out.skip(out.stopped, s.gate)
		}
		p.progress("%s: skipped: %s", t.Name, out.stopped)
		return false
	}
	if !p.o.KeepGoing && out.stopped == "" {
		out.stopped = cmp.Or(staticFailure(static, t.Functions, p.harnessTargetNames()), commandFailure(static, t))
	}
	changed, why := p.sassChanged(t.b, t.Functions)
	out.unchanged = !changed
	r.sass, r.begun = why, true
	p.progress("%s: %s", t.Name, why)
	return true
}

// runSteps runs a begun target's steps, in order, each unless the target stopped or the
// step's rules skip it.
func (p *pipeline) runSteps(ctx context.Context, r *targetRun, steps []gpuStep) error {
	t, out := r.t, r.out
	if !r.begun {
		return nil
	}
	for _, s := range steps {
		if !s.enabled() || s.gate == ncu.Name && r.profiledWith != "" {
			continue // a profile run with an earlier target's judged it (profileTogether)
		}
		skipped, failed, note := p.stepDecision(r, s)
		if failed != nil {
			out.parts[s.gate] = &targetPart{gate: failed}
			continue
		} else if skipped != "" {
			out.skip(skipped, s.gate)
			continue
		}
		if note != "" {
			p.progress("%s", note)
		}
		g, err := p.runStep(ctx, s, t)
		if err != nil {
			return err
		}
		out.parts[s.gate] = &targetPart{gate: &g}
		if s.stops != "" {
			p.stopOnFailure(out, g, s.stops)
		}
	}
	return nil
}

// stepDecision says whether a begun target's step runs now: why it is skipped, or the gate
// it already failed; both empty, it runs, and note (when set) says why it runs although its
// SASS is unchanged.
func (p *pipeline) stepDecision(r *targetRun, s gpuStep) (skipped string, failed *result.Gate, note string) {
	t, out := r.t, r.out
	switch {
	case out.stopped != "":
		return out.stopped, nil, ""
	case r.afterGPUError != "" && s.gate != sanitizer.Name:
		return r.afterGPUError, nil, ""
	}
	if skipped, failed := s.check(t); failed != nil || skipped != "" {
		return skipped, failed, ""
	}
	if out.unchanged && !s.onUnchangedSASS && !p.o.All {
		if !s.ofHeadAlone || !p.baseRestored() {
			return "unchanged SASS: skipped (" + r.sass + ")", nil, ""
		}
		return "", nil, fmt.Sprintf("%s: %s runs although its SASS is unchanged: base's SASS came from the base cache", t.Name, s.gate)
	}
	return "", nil, ""
}

// runStep runs one step. While the targets' early steps run at once (gpuSlots), a check
// holds one of the GPU's places while it runs; a sanitizer takes one per tool itself.
func (p *pipeline) runStep(ctx context.Context, s gpuStep, t target) (result.Gate, error) {
	if p.gpuSlots != nil && s.gate != sanitizer.Name {
		p.gpuSlots <- struct{}{}
		defer func() { <-p.gpuSlots }()
	}
	return s.run(ctx, t)
}

// stopOnFailure stops a target's later steps after a failed gate (unless --keep-going) or
// a GPU error.
func (p *pipeline) stopOnFailure(out *targetOutcome, g result.Gate, what string) {
	if g.Verdict == result.Fail && !p.o.KeepGoing && out.stopped == "" {
		out.stopped = what + " failed"
	}
	if why := gpuErrorIn(g); why != "" && out.stopped == "" {
		out.stopped = "a GPU error: " + why
	}
}

// staticFailure says which static gate failed for a kernel of the target ("" when none).
// A finding about no kernel that names a harness target (harness) is that target's alone
// (commandFailure).
func staticFailure(static []result.Gate, globs, harness []string) string {
	for _, g := range static {
		if g.Name != ptxas.Name && g.Name != sass.Name {
			continue
		}
		for _, f := range g.Findings {
			if f.Severity != result.Error || f.Kernel == "" && slices.ContainsFunc(harness, func(name string) bool { return strings.HasPrefix(f.Message, name+": ") }) {
				continue
			}
			if f.Kernel == "" || len(globs) == 0 || matchesAny(kernelname.Parse(f.Kernel), globs) {
				who := f.Kernel
				if who == "" {
					who = "the build"
				}
				return fmt.Sprintf("the %s gate failed for %s", g.Name, who)
			}
		}
	}
	return ""
}

func matchesAny(n kernelname.Name, globs []string) bool {
	for _, g := range globs {
		if n.Matches(kernelname.Glob(g)) {
			return true
		}
	}
	return false
}

// sassChanged compares the target's functions between base and head, per arch.
func (p *pipeline) sassChanged(b *build, globs []string) (bool, string) {
	if !p.hasBase() {
		return true, "no base: every step runs"
	}
	head, base := b.dump[sideHead], b.dump[sideBase]
	if head == nil || base == nil {
		return true, "a SASS dump is missing: every step runs"
	}
	if head.Format != base.Format {
		// nvdisasm prints a function differently from cuobjdump: its digest never matches.
		return true, fmt.Sprintf("base's SASS was dumped by %s and head's by %s, whose digests do not compare: every step runs", base.Format, head.Format)
	}
	// A kernel's SASS is its own code and that of the device functions it calls, which a
	// build with relocatable device code (-rdc, CMake's separable compilation) keeps as
	// functions of their own, called through a relocation, and of the kernels it may launch
	// (dynamic parallelism): a change there leaves the kernel's bytes as they were. Which
	// function calls or launches which is not in a dump, so every function no target's globs
	// name counts for every target.
	own := 0
	pick := func(d *sass.Dump, count bool) map[string]string {
		m := map[string]string{}
		for _, f := range d.Functions {
			mine := len(globs) == 0 || matchesAny(f.Name, globs)
			if mine || !p.claimed(f.Name) {
				m[f.Arch+" "+f.Name.Identity()] = f.Digest
			}
			if mine && count {
				own++
			}
		}
		return m
	}
	h, bs := pick(head, true), pick(base, false)
	if own == 0 {
		return true, fmt.Sprintf("run.targets functions %q match no function of the build: every step runs", globs)
	}
	var diff []string
	for k, d := range h {
		if bd, ok := bs[k]; !ok || bd != d {
			diff = append(diff, k)
		}
	}
	for k := range bs {
		if _, ok := h[k]; !ok {
			diff = append(diff, k)
		}
	}
	if len(diff) == 0 {
		why := fmt.Sprintf("the SASS of its %d function × arch pair(s) is byte-identical to base's", own)
		if others := len(h) - own; others > 0 {
			why += fmt.Sprintf(", and so is that of the %d that no target names (code its kernels may call or launch)", others)
		}
		return false, why
	}
	slices.Sort(diff)
	arch, name, _ := strings.Cut(diff[0], " ")
	return true, fmt.Sprintf("SASS changed in %d of %d function × arch pair(s), e.g. %s on %s", len(diff), len(h), name, arch)
}

// claimed reports whether a function is named by a target's functions globs (any target of
// the run, every shard's): one that no target names may be a device function that any
// target's kernels call.
func (p *pipeline) claimed(n kernelname.Name) bool {
	return slices.ContainsFunc(p.runTargets, func(t config.Target) bool { return len(t.Functions) > 0 && matchesAny(n, t.Functions) })
}

// targetConfig is the config as one target sees it: the correctness and speedup rules whose
// glob matches none of the target's kernels are left out, so that each target's gate does
// not warn about rules meant for another. A rule that matches no kernel of any target of
// the run (every shard's, so that a rule for another shard's target is not taken for
// nobody's) stays with the run's first target, which warns about it once.
func (p *pipeline) targetConfig(t config.Target) config.Config {
	cfg := p.cfg
	if len(t.Kernels) == 0 {
		return cfg
	}
	first := len(p.runTargets) > 0 && p.runTargets[0].Name == t.Name
	keep := func(match string) bool {
		g := kernelname.Glob(match)
		for _, k := range t.Kernels {
			if g.Match(k) {
				return true
			}
		}
		if !first {
			return false
		}
		for _, o := range p.runTargets {
			if len(o.Kernels) == 0 {
				return false
			}
			for _, k := range o.Kernels {
				if g.Match(k) {
					return false
				}
			}
		}
		return true // nobody's: the first target reports it
	}
	cfg.Correctness = cfg.Correctness.Only(func(r correctness.Rule) bool { return keep(r.Match) })
	cfg.Speedup.Config = cfg.Speedup.Only(func(r speedup.Rule) bool { return keep(r.Match) })
	return cfg
}

// targetNCU is the ncu config with the rules that match one of the target's functions in
// head's SASS.
func (p *pipeline) targetNCU(t target) ncu.Config {
	d := t.b.dump[sideHead]
	return p.cfg.NCU.Only(func(r ncu.Rule) bool {
		if d == nil {
			return true
		}
		for _, f := range d.Functions {
			if (len(t.Functions) == 0 || matchesAny(f.Name, t.Functions)) && f.Name.Matches(kernelname.Glob(r.Match)) {
				return true
			}
		}
		return false
	})
}
