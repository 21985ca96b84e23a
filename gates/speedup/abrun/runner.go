package abrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
)

// Metric names of the runner's findings (the judge's are speedup's).
const (
	// MetricRun marks a harness run that failed: crashed, hung, wrote no or a bad file.
	MetricRun = "harness_run"
	// MetricBuild marks a failed build of base or head.
	MetricBuild = "build"
	// MetricThrottled marks rounds dropped because the GPU was throttled.
	MetricThrottled = "throttled"
	// MetricClocks marks what nvidia-smi said, or that it could not be asked.
	MetricClocks = "clocks"
	// MetricRounds marks how the add-rounds loop ended, and rounds a result was missing from.
	MetricRounds = "rounds"
	// MetricServe says how the rounds were taken: served (KG_MODE=serve) or one process per round.
	MetricServe = "serve"
)

// Metrics are the metrics of the runner's own findings, which a recording keeps beside the
// merged files (the judge's are speedup's).
func Metrics() []string {
	return []string{MetricRun, MetricBuild, MetricThrottled, MetricClocks, MetricRounds, MetricServe}
}

// Why the loop stopped (RunnerData.Stopped).
const (
	StopDecided     = "decided"           // every pair decided
	StopBudget      = "budget_spent"      // NeedMore: max_rounds or gpu_seconds_budget reached
	StopRounds      = "rounds_budget"     // the most rounds the runner may run were run
	StopFailed      = "failed"            // a harness run or a build failed
	StopDevices     = "different_devices" // base and head run on different setups
	StopNothing     = "nothing_to_time"   // no kernel × shape has timings on both sides
	StopWallBudget  = "wall_budget"       // speedup.wall_budget spent
	StopRunWall     = "run_wall_budget"   // speedup.run_wall_budget (every target of a run) spent
	defaultSMI      = "nvidia-smi"
	maxListedDrops  = 10
	progressEveryN  = 10
	harnessLogLabel = "harness"
)

// Options is one A/B run.
type Options struct {
	// Base and Head are the harness commands; ignored when Worktree is set.
	Base, Head Command
	// Reference, when set, is run once per round after base and head, in bench mode with
	// the same settings; its timings of each kernel × shape become head's reference timings
	// there (min_speedup_vs_reference), named ReferenceName (or what its file names). A
	// failed reference run fails the gate like any harness run.
	Reference     Command
	ReferenceName string
	// Worktree, when set, builds base from the merge base and head from the working tree.
	Worktree *Worktree
	// Settings hold shapes, samples, timeouts, the rounds budget and extra variables
	// (Config.Settings).
	Settings Settings
	// Speedup is the judge's config: margins, confidence, min/max rounds, GPU budget.
	Speedup speedup.Config
	// ArtifactDir keeps the merged base.json and head.json (for `speedup compare`), the
	// harness and build logs and a failed run's file; "" keeps nothing.
	ArtifactDir string
	// NvidiaSMI is the nvidia-smi to ask (a name on PATH or a path; default nvidia-smi).
	NvidiaSMI string
	// Environ is the environment the commands start from (default os.Environ()).
	Environ []string
	// Progress gets a line now and then (nil: none).
	Progress io.Writer
	// RunWallBudget, when > 0, is the wall time the timing of every A/B run of a
	// kernel-gate run may take together (speedup.run_wall_budget), RunWallSpent what earlier
	// ones took: this run's wall budget is the smaller of Settings.WallBudget and what is left.
	RunWallBudget, RunWallSpent time.Duration
}

// Data is the gate's data: the judge's (speedup.Data, inlined) and the runner's.
type Data struct {
	speedup.Data
	Runner RunnerData `json:"runner"`
}

// RunnerData says how the timings were taken.
type RunnerData struct {
	// Mode is "commands" (two given commands) or "worktree" (built from git).
	Mode        string `json:"mode"`
	BaseCommand string `json:"base_command"`
	HeadCommand string `json:"head_command"`
	// ReferenceCommand is the reference implementation's command; empty when none ran.
	ReferenceCommand string `json:"reference_command,omitempty"`
	BaseDir          string `json:"base_dir,omitempty"`
	HeadDir          string `json:"head_dir,omitempty"`
	// BaseRef and BaseRev are the branch and the merge base built as base (worktree mode).
	BaseRef string   `json:"base_ref,omitempty"`
	BaseRev string   `json:"base_rev,omitempty"`
	Shapes  []string `json:"shapes"`
	Samples int      `json:"samples"`
	// Rounds is how many rounds were kept and judged; RoundsRun how many were run (the
	// warm-up round not counted), dropped ones included; RoundsBudget the most it could run.
	Rounds       int `json:"rounds"`
	RoundsRun    int `json:"rounds_run"`
	RoundsBudget int `json:"rounds_budget"`
	// DroppedRounds are the rounds dropped because the GPU was throttled during them.
	DroppedRounds []Clock `json:"dropped_rounds"`
	// Clocks is nvidia-smi's reading of each round (warm-up included): the worst of the
	// readings its stream gave from just before the round began until it ended, or, when
	// the stream had none, one query's just after the round; empty when it could not be
	// asked.
	Clocks []Clock `json:"clocks"`
	// Stopped says why no more rounds were run.
	Stopped string `json:"stopped"`
	// Failure is the run or build that failed the gate.
	Failure *Failure `json:"failure,omitempty"`
	// BaseFile and HeadFile are the merged harness files in the artifacts.
	BaseFile    string  `json:"base_file,omitempty"`
	HeadFile    string  `json:"head_file,omitempty"`
	WallSeconds float64 `json:"wall_seconds"`
	// TimingSeconds is the wall time from starting the harnesses to the end of the last
	// round (builds excluded): what WallBudgetSeconds bounds.
	TimingSeconds     float64 `json:"timing_seconds"`
	WallBudgetSeconds float64 `json:"wall_budget_seconds,omitempty"`
	// Serve says how the rounds were taken: served by long-lived harnesses or one process
	// per round, side by side.
	Serve *ServeData `json:"serve,omitempty"`
	// Pairs says, per kernel × shape judged in the add-rounds loop, when a look first
	// found it decided (and it stayed decided).
	Pairs []PairTime `json:"pairs,omitempty"`
	// ReferenceLastRound, when the reference stopped being timed before the last round, is
	// the last round (RoundsRun's numbering) it was timed in: a look had found every pair's
	// reference goal decided, and the rounds it added timed base and head only.
	ReferenceLastRound int `json:"reference_last_round,omitempty"`
}

// ServeData is how the harnesses were run (speedup.serve).
type ServeData struct {
	// Setting is speedup.serve: auto, true or false.
	Setting Serve `json:"setting"`
	// Serving is true when base and head served their rounds (KG_MODE=serve): Servers
	// processes per side, started side by side, answered the rounds in turn, each at most
	// RestartEvery of them, and were then replaced together. False when each round started
	// new processes.
	Serving      bool `json:"serving"`
	RestartEvery int  `json:"restart_every,omitempty"`
	Servers      int  `json:"servers,omitempty"`
	// Sides are base, head and (when there is one) the reference.
	Sides []SideServe `json:"sides"`
}

