package pipeline

import (
	"context"
	"io"
	"runtime"
	"strconv"

	"github.com/Masterminds/semver/v3"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/gates/toolkit"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
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
// GPU's free memory, asked now, holds at sanitizerToolMiB each; one at a time, said in the
// progress, when that is fewer than two or nvidia-smi cannot say. A replay reads the kept
// logs and asks nothing.
func (p *pipeline) sanitizerAtOnce(ctx context.Context, t target, n int) (int, error) {
	if n < 2 || p.replaying {
		return 1, nil
	}
	log := t.Name + "/gpu-memory.txt"
	s, err := p.x.run(ctx, proc{id: "gpu-memory/" + t.Name, argv: append([]string{p.o.Tools.NvidiaSMI}, gpuinfo.FreeMemoryArgs()...), timeout: smiStepTimeout, log: log})
	if err != nil {
		return 1, err
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
	k := min(n, free/sanitizerToolMiB)
	switch {
	case why != "":
		p.progress("%s: the sanitizer's tools one at a time: %s", t.Name, msgtext.FirstLine(why))
		return 1, nil
	case k < 2:
		p.progress("%s: the sanitizer's tools one at a time: the GPU has %s free, and each tool that runs beside another is given %s", t.Name, numtext.Bytes(int64(free)<<20), numtext.Bytes(sanitizerToolMiB<<20))
		return 1, nil
	}
	p.progress("%s: %d of the sanitizer's %d tools at once (the GPU has %s free, %s each)", t.Name, k, n, numtext.Bytes(int64(free)<<20), numtext.Bytes(sanitizerToolMiB<<20))
	return k, nil
}
