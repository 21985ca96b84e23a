package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/kernel-gate/kernel-gate/action/config"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
)

// runOptions are `kernel-gate run`'s flags.
type runOptions struct {
	artifacts, replay, baseRef string
	noBase, all, keepGoing     bool
	targets                    string
	dir                        string
	cuobjdump, sanitizer, smi  string
	nvcc, ncu                  string
}

// Defaults of `kernel-gate run`.
const (
	defaultArtifacts = "kernel-gate-artifacts"
	smiStepTimeout   = 30 * time.Second
	sassStepTimeout  = 5 * time.Minute
	versionTimeout   = 30 * time.Second
)

func runRun(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var o runOptions
	fs := newFlagSet("run", e, &c)
	fs.StringVar(&o.artifacts, "artifacts", defaultArtifacts, "keep every log, dump, XML and harness file, and the journal of what ran, in `DIR` (replayable with --replay)")
	fs.StringVar(&o.replay, "replay", "", "run nothing: feed the recording in `DIR` (an --artifacts directory of an earlier run) through the gates")
	fs.StringVar(&o.baseRef, "base", "", "compare with the merge base of `REV` and HEAD (default: the config's bench.base_ref, else origin/main)")
	fs.BoolVar(&o.noBase, "no-base", false, "build head alone: no speedup gate, nothing skipped as unchanged")
	fs.BoolVar(&o.all, "all", false, "sanitize, time and profile every target, also where its SASS is unchanged")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "run a target's GPU steps even after one of its gates failed")
	fs.StringVar(&o.dir, "C", ".", "the repository to build and run, `DIR` (sources are relative to its top level)")
	fs.StringVar(&o.targets, "targets", "", "comma-separated `NAMES` of the config's targets to run (default: all)")
	fs.StringVar(&o.nvcc, "nvcc", "", "nvcc `PATH` (default: the config's run.nvcc, else nvcc)")
	fs.StringVar(&o.cuobjdump, "cuobjdump", "cuobjdump", "cuobjdump `PATH`")
	fs.StringVar(&o.sanitizer, "sanitizer", "compute-sanitizer", "compute-sanitizer `PATH`")
	fs.StringVar(&o.ncu, "ncu", "ncu", "Nsight Compute's ncu `PATH` (for the config's ncu rules)")
	fs.StringVar(&o.smi, "nvidia-smi", "nvidia-smi", "nvidia-smi `PATH` (asked, read only, for the GPU and its clocks)")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, `Usage: kernel-gate run [flags]

Runs every gate on the config's run.targets: builds head (and base, the merge base, in a
git worktree) with nvcc -lineinfo -Xptxas -v, then the PTXAS and SASS gates, and per
target the sanitizer (small shape), the correctness check and the speedup gate (head vs
base, interleaved). A target whose SASS is byte-identical to base's is not sanitized or
timed again. Progress goes to standard error; everything the run read is kept in
--artifacts, which --replay feeds through the same code without a GPU.

`)
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(rest) > 0 {
		return exitUsage, usagef("run takes no arguments (got %q): the config's run section says what to build", rest)
	}
	cfg, fmtr, err := setup(c)
	if err != nil {
		return exitUsage, err
	}
	res, err := runPipeline(ctx, cfg, o, e)
	if err != nil {
		return exitUsage, err
	}
	return emit(res, c, fmtr, e)
}

// pipeline is one `kernel-gate run`.
type pipeline struct {
	cfg     config.Config
	set     config.RunSettings
	o       runOptions
	e       env
	r       *runner
	start   time.Time
	gh      *githubactions.Action
	targets []config.Target
	builds  []*build
	gpu     *gpuinfo.Info
	gpuWhy  string // why the GPU steps cannot run ("" when they can)
	hasBase bool
	baseDir string
	headDir string
	// gpuLost is set when a GPU error left nvidia-smi unable to answer: no GPU step runs
	// after it.
	gpuLost string
	// gpuChecks counts the nvidia-smi checks after GPU errors (their step IDs).
	gpuChecks int
	// cleanupBaseFn removes the base worktree.
	cleanupBaseFn func()
}

