package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/basecache"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shard"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// Options say what one run does; `kernel-gate run`'s flags fill them.
type Options struct {
	// Artifacts is where a live run keeps every log, dump, XML and harness file, and the
	// journal of what ran (default DefaultArtifacts).
	Artifacts string
	// Replay, when set, is a recording (an earlier run's Artifacts) to judge instead of
	// running anything. The recording's own decisions (targets, arch, base, All,
	// KeepGoing) win over the ones below.
	Replay string
	// BaseRef: head is compared with the merge base of BaseRef and HEAD (default: the
	// config's speedup.base_ref).
	BaseRef string
	// NoBase builds head alone: nothing compared, nothing skipped as unchanged.
	NoBase bool
	// BaseMayBeGone: BaseRef is a commit that may no longer exist (a push's "before",
	// replaced by a force-push). When a repository with its whole history lacks it, head
	// is built alone and the run says why, instead of failing to find a merge base.
	BaseMayBeGone bool
	// All runs every GPU step also where a target's SASS is unchanged.
	All bool
	// KeepGoing runs a target's GPU steps even after one of its gates failed.
	KeepGoing bool
	// Targets names the config's targets to run (empty: all).
	Targets []string
	// Dir is the repository (its top level, when it is a git repository, is head).
	Dir string
	// Tools are the CUDA tools' paths (empty: found on PATH).
	Tools Tools
	// Environ is the environment every process starts with (os.Environ()).
	Environ []string
	// Progress receives one line per stage with the time since the start.
	Progress io.Writer
	// Getenv reads the environment for GitHub Actions (log groups); nil is an empty one.
	Getenv func(string) string
	// Tool names kernel-gate and its version in the result and the journal.
	Tool string
	// Gates limits the gates run and reported (empty: all of them).
	Gates []string
	// OnStage, when set, is told each stage's title as it starts ("build", "target
	// attention"): a check run shows it.
	OnStage func(title string)
	// BaselineStore, when set, is read (never written) when the run has no base build:
	// the ptxas gate is then judged against its newest entry for this GPU that the
	// config's baseline constraints allow (storedbase.go), and says which.
	BaselineStore baseline.Reader
	// Shard, when set, gates only the targets (of Targets, else all) whose names hash to
	// it, and records the shard in the result for kernel-gate merge (shard.go).
	Shard shard.Spec
	// LogCap bounds each step's log (0: DefaultLogCap). A gate that reads a log cut there
	// (a build's, a dump's) fails naming the cap; the journal says which logs were cut.
	LogCap int
	// BaseCache, when set, is the base cache's directory (basecache.go): a live run with a
	// base restores base's builds and first runs from the entry of its key there instead of
	// running them, and saves them there after building them, unless BaseCacheReadOnly.
	BaseCache         string
	BaseCacheReadOnly bool
}

// Tools are the paths of the programs a run starts.
type Tools struct {
	NVCC, Cuobjdump, Sanitizer, NCU, NvidiaSMI string
	// Nvdisasm disassembles the cubins cuobjdump extracts (sassdump.go); empty: the one
	// beside Cuobjdump, else (Cuobjdump found on PATH) on PATH, else none, and the SASS is
	// dumped by cuobjdump --dump-sass.
	Nvdisasm string
}

// DefaultArtifacts is Options.Artifacts when none is given.
const DefaultArtifacts = "kernel-gate-artifacts"

// Timeouts of the steps that are not the config's to set.
const (
	smiStepTimeout  = 30 * time.Second
	sassStepTimeout = 5 * time.Minute
	versionTimeout  = 30 * time.Second
)

