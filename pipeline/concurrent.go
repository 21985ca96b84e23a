package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/gates/toolkit"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Base and head at once: their builds (buildAll) and a harness target's first harness runs
// (which build what a JIT harness builds) run side by side, sharing the machine's cores.
// Each side's build commands are told half of them (jobLimitVars), unless the environment or
// the target already says. Timing never overlaps anything (the A/B runner runs alone, after
// these).

// jobLimitVars are the variables that bound a build's parallel jobs: PyTorch's extension
// builds read MAX_JOBS, CMake's --build CMAKE_BUILD_PARALLEL_LEVEL.
var jobLimitVars = []string{"MAX_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL"}

// sideJobs is each side's share of the machine's cores when base and head build at once.
func sideJobs() int { return buildJobs(2) }

// buildJobs is the share of the machine's cores of each of n builds that run at once.
func buildJobs(n int) int { return max(1, runtime.NumCPU()/max(n, 1)) }

// nvccJobs is how many nvcc processes (or, with --threads, compilation threads) one side's
// build of sources may run at once: its share of the cores with every build of the run,
// base's and head's, running at once (buildAll).
func (p *pipeline) nvccJobs() int {
	n := len(p.builds)
	if p.hasBase() {
		n *= 2
	}
	return buildJobs(n)
}

// nvccThreadsSince is the first CUDA release whose nvcc takes --threads: it then runs the
// compilation of each -gencode target of a source in a thread of its own.
var nvccThreadsSince = semver.MustParse("11.2.0")

// nvccThreads is the --threads to give an nvcc command that may use jobs cores: one per
// arch built, at most jobs; 0 (no --threads) for one arch or one job, or when nvcc --version
// (already asked) says nothing newer than nvccThreadsSince, which an older nvcc would refuse.
func (p *pipeline) nvccThreads(jobs int) int {
	n := min(jobs, len(p.set.Arch))
	if n < 2 {
		return 0
	}
	if v := p.nvccRelease(); v == nil || v.LessThan(nvccThreadsSince) {
		return 0
	}
	return n
}

// nvccRelease is the CUDA release nvcc --version said (nvccVersionFile, asked before the
// builds); nil when it could not be read or said none.
func (p *pipeline) nvccRelease() *semver.Version {
	raw, err := input.ReadFile(context.Background(), p.x.path(nvccVersionFile), input.Line)
	if err != nil {
		return nil
	}
	v, err := toolkit.Parse(string(raw))
	if err != nil {
		return nil
	}
	return v.Semver
}

// jobLimit is what a harness target's commands add to bound their build jobs: with a base
// that builds (not one restored from the base cache), each of jobLimitVars that neither the
// environment nor the target sets, at sideJobs; nothing without one (head builds alone, as
// its build decides).
func (p *pipeline) jobLimit(t config.Target) []string {
	if !p.hasBase() || p.baseRestored() {
		return nil
	}
	var env []string
	for _, k := range jobLimitVars {
		if _, set := t.Env[k]; set {
			continue
		}
		if _, set := abrun.LookupEnv(p.o.Environ, k); set {
			continue
		}
		env = append(env, k+"="+strconv.Itoa(sideJobs()))
	}
	return env
}

// bothFirstRunsAtOnce says whether a harness target's first runs go side by side: live,
// with a GPU, both sides built. A replay runs them in turn, as it reads them by name.
func (p *pipeline) bothFirstRunsAtOnce(b *build) bool {
	return !p.replaying && p.hasBase() && b.ok[sideHead] && b.ok[sideBase] && p.gpuWhy == "" && p.gpuLost == ""
}

