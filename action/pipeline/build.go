package pipeline

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// build is one nvcc build (targets with the same sources and flags share it) on both sides.
type build struct {
	name    string // the first target's name
	sources []string
	flags   []string
	targets []string
	// per side: sideBase, sideHead
	ok   [2]bool
	bin  [2]string // the harness binary (absolute)
	log  [2]string // relative to the artifacts
	sass [2]string
	dump [2]*sass.Dump
}

const (
	sideBase = 0
	sideHead = 1
)

func sideName(i int) string {
	if i == sideHead {
		return "head"
	}
	return "base"
}

// planBuilds groups the targets by sources and flags.
func (p *pipeline) planBuilds() {
	for _, t := range p.targets {
		flags := append(slices.Clone(p.set.Flags), t.Flags...)
		i := slices.IndexFunc(p.builds, func(b *build) bool {
			return slices.Equal(b.sources, t.Sources) && slices.Equal(b.flags, flags)
		})
		if i < 0 {
			p.builds = append(p.builds, &build{name: t.Name, sources: t.Sources, flags: flags})
			i = len(p.builds) - 1
		}
		p.builds[i].targets = append(p.builds[i].targets, t.Name)
	}
}

func (p *pipeline) buildOf(target string) *build {
	for _, b := range p.builds {
		if slices.Contains(b.targets, target) {
			return b
		}
	}
	return nil
}

// nvcc is the compiler's path: the option, else the config's.
func (p *pipeline) nvcc() string {
	if p.o.Tools.NVCC != "" {
		return p.o.Tools.NVCC
	}
	return p.set.NVCC
}

// nvccArgs is one build's command line.
func (p *pipeline) nvccArgs(b *build, out string) []string {
	args := []string{p.nvcc(), "-lineinfo", "-Xptxas", "-v"}
	args = append(args, b.flags...)
	for _, a := range p.set.Arch {
		num := strings.TrimPrefix(a, "sm_")
		args = append(args, "-gencode", "arch=compute_"+num+",code=sm_"+num)
	}
	args = append(args, "-o", out)
	return append(args, b.sources...)
}

const nvccVersionFile = "nvcc-version.txt"

// buildAll asks nvcc its version, then builds base and head side by side (nvcc is
// single-threaded), then dumps each build's SASS.
func (p *pipeline) buildAll(ctx context.Context) error {
	if _, err := p.x.run(ctx, proc{id: "nvcc-version", argv: []string{p.nvcc(), "--version"}, timeout: versionTimeout, log: nvccVersionFile}); err != nil {
		return err
	}
	sides := []int{sideHead}
	if p.hasBase() {
		sides = []int{sideBase, sideHead}
	}
	errs := make(chan error, len(sides)*len(p.builds))
	for _, side := range sides {
		for _, b := range p.builds {
			go func() { errs <- p.buildOne(ctx, b, side) }()
		}
	}
	var first error
	for range len(sides) * len(p.builds) {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	for _, side := range sides {
		for _, b := range p.builds {
			if err := p.dumpSASS(ctx, b, side); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *pipeline) buildOne(ctx context.Context, b *build, side int) error {
	dir := p.headDir
	if side == sideBase {
		dir = p.baseDir
	}
	rel := sideName(side) + "/" + b.name
	bin := p.x.path(rel + "/harness")
	s, err := p.x.run(ctx, proc{id: "build/" + rel, argv: p.nvccArgs(b, bin), dir: dir, timeout: p.set.Timeout, log: rel + "/build.log"})
	if err != nil {
		return err
	}
	b.bin[side], b.log[side], b.ok[side] = bin, rel+"/build.log", s.Why == ""
	if side == sideHead && s.Dir != "" {
		p.builtIn = s.Dir
	}
	if s.Why != "" {
		p.progress("%s build of %s failed: %s", sideName(side), b.name, s.Why)
	} else {
		p.progress("%s build of %s: %.1fs", sideName(side), b.name, s.Seconds)
	}
	return nil
}

func (p *pipeline) dumpSASS(ctx context.Context, b *build, side int) error {
	if !b.ok[side] {
		return nil
	}
	rel := sideName(side) + "/" + b.name + "/sass.txt"
	s, err := p.x.run(ctx, proc{id: "sass/" + sideName(side) + "/" + b.name, argv: []string{p.o.Tools.Cuobjdump, "--dump-sass", b.bin[side]}, timeout: sassStepTimeout, log: rel})
	if err != nil {
		return err
	}
	b.sass[side] = rel
	if s.Why != "" {
		return nil // the SASS gate reads the dump and fails on cuobjdump's error
	}
	if d, err := readSASS(p.x.path(rel)); err == nil {
		b.dump[side] = d
	}
	return nil
}

// readSASS parses a dump kept in the artifacts (or its .gz, as recordings keep them).
func readSASS(path string) (*sass.Dump, error) {
	var d *sass.Dump
	err := input.Files([]string{input.ExistingOrGz(path)}, nil, func(r io.Reader, name string) error {
		var err error
		d, err = sass.Parse(r, sass.ParseOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	return d, err
}

// staticGates judges head's builds: ptxas (with base's builds as the baseline) and the
// toolkit from the build logs, sass from the dumps.
func (p *pipeline) staticGates(ctx context.Context) ([]result.Gate, error) {
	var in PtxasInputs
	files := []string{p.x.path(nvccVersionFile)}
	var sassFiles []string
	for _, b := range p.builds {
		files = append(files, input.ExistingOrGz(p.x.path(b.log[sideHead])))
		if b.sass[sideHead] != "" {
			sassFiles = append(sassFiles, input.ExistingOrGz(p.x.path(b.sass[sideHead])))
		}
	}
	if err := input.Files(files, nil, in.Read); err != nil {
		return nil, err
	}
	var base *ptxas.Baseline
	if p.hasBase() {
		var bl PtxasInputs
		for _, b := range p.builds {
			if b.ok[sideBase] {
				if err := input.Files([]string{input.ExistingOrGz(p.x.path(b.log[sideBase]))}, nil, bl.Read); err != nil {
					return nil, err
				}
			}
		}
		if len(bl.Log.Kernels) > 0 {
			base = ptxas.NewBaseline("base "+abrun.ShortRev(p.decided.BaseRev), bl.Log.Kernels)
		}
	}
	var stored *result.Finding
	if base == nil {
		base, stored = p.storedPtxasBaseline(ctx)
	}
	gates, err := PtxasGates(ctx, &in, p.cfg, base, "", "")
	if err != nil {
		return nil, err
	}
	addStoredBaselineFinding(gates, stored)
	if len(sassFiles) == 0 {
		return append(gates, failedGate("sass", "build", "no build to dump",
			"no head build succeeded, so there is no SASS to read: see the ptxas gate for nvcc's errors")), nil
	}
	sg, err := SASSGate(sassFiles, nil, p.cfg, "")
	if err != nil {
		return append(gates, failedGate("sass", "dump", "the SASS dump could not be read",
			fmt.Sprintf("cuobjdump's SASS could not be read: %v", err))), nil
	}
	return append(gates, sg), nil
}

// failedGate is a gate failed by one error finding.
func failedGate(name, metric, summary, message string) result.Gate {
	g := result.Gate{Name: name, Summary: summary, Findings: []result.Finding{{Severity: result.Error, Metric: metric, Message: message}}}
	g.Decide(true)
	return g
}