// SideServe is one side's processes.
type SideServe struct {
	Side    Side `json:"side"`
	Serving bool `json:"serving"`
	// Starts counts its processes: serving ones, the handshake that found it does not
	// serve, one per round otherwise.
	Starts int `json:"starts"`
	// SetupSeconds is the time its serving processes took from start to handshake, summed
	// (processes started side by side overlap); Setups each one's, in start order.
	// RoundSeconds the time from request to answer (or a whole process run, when it does
	// not serve), summed over every round, every serving process's warm-up included.
	SetupSeconds float64   `json:"setup_seconds"`
	Setups       []float64 `json:"setups_seconds,omitempty"`
	RoundSeconds float64   `json:"round_seconds"`
	// NotServing says why a side allowed to serve was run once per round.
	NotServing string `json:"not_serving,omitempty"`
}

// PairTime is when the add-rounds loop found a kernel × shape decided.
type PairTime struct {
	Kernel string `json:"kernel"`
	Shape  string `json:"shape"`
	// DecidedRounds is the kept rounds at that look, DecidedSeconds the timing's wall time
	// then (TimingSeconds' clock); 0 and null when no look found it decided.
	DecidedRounds  int      `json:"decided_rounds"`
	DecidedSeconds *float64 `json:"decided_seconds"`
}

// pair is one kernel × shape's rounds from both sides.
type pair struct {
	kernel, shape string
	// seen: the side reported it in some run; timed: with timings.
	seen, timed, refTimed [2]bool
	rounds, ref           [2][][]benchfile.Float
	refName               [2]string
	err                   [2]string // the first error the harness reported for it
	missing               [2]int    // kept rounds in which the side had no timing for it
	summary               [2]string // a summary field used as the round's one timing
	droppedSeconds        float64   // GPU time of its throttled rounds
	// decidedRounds and decidedAt: the look since which it is decided (0: it is not).
	decidedRounds int
	decidedAt     float64
}

func (p *pair) label() string { return p.kernel + " × " + p.shape }

// reported: both sides reported it and no error for it, so the warm-up found it worth
// timing.
func (p *pair) reported() bool {
	return p.seen[0] && p.seen[1] && p.err[0] == "" && p.err[1] == ""
}

// comparable: both sides timed it and reported no error, so the loop judges it.
func (p *pair) comparable() bool {
	return p.timed[0] && p.timed[1] && p.err[0] == "" && p.err[1] == ""
}

type runner struct {
	o        Options
	set      Settings
	cmds     [3]Command // base, head, reference (optional)
	work     string
	logs     [3]*os.File
	sideLogs [3]*sideLog // logs, written through: several serving processes write at once
	logPaths [3]string
	smi      *smi
	// watch is nvidia-smi's stream of readings (nil: the clocks are read once per round);
	// smiFailures counts the rounds whose clocks could not be read.
	watch       *clockWatch
	smiFailures int
	data        RunnerData
	pairs       []*pair
	byKey       map[string]*pair
	devices     [3]*benchfile.Device
	kept        int
	findings    []result.Finding
	warned      map[string]bool
	// cleanup removes the base worktree; nil in commands mode.
	cleanup func()
	// srv are the serving processes of base, head and the reference, answering in turn
	// (none: that side runs once per round); cur is the one answering this round; sides
	// what each side's processes did; lifetimes counts each side's serving processes.
	srv       [3][]*server
	cur       int
	sides     [3]SideServe
	lifetimes [3]int
	// refKept, once the reference is no longer timed, is how many kept rounds it was timed
	// in (at least one: it stops at a look): each pair's reference rounds are the first
	// refKept of head's. Zero while it is timed.
	refKept int
	// timing is when the harnesses were first started: the wall budget's clock.
	timing time.Time
	// art is the artifact directory (nil: none), held open for the whole run: the
	// harnesses it runs know where their artifacts go and could rename it or put a link in
	// its path, but what is written after that still goes where the first file went.
	art *os.Root
}

// Run runs the A/B benchmark and judges it: the speedup gate, with the runner's findings
// and data added. Every failure of a harness run or a build is an error finding, never a
// pass. The error is for options that cannot work (a bad config, no git merge base, an
// unwritable artifact directory) or a cancelled ctx.
func Run(ctx context.Context, o Options) (result.Gate, error) {
	start := time.Now()
	// Resolved once here, the judge's limits are not compiled again for every look.
	if err := o.Speedup.Resolve(o.Speedup.File); err != nil {
		return result.Gate{}, err
	}
	r := &runner{o: o, set: o.Settings, byKey: map[string]*pair{}, warned: map[string]bool{}}
	if r.set.Samples <= 0 {
		r.set.Samples = DefaultSamples
	}
	if r.set.Timeout <= 0 {
		r.set.Timeout = DefaultTimeout
	}
	if r.set.BuildTimeout <= 0 {
		r.set.BuildTimeout = DefaultBuildTimeout
	}
	if r.o.Environ == nil {
		r.o.Environ = os.Environ()
	}
	r.data = RunnerData{Mode: "commands", Shapes: r.set.Shapes, Samples: r.set.Samples,
		DroppedRounds: []Clock{}, Clocks: []Clock{}}
	if r.data.Shapes == nil {
		r.data.Shapes = []string{}
	}
	if o.ArtifactDir != "" {
		if err := os.MkdirAll(o.ArtifactDir, 0o755); err != nil {
			return result.Gate{}, fmt.Errorf("artifact directory: %w", err)
		}
		art, err := os.OpenRoot(o.ArtifactDir)
		if err != nil {
			return result.Gate{}, fmt.Errorf("artifact directory: %w", err)
		}
		defer art.Close()
		r.art = art
	}
	work, err := os.MkdirTemp("", "kernel-gate-bench-")
	if err != nil {
		return result.Gate{}, err
	}
	defer os.RemoveAll(work)
	r.work = work

	fail, err := r.prepare(ctx)
	if cleanup := r.cleanup; cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return result.Gate{}, err
	}
	defer r.closeLogs()
	if fail == nil {
		fail, err = r.measure(ctx)
		if err != nil {
			return result.Gate{}, err
		}
	}
	r.data.WallSeconds = math.Round(time.Since(start).Seconds()*1000) / 1000
	return r.gate(fail)
}

// prepare sets the two commands: given, or built from git. A failed build is a Failure.
func (r *runner) prepare(ctx context.Context) (*Failure, error) {
	w := r.o.Worktree
	if w == nil {
		for i, c := range []Command{r.o.Base, r.o.Head} {
			if len(c.Argv) == 0 || c.Argv[0] == "" {
				return nil, fmt.Errorf("no %s harness command", sideOf(i))
			}
			r.cmds[i] = c
		}
		r.cmds[2] = r.o.Reference
		r.describe()
		return nil, nil
	}
	if err := shellcmd.Check(w.Harness); err != nil {
		return nil, fmt.Errorf("the harness: %w", err)
	}
	r.data.Mode = "worktree"
	r.data.BaseRef = w.BaseRef
	if r.data.BaseRef == "" {
		r.data.BaseRef = DefaultBaseRef
	}
	base, head, cleanup, err := checkoutBase(ctx, *w)
	r.cleanup = cleanup
	if err != nil {
		return nil, err
	}
	r.data.BaseRev = base.rev
	trees := [2]tree{base, head}
	for i, t := range trees {
		r.cmds[i] = harnessCommand(w.Harness, t)
	}
	r.cmds[2] = r.o.Reference
	r.describe()
	if strings.TrimSpace(w.Build) != "" {
		for i, t := range trees {
			r.progress("building %s in %s", sideOf(i), t.dir)
			fail, err := build(ctx, sideOf(i), w.Build, t, r.set.BuildTimeout, r.o.Environ, r.art)
			if err != nil || fail != nil {
				return fail, err
			}
		}
	}
	return nil, nil
}