// pipeline is one run.
type pipeline struct {
	cfg     config.Config
	set     config.RunSettings
	o       Options
	x       executor
	start   time.Time
	gh      *githubactions.Action
	targets []config.Target
	builds  []*build
	gpu     *gpuinfo.Info
	gpuWhy  string // why the GPU steps cannot run ("" when they can)
	// decided is what the run decided before running anything: the base, the arch, the
	// flags that change what runs. A replay takes it from the recording.
	decided Decisions
	headDir string
	baseDir string
	// builtIn is the directory head was built in, as the run (or the recording) says:
	// tools print paths under it.
	builtIn string
	// gpuLost is set when a GPU error left nvidia-smi unable to answer: no GPU step runs
	// after it.
	gpuLost string
	// gpuChecks counts the nvidia-smi checks after GPU errors (their step IDs).
	gpuChecks int
	// gpuSlots, while the targets' sanitizers and checks run at once (earlyStepsAtOnce),
	// has a place for each GPU process that may run at the same time; nil otherwise.
	gpuSlots chan struct{}
	// aliveLater are the targets whose check hit a GPU error while the targets ran at
	// once: the GPU is asked whether it still answers after they all end, in their order.
	aliveLater map[string]bool
	// cleanupBase removes the base worktree (nil when none was checked out).
	cleanupBase func()
	// runTargets are every target of the run: all shards' when it is sharded, else targets.
	runTargets []config.Target
	// replaying is set when the executor reads a recording.
	replaying bool
	// mu guards what builds and checks running side by side share: the progress output,
	// builtIn and aliveLater.
	mu sync.Mutex
	// work holds the harness targets' cache directories of a live run, one per side and
	// target; removed when the run ends ("" when none).
	work string
	// benchSpent is the wall time the targets' A/B runs have spent timing so far, against
	// speedup.run_wall_budget.
	benchSpent time.Duration
	// records are each side's ptxas records as the static gates read them, kept for the
	// explanations (explain.go).
	records [2][]ptxas.Kernel
	// runs are the targets' GPU steps as they go (targetGates), for a step that looks at
	// the later targets (profileGroup).
	runs []*targetRun
	// profiles are the base-vs-head profiles of slow kernels (profile.go), and
	// profileSpent their wall time so far, against profileBudget.
	profiles     map[profileKey]*ncu.Report
	profileSpent time.Duration
	// cacheKey is the base cache's key for this run's base (nil when there is none).
	cacheKey *basecache.Key
	// nvdisasm is the nvdisasm a live run dumps SASS with, "" when there is none
	// (nvdisasmWhy says why): sassdump.go.
	nvdisasm, nvdisasmWhy string
	// saidNoNvdisasm: the progress said why there is no nvdisasm.
	saidNoNvdisasm sync.Once
}

// Run runs the pipeline on the config's run.targets, live or replaying a recording, and
// returns the result of every gate. A live run also writes result.json, journal.json and
// commands.sh in the artifacts. The error is bad usage or an unreadable recording
// (exitcode.BadInput) or a step kernel-gate could not run itself.
func Run(ctx context.Context, cfg config.Config, o Options) (result.Result, error) {
	set, err := cfg.Run.Settings()
	if err != nil {
		return result.Result{}, exitcode.BadInput(err)
	}
	if len(set.Targets) == 0 {
		return result.Result{}, exitcode.BadInputf("%s has no run.targets: kernel-gate run needs to know what to build (see kernel-gate.yml in the kernel-gate repository)", cfg.Path)
	}
	// The steps that run at once (the builds, the targets' sanitizers and checks) write
	// their progress lines here from goroutines of their own: one write at a time.
	o.Progress = &syncWriter{w: cmp.Or[io.Writer](o.Progress, io.Discard)}
	p := &pipeline{cfg: cfg, set: set, o: o, start: time.Now()}
	if o.Getenv != nil && o.Getenv("GITHUB_ACTIONS") == "true" {
		p.gh = githubactions.New(githubactions.WithGetenv(o.Getenv), githubactions.WithWriter(o.Progress))
		// The gates write their progress here too (the sanitizer's names the harness's
		// command, which the config may break over lines that start "::"): only p.gh's
		// groups are kernel-gate's commands.
		p.o.Progress = &syncWriter{w: workflowcmd.NeutralWriter{W: o.Progress}}
	}
	var recorded *Decisions
	if o.Replay != "" {
		var rec *replayer
		if rec, err = newReplayer(o.Replay); err == nil {
			p.x, recorded = rec, &rec.j.Decisions
			// The recording decides what ran; the options of this call cannot change it.
			p.o.All, p.o.KeepGoing, p.o.Targets = recorded.All, recorded.KeepGoing, recorded.Targets
		}
	} else {
		p.x, err = newLive(cmp.Or(o.Artifacts, DefaultArtifacts), o.Environ, o.Tool, p.start, o.LogCap)
	}
	if err != nil {
		return result.Result{}, err
	}
	var sharded *result.Shard
	if recorded != nil && recorded.Shard != nil {
		p.targets, p.runTargets, err = recordedShardTargets(set.Targets, recorded)
	} else if p.targets, err = selectTargets(set.Targets, p.o.Targets); err == nil {
		p.runTargets = p.targets
		if recorded == nil {
			sharded, err = p.shardTargets(ctx)
		}
	}
	if err != nil {
		return result.Result{}, err
	}
	p.decided = Decisions{All: p.o.All, KeepGoing: p.o.KeepGoing, Targets: []string{}, Shard: sharded}
	for _, t := range p.targets {
		p.decided.Targets = append(p.decided.Targets, t.Name)
	}
	if recorded != nil {
		p.decided = *recorded
	}
	var res result.Result
	if p.decided.Shard != nil && len(p.targets) == 0 {
		res, err = p.emptyShard(ctx, recorded != nil)
	} else {
		res, err = p.run(ctx, recorded != nil)
	}
	res.BaseCache = p.decided.BaseCache
	if err == nil && p.decided.Shard != nil {
		res, err = p.withShard(res)
	}
	if err != nil {
		return result.Result{}, err
	}
	if err := p.x.finish(&res, p.decided, time.Since(p.start)); err != nil {
		return result.Result{}, err
	}
	p.progress("done in %s: %s", time.Since(p.start).Round(time.Second), res.Verdict)
	return res, nil
}

