package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/explain"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// explainGates attaches an explanation (package explain) to every error or warning
// finding of the ptxas, sass and speedup gates that names a kernel, from both sides'
// ptxas records and SASS kept by the static gates, the runner's GPU, and the launch's
// block size (Nsight Compute's, else the harness's). Nothing is read or computed unless a
// finding asks: it returns how many explanations it built.
func (p *pipeline) explainGates(ctx context.Context, gates []result.Gate) int {
	built := 0
	for gi := range gates {
		g := &gates[gi]
		for fi := range g.Findings {
			f := &g.Findings[fi]
			if f.Kernel == "" || f.Severity != result.Error && f.Severity != result.Warning {
				continue
			}
			var in explain.Input
			var ok bool
			switch g.Name {
			case ptxas.Name, sass.Name:
				in, ok = p.explainBuild(ctx, gates, *f)
			case speedup.Name:
				in, ok = p.explainSlowdown(ctx, gates, *f)
			}
			if !ok {
				continue
			}
			e := explain.Build(in)
			f.Explain = &e
			built++
		}
	}
	return built
}

// explainBuild is the input for a ptxas or sass finding, which names a function as ptxas
// or cuobjdump printed it and its arch.
func (p *pipeline) explainBuild(ctx context.Context, gates []result.Gate, f result.Finding) (explain.Input, bool) {
	head := p.findRecord(sideHead, func(k *ptxas.Kernel) bool {
		n := kernelname.Parse(k.Name)
		return (n.Short == f.Kernel || n.Mangled == f.Kernel) && (f.Arch == "" || k.Arch == f.Arch)
	})
	if head == nil {
		return explain.Input{}, false
	}
	in, ok := p.explainInput(ctx, gates, head, p.harnessTarget(head.Name))
	if !ok {
		return in, false
	}
	in.Headline = explain.Headline(f.Metric, in.Base.Record, in.Head.Record)
	return in, true
}

// explainSlowdown is the input for a speedup finding of a slower kernel, which names a
// harness's kernel ("gemm_wmma"): of its target's functions on the runner's GPU arch, the one
// head's profile of that kernel launched, else the first whose SASS changed where several
// match.
func (p *pipeline) explainSlowdown(ctx context.Context, gates []result.Gate, f result.Finding) (explain.Input, bool) {
	if f.Metric != speedup.MetricSlowdown || f.Value == nil || *f.Value <= 1 {
		return explain.Input{}, false
	}
	globs, t := p.harnessGlobs(f.Kernel)
	var matched []*ptxas.Kernel
	for i := range p.records[sideHead] {
		k := &p.records[sideHead][i]
		if p.runsHere(k.Arch) && matchesAny(kernelname.Parse(k.Name), globs) {
			matched = append(matched, k)
		}
	}
	if len(matched) == 0 {
		return explain.Input{}, false
	}
	all := fmt.Sprintf("%d functions matching %s", len(matched), strings.Join(globs, ", "))
	head, which := matched[0], "the first of "+all
	if k := p.profiledFunction(f.Kernel, matched); k != nil {
		head, which = k, fmt.Sprintf("the one the harness's %s ran in its profile, of %s", f.Kernel, all)
	} else if i := slices.IndexFunc(matched, p.sassChangedOf); i >= 0 {
		head, which = matched[i], "the first with changed SASS of "+all
	}
	in, ok := p.explainInput(ctx, gates, head, t)
	if !ok {
		return in, false
	}
	baseName := p.baseName(head, t)
	in.Base.Profile = p.profileOf(sideBase, f.Kernel, baseName.Identity())
	in.Head.Profile = p.profileOf(sideHead, f.Kernel, kernelname.Parse(head.Name).Identity())
	in.Kind = explain.Slower
	in.Headline = fmt.Sprintf("%.1f%% slower (%s, %s", 100*(*f.Value-1), kernelname.Parse(head.Name).Short, head.Arch)
	if len(matched) > 1 {
		in.Headline += ", " + which
	}
	if baseName.Identity() != kernelname.Parse(head.Name).Identity() {
		in.Headline += "; " + explain.RenamedHeadline(baseName)
	}
	in.Headline += ")"
	return in, true
}