func (r *runner) describe() {
	r.data.BaseCommand, r.data.HeadCommand = describeCommand(r.cmds[0]), describeCommand(r.cmds[1])
	if len(r.cmds[2].Argv) > 0 {
		r.data.ReferenceCommand = describeCommand(r.cmds[2])
	}
	r.data.BaseDir, r.data.HeadDir = r.cmds[0].Dir, r.cmds[1].Dir
}

func (r *runner) progress(format string, a ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, "kernel-gate A/B run: "+format+"\n", a...)
	}
}

// warn adds a finding once per key.
func (r *runner) warn(key string, sev result.Severity, metric, kernel, format string, a ...any) {
	if r.warned[key] {
		return
	}
	r.warned[key] = true
	r.findings = append(r.findings, result.Finding{Severity: sev, Metric: metric, Kernel: kernel, Message: fmt.Sprintf(format, a...)})
}

func (r *runner) openLogs() error {
	if r.art == nil {
		return nil
	}
	for i := range r.logs {
		if len(r.cmds[i].Argv) == 0 {
			continue // no reference
		}
		name := sideOf(i).String() + "-" + harnessLogLabel + ".log"
		f, err := procgroup.CreateArtifactIn(r.art, name, 0o644)
		if err != nil {
			return fmt.Errorf("the %s harness log: %w", sideOf(i), err)
		}
		p := filepath.Join(r.o.ArtifactDir, name)
		r.logs[i], r.logPaths[i], r.sideLogs[i] = f, p, newSideLog(f)
	}
	return nil
}

func (r *runner) closeLogs() {
	for _, f := range r.logs {
		if f != nil {
			_ = f.Close()
		}
	}
}

func (s Side) String() string { return string(s) }

// runHarness runs one side once (round 0 is the warm-up) and reads its file.
func (r *runner) runHarness(ctx context.Context, side Side, round int) (*benchfile.File, *Failure, error) {
	i := side.index()
	c := r.cmds[i]
	out := filepath.Join(r.work, fmt.Sprintf("%s-%d.json", side, round))
	_ = os.Remove(out)
	label := "warm-up round"
	if round > 0 {
		label = fmt.Sprintf("round %d", round)
	}
	spec := runSpec{Argv: c.Argv, Dir: c.Dir, Timeout: r.set.Timeout, LogCap: runLogBytes,
		Env: harnessEnv(append(slices.Clone(r.o.Environ), c.Env...), r.set.Env, r.set.Shapes, r.set.Samples, out)}
	if l := r.sideLogs[i]; l != nil {
		l.header("==> kernel-gate A/B run: %s, %s: %s <==", side, label, describeCommand(c))
		spec.Log = l.process(0)
	}
	res, err := execute(ctx, spec)
	r.sides[i].Starts++
	r.sides[i].RoundSeconds += res.Took.Seconds()
	if err != nil {
		return nil, nil, err
	}
	fail := func(why string) (*benchfile.File, *Failure, error) {
		name := fmt.Sprintf("failed-%s-round%d.json", side, round)
		return nil, &Failure{Side: side, Stage: "run", Round: round, Why: why, Output: res.Output,
			File: keepFile(out, r.art, name), Log: r.logPaths[i]}, nil
	}
	if res.Why != "" {
		why := res.Why
		if !strings.HasPrefix(why, "timed out") && !strings.HasPrefix(why, "could not") {
			why = "the harness " + why
			if errs := harnessErrors(out); errs != "" {
				why += "; it reports: " + errs
			}
		}
		return fail(why)
	}
	f, why := readHarnessFile(out)
	if why != "" {
		return fail(why)
	}
	if why := r.sameDevice(i, f.Device); why != "" {
		return fail(why)
	}
	_ = os.Remove(out)
	return f, nil, nil
}

// sameDevice keeps the device a side's first file reports and says why a later one that
// reports another is refused.
func (r *runner) sameDevice(i int, d benchfile.Device) string {
	if prev := r.devices[i]; prev == nil {
		r.devices[i] = &d
	} else if *prev != d {
		return fmt.Sprintf("it reported the device %s, not %s as before: the GPU, driver or toolkit changed during the run", deviceText(d), deviceText(*prev))
	}
	return ""
}

// timeSide takes one side's round: asked of its serving process, or run as a process of
// its own (round 0 is the warm-up).
func (r *runner) timeSide(ctx context.Context, side Side, round int) (*benchfile.File, *Failure, error) {
	i := side.index()
	if len(r.srv[i]) == 0 {
		return r.runHarness(ctx, side, round)
	}
	s := r.srv[i][r.cur%len(r.srv[i])]
	var (
		f           *benchfile.File
		why, output string
	)
	if round == 0 {
		// The run's warm-up round is the first process's own, taken when it started.
		f = s.warm
	} else {
		start := time.Now()
		var err error
		f, why, output, err = s.ask(ctx, r.request(round), r.set.RoundTimeout)
		r.sides[i].RoundSeconds += time.Since(start).Seconds()
		if err != nil {
			return nil, nil, err
		}
	}
	fail := func(why string) (*benchfile.File, *Failure, error) {
		return nil, &Failure{Side: side, Stage: "run", Round: round, Why: fmt.Sprintf("its serving process (%d of this side, pid %d) %s", s.lifetime, s.proc.Pid(), why),
			Output: output, Log: r.logPaths[i]}, nil
	}
	if why != "" {
		return fail(why)
	}
	if why := r.sameDevice(i, f.Device); why != "" {
		s.kill()
		return fail(why)
	}
	return f, nil, nil
}

// request is the serve request for round.
func (r *runner) request(round int) ServeRequest {
	return ServeRequest{Round: round, Samples: r.set.Samples, Shapes: r.set.Shapes, Kernels: r.requestKernels()}
}

// requestKernels are the kernels a request names: KG_KERNELS of speedup.env, when set.
func (r *runner) requestKernels() []string {
	for _, v := range r.set.Env {
		if k, ok := strings.CutPrefix(v, "KG_KERNELS="); ok {
			var out []string
			for _, name := range strings.Split(k, ",") {
				if name = strings.TrimSpace(name); name != "" {
					out = append(out, name)
				}
			}
			return out
		}
	}
	return nil
}