// firstRunsAtOnce runs head's check and base's first run side by side, then reads each
// side's binaries. Base's run is kept only when head's left the GPU answering: in turn, a
// GPU lost in head's run would have kept base's from running, and a replay does the same.
func (p *pipeline) firstRunsAtOnce(ctx context.Context, b *build) error {
	if !p.baseRestored() {
		p.progress("%s: base's and head's first harness runs at once (check mode, which builds; %d build jobs each)", b.name, sideJobs())
	}
	p.x.atOnce("check/base/"+b.name, "check/"+b.name)
	type ended struct {
		s   step
		err error
	}
	baseDone := make(chan ended, 1)
	go func() {
		s, err := p.baseFirstRun(ctx, b)
		baseDone <- ended{s, err}
	}()
	headErr := p.firstRun(ctx, b, sideHead)
	base := <-baseDone
	if headErr != nil {
		return headErr
	}
	if base.err != nil {
		return base.err
	}
	if p.gpuLost == "" {
		p.applyBaseFirstRun(b, base.s)
	}
	for _, side := range []int{sideHead, sideBase} {
		if b.ok[side] {
			if err := p.readBinaries(ctx, b, side); err != nil {
				return err
			}
		}
	}
	return nil
}

// sanitizerToolMiB is the free GPU memory counted for each compute-sanitizer tool that runs
// beside another: the harness's sanitize shapes are small, but each tool is a CUDA context
// of its own (a PyTorch harness's is some hundreds of MiB), with the tool's shadow memory
// (memcheck's padding, initcheck's shadow of every allocation) on top. 8 GiB is that with
// room to spare: an H100's or H200's idle 79-140 GiB run all four at once, an L4's 22 GiB
// two at a time, a smaller or busier GPU one at a time.
const sanitizerToolMiB = 8 << 10

// sanitizerAtOnce is how many of a target's n sanitizer tools run at once: as many as the
// GPU's free memory, asked now, holds at sanitizerToolMiB each (gpuPlaces); one at a time,
// said in the progress, when that is fewer than two or nvidia-smi cannot say. A replay
// reads the kept logs and asks nothing.
func (p *pipeline) sanitizerAtOnce(ctx context.Context, t target, n int) (int, error) {
	if n < 2 || p.replaying {
		return 1, nil
	}
	k, why, err := p.gpuPlaces(ctx, "gpu-memory/"+t.Name, t.Name+"/gpu-memory.txt", n)
	if err != nil {
		return 1, err
	}
	if k < 2 {
		p.progress("%s: the sanitizer's tools one at a time: %s", t.Name, why)
		return 1, nil
	}
	p.progress("%s: %d of the sanitizer's %d tools at once (%s)", t.Name, k, n, why)
	return k, nil
}

// gpuPlaces asks nvidia-smi for the GPU's free memory (the step id, its output in log) and
// returns how many of n GPU processes may run at once, at sanitizerToolMiB each, and why:
// 1 when that is fewer than two or nvidia-smi cannot say.
func (p *pipeline) gpuPlaces(ctx context.Context, id, log string, n int) (int, string, error) {
	s, err := p.x.run(ctx, proc{id: id, argv: append([]string{p.o.Tools.NvidiaSMI}, gpuinfo.FreeMemoryArgs()...), timeout: smiStepTimeout, log: log})
	if err != nil {
		return 1, "", err
	}
	free, why := 0, ""
	if s.Why != "" {
		why = "nvidia-smi could not say the GPU's free memory: " + s.failureText()
	} else {
		err := input.Files([]string{p.x.path(log)}, nil, func(r io.Reader, _ string) error {
			free, err = gpuinfo.ParseFreeMiB(r)
			return err
		})
		if err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		return 1, msgtext.FirstLine(why), nil
	}
	k := min(n, free/sanitizerToolMiB)
	if k < 2 {
		return 1, fmt.Sprintf("the GPU has %s free, and each tool that runs beside another is given %s", numtext.Bytes(int64(free)<<20), numtext.Bytes(sanitizerToolMiB<<20)), nil
	}
	return k, fmt.Sprintf("the GPU has %s free, %s each", numtext.Bytes(int64(free)<<20), numtext.Bytes(sanitizerToolMiB<<20)), nil
}

// splitSteps parts the GPU steps into the first ones, which the targets may run at the same
// time (the sanitizer and the check: each judges the target's own processes, whatever else
// runs beside them), and the rest, run one target at a time: the timing, which nothing may
// disturb, and Nsight Compute's profile, whose counters another process's kernels would
// change.
func splitSteps(steps []gpuStep) (early, late []gpuStep) {
	n := slices.IndexFunc(steps, func(s gpuStep) bool { return !s.atOnce })
	if n < 0 {
		n = len(steps)
	}
	return steps[:n], steps[n:]
}