// explainInput gathers both sides of head's record: base's record of the same function
// (baseName: itself, or the one it was renamed from) and arch, both SASS functions, the
// GPU and the launch's block size.
func (p *pipeline) explainInput(ctx context.Context, gates []result.Gate, head *ptxas.Kernel, t *config.Target) (explain.Input, bool) {
	id := kernelname.Parse(head.Name).Identity()
	baseID := p.baseName(head, t).Identity()
	base := p.findRecord(sideBase, func(k *ptxas.Kernel) bool {
		return k.Arch == head.Arch && kernelname.Parse(k.Name).Identity() == baseID
	})
	in := explain.Input{
		Base: explain.Side{Record: base, SASS: p.findSASS(sideBase, baseID, head.Arch)},
		Head: explain.Side{Record: head, SASS: p.findSASS(sideHead, id, head.Arch)},
	}
	if in.Base.Record == nil && in.Base.SASS == nil {
		return in, false // nothing to compare with
	}
	// Occupancy is the runner's GPU's where the arch runs on it, else the arch's own.
	in.GPU = head.Arch
	if p.gpu != nil && p.runsHere(head.Arch) {
		in.GPU = p.gpu.ComputeCap
	}
	in.BlockSize, in.DynamicSmem, in.BlockSizeFrom = p.launchOf(ctx, gates, head.Name, t)
	return in, true
}

// baseName is head's function as base names it, by package explain's one rule
// (explain.Pair) among the functions of the target's globs on head's arch: itself where
// base has a function of its identity on its arch; else the one it was renamed from, where
// that leaves no choice (llm.c's layernorm_backward_kernel8 became
// layernorm_backward_kernel9 in the commit that slowed it), never a guess.
func (p *pipeline) baseName(head *ptxas.Kernel, t *config.Target) kernelname.Name {
	own := kernelname.Parse(head.Name)
	if t == nil || p.hasFunction(sideBase, own.Identity(), head.Arch) {
		return own
	}
	var fs [2][]explain.Function
	for _, side := range []int{sideBase, sideHead} {
		for _, n := range p.functionsOf(side, head.Arch, t.Functions) {
			fs[side] = append(fs[side], explain.Function{Name: n, Arch: head.Arch})
		}
	}
	if b, renamed, _ := explain.Pair(fs[sideBase], fs[sideHead]).Base(own, head.Arch); renamed {
		return b
	}
	return own
}

// functionsOf is a side's functions on arch whose names match globs, from its ptxas records
// and SASS dumps, each identity once.
func (p *pipeline) functionsOf(side int, arch string, globs []string) []kernelname.Name {
	var out []kernelname.Name
	add := func(n kernelname.Name) {
		if matchesAny(n, globs) && !slices.ContainsFunc(out, func(o kernelname.Name) bool { return o.Identity() == n.Identity() }) {
			out = append(out, n)
		}
	}
	for _, k := range p.records[side] {
		if k.Arch == arch {
			add(kernelname.Parse(k.Name))
		}
	}
	for _, b := range p.builds {
		if d := b.dump[side]; d != nil {
			for i := range d.Functions {
				if fn := &d.Functions[i]; fn.Arch == arch {
					add(fn.Name)
				}
			}
		}
	}
	return out
}

// hasFunction reports whether a side has a ptxas record or a SASS function of that
// identity and arch.
func (p *pipeline) hasFunction(side int, id, arch string) bool {
	if p.findRecord(side, func(k *ptxas.Kernel) bool {
		return k.Arch == arch && kernelname.Parse(k.Name).Identity() == id
	}) != nil {
		return true
	}
	for _, b := range p.builds {
		if d := b.dump[side]; d != nil && slices.ContainsFunc(d.Functions, func(fn sass.Function) bool {
			return fn.Arch == arch && fn.Name.Identity() == id
		}) {
			return true
		}
	}
	return false
}