// attachReference runs the reference command (when there is one) and gives each of head's
// results the reference's timings of the same kernel × shape. The reference must run on
// the device head ran on.
func (r *runner) attachReference(ctx context.Context, head *benchfile.File, round int) (*Failure, error) {
	if len(r.cmds[2].Argv) == 0 || r.refStopped() {
		return nil, nil
	}
	f, fail, err := r.timeSide(ctx, Reference, round)
	if err != nil || fail != nil {
		return fail, err
	}
	if d := r.devices[1]; d != nil && *d != f.Device {
		return &Failure{Side: Reference, Stage: "run", Round: round, Log: r.logPaths[2],
			Why: fmt.Sprintf("it reported the device %s, head %s: a reference timed elsewhere is no reference", deviceText(f.Device), deviceText(*d))}, nil
	}
	byKey := map[string]*benchfile.Result{}
	for i := range f.Results {
		res := &f.Results[i]
		byKey[res.Kernel+"\x00"+res.Shape] = res
	}
	for i := range head.Results {
		h := &head.Results[i]
		ref := byKey[h.Kernel+"\x00"+h.Shape]
		if ref == nil || ref.Error != "" {
			continue
		}
		name := r.o.ReferenceName
		if name == "" && ref.Reference != nil {
			name = ref.Reference.Name
		}
		if name == "" {
			name = describeCommand(r.cmds[2])
		}
		h.Reference = &benchfile.Reference{Name: name, RoundsUs: ref.RoundsUs, SamplesUs: ref.SamplesUs, P50Us: ref.P50Us}
	}
	return nil, nil
}

func deviceText(d benchfile.Device) string {
	return fmt.Sprintf("%q (compute %s, driver %s, CUDA %s)", d.Name, d.ComputeCap, d.Driver, d.CUDA)
}

// roundOf picks a result's timings for one round: rounds_us[0], else samples_us, else one
// summary number. extra is how many more rounds the run wrote.
func roundOf(rounds [][]benchfile.Float, samples []benchfile.Float, summaries map[string]*benchfile.Float) (t []benchfile.Float, summary string, extra int, ok bool) {
	switch {
	case len(rounds) > 0:
		return append([]benchfile.Float{}, rounds[0]...), "", len(rounds) - 1, true
	case len(samples) > 0:
		return append([]benchfile.Float{}, samples...), "", 0, true
	}
	for _, k := range []string{"p50_us", "mean_us", "min_us"} {
		if v := summaries[k]; v != nil {
			return []benchfile.Float{*v}, k, 0, true
		}
	}
	return nil, "", 0, false
}

// seconds sums the valid timings of a round, in seconds.
func seconds(t []benchfile.Float) float64 {
	s := 0.0
	for _, v := range t {
		if v > 0 && v.Finite() {
			s += float64(v)
		}
	}
	return s / 1e6
}

// take records one round of both sides: kept (the timings join the pairs' rounds),
// dropped (their GPU time is counted against the budget) or the warm-up (only which
// results each side reports, and their errors).
func (r *runner) take(files [2]*benchfile.File, round int, mode string) {
	type cur struct {
		t, ref   []benchfile.Float
		got, rok bool
	}
	now := map[*pair]*[2]cur{}
	for i, f := range files {
		side := sideOf(i)
		for _, res := range f.Results {
			key := res.Kernel + "\x00" + res.Shape
			p := r.byKey[key]
			if p == nil {
				p = &pair{kernel: res.Kernel, shape: res.Shape}
				r.byKey[key] = p
				r.pairs = append(r.pairs, p)
			}
			p.seen[i] = true
			if res.Error != "" && p.err[i] == "" {
				p.err[i] = res.Error
				r.warn("err\x00"+string(side)+key, result.Warning, MetricRun, res.Kernel,
					"%s: the %s harness reported an error in its %s: %s", p.label(), side, roundLabel(round), msgtext.Clip(strings.TrimSpace(res.Error), 500))
			}
			if mode == "warm-up" {
				continue
			}
			c := now[p]
			if c == nil {
				c = &[2]cur{}
				now[p] = c
			}
			t, summary, extra, ok := roundOf(res.RoundsUs, res.SamplesUs, map[string]*benchfile.Float{"p50_us": res.P50Us, "mean_us": res.MeanUs, "min_us": res.MinUs})
			if ok {
				c[i].t, c[i].got = t, true
				if summary != "" && p.summary[i] == "" {
					p.summary[i] = summary
					r.warn("summary\x00"+string(side)+key, result.Notice, MetricRounds, res.Kernel,
						"%s: the %s harness reports no per-launch timings, only %s: each round holds that one number", p.label(), side, summary)
				}
				if extra > 0 {
					r.warn("extra\x00"+string(side), result.Warning, MetricRounds, "",
						"the %s harness wrote %d rounds per run though KG_ROUNDS=1 asked for one: only the first of each run is used", side, extra+1)
				}
			}
			if ref := res.Reference; ref != nil {
				if rt, _, _, rok := roundOf(ref.RoundsUs, ref.SamplesUs, map[string]*benchfile.Float{"p50_us": ref.P50Us}); rok {
					c[i].ref, c[i].rok = rt, true
					if p.refName[i] == "" {
						p.refName[i] = ref.Name
					}
				}
			}
		}
	}
	switch mode {
	case "warm-up":
		return
	case "dropped":
		for p, c := range now {
			for i := range c {
				p.droppedSeconds += seconds(c[i].t) + seconds(c[i].ref)
			}
		}
		return
	}
	for _, p := range r.pairs {
		c := now[p]
		if c == nil {
			c = &[2]cur{}
		}
		for i := range 2 {
			if c[i].got {
				p.timed[i] = true
			} else if p.seen[i] {
				p.missing[i]++
			}
			p.rounds[i] = append(pad(p.rounds[i], r.kept), nonNil(c[i].t))
			if r.refStopped() {
				continue
			}
			if c[i].rok {
				p.refTimed[i] = true
			}
			p.ref[i] = append(pad(p.ref[i], r.kept), nonNil(c[i].ref))
		}
	}
	r.kept++
}

// pad fills rounds a pair was not seen in with empty rounds.
func pad(rounds [][]benchfile.Float, n int) [][]benchfile.Float {
	for len(rounds) < n {
		rounds = append(rounds, []benchfile.Float{})
	}
	return rounds
}

func nonNil(t []benchfile.Float) []benchfile.Float {
	if t == nil {
		return []benchfile.Float{}
	}
	return t
}

func roundLabel(round int) string {
	if round == 0 {
		return "warm-up round"
	}
	return fmt.Sprintf("round %d", round)
}

func floats(rounds [][]benchfile.Float) [][]float64 {
	out := make([][]float64, len(rounds))
	for i, r := range rounds {
		out[i] = make([]float64, len(r))
		for j, v := range r {
			out[i][j] = float64(v)
		}
	}
	return out
}

// refStopped says the reference is no longer timed (stopReference).
func (r *runner) refStopped() bool { return r.refKept > 0 }

// refRounds is how many kept rounds the reference was timed in.
func (r *runner) refRounds() int {
	if r.refStopped() {
		return r.refKept
	}
	return r.kept
}

// judgement is what judgeAll found: the rounds to add (the most any undecided pair needs,
// 0 when none needs more or none can have more), how many pairs it judged, how many of them
// are undecided, and of how many the reference goal is undecided.
type judgement struct{ need, judged, undecided, refUndecided int }