// earlyStepsAtOnce runs the targets' early steps (splitSteps) at the same time, each
// target's in order, when the run is live with a GPU, has more than one target and the GPU
// has the memory for two of their processes or more: it asks nvidia-smi once and gives
// every sanitizer tool and every check that runs at once sanitizerToolMiB, shared by all
// the targets (gpuSlots). It reports whether it did; when not, each target runs all its
// steps in turn. A replay decides the same from the recorded answer, and reads the steps.
//
// The results are those of the targets in turn: each step is the same processes, files
// and parsing, a target's later steps still wait for its sanitizer and check, and the
// journal keeps each target's early steps together in the targets' order (commands.sh
// runs each target's as one chain, the chains at once). A GPU error in a check is followed
// by the nvidia-smi check (gpu-after-error/<n>) after every target's early steps ended, in
// the targets' order; when the GPU no longer answers, no target's later steps run.
// Why: docs/threat-model.md, threat-model T20.
func (p *pipeline) earlyStepsAtOnce(ctx context.Context, runs []*targetRun, static []result.Gate, steps, early []gpuStep) (bool, error) {
	if len(runs) < 2 || p.gpuWhy != "" || p.gpuLost != "" || !slices.ContainsFunc(early, func(s gpuStep) bool { return s.enabled() }) {
		return false, nil
	}
	if p.replaying && !p.x.has(targetsMemoryID) {
		return false, nil // recorded with the targets in turn
	}
	atOnce := false
	err := p.group("the targets' sanitizers and checks", func() error {
		per := 1 // the check
		if slices.ContainsFunc(early, func(s gpuStep) bool { return s.gate == sanitizer.Name && s.enabled() }) {
			o, err := p.cfg.Sanitizer.RunOptions()
			if err != nil {
				return exitcode.BadInput(err)
			}
			per += len(o.Tools)
		}
		k, why, err := p.gpuPlaces(ctx, targetsMemoryID, "gpu-memory.txt", per*len(runs))
		if err != nil {
			return err
		}
		if k < 2 {
			p.progress("the targets' sanitizers and checks one target at a time: %s", why)
			return nil
		}
		p.progress("the sanitizers and checks of %d targets at once, up to %d of their processes at once: %s", len(runs), k, why)
		atOnce = true
		var begun []*targetRun
		for _, r := range runs {
			if p.beginTarget(r, static, steps) {
				begun = append(begun, r)
			}
		}
		p.gpuSlots, p.aliveLater = make(chan struct{}, k), map[string]bool{}
		defer func() { p.gpuSlots, p.aliveLater = nil, nil }()
		for _, r := range begun {
			p.x.atOnceChain(r.t.Name, "sanitize/"+r.t.Name, "check/"+r.t.Name)
		}
		errs := make([]error, len(begun))
		var wg sync.WaitGroup
		for i, r := range begun {
			if p.replaying {
				// The same decisions, read from the recording one target after another.
				errs[i] = p.runSteps(ctx, r, early)
				continue
			}
			wg.Go(func() { errs[i] = p.runSteps(ctx, r, early) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for _, r := range begun {
			if p.aliveLater[r.t.Name] {
				p.checkGPUAlive(ctx)
			}
		}
		return nil
	})
	return atOnce, err
}

// targetsMemoryID is the step that asks the GPU's free memory for the targets' early steps
// at once; a replay runs them so where the recording has it.
const targetsMemoryID = "gpu-memory"

// gpuErrorSeen follows a GPU error in a target's check: nvidia-smi is asked whether the GPU
// still answers, at once, or while the targets' early steps run at once after they have all
// ended, in the targets' order, so that the checks' numbers (which a replay looks up) do
// not depend on which ended first.
func (p *pipeline) gpuErrorSeen(ctx context.Context, target string) {
	if p.gpuSlots == nil {
		p.checkGPUAlive(ctx)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.aliveLater[target] = true
}