func selectTargets(all []config.Target, names []string) ([]config.Target, error) {
	var out []config.Target
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i := slices.IndexFunc(all, func(t config.Target) bool { return t.Name == n })
		if i < 0 {
			var known []string
			for _, t := range all {
				known = append(known, t.Name)
			}
			return nil, exitcode.BadInputf("--targets: no target %q in the config (targets: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	if out == nil {
		return all, nil
	}
	return out, nil
}

// progress writes one line with the time since the start.
func (p *pipeline) progress(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if p.gh != nil {
		msg = workflowcmd.Neutralize(msg) // target names and tool output come from the repository
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.o.Progress, "kernel-gate run [%6.1fs] %s\n", time.Since(p.start).Seconds(), msg)
}

// group runs fn inside a folded log group under GitHub Actions (the title is escaped by
// go-githubactions: target names come from the repository, which a pull request controls).
func (p *pipeline) group(title string, fn func() error) error {
	if p.gh != nil {
		p.gh.Group(title)
		defer p.gh.EndGroup()
	}
	if p.o.OnStage != nil {
		p.o.OnStage(title)
	}
	p.progress("%s", title)
	return fn()
}

// run is the stages in order; replaying, the base and the arch are the recording's.
func (p *pipeline) run(ctx context.Context, replaying bool) (result.Result, error) {
	p.replaying = replaying
	p.locateNvdisasm()
	defer func() {
		if p.work != "" {
			_ = os.RemoveAll(p.work) // kernel-gate's own temporary directory
		}
	}()
	if err := p.group("GPU", func() error { return p.detectGPU(ctx, replaying) }); err != nil {
		return result.Result{}, err
	}
	if err := p.group("base", func() error { return p.resolveBase(ctx, replaying) }); err != nil {
		return result.Result{}, err
	}
	if p.cleanupBase != nil {
		defer p.cleanupBase()
	}
	p.planBuilds()
	if err := p.group("build", func() error { return p.buildAll(ctx) }); err != nil {
		return result.Result{}, err
	}
	if err := p.saveBase(ctx); err != nil {
		return result.Result{}, err
	}
	var static []result.Gate
	if err := p.group("ptxas and sass gates", func() error {
		var err error
		static, err = p.staticGates(ctx)
		return err
	}); err != nil {
		return result.Result{}, err
	}
	static = slices.DeleteFunc(static, func(g result.Gate) bool { return !p.wants(g.Name) })
	dyn, err := p.targetGates(ctx, static)
	if err != nil {
		return result.Result{}, err
	}
	gates := append(static, dyn...)
	if gates, err = p.resultGates(ctx, gates); err != nil {
		return result.Result{}, err
	}
	p.locate(gates)
	p.explainGates(ctx, gates)
	res := result.New(p.o.Tool, gates...)
	if p.gpu != nil {
		res.Device = &result.Device{Name: p.gpu.Name, Arch: p.gpu.Arch(), Driver: p.gpu.Driver}
	}
	return res, nil
}

// wants reports whether Options.Gates asks for the gate.
func (p *pipeline) wants(gate string) bool {
	return len(p.o.Gates) == 0 || slices.Contains(p.o.Gates, gate)
}

// hasBase reports whether head is compared with a base.
func (p *pipeline) hasBase() bool { return p.decided.BaseRev != "" }

// syncWriter writes one Write at a time.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