// judgeAll judges every comparable pair as the gate will. At a look of the add-rounds loop
// (look) it also keeps when each pair was first found decided.
func (r *runner) judgeAll(look bool) (out judgement, err error) {
	family := 0
	for _, p := range r.pairs {
		if !p.comparable() {
			continue
		}
		family++
		if p.refTimed[1] && r.o.Speedup.Limits(p.kernel, p.shape).MinSpeedupVsReference > 0 {
			family++
		}
	}
	for _, p := range r.pairs {
		if !p.comparable() {
			continue
		}
		out.judged++
		lim := r.o.Speedup.Limits(p.kernel, p.shape)
		pr := speedup.Pair{Base: floats(p.rounds[0]), Head: floats(p.rounds[1])}
		if p.refTimed[1] {
			pr.Reference = floats(p.ref[1])
		}
		j, err := speedup.JudgePair(pr, lim, family)
		if err != nil {
			return judgement{}, err
		}
		j.GPUSeconds += p.droppedSeconds
		refOpen := j.Reference != nil && j.Reference.Verdict == speedup.GoalInconclusive
		decided := !(j.Verdict == speedup.Inconclusive || refOpen)
		if !decided {
			out.undecided++
		}
		// A goal whose pair the reference has not timed yet is not decided either: stopped
		// now, it would be left unchecked (a warning), where its later rounds decide it.
		if refOpen && !j.Reference.SummaryOnly || j.Reference == nil && lim.MinSpeedupVsReference > 0 {
			out.refUndecided++
		}
		if look {
			switch {
			case !decided:
				p.decidedRounds = 0
			case p.decidedRounds == 0:
				p.decidedRounds, p.decidedAt = r.kept, time.Since(r.timing).Seconds()
			}
		}
		out.need = max(out.need, speedup.NeedMore(j, lim))
	}
	return out, nil
}

// wallBudget is this run's wall budget and the stop it gives when spent: speedup.wall_budget,
// or what is left of speedup.run_wall_budget when that is less.
func (r *runner) wallBudget() (time.Duration, string) {
	wall := r.set.WallBudget
	if wall <= 0 {
		wall = DefaultWallBudget
	}
	if b := r.o.RunWallBudget; b > 0 {
		if left := b - r.o.RunWallSpent; left < wall {
			return max(left, 0), StopRunWall
		}
	}
	return wall, StopWallBudget
}

// budgetText says which wall budget was spent, for messages.
func (r *runner) budgetText(stop string) string {
	if stop == StopRunWall {
		return fmt.Sprintf("the wall budget of the whole kernel-gate run (speedup.run_wall_budget %s, %s of it spent before this target)",
			r.o.RunWallBudget, r.o.RunWallSpent.Round(time.Millisecond))
	}
	return fmt.Sprintf("the wall budget speedup.wall_budget (%s)", r.set.WallBudget)
}

// measure runs the warm-up round and the timed rounds until every pair is decided or the
// budgets are spent. A failed run ends it. Its steps: the wall budget (none left: nothing
// is started), the clock readings (startClocks), the serving harnesses, the warm-up round,
// the timed rounds, and at the end (endTiming) the serving processes stopped and the
// timing's data kept.
func (r *runner) measure(ctx context.Context) (fail *Failure, err error) {
	if err := r.openLogs(); err != nil {
		return nil, err
	}
	r.timing = time.Now()
	wall, wallStop := r.wallBudget()
	r.data.WallBudgetSeconds = wall.Seconds()
	defer func() { fail = r.endTiming(fail, err) }()
	if wall <= 0 {
		// Earlier targets spent the whole run's budget: nothing is started.
		r.data.Stopped = wallStop
		r.warn("wall", result.Warning, MetricRounds, "", "not timed: %s was spent before this target started; its pairs are not judged, which is not a pass", r.budgetText(wallStop))
		return nil, nil
	}
	r.findSMI()
	// min_rounds and max_rounds are top-level settings (rules set margins and goals only).
	top := r.o.Speedup.Limits("", "")
	budget := r.set.RoundsBudget
	if budget <= 0 {
		budget = 2 * top.MaxRounds
	}
	r.data.RoundsBudget = budget
	if stop := r.watchClocks(ctx); stop != nil {
		defer stop()
	}

	// Serving harnesses are started once (and every restart_every rounds), before any round.
	if fail, err := r.startServing(ctx); err != nil || fail != nil {
		return fail, err
	}
	stop, fail, err := r.warmUp(ctx)
	if err != nil || fail != nil {
		return fail, err
	}
	if stop != "" {
		r.data.Stopped = stop
		return nil, nil
	}
	if fail, err := r.timedRounds(ctx, top.MinRounds, budget, wall, wallStop); err != nil || fail != nil {
		return fail, err
	}
	if r.smiFailures > 0 {
		r.warn("smi-count", result.Warning, MetricClocks, "", "nvidia-smi could not be read for %d of %d round(s)", r.smiFailures, r.data.RoundsRun+1)
	}
	return nil, nil
}

// endTiming ends the timing however it ended: the serving processes are stopped (killed
// after a failure, which must not wait on them), and the timing's wall time, each side's
// serving and when each pair was decided go into the runner's data. A serving process
// that fails at its stop fails the run: its rounds' timings are not trusted.
func (r *runner) endTiming(fail *Failure, err error) *Failure {
	if fail != nil || err != nil {
		r.killServers()
	} else if f := r.stopServers(r.data.RoundsRun); f != nil {
		fail = f
		r.data.Stopped = StopFailed
	}
	r.data.TimingSeconds = millis(time.Since(r.timing).Seconds())
	if r.data.Serve != nil {
		for _, i := range r.sidesPresent() {
			sd := r.sides[i]
			sd.SetupSeconds, sd.RoundSeconds = millis(sd.SetupSeconds), millis(sd.RoundSeconds)
			r.data.Serve.Sides = append(r.data.Serve.Sides, sd)
		}
	}
	for _, p := range r.pairs {
		if !p.comparable() {
			continue
		}
		pt := PairTime{Kernel: p.kernel, Shape: p.shape, DecidedRounds: p.decidedRounds}
		if p.decidedRounds > 0 {
			at := millis(p.decidedAt)
			pt.DecidedSeconds = &at
		}
		r.data.Pairs = append(r.data.Pairs, pt)
	}
	return fail
}

// findSMI finds nvidia-smi; without it the rounds are kept unchecked, which a warning says.
func (r *runner) findSMI() {
	name := r.o.NvidiaSMI
	if name == "" {
		name = defaultSMI
	}
	s, err := newSMI(name, r.o.Environ)
	if err != nil {
		r.warn("smi", result.Warning, MetricClocks, "",
			"%s was not found (%v): SM clocks, temperature and throttling were not checked, so no round was dropped for throttling", name, err)
		return
	}
	r.smi = s
}

// smiWarn is the warning nvidia-smi's readers give about what it printed.
func (r *runner) smiWarn(msg string) { r.warn("smi-many", result.Warning, MetricClocks, "", "%s", msg) }

// watchClocks starts nvidia-smi's stream of readings, which sees the GPU during a round
// rather than just after it; it returns what stops the stream (nil: none was started, and
// the clocks are read once per round).
func (r *runner) watchClocks(ctx context.Context) (stop func()) {
	if r.smi == nil {
		return nil
	}
	w, err := r.smi.watch(ctx, clockInterval, r.smiWarn)
	if err != nil {
		r.warn("smi-stream", result.Warning, MetricClocks, "", "nvidia-smi's stream of readings could not be started (%v): the clocks are read once per round", err)
		return nil
	}
	r.watch = w
	return w.stop
}