// findRecord is the first of a side's ptxas records that ok accepts.
func (p *pipeline) findRecord(side int, ok func(*ptxas.Kernel) bool) *ptxas.Kernel {
	for i := range p.records[side] {
		if ok(&p.records[side][i]) {
			return &p.records[side][i]
		}
	}
	return nil
}

// findSASS is a side's SASS function of that identity and arch, in any build's dump, as
// the sass gate's data records it: the record `kernel-gate explain` reads back from a
// saved result, so that both explain alike.
func (p *pipeline) findSASS(side int, id, arch string) *sass.FunctionData {
	for _, b := range p.builds {
		d := b.dump[side]
		if d == nil {
			continue
		}
		for i := range d.Functions {
			if fn := &d.Functions[i]; fn.Arch == arch && fn.Name.Identity() == id {
				fd := fn.Data()
				return &fd
			}
		}
	}
	return nil
}

// sassChangedOf reports whether a head record's function has SASS unlike base's.
func (p *pipeline) sassChangedOf(k *ptxas.Kernel) bool {
	id := kernelname.Parse(k.Name).Identity()
	b, h := p.findSASS(sideBase, id, k.Arch), p.findSASS(sideHead, id, k.Arch)
	return b != nil && h != nil && b.Digest != h.Digest
}

// runsHere reports whether an arch's SASS runs on the runner's GPU (any arch without one).
func (p *pipeline) runsHere(arch string) bool {
	return p.gpu == nil || gpuinfo.RunnableOn([]string{arch}, p.gpu.Arch())
}

// harnessTarget is the first target whose functions match a function's name (nil: none).
func (p *pipeline) harnessTarget(mangled string) *config.Target {
	n := kernelname.Parse(mangled)
	for i, t := range p.targets {
		if matchesAny(n, t.Functions) {
			return &p.targets[i]
		}
	}
	return nil
}

// launchOf is the block size (and dynamic shared memory) a function launched with, and
// where it was read: Nsight Compute's launch (the ncu gate's data, or head's profile for
// the explanation), else the harness's
// bench/v1 file of its target (check.json); 0 when neither says.
func (p *pipeline) launchOf(ctx context.Context, gates []result.Gate, mangled string, t *config.Target) (block, dyn int, from string) {
	if i := slices.IndexFunc(gates, func(g result.Gate) bool { return g.Name == ncu.Name }); i >= 0 {
		var d struct {
			Kernels []ncu.KernelData `json:"kernels"`
		}
		if json.Unmarshal(gates[i].Data, &d) == nil {
			for _, k := range d.Kernels {
				if n := blockThreads(k.BlockSize); k.Name == mangled && n > 0 {
					return n, 0, "ncu"
				}
			}
		}
	}
	id := kernelname.Parse(mangled).Identity()
	for k, rep := range p.profiles {
		for _, l := range rep.Launches {
			if n := blockThreads(l.BlockSize); k.side == sideHead && n > 0 && l.Name.Identity() == id {
				return n, 0, "ncu"
			}
		}
	}
	if t == nil {
		return 0, 0, ""
	}
	raw, err := input.ReadFile(ctx, p.x.path(t.Name+"/check.json"), input.JSON)
	if err != nil {
		return 0, 0, ""
	}
	bf, err := benchfile.Read(bytes.NewReader(raw))
	if err != nil {
		return 0, 0, ""
	}
	for _, r := range bf.Results {
		if r.BlockSize != nil && slices.Contains(t.Kernels, r.Kernel) {
			if r.DynamicSmem != nil {
				dyn = *r.DynamicSmem
			}
			return *r.BlockSize, dyn, "harness"
		}
	}
	return 0, 0, ""
}

// blockThreads is the threads of ncu's "(128, 1, 1)" block size; 0 when unreadable.
func blockThreads(s string) int {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return 0
	}
	n := 1
	for _, part := range strings.Split(s[1:len(s)-1], ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || v < 1 {
			return 0
		}
		n *= v
	}
	return n
}