// build is one nvcc build (targets with the same sources and flags share it) on both sides.
type build struct {
	name    string // the first target's name
	sources []string
	flags   []string
	targets []string
	// per side: 0 base, 1 head
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

func runPipeline(ctx context.Context, cfg config.Config, o runOptions, e env) (result.Result, error) {
	set, err := cfg.Run.Settings()
	if err != nil {
		return result.Result{}, usageError{err}
	}
	if len(set.Targets) == 0 {
		return result.Result{}, usagef("%s has no run.targets: kernel-gate run needs to know what to build (see kernel-gate.yml in the kernel-gate repository)", cfg.Path)
	}
	p := &pipeline{cfg: cfg, set: set, o: o, e: e, start: time.Now()}
	if e.getenv("GITHUB_ACTIONS") == "true" {
		p.gh = githubactions.New(githubactions.WithGetenv(e.getenv), githubactions.WithWriter(e.stderr))
	}
	if o.replay != "" {
		p.r, err = newReplayRunner(o.replay)
		if err == nil {
			// The recording decides what ran; the flags of this call cannot change it.
			p.o.all, p.o.keepGoing = p.r.j.All, p.r.j.KeepGoing
			p.o.targets = strings.Join(p.r.j.Targets, ",")
		}
	} else {
		p.r, err = newLiveRunner(o.artifacts, os.Environ())
	}
	if err != nil {
		return result.Result{}, err
	}
	if p.targets, err = selectTargets(set.Targets, p.o.targets); err != nil {
		return result.Result{}, err
	}
	if !p.r.replay {
		p.r.j.All, p.r.j.KeepGoing = o.all, o.keepGoing
		for _, t := range p.targets {
			p.r.j.Targets = append(p.r.j.Targets, t.Name)
		}
	}
	res, err := p.run(ctx)
	if err != nil {
		return result.Result{}, err
	}
	if o.replay != "" {
		res.Replay = replayLabel(o.replay)
	} else {
		if err := p.r.finish(time.Since(p.start), ownCPUSeconds()); err != nil {
			return result.Result{}, fmt.Errorf("writing the journal: %w", err)
		}
		if err := writeResultFile(p.r.path("result.json"), res); err != nil {
			return result.Result{}, err
		}
	}
	p.progress("done in %s: %s", time.Since(p.start).Round(time.Second), res.Verdict)
	return res, nil
}

// replayLabel is the result's replay note: the recording's RECORDED line when it has one.
func replayLabel(dir string) string {
	if raw, err := os.ReadFile(filepath.Join(dir, replayRecord)); err == nil {
		if line := strings.TrimSpace(string(raw)); line != "" {
			return "replay of " + dir + ": " + line
		}
	}
	return "replay of " + dir
}

func writeResultFile(path string, res result.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := result.Write(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func selectTargets(all []config.Target, names string) ([]config.Target, error) {
	if strings.TrimSpace(names) == "" {
		return all, nil
	}
	var out []config.Target
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		i := slices.IndexFunc(all, func(t config.Target) bool { return t.Name == n })
		if i < 0 {
			var known []string
			for _, t := range all {
				known = append(known, t.Name)
			}
			return nil, usagef("--targets: no target %q in the config (targets: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// progress writes one line to standard error with the time since the start.
func (p *pipeline) progress(format string, a ...any) {
	fmt.Fprintf(p.e.stderr, "kernel-gate run [%6.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, a...))
}

// group runs fn inside a folded log group under GitHub Actions (the title is escaped by
// go-githubactions: target names come from the repository, which a pull request controls).
func (p *pipeline) group(title string, fn func() error) error {
	if p.gh != nil {
		p.gh.Group(title)
		defer p.gh.EndGroup()
	}
	p.progress("%s", title)
	return fn()
}

func (p *pipeline) run(ctx context.Context) (result.Result, error) {
	var err error
	if err = p.group("GPU", func() error { return p.detectGPU(ctx) }); err != nil {
		return result.Result{}, err
	}
	if err = p.group("base", func() error { return p.resolveBase(ctx) }); err != nil {
		return result.Result{}, err
	}
	if p.baseDir != "" && !p.r.replay {
		defer p.cleanupBase()
	}
	p.planBuilds()
	if err = p.group("build", func() error { return p.buildAll(ctx) }); err != nil {
		return result.Result{}, err
	}
	var static []result.Gate
	if err = p.group("ptxas and sass gates", func() error {
		static, err = p.staticGates(ctx)
		return err
	}); err != nil {
		return result.Result{}, err
	}
	dyn, err := p.targetGates(ctx, static)
	if err != nil {
		return result.Result{}, err
	}
	return result.New(toolName(), append(static, dyn...)...), nil
}

// cleanupBase removes the base worktree, if one was checked out.
func (p *pipeline) cleanupBase() {
	if p.cleanupBaseFn != nil {
		p.cleanupBaseFn()
	}
}

// ---- the GPU ----

const gpuFile = "gpu.csv"

func (p *pipeline) detectGPU(ctx context.Context) error {
	s, err := p.r.exec(ctx, "gpu", append([]string{p.o.smi}, gpuinfo.QueryArgs()...), "", nil, smiStepTimeout, gpuFile)
	if err != nil {
		return err
	}
	if s.Why != "" {
		p.gpuWhy = "nvidia-smi could not be asked for the GPU: " + s.failureText()
	} else if g, err := gpuinfo.ParseFile(p.r.path(gpuFile)); err != nil {
		p.gpuWhy = err.Error()
	} else {
		p.gpu = &g
		p.progress("GPU: %s (compute %s, driver %s)", g.Name, g.ComputeCap, g.Driver)
	}
	arch, err := p.resolveArch()
	if err != nil {
		return err
	}
	if p.r.replay {
		arch = p.r.j.Arch // what the recording built, whatever the config says now
	}
	p.r.j.Arch, p.set.Arch = arch, arch
	if p.gpu != nil && !gpuinfo.RunnableOn(p.set.Arch, p.gpu.Arch()) {
		p.gpuWhy = fmt.Sprintf("the GPU is %s (%s) but run.arch builds only %s: the harness cannot run on it; add %s or native to run.arch",
			p.gpu.Name, p.gpu.Arch(), strings.Join(p.set.Arch, ", "), p.gpu.Arch())
	}
	if p.gpuWhy != "" {
		p.progress("no GPU steps: %s", oneLine(p.gpuWhy))
	}
	return nil
}

// resolveArch replaces "native" with the GPU's architecture.
func (p *pipeline) resolveArch() ([]string, error) {
	var out []string
	for _, a := range p.set.Arch {
		if a != config.DefaultRunArch {
			out = append(out, a)
			continue
		}
		if p.gpu == nil {
			return nil, usagef("%s: run.arch has \"native\" but %s; name the architectures in run.arch to build without a GPU", p.cfg.Path, p.gpuWhy)
		}
		if !slices.Contains(out, p.gpu.Arch()) {
			out = append(out, p.gpu.Arch())
		}
	}
	return out, nil
}

// ---- the base ----

func (p *pipeline) resolveBase(ctx context.Context) error {
	if p.r.replay {
		p.hasBase = p.r.j.BaseRev != ""
		if p.hasBase {
			p.progress("base: %s (merge base with %s)", shortRev(p.r.j.BaseRev), p.r.j.BaseRef)
		} else {
			p.progress("no base: %s", p.r.j.NoBase)
		}
		return nil
	}
	dir := cmp.Or(p.o.dir, ".")
	top, err := abrun.Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		p.headDir = dir
		if p.o.noBase {
			p.r.j.NoBase = "--no-base"
			return nil
		}
		return usagef("kernel-gate run builds head from the git working tree and base from its merge base, but this is not a git repository (%v); pass --no-base to build the current directory alone", err)
	}
	p.headDir = top
	if p.o.noBase {
		p.r.j.NoBase = "--no-base"
		p.progress("no base: --no-base")
		return nil
	}
	bench, err := p.cfg.Bench.Settings() // validated when the config was loaded
	if err != nil {
		return usageError{err}
	}
	ref := cmp.Or(p.o.baseRef, bench.BaseRef)
	p.r.j.BaseRef = ref
	mb, err := abrun.Git(ctx, top, "merge-base", ref, "HEAD")
	if err != nil {
		return usagef("finding the base: %v (is %s fetched? actions/checkout needs fetch-depth: 0; or pass --base REV, or --no-base)", err, ref)
	}
	headRev, _ := abrun.Git(ctx, top, "rev-parse", "HEAD")
	dirty, _ := abrun.Git(ctx, top, "status", "--porcelain", "--untracked-files=no")
	if mb == headRev && dirty == "" {
		// A push to the default branch: head is the base. Everything is gated, nothing compared.
		p.r.j.NoBase = fmt.Sprintf("HEAD is the merge base of %s and HEAD (%s): nothing to compare with", ref, shortRev(mb))
		p.progress("no base: %s", p.r.j.NoBase)
		return nil
	}
	started := time.Now()
	dir, rev, _, cleanup, err := abrun.CheckoutBase(ctx, top, ref)
	if err != nil {
		cleanup()
		return usagef("checking out the base: %v", err)
	}
	p.r.note("base", time.Since(started), procgroup.ShellJoin([]string{"git", "-C", top, "worktree", "add", "--detach", dir, rev})+" >/dev/null 2>&1")
	p.baseDir, p.hasBase, p.r.j.BaseRev = dir, true, rev
	p.cleanupBaseFn = func() {
		started := time.Now()
		cleanup()
		p.r.note("base-cleanup", time.Since(started), procgroup.ShellJoin([]string{"git", "-C", top, "worktree", "remove", "--force", dir}), "rm -rf "+procgroup.ShellQuote(filepath.Dir(dir)))
	}
	p.progress("base: %s (merge base of %s and HEAD) in %s", shortRev(rev), ref, dir)
	return nil
}

func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// ---- builds ----

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

// nvccArgs is one build's command line.
func (p *pipeline) nvccArgs(b *build, out string) []string {
	nvcc := p.set.NVCC
	if p.o.nvcc != "" {
		nvcc = p.o.nvcc
	}
	args := []string{nvcc, "-lineinfo", "-Xptxas", "-v"}
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
	nvcc := p.nvccArgs(&build{}, "")[0]
	if _, err := p.r.exec(ctx, "nvcc-version", []string{nvcc, "--version"}, "", nil, versionTimeout, nvccVersionFile); err != nil {
		return err
	}
	sides := []int{sideHead}
	if p.hasBase {
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
	bin := p.r.path(rel + "/harness")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil && !p.r.replay {
		return err
	}
	s, err := p.r.exec(ctx, "build/"+rel, p.nvccArgs(b, bin), dir, nil, p.set.Timeout, rel+"/build.log")
	if err != nil {
		return err
	}
	b.bin[side], b.log[side], b.ok[side] = bin, rel+"/build.log", s.Why == ""
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
	s, err := p.r.exec(ctx, "sass/"+sideName(side)+"/"+b.name, []string{p.o.cuobjdump, "--dump-sass", b.bin[side]}, "", nil, sassStepTimeout, rel)
	if err != nil {
		return err
	}
	b.sass[side] = rel
	if s.Why != "" {
		return nil // the SASS gate reads the dump and fails on cuobjdump's error
	}
	d, err := readSASS(p.r.path(rel))
	if err == nil {
		b.dump[side] = d
	}
	return nil
}

// readSASS parses a dump kept in the artifacts (or its .gz, as recordings keep them).
func readSASS(path string) (*sass.Dump, error) {
	var d *sass.Dump
	err := readFiles([]string{existingOrGz(path)}, nil, func(r io.Reader, name string) error {
		var err error
		d, err = sass.Parse(r, sass.ParseOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	return d, err
}

// existingOrGz is path, or path.gz when only that exists (recordings compress dumps).
func existingOrGz(path string) string {
	if !fileExists(path) && fileExists(path+".gz") {
		return path + ".gz"
	}
	return path
}

// ---- static gates ----

func (p *pipeline) staticGates(ctx context.Context) ([]result.Gate, error) {
	var in ptxasInputs
	files := []string{p.r.path(nvccVersionFile)}
	var sassFiles []string
	for _, b := range p.builds {
		files = append(files, existingOrGz(p.r.path(b.log[sideHead])))
		if b.sass[sideHead] != "" {
			sassFiles = append(sassFiles, existingOrGz(p.r.path(b.sass[sideHead])))
		}
	}
	if err := readFiles(files, nil, in.read); err != nil {
		return nil, err
	}
	var base *ptxas.Baseline
	if p.hasBase {
		var bl ptxasInputs
		for _, b := range p.builds {
			if b.ok[sideBase] {
				if err := readFiles([]string{existingOrGz(p.r.path(b.log[sideBase]))}, nil, bl.read); err != nil {
					return nil, err
				}
			}
		}
		if len(bl.log.Kernels) > 0 {
			base = ptxas.NewBaseline("base "+shortRev(p.r.j.BaseRev), bl.log.Kernels)
		}
	}
	gates, err := ptxasGates(ctx, &in, p.cfg, base, "", "")
	if err != nil {
		return nil, err
	}
	if len(sassFiles) == 0 {
		g := result.Gate{Name: "sass", Summary: "no build to dump", Findings: []result.Finding{{Severity: result.Error, Metric: "build",
			Message: "no head build succeeded, so there is no SASS to read: see the ptxas gate for nvcc's errors"}}}
		g.Decide(true)
		return append(gates, g), nil
	}
	sg, err := sassGate(sassFiles, nil, p.cfg, "")
	if err != nil {
		g := result.Gate{Name: "sass", Summary: "the SASS dump could not be read", Findings: []result.Finding{{Severity: result.Error, Metric: "dump",
			Message: fmt.Sprintf("cuobjdump's SASS could not be read: %v", err)}}}
		g.Decide(true)
		return append(gates, g), nil
	}
	return append(gates, sg), nil
}

// ---- per target ----

// targetOutcome is one target's part of the GPU gates.
type targetOutcome struct {
	name string
	// stopped says why the target's later GPU steps did not run ("" while they do).
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

// GPU gate names, in report order.
const (
	gateSanitizer   = "sanitizer"
	gateCorrectness = "correctness"
	gateSpeedup     = "speedup"
	gateNCU         = "ncu"
)

func (p *pipeline) targetGates(ctx context.Context, static []result.Gate) ([]result.Gate, error) {
	var outs []*targetOutcome
	for _, t := range p.targets {
		out := &targetOutcome{name: t.Name, parts: map[string]*targetPart{}}
		outs = append(outs, out)
		err := p.group("target "+t.Name, func() error { return p.runTarget(ctx, t, out, static) })
		if err != nil {
			return nil, err
		}
	}
	var gates []result.Gate
	names := []string{gateSanitizer, gateCorrectness, gateSpeedup}
	if !p.cfg.NCU.Empty() {
		names = append(names, gateNCU)
	}
	for _, name := range names {
		g, err := mergeTargetGates(name, outs)
		if err != nil {
			return nil, err
		}
		gates = append(gates, g)
	}
	return gates, nil
}

func (p *pipeline) runTarget(ctx context.Context, t config.Target, out *targetOutcome, static []result.Gate) error {
	b := p.buildOf(t.Name)
	skip := func(why string, gates ...string) {
		for _, g := range gates {
			if out.parts[g] == nil {
				out.parts[g] = &targetPart{skipped: why}
			}
		}
	}
	all := []string{gateSanitizer, gateCorrectness, gateSpeedup, gateNCU}
	switch {
	case !b.ok[sideHead]:
		out.stopped = "head did not build (see the ptxas gate)"
	case p.gpuLost != "":
		out.stopped = p.gpuLost
	case p.gpuWhy != "":
		// No GPU: a failure, never a pass (the config asks for these gates).
		for _, g := range all {
			gate := failedGate(g, "gpu", "%s: no GPU to run on: %s", t.Name, p.gpuWhy)
			out.parts[g] = &targetPart{gate: &gate}
		}
		return nil
	}
	if out.stopped != "" {
		skip(out.stopped, all...)
		p.progress("%s: skipped: %s", t.Name, out.stopped)
		return nil
	}
	globs := t.Functions
	if !p.o.keepGoing {
		if why := staticFailure(static, globs); why != "" {
			out.stopped = why
		}
	}
	changed, why := p.sassChanged(b, globs)
	out.unchanged = !changed
	p.progress("%s: %s", t.Name, why)
	unchangedNote := "unchanged SASS: skipped (" + why + ")"

	// Sanitizer.
	switch {
	case out.stopped != "":
		skip(out.stopped, gateSanitizer)
	case out.unchanged && !p.o.all:
		skip(unchangedNote, gateSanitizer)
	default:
		g, err := p.sanitize(ctx, t, b)
		if err != nil {
			return err
		}
		out.parts[gateSanitizer] = &targetPart{gate: &g}
		p.stopOnFailure(out, g, "the sanitizer")
	}

	// Correctness: the check is cheap and the harness's host code may have changed, so it
	// runs also for unchanged SASS.
	if out.stopped != "" {
		skip(out.stopped, gateCorrectness)
	} else {
		g, err := p.check(ctx, t, b)
		if err != nil {
			return err
		}
		out.parts[gateCorrectness] = &targetPart{gate: &g}
		p.stopOnFailure(out, g, "the correctness check")
	}

	// Speedup.
	switch {
	case out.stopped != "":
		skip(out.stopped, gateSpeedup)
	case !p.hasBase:
		skip("no base to compare with: "+p.r.j.NoBase, gateSpeedup)
	case !b.ok[sideBase]:
		g := failedGate(gateSpeedup, "build", "%s: base did not build, so head cannot be compared with it (log: %s)", t.Name, b.log[sideBase])
		out.parts[gateSpeedup] = &targetPart{gate: &g}
	case out.unchanged && !p.o.all:
		skip(unchangedNote, gateSpeedup)
	default:
		g, err := p.bench(ctx, t, b)
		if err != nil {
			return err
		}
		out.parts[gateSpeedup] = &targetPart{gate: &g}
	}

	// Nsight Compute, where a rule names one of the target's kernels.
	ncfg := p.targetNCU(b, globs)
	switch {
	case p.cfg.NCU.Empty():
	case out.stopped != "":
		skip(out.stopped, gateNCU)
	case ncfg.Empty():
		skip("no ncu rule names its kernels", gateNCU)
	case out.unchanged && !p.o.all:
		skip(unchangedNote, gateNCU)
	default:
		g, err := p.profile(ctx, t, b, ncfg)
		if err != nil {
			return err
		}
		out.parts[gateNCU] = &targetPart{gate: &g}
	}
	return nil
}

// targetNCU is the ncu config with the rules that match one of the target's functions in
// head's SASS.
func (p *pipeline) targetNCU(b *build, globs []string) ncu.Config {
	cfg := p.cfg.NCU
	d := b.dump[sideHead]
	cfg.Kernels = slices.DeleteFunc(slices.Clone(cfg.Kernels), func(r ncu.Rule) bool {
		if d == nil {
			return false
		}
		for _, f := range d.Functions {
			if (len(globs) == 0 || matchesAny(f.Name, globs)) && f.Name.Matches(kernelname.Glob(r.Match)) {
				return false
			}
		}
		return true
	})
	return cfg
}

func (p *pipeline) profile(ctx context.Context, t config.Target, b *build, cfg ncu.Config) (result.Gate, error) {
	dir := p.r.path(t.Name + "/ncu")
	p.progress("%s: Nsight Compute (%d rule(s), --clock-control none)", t.Name, len(cfg.Kernels))
	if p.r.replay {
		if _, err := p.r.lookup("ncu/" + t.Name); err != nil {
			return result.Gate{}, err
		}
		f, err := os.Open(filepath.Join(dir, ncu.LogFile))
		if err != nil {
			return result.Gate{}, usageError{err}
		}
		defer f.Close()
		rep, err := ncu.Parse(f, t.Name+"/ncu/"+ncu.LogFile)
		if err != nil {
			return failedGate(gateNCU, ncu.MetricRun, "%s: the recorded ncu output cannot be read: %v", t.Name, err), nil
		}
		return ncu.Evaluate(rep, cfg)
	}
	o, err := cfg.Options([]string{b.bin[sideHead]})
	if err != nil {
		return result.Gate{}, usageError{err}
	}
	o.NCU, o.ArtifactDir = p.o.ncu, dir
	if len(t.Kernels) > 0 {
		o.ExtraEnv = append(o.ExtraEnv, "KG_KERNELS="+strings.Join(t.Kernels, ","))
	}
	var g result.Gate
	_, err = p.r.timed("ncu/"+t.Name, func() error {
		var err error
		g, err = ncu.RunGate(ctx, cfg, o)
		return err
	}, func() []string {
		env := append(slices.Clone(o.ExtraEnv), ncu.Env(o, filepath.Join(dir, ncu.HarnessFile)+".plain")...)
		argv := append(append([]string{o.NCU}, ncu.Args(o)...), o.Command...)
		return []string{"env " + procgroup.ShellJoin(env) + " " + procgroup.ShellJoin(argv) + " >" + procgroup.ShellQuote(filepath.Join(dir, ncu.LogFile+".plain")) + " 2>&1"}
	})
	return g, err
}

// stopOnFailure stops a target's later steps after a failed gate (unless --keep-going):
// an unsafe or wrong kernel is not timed, which saves the runner's GPU time and keeps each
// defect's report to its own gate.
func (p *pipeline) stopOnFailure(out *targetOutcome, g result.Gate, what string) {
	if g.Verdict == result.Fail && !p.o.keepGoing && out.stopped == "" {
		out.stopped = what + " failed"
	}
	if why := gpuErrorIn(g); why != "" && out.stopped == "" {
		out.stopped = "a GPU error: " + why
	}
}

// staticFailure says which static gate failed for a kernel of the target ("" when none).
func staticFailure(static []result.Gate, globs []string) string {
	for _, g := range static {
		if g.Name != "ptxas" && g.Name != "sass" {
			continue
		}
		for _, f := range g.Findings {
			if f.Severity != result.Error {
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
	if !p.hasBase {
		return true, "no base: every step runs"
	}
	head, base := b.dump[sideHead], b.dump[sideBase]
	if head == nil || base == nil {
		return true, "a SASS dump is missing: every step runs"
	}
	pick := func(d *sass.Dump) map[string]string {
		m := map[string]string{}
		for _, f := range d.Functions {
			if len(globs) == 0 || matchesAny(f.Name, globs) {
				m[f.Arch+" "+f.Name.Identity()] = f.Digest
			}
		}
		return m
	}
	h, bs := pick(head), pick(base)
	if len(h) == 0 {
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
		return false, fmt.Sprintf("the SASS of its %d function × arch pair(s) is byte-identical to base's", len(h))
	}
	slices.Sort(diff)
	arch, name, _ := strings.Cut(diff[0], " ")
	return true, fmt.Sprintf("SASS changed in %d of %d function × arch pair(s), e.g. %s on %s", len(diff), len(h), name, arch)
}

// harnessEnv is the target's KG_ variables for one mode.
func harnessEnv(t config.Target, mode string, shapes []string, extra ...string) []string {
	env := []string{"KG_MODE=" + mode}
	if len(shapes) > 0 {
		env = append(env, "KG_SHAPES="+strings.Join(shapes, ","))
	}
	if len(t.Kernels) > 0 {
		env = append(env, "KG_KERNELS="+strings.Join(t.Kernels, ","))
	}
	return append(env, extra...)
}

func (p *pipeline) sanitize(ctx context.Context, t config.Target, b *build) (result.Gate, error) {
	rel := t.Name + "/sanitize"
	dir := p.r.path(rel)
	p.progress("%s: compute-sanitizer (%s)", t.Name, strings.Join(p.sanitizerTools(), ", "))
	if p.r.replay {
		if _, err := p.r.lookup("sanitize/" + t.Name); err != nil {
			return result.Gate{}, err
		}
		g, ok, err := replaySanitizer(dir, p.cfg)
		if err != nil {
			return result.Gate{}, err
		}
		if !ok {
			return failedGate(gateSanitizer, "run", "%s: the recording has no sanitizer logs in %s", t.Name, rel), nil
		}
		return g, nil
	}
	o, err := sanitizeOptions(p.cfg, "", "", p.o.sanitizer)
	if err != nil {
		return result.Gate{}, usageError{err}
	}
	o.ExtraEnv = append(o.ExtraEnv, harnessEnv(t, "", t.Shapes.Sanitize)[1:]...)
	var g result.Gate
	_, err = p.r.timed("sanitize/"+t.Name, func() error {
		var err error
		g, err = sanitizeRun(ctx, []string{b.bin[sideHead]}, o, dir, p.cfg, p.e)
		return err
	}, func() []string {
		// The same compute-sanitizer runs, as sanitizeRun starts them.
		var lines []string
		for _, tool := range p.sanitizerTools() {
			env := append(slices.Clone(o.ExtraEnv), "KG_MODE=sanitize", "KG_OUT="+harnessOut(dir, tool)+".plain")
			argv := append(append([]string{o.Sanitizer}, sanitizer.Args(tool, filepath.Join(dir, tool+".xml.plain"), o)...), b.bin[sideHead])
			lines = append(lines, "env "+procgroup.ShellJoin(env)+" "+procgroup.ShellJoin(argv)+" >"+procgroup.ShellQuote(filepath.Join(dir, tool+".log.plain"))+" 2>&1")
		}
		return lines
	})
	return g, err
}

func (p *pipeline) sanitizerTools() []string {
	if len(p.cfg.Sanitizer.Tools) > 0 {
		return p.cfg.Sanitizer.Tools
	}
	return sanitizer.AllTools()
}

func (p *pipeline) check(ctx context.Context, t config.Target, b *build) (result.Gate, error) {
	rel := t.Name + "/check.json"
	out := p.r.path(rel)
	env := harnessEnv(t, "check", t.Shapes.Check, fmt.Sprintf("KG_ROUNDS=%d", p.set.CheckRounds), "KG_OUT="+out)
	p.progress("%s: correctness check (%s)", t.Name, strings.Join(env[1:len(env)-1], " "))
	if !p.r.replay {
		_ = os.Remove(out)
	}
	s, err := p.r.exec(ctx, "check/"+t.Name, []string{b.bin[sideHead]}, p.headDir, env, p.set.Timeout, t.Name+"/check.log")
	if err != nil {
		return result.Gate{}, err
	}
	var g result.Gate
	if fileExists(out) {
		f, err := os.Open(out)
		if err != nil {
			return result.Gate{}, err
		}
		g, err = correctnessGate(f, rel, p.targetConfig(t))
		f.Close()
		if err != nil {
			g = failedGate(gateCorrectness, "harness_file", "%s: the harness's file %s cannot be read: %v", t.Name, rel, err)
		}
	}
	if s.Why != "" {
		msg := fmt.Sprintf("%s: the harness in check mode %s", t.Name, s.failureText())
		if why := gpuError(s.Tail); why != "" {
			msg = fmt.Sprintf("%s: a GPU error (%s) in the check run: %s; the target's remaining steps are skipped", t.Name, why, s.failureText())
			p.checkGPUAlive(ctx)
		}
		g.Name = gateCorrectness
		g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Metric: abrun.MetricRun, Message: msg})
		g.Decide(true)
		if g.Summary == "" {
			g.Summary = "the harness failed"
		}
	} else if !fileExists(out) {
		g = failedGate(gateCorrectness, "harness_file", "%s: the harness exited 0 but wrote no file at KG_OUT (%s): nothing was checked", t.Name, rel)
	}
	return g, nil
}

func (p *pipeline) bench(ctx context.Context, t config.Target, b *build) (result.Gate, error) {
	rel := t.Name + "/bench"
	dir := p.r.path(rel)
	p.progress("%s: timing base and head side by side (%s)", t.Name, strings.Join(t.Shapes.Bench, ","))
	if p.r.replay {
		if _, err := p.r.lookup("bench/" + t.Name); err != nil {
			return result.Gate{}, err
		}
		g, err := compareFiles(filepath.Join(dir, "base.json"), filepath.Join(dir, "head.json"), nil, p.targetConfig(t))
		if err != nil {
			return g, err
		}
		return withRunnerRecord(g, filepath.Join(dir, runnerRecordFile))
	}
	set, err := p.cfg.Bench.Settings()
	if err != nil {
		return result.Gate{}, usageError{err}
	}
	if len(t.Shapes.Bench) > 0 {
		set.Shapes = t.Shapes.Bench
	}
	if len(t.Kernels) > 0 {
		set.Env = append(slices.DeleteFunc(slices.Clone(set.Env), func(v string) bool { return strings.HasPrefix(v, "KG_KERNELS=") }),
			"KG_KERNELS="+strings.Join(t.Kernels, ","))
	}
	o := abrun.Options{
		Base:  abrun.Command{Argv: []string{b.bin[sideBase]}, Dir: p.baseDir},
		Head:  abrun.Command{Argv: []string{b.bin[sideHead]}, Dir: p.headDir},
		Bench: set, Speedup: p.targetConfig(t).Speedup, ArtifactDir: dir, NvidiaSMI: p.o.smi,
		Progress: p.e.stderr, ReferenceName: t.ReferenceName,
	}
	if t.Reference != "" {
		argv, err := abrun.SplitCommand(t.Reference, nil)
		if err != nil {
			return result.Gate{}, usageError{err}
		}
		o.Reference = abrun.Command{Argv: argv, Dir: p.headDir}
	}
	var g result.Gate
	_, err = p.r.timed("bench/"+t.Name, func() error {
		var err error
		g, err = abrun.Run(ctx, o)
		return err
	}, func() []string { return benchScript(g, o, dir) })
	if err != nil {
		return g, err
	}
	return g, saveRunnerRecord(g, filepath.Join(dir, runnerRecordFile))
}

// benchScript is the A/B runner's processes as plain shell lines: before each round (the
// warm-up too) nvidia-smi, then base and head (and the reference) once each in bench mode.
func benchScript(g result.Gate, o abrun.Options, dir string) []string {
	var d abrun.Data
	if json.Unmarshal(g.Data, &d) != nil {
		return nil
	}
	env := append(slices.Clone(o.Bench.Env), "KG_MODE=bench", "KG_ROUNDS=1", fmt.Sprintf("KG_SAMPLES=%d", o.Bench.Samples))
	if len(o.Bench.Shapes) > 0 {
		env = append(env, "KG_SHAPES="+strings.Join(o.Bench.Shapes, ","))
	}
	run := func(c abrun.Command, side string) string {
		e := append(slices.Clone(env), "KG_OUT="+filepath.Join(dir, side+".plain.json"))
		return "  (cd " + procgroup.ShellQuote(c.Dir) + " && env " + procgroup.ShellJoin(e) + " " + procgroup.ShellJoin(c.Argv) + ") >>" + procgroup.ShellQuote(filepath.Join(dir, side+"-harness.log.plain")) + " 2>&1"
	}
	lines := []string{fmt.Sprintf("for round in $(seq 0 %d); do", d.Runner.RoundsRun),
		"  " + procgroup.ShellJoin(append([]string{o.NvidiaSMI}, abrun.ClockQueryArgs()...)) + " >/dev/null",
		run(o.Base, "base"), run(o.Head, "head")}
	if len(o.Reference.Argv) > 0 {
		lines = append(lines, run(o.Reference, "reference"))
	}
	return append(lines, "done")
}

// runnerRecordFile keeps what the A/B runner saw besides the timings (nvidia-smi's clocks
// before each round, dropped rounds, why it stopped) and its findings about them, so that a
// replay, which judges the merged base.json and head.json again, reports them too.
const runnerRecordFile = "runner.json"

type runnerRecord struct {
	Runner   abrun.RunnerData `json:"runner"`
	Findings []result.Finding `json:"findings"`
}

// runnerMetrics are the runner's own finding metrics (the judge's are speedup's).
func runnerMetrics() []string {
	return []string{abrun.MetricRun, abrun.MetricBuild, abrun.MetricThrottled, abrun.MetricClocks, abrun.MetricRounds}
}

func saveRunnerRecord(g result.Gate, path string) error {
	var d abrun.Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		return fmt.Errorf("the speedup gate's data: %w", err)
	}
	rec := runnerRecord{Runner: d.Runner, Findings: []result.Finding{}}
	for _, f := range g.Findings {
		if slices.Contains(runnerMetrics(), f.Metric) {
			rec.Findings = append(rec.Findings, f)
		}
	}
	raw, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}

// withRunnerRecord adds a recorded runner's findings and data to a re-judged gate.
func withRunnerRecord(g result.Gate, path string) (result.Gate, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return g, usageError{fmt.Errorf("the recording lacks the runner's record: %w", err)}
	}
	var rec runnerRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return g, usageError{fmt.Errorf("%s: %w", path, err)}
	}
	var d abrun.Data
	if err := json.Unmarshal(g.Data, &d.Data); err != nil {
		return g, err
	}
	d.Runner = rec.Runner
	g.Findings = append(g.Findings, rec.Findings...)
	if err := g.SetData(d); err != nil {
		return g, err
	}
	g.Decide(true)
	return g, nil
}

// failedGate is a gate failed by one error finding.
func failedGate(name, metric, format string, a ...any) result.Gate {
	g := result.Gate{Name: name, Summary: "did not run", Findings: []result.Finding{{Severity: result.Error, Metric: metric, Message: fmt.Sprintf(format, a...)}}}
	g.Decide(true)
	return g
}

// targetConfig is the config as one target sees it: the correctness and speedup rules whose
// glob matches none of the target's kernels are left out, so that each target's gate does
// not warn about rules meant for another. A rule that matches no kernel of any target stays
// with the first target, which warns about it once.
func (p *pipeline) targetConfig(t config.Target) config.Config {
	cfg := p.cfg
	if len(t.Kernels) == 0 {
		return cfg
	}
	first := len(p.targets) > 0 && p.targets[0].Name == t.Name
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
		for _, o := range p.targets {
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
	cfg.Correctness.Kernels = slices.DeleteFunc(slices.Clone(cfg.Correctness.Kernels), func(r correctness.Rule) bool { return !keep(r.Match) })
	cfg.Speedup.Kernels = slices.DeleteFunc(slices.Clone(cfg.Speedup.Kernels), func(r speedup.Rule) bool { return !keep(r.Match) })
	return cfg
}