// clock is round's reading, taken once the round (started at from) is done: from the
// stream's readings during it, or else (no stream, or one that stopped) from one query of
// nvidia-smi then, which sees the GPU just after the round rather than during it.
func (r *runner) clock(ctx context.Context, round int, from time.Time) Clock {
	if r.smi == nil {
		return Clock{Round: round}
	}
	if r.watch != nil {
		c, ok := r.watch.reading(round, from, time.Now())
		ended, bad := r.watch.trouble()
		if bad != "" {
			r.warn("smi-stream-bad", result.Warning, MetricClocks, "", "nvidia-smi's stream printed %q, which is not a reading: such lines were not taken as unthrottled", bad)
		}
		if ok {
			return r.keepClock(c)
		}
		if ended != "" {
			r.warn("smi-stream-ended", result.Warning, MetricClocks, "", "nvidia-smi's stream of readings ended (%s): from then on the clocks were read once after each round", ended)
		} else {
			why := ""
			if bad != "" {
				why = " (it printed lines that were not readings)"
			}
			r.warn("smi-stream-stale", result.Warning, MetricClocks, "", "nvidia-smi's stream of readings had no recent one after round %d%s: such rounds' clocks were read once after the round", round, why)
		}
	}
	c, err := r.smi.sample(ctx, round, r.smiWarn)
	if err != nil {
		r.smiFailures++
		r.warn("smi-fail", result.Warning, MetricClocks, "", "asking nvidia-smi for the clocks failed (%v): rounds it could not read were kept unchecked", err)
		return Clock{Round: round}
	}
	return r.keepClock(c)
}

// keepClock keeps a round's reading in the runner's data, warning once when nvidia-smi
// gives no clock event reasons: such a round's throttling cannot be checked.
func (r *runner) keepClock(c Clock) Clock {
	if _, err := strconv.ParseUint(c.Reasons, 0, 64); err != nil {
		r.warn("smi-reasons", result.Warning, MetricClocks, "",
			"nvidia-smi gives no clock event reasons (%q): throttling was not checked for such rounds", c.Reasons)
	}
	r.data.Clocks = append(r.data.Clocks, c)
	return c
}

// warmUp runs the warm-up round: discarded, but it must work, and it says which results
// each side reports. stop is why there is nothing to time: the sides ran on different
// devices, or no kernel × shape is reported by both without an error.
func (r *runner) warmUp(ctx context.Context) (stop string, fail *Failure, err error) {
	from := time.Now()
	var files [2]*benchfile.File
	for i := range 2 {
		f, fail, err := r.timeSide(ctx, sideOf(i), 0)
		if err != nil || fail != nil {
			return "", fail, err
		}
		files[i] = f
	}
	if fail, err := r.attachReference(ctx, files[1], 0); err != nil || fail != nil {
		return "", fail, err
	}
	r.clock(ctx, 0, from)
	r.take(files, 0, "warm-up")
	r.progress("warm-up round done: %d kernel × shape result(s)", len(r.pairs))
	if *r.devices[0] != *r.devices[1] {
		return StopDevices, nil, nil
	}
	if r.reportedPairs() == 0 {
		return StopNothing, nil, nil
	}
	return "", nil, nil
}

// reportedPairs counts the pairs both sides reported without an error.
func (r *runner) reportedPairs() int {
	n := 0
	for _, p := range r.pairs {
		if p.reported() {
			n++
		}
	}
	return n
}

// turns are the serving processes' turns: the rounds they answered since they (re)started
// and how many times they were restarted, which set which process answers a round and
// which side it times first.
type turns struct{ sinceStart, pools int }

// timedRounds adds rounds until a look finds every pair decided (or none needing more
// rounds can have them) or a budget is spent: the add-rounds loop, which looks first at
// minRounds kept rounds.
func (r *runner) timedRounds(ctx context.Context, minRounds, budget int, wall time.Duration, wallStop string) (*Failure, error) {
	target := minRounds
	var t turns
	for {
		if r.kept >= target && r.kept > 0 {
			need, done, err := r.look()
			if err != nil || done {
				return nil, err
			}
			target = r.kept + need
		}
		if done, err := r.budgetSpent(budget, target, wall, wallStop); err != nil || done {
			return nil, err
		}
		if fail, err := r.timedRound(ctx, &t); err != nil || fail != nil {
			r.data.Stopped = StopFailed
			return fail, err
		}
	}
}

// look judges every pair at a look of the add-rounds loop: done (with the reason in
// RunnerData.Stopped) when nothing is judged or no pair needs more rounds, else how many
// rounds to add.
func (r *runner) look() (need int, done bool, err error) {
	j, err := r.judgeAll(true)
	if err != nil {
		return 0, true, err
	}
	need, undecided, judged := j.need, j.undecided, j.judged
	if judged == 0 {
		r.data.Stopped = StopNothing
		return 0, true, nil
	}
	if need == 0 {
		r.data.Stopped = StopDecided
		if undecided > 0 {
			r.data.Stopped = StopBudget
		}
		r.progress("%d rounds: %d of %d pair(s) decided; done", r.kept, judged-undecided, judged)
		return 0, true, nil
	}
	r.progress("%d rounds: %d of %d pair(s) decided; adding %d round(s)", r.kept, judged-undecided, judged, need)
	if j.refUndecided == 0 && len(r.cmds[2].Argv) > 0 && !r.refStopped() {
		r.stopReference()
	}
	return need, false, nil
}

// stopReference ends the reference's timing once a look found its goal decided for every
// pair: the rounds added for base and head do not time it (its Python start-up would be
// most of a new set's), and each pair's reference estimate stays the one of the rounds
// that decided it, beside the same rounds of head. Its serving processes end with their
// set, at the next restart or the end, never while a round is timed.
// Why: docs/threat-model.md, threat-model T21.
func (r *runner) stopReference() {
	r.refKept = r.kept
	r.data.ReferenceLastRound = r.data.RoundsRun
	r.progress("the reference goal is decided for every pair after %d rounds: the added rounds time base and head only", r.kept)
}

// budgetSpent stops the loop at the runner's rounds budget or its wall budget, warning
// when pairs are left undecided: they are inconclusive, never passed.
func (r *runner) budgetSpent(budget, target int, wall time.Duration, wallStop string) (bool, error) {
	if r.data.RoundsRun >= budget {
		r.data.Stopped = StopRounds
		j, err := r.judgeAll(false)
		if err != nil {
			return true, err
		}
		if undecided := j.undecided; undecided > 0 || r.kept < target {
			r.warn("rounds-budget", result.Warning, MetricRounds, "",
				"the runner stopped at its rounds budget (%d rounds run, %d kept) with %d pair(s) undecided: they are reported as inconclusive, not passed", r.data.RoundsRun, r.kept, undecided)
		}
		return true, nil
	}
	if spent := time.Since(r.timing); spent >= wall {
		r.data.Stopped = wallStop
		r.wallSpent(wallStop, spent)
		return true, nil
	}
	return false, nil
}

// timedRound runs one timed round of both sides (restarting the serving processes first
// when they have answered their rounds) and keeps it, or drops it when the GPU was
// throttled during it.
func (r *runner) timedRound(ctx context.Context, t *turns) (*Failure, error) {
	serving := r.data.Serve != nil && r.data.Serve.Serving
	if serving && t.sinceStart >= r.data.Serve.Servers*r.data.Serve.RestartEvery {
		if fail, err := r.restart(ctx, r.data.RoundsRun+1); err != nil || fail != nil {
			return fail, err
		}
		t.sinceStart = 0
		t.pools++
	}
	r.data.RoundsRun++
	round := r.data.RoundsRun
	from := time.Now()
	order := [2]int{0, 1}
	if r.headFirst(serving, t) {
		order = [2]int{1, 0}
	}
	var files [2]*benchfile.File
	for _, i := range order {
		f, fail, err := r.timeSide(ctx, sideOf(i), round)
		if err != nil || fail != nil {
			return fail, err
		}
		files[i] = f
	}
	if fail, err := r.attachReference(ctx, files[1], round); err != nil || fail != nil {
		return fail, err
	}
	c := r.clock(ctx, round, from)
	if c.Throttled {
		r.data.DroppedRounds = append(r.data.DroppedRounds, c)
		r.take(files, round, "dropped")
		r.progress("round %d dropped: the GPU was throttled (%s)", round, strings.Join(c.ReasonNames, ", "))
		return nil, nil
	}
	r.take(files, round, "kept")
	if round%progressEveryN == 0 {
		r.progress("round %d done (%d kept)", round, r.kept)
	}
	return nil, nil
}

// headFirst is the round's order, ABBA. One process per round: the k-th kept round runs
// base first when k is even. Served, process cur of each side answers (headFirst sets
// cur), and each process alternates the order from one of its rounds to the next, starting
// with base on the even ones, head on the odd ones (and the other way round in every other
// set of processes, for an odd count), so that no process, and its first round in
// particular, is always timed first.
func (r *runner) headFirst(serving bool, t *turns) bool {
	headFirst := r.kept%2 == 1
	if serving {
		n := r.data.Serve.Servers
		r.cur = t.sinceStart % n
		headFirst = (r.cur+t.sinceStart/n+t.pools)%2 == 1
	}
	t.sinceStart++
	return headFirst
}

// wallSpent warns, once, that the wall budget ran out with pairs undecided: they are
// inconclusive at the rounds they reached (the judge's findings say so per pair), never
// passed.
func (r *runner) wallSpent(stop string, spent time.Duration) {
	j, err := r.judgeAll(false)
	if err != nil {
		return // the gate's own judging reports it
	}
	undecided := j.undecided
	if r.kept == 0 {
		undecided += r.reportedPairs()
	}
	if undecided == 0 {
		return
	}
	r.warn("wall", result.Warning, MetricRounds, "",
		"%s was spent after %d round(s) (%.1f s of timing) with %d pair(s) undecided: they are reported as inconclusive, a warning, never a pass",
		r.budgetText(stop), r.kept, spent.Seconds(), undecided)
}

// millis rounds seconds to milliseconds.
func millis(s float64) float64 { return math.Round(s*1000) / 1000 }

// merged is one side's rounds as one harness file: round i beside the other side's round i.
func (r *runner) merged(i int) *benchfile.File {
	f := &benchfile.File{Schema: benchfile.Schema, Results: []benchfile.Result{},
		Request: &benchfile.Request{Mode: benchfile.ModeBench, Shapes: r.set.Shapes, Rounds: r.kept, Samples: r.set.Samples}}
	if d := r.devices[i]; d != nil {
		f.Device = *d
	}
	for _, p := range r.pairs {
		if !p.seen[i] {
			continue
		}
		res := benchfile.Result{Kernel: p.kernel, Shape: p.shape, Error: p.err[i]}
		if p.timed[i] {
			res.RoundsUs = pad(p.rounds[i], r.kept)
		}
		if p.refTimed[i] {
			res.Reference = &benchfile.Reference{Name: p.refName[i], RoundsUs: pad(p.ref[i], r.refRounds())}
		}
		f.Results = append(f.Results, res)
	}
	return f
}

// writeMerged encodes a merged file, reads it back as `speedup compare` will, and keeps it in
// the artifacts.
func (r *runner) writeMerged(i int) (*benchfile.File, string, error) {
	var buf bytes.Buffer
	if err := benchfile.Write(&buf, r.merged(i)); err != nil {
		return nil, "", err
	}
	f, err := benchfile.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, "", fmt.Errorf("the merged %s file does not read back: %w", sideOf(i), err)
	}
	path := ""
	if r.art != nil {
		name := sideOf(i).String() + ".json"
		if err := procgroup.WriteArtifactIn(r.art, name, buf.Bytes(), 0o644); err != nil {
			return nil, "", fmt.Errorf("writing the merged %s file: %w", sideOf(i), err)
		}
		path = filepath.Join(r.o.ArtifactDir, name)
	}
	return f, path, nil
}

// gate judges the merged files and adds the runner's findings and data.
func (r *runner) gate(fail *Failure) (result.Gate, error) {
	r.data.Rounds = r.kept
	r.notes()
	var files [2]*benchfile.File
	for i := range 2 {
		if len(r.merged(i).Results) == 0 {
			continue // nothing ran (a failed build or warm-up)
		}
		f, path, err := r.writeMerged(i)
		if err != nil {
			return result.Gate{}, err
		}
		files[i] = f
		if i == 0 {
			r.data.BaseFile = path
		} else {
			r.data.HeadFile = path
		}
	}
	findings := r.findings
	if fail != nil {
		r.data.Failure = fail
		r.data.Stopped = StopFailed
		metric := MetricRun
		if fail.Stage == "build" {
			metric = MetricBuild
		}
		findings = append([]result.Finding{{Severity: result.Error, Metric: metric, Message: fail.message()}}, findings...)
	}
	g, err := Judge(files[0], files[1], r.o.Speedup, r.data, findings)
	if err != nil {
		return g, err
	}
	if fail != nil {
		// Live, the devices the harnesses reported are known even without a merged file.
		var d Data
		if json.Unmarshal(g.Data, &d) == nil {
			for i, dev := range []*benchfile.Device{&d.BaseDevice, &d.HeadDevice} {
				if r.devices[i] != nil {
					*dev = *r.devices[i]
				}
			}
			if err := g.SetData(d); err != nil {
				return g, err
			}
		}
	}
	return g, nil
}

// Judge is the gate of an A/B run from what it kept: the merged base and head files (nil
// when a side has none), the runner's data and its own findings (the failure first, when
// the run failed). Run judges with it, and so does a replay of a recording
// (action/pipeline), so that both reach the same verdicts, findings and words. The error
// is for a config that does not validate or files that are missing though the run did not
// fail.
func Judge(base, head *benchfile.File, cfg speedup.Config, rd RunnerData, findings []result.Finding) (result.Gate, error) {
	if rd.Failure != nil {
		return notJudged(base, head, cfg, rd, findings, true, "no comparison: the "+rd.Failure.where()+" failed: "+firstLine(rd.Failure.Why))
	}
	if rd.Rounds == 0 && (rd.Stopped == StopWallBudget || rd.Stopped == StopRunWall) {
		// The budget ran out before a round was kept: nothing to judge, never a pass.
		return notJudged(base, head, cfg, rd, findings, false, "not compared: "+noMoreRounds(rd)+" before the first round; nothing judged, which is not a pass")
	}
	if base == nil || head == nil {
		return result.Gate{}, errors.New("abrun: no harness file to judge")
	}
	g, err := speedup.CompareWith(base, head, cfg, speedup.CompareOptions{NoMoreRounds: noMoreRounds(rd)})
	if err != nil {
		return g, err
	}
	var sd speedup.Data
	if err := json.Unmarshal(g.Data, &sd); err != nil {
		return g, fmt.Errorf("abrun: reading the judge's data: %w", err)
	}
	times := map[string]PairTime{}
	for _, p := range rd.Pairs {
		times[p.Kernel+"\x00"+p.Shape] = p
	}
	for i := range sd.Comparisons {
		c := &sd.Comparisons[i]
		c.DroppedRounds += len(rd.DroppedRounds)
		// The wall time to its verdict: the look that decided it, else the whole timing.
		if p, ok := times[c.Kernel+"\x00"+c.Shape]; ok && p.DecidedSeconds != nil && c.Verdict != speedup.Inconclusive {
			c.WallSeconds = ptr(*p.DecidedSeconds)
		} else if rd.TimingSeconds > 0 {
			c.WallSeconds = ptr(rd.TimingSeconds)
		}
		if c.Verdict == speedup.Inconclusive {
			switch rd.Stopped {
			case StopWallBudget, StopRunWall, StopRounds, StopBudget:
				c.Stopped = rd.Stopped
			}
		}
	}
	if err := g.SetData(Data{Data: sd, Runner: rd}); err != nil {
		return g, err
	}
	judged := g.Verdict != result.Skip
	g.Findings = append(g.Findings, findings...)
	g.Decide(judged)
	// The judge's summary ends with its counts; count the runner's findings too.
	if i := strings.LastIndex(g.Summary, "; "); i >= 0 {
		var e, w int
		if n, _ := fmt.Sscanf(g.Summary[i:], "; %d error(s), %d warning(s)", &e, &w); n == 2 {
			g.Summary = g.Summary[:i] + fmt.Sprintf("; %d error(s), %d warning(s)", g.Count(result.Error), g.Count(result.Warning))
		}
	}
	g.Summary += fmt.Sprintf("; %d round(s) side by side, ABBA", rd.Rounds)
	if rd.Serve != nil && rd.Serve.Serving {
		if rd.Serve.Servers > 1 {
			g.Summary += fmt.Sprintf(", served (%d processes a side, each %d rounds)", rd.Serve.Servers, rd.Serve.RestartEvery)
		} else {
			g.Summary += fmt.Sprintf(", served (restarted every %d)", rd.Serve.RestartEvery)
		}
	}
	if n := len(rd.DroppedRounds); n > 0 {
		g.Summary += fmt.Sprintf(", %d dropped (GPU throttled)", n)
	}
	if rd.TimingSeconds > 0 {
		g.Summary += fmt.Sprintf(", %s of wall time", wallText(rd.TimingSeconds))
	}
	return g, nil
}

// notJudged is the gate of a run that compared nothing (it failed, or its budget ran out
// before the first round): the runner's findings, the devices the sides reported, no
// comparison. judged is false for a run that never started timing, which leaves the gate
// a skip at best, never a pass; a failed run's error finding fails it.
func notJudged(base, head *benchfile.File, cfg speedup.Config, rd RunnerData, findings []result.Finding, judged bool, summary string) (result.Gate, error) {
	g := result.Gate{Name: speedup.Name, Findings: append([]result.Finding{}, findings...)}
	sd := speedup.Data{Confidence: cfg.Limits("", "").Confidence, Comparisons: []speedup.Record{}}
	if base != nil {
		sd.BaseDevice = base.Device
	}
	if head != nil {
		sd.HeadDevice = head.Device
	}
	if err := g.SetData(Data{Data: sd, Runner: rd}); err != nil {
		return g, err
	}
	g.Decide(judged)
	g.Summary = summary
	return g, nil
}

// noMoreRounds says why the runner stopped adding rounds while a pair was undecided; ""
// when it did not stop for a budget of its own (the judge then explains).
func noMoreRounds(rd RunnerData) string {
	switch rd.Stopped {
	case StopWallBudget:
		return fmt.Sprintf("the wall budget speedup.wall_budget (%s) was spent after %s of timing", wallText(rd.WallBudgetSeconds), wallText(rd.TimingSeconds))
	case StopRunWall:
		return fmt.Sprintf("the wall budget of the whole kernel-gate run (speedup.run_wall_budget) was spent, %s left for this target, after %s of timing", wallText(rd.WallBudgetSeconds), wallText(rd.TimingSeconds))
	case StopRounds:
		return fmt.Sprintf("the runner's rounds budget (%d rounds run) was spent", rd.RoundsRun)
	}
	return ""
}

// wallText renders seconds of wall time: "48.2 s", "5m0s".
func wallText(s float64) string {
	if s >= 60 {
		return time.Duration(s * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%.1f s", s)
}

func ptr(v float64) *float64 { return &v }

// notes adds the findings that describe the run as a whole: throttled rounds, clocks, and
// results missing from some rounds.
func (r *runner) notes() {
	if n := len(r.data.DroppedRounds); n > 0 {
		var list []string
		for _, c := range r.data.DroppedRounds[:min(n, maxListedDrops)] {
			list = append(list, fmt.Sprintf("%d (%s)", c.Round, strings.Join(c.ReasonNames, ", ")))
		}
		if n > maxListedDrops {
			list = append(list, "…")
		}
		r.warn("throttled", result.Warning, MetricThrottled, "",
			"%d of %d round(s) dropped: nvidia-smi reported clock event reasons other than GPU idle during them, so their timings were not judged (GPU time still counted against the budget): rounds %s",
			n, r.data.RoundsRun, strings.Join(list, "; "))
	}
	var clocks, temps []float64
	for _, c := range r.data.Clocks {
		if c.Round == 0 || c.Throttled {
			continue
		}
		if c.SMClockMHz != nil {
			clocks = append(clocks, *c.SMClockMHz)
		}
		if c.TemperatureC != nil {
			temps = append(temps, *c.TemperatureC)
		}
	}
	if len(clocks) > 0 || len(temps) > 0 {
		var parts []string
		if len(clocks) > 0 {
			parts = append(parts, fmt.Sprintf("SM clock %s MHz", span(clocks)))
		}
		if len(temps) > 0 {
			parts = append(parts, fmt.Sprintf("temperature %s °C", span(temps)))
		}
		r.warn("clocks", result.Notice, MetricClocks, "", "during the %d kept round(s): %s (nvidia-smi, read only)", r.kept, strings.Join(parts, ", "))
	}
	for _, p := range r.pairs {
		for i := range 2 {
			if p.missing[i] > 0 && p.timed[i] {
				r.warn("missing\x00"+p.kernel+"\x00"+p.shape+sideOf(i).String(), result.Warning, MetricRounds, p.kernel,
					"%s: the %s harness gave no timing for it in %d of %d kept round(s): those rounds are dropped for it", p.label(), sideOf(i), p.missing[i], r.kept)
			}
		}
	}
}

// span renders the range of values: "1755–1980" or "1980".
func span(v []float64) string {
	lo, hi := slices.Min(v), slices.Max(v)
	if lo == hi {
		return fmt.Sprintf("%g", lo)
	}
	return fmt.Sprintf("%g–%g", lo, hi)
}
