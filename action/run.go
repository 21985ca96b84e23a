package action

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/pipeline"
	"github.com/kernel-gate/kernel-gate/report"
)

// Options are what `kernel-gate action` is given besides its inputs and the event, which
// it reads from the environment.
type Options struct {
	Getenv  func(string) string
	Environ []string
	// Log is the step's log: progress, workflow commands, what went wrong in reporting.
	Log io.Writer
	// Tool names kernel-gate and its version.
	Tool string
	// Tools are the CUDA tools' paths for the pipeline.
	Tools pipeline.Tools
	// HTTPClient and Sleep are for tests (nil: the defaults).
	HTTPClient *http.Client
	Sleep      func(context.Context, time.Duration) error
	// APIRequestTimeout and APIBudget bound GitHub's API: one request, and every call of
	// the run together (githubapi.DefaultRequestTimeout and DefaultBudget when zero).
	APIRequestTimeout time.Duration
	APIBudget         time.Duration
}

// Run is `kernel-gate action`. It returns the exit code of the verdict (0 pass, 1 a gate
// failed, or with fail-on: warning a warning was found); the error is for what kept it
// from judging at all. Reporting failures are said in the log and change neither.
func Run(ctx context.Context, o Options) (int, error) {
	gh := githubactions.New(githubactions.WithGetenv(o.Getenv), githubactions.WithWriter(io.Discard))
	in, err := ReadInputs(gh.GetInput)
	if err != nil {
		notRunSummary(o.Getenv, o.Log, err)
		return exitcode.Usage, err
	}
	if in.Token != "" {
		// Before anything else is printed: the runner masks it from here on.
		_ = workflowcmd.Mask(o.Log, in.Token)
	}
	ev, err := ReadEvent(o.Getenv)
	if err != nil {
		notRunSummary(o.Getenv, o.Log, err)
		return exitcode.Usage, err
	}
	root := cmp.Or(o.Getenv("GITHUB_WORKSPACE"), ".")
	headRev, _ := abrun.Git(ctx, root, "rev-parse", "HEAD")
	plan, err := Decide(in, ev, headRev)
	if err != nil {
		notRunSummary(o.Getenv, o.Log, err)
		return exitcode.Usage, err
	}
	if err := CheckCheckout(ctx, root, in, ev, plan); err != nil {
		notRunSummary(o.Getenv, o.Log, err)
		return exitcode.Of(err), err
	}
	r := &run{o: o, in: in, ev: ev, plan: plan, root: root, budget: githubapi.NewBudget(o.APIBudget)}
	r.logf("kernel-gate action: %s event: %s", workflowcmd.Neutralize(ev.Name), workflowcmd.Neutralize(plan.String()))
	var res result.Result
	switch plan.Mode {
	case ModeReport:
		// Checked against the event, named by the inputs; a refusal is posted as a failure.
		if res, err = r.stageB(ctx); err != nil {
			return exitcode.Of(err), err
		}
	default:
		res, err = r.gate(ctx)
		if err != nil {
			r.abandon(ctx, err)
			notRunSummary(o.Getenv, o.Log, err)
			return exitcode.Of(err), err
		}
	}
	r.report(ctx, res)
	if plan.UpdateBaseline {
		r.storeBaseline(ctx, res)
	}
	return r.exitCode(res), nil
}

// storeBaseline hands the gated result to the baseline store on the repository's
// kernel-gate-baseline branch. Only a push to the default branch or a dispatch with a
// reason gets here (Decide); a failure is said in the log and changes no exit code: the
// gates' verdict stands without it.
func (r *run) storeBaseline(ctx context.Context, res result.Result) {
	if s := res.Shard; s != nil && s.Count > 1 {
		r.logf("kernel-gate action: the baseline was not stored: this is shard %d/%d of the run, not all of it (store the merged result: kernel-gate merge, then kernel-gate baseline update)", s.Index, s.Count)
		return
	}
	entry, err := baseline.EntryFromResult(res, r.plan.HeadSHA, time.Now())
	if err != nil {
		r.logf("kernel-gate action: no baseline entry: %s", workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
		return
	}
	// The head's own timings (medians, intervals, the distribution a trend redraws) are in
	// the A/B runner's files, not in the result.
	if err := entry.AddArtifacts(ctx, cmp.Or(r.in.Replay, pipeline.DefaultArtifacts)); err != nil {
		r.logf("kernel-gate action: the baseline entry has no timings: %s", workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
	}
	store, where, err := r.openStore(ctx)
	if err == nil {
		err = store.Update(ctx, entry)
	}
	if err != nil {
		r.logf("kernel-gate action: the baseline was not stored: %s", workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
		return
	}
	r.logf("kernel-gate action: baseline stored on %s: %s", workflowcmd.Neutralize(where), workflowcmd.Neutralize(entry.Describe()))
}

// openStore opens the store the config's baseline section names (the git branch by
// default, through the API with the action's token), and says where it is in words.
func (r *run) openStore(ctx context.Context) (baseline.Store, string, error) {
	set, err := r.cfg.Baseline.Settings()
	if err != nil {
		return nil, "", err
	}
	spec := cmp.Or(set.Store, baseline.GitSpec)
	where := "the directory " + spec
	if spec == baseline.GitSpec {
		where = "branch " + set.Branch
		if r.in.Token == "" {
			return nil, where, errors.New("no github-token (the git store writes with contents: write, and reads with contents: read)")
		}
	}
	s, err := baseline.Open(ctx, spec, baseline.GitOptions{Options: r.api(), Branch: set.Branch, Keep: set.Keep})
	return s, where, err
}

// storedBaseline is the store a pull request's pipeline reads, never writes, when it has
// no base build (pipeline.Options.BaselineStore); nil on other events, or when it cannot be
// opened (said in the log: the ptxas gate then says it had no baseline).
func (r *run) storedBaseline(ctx context.Context) baseline.Reader {
	if r.plan.Mode != ModeGate || r.plan.UpdateBaseline || !strings.HasPrefix(r.ev.Name, "pull_request") {
		return nil
	}
	s, where, err := r.openStore(ctx)
	if err != nil {
		r.logf("kernel-gate action: the baseline store (%s) cannot be read: %s", workflowcmd.Neutralize(where), workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
		return nil
	}
	return s
}

// run is one invocation's state.
type run struct {
	o    Options
	in   Inputs
	ev   Event
	plan Plan
	root string
	// cfg is the config, once gate has loaded it.
	cfg config.Config
	// checkRun is the check run, once connect has created it.
	checkRun
	// trend is the summary's trend section, when the inputs ask for one and the baseline
	// has a history for the run's GPU.
	trend *report.Trend
	// reader is the API client of stage B's questions when there is no check run's
	// client (apiClient); prLookup is why stage A's pull request was not found, once asked
	// (lookupPullRequest).
	reader   *githubapi.Client
	prLookup string
	// budget is the time all of the run's API calls may take together (api).
	budget *githubapi.Budget
}

func (r *run) logf(format string, a ...any) { logf(r.o.Log, format, a...) }

// gate runs the gates: the GPU-stop guard over the change, and the pipeline.
func (r *run) gate(ctx context.Context) (result.Result, error) {
	cfg, err := config.Find(r.in.Config)
	if err != nil {
		return result.Result{}, exitcode.BadInput(err)
	}
	for _, n := range cfg.Notices {
		r.logf("kernel-gate: notice: %s", workflowcmd.Neutralize(n))
	}
	r.cfg = cfg
	var sh *result.Shard
	if r.in.Shard.Sharded() {
		sh = &result.Shard{Index: r.in.Shard.Index, Count: r.in.Shard.Count}
	}
	r.connect(ctx, checkName(r.device(ctx), sh))
	var gates []result.Gate
	var res result.Result
	pipelineGates := slices.DeleteFunc(slices.Clone(r.plan.Gates), func(g string) bool { return g == guard.Name })
	if len(r.plan.Gates) == 0 || len(pipelineGates) > 0 {
		res, err = pipeline.Run(ctx, cfg, pipeline.Options{
			Replay: r.in.Replay, BaseRef: r.plan.BaseRef, BaseMayBeGone: r.plan.BaseMayBeGone, Gates: pipelineGates, Dir: r.root,
			Tools: r.o.Tools, Environ: r.o.Environ, Progress: r.o.Log, Getenv: r.o.Getenv, Tool: r.o.Tool,
			OnStage:       func(stage string) { r.progress(ctx, stage) },
			BaselineStore: r.storedBaseline(ctx), Shard: r.in.Shard, BaseCache: r.in.BaseCache,
		})
		if err != nil {
			return result.Result{}, err
		}
		gates = res.Gates
	}
	if len(r.plan.Gates) == 0 || slices.Contains(r.plan.Gates, guard.Name) {
		g, err := r.guard(ctx, cfg)
		if err != nil {
			return result.Result{}, err
		}
		gates = append(gates, g)
	}
	out := result.New(r.o.Tool, gates...)
	out.Replay, out.Device, out.Shard, out.BaseCache = res.Replay, res.Device, res.Shard, res.BaseCache
	out.Trigger = &result.Trigger{Event: r.ev.Name, Ref: r.ev.Ref, SHA: r.plan.HeadSHA, Reason: r.plan.Reason}
	if err := writeResultIn(r.root, r.in.ResultsFile, out); err != nil {
		return result.Result{}, err
	}
	return out, nil
}

// device names the GPU for the check run's name before the pipeline starts: a replay's
// recorded one, else nvidia-smi's answer (nil without a GPU).
func (r *run) device(ctx context.Context) *result.Device {
	var g gpuinfo.Info
	var err error
	if r.in.Replay != "" {
		g, err = gpuinfo.ParseFile(filepath.Join(r.in.Replay, "gpu.csv"))
	} else {
		g, err = gpuinfo.Query(ctx, cmp.Or(r.o.Tools.NvidiaSMI, "nvidia-smi"), 30*time.Second)
	}
	if err != nil {
		return nil
	}
	return &result.Device{Name: g.Name, Arch: g.Arch(), Driver: g.Driver}
}

// guard judges what the change brings (base...HEAD); without a base to diff against it
// judges the whole tree, which is stricter.
func (r *run) guard(ctx context.Context, cfg config.Config) (result.Gate, error) {
	base := r.plan.BaseRef
	if set, err := cfg.Speedup.ABRun.Settings(); err == nil {
		base = cmp.Or(base, set.BaseRef)
	}
	spec, err := gitdiff.ParseSpec(base + "...HEAD")
	if err == nil {
		// The change is judged with the guard settings of its base, never its own.
		judge, note, err := config.GuardForChange(ctx, r.root, spec, cfg)
		if err == nil {
			var g result.Gate
			if g, err = guard.ScanDiff(ctx, r.root, spec, judge); err == nil {
				guard.AddNotice(&g, cfg.Path, note)
				return g, nil
			}
		}
		r.logf("kernel-gate action: the guard cannot diff %s...HEAD (%s): it reads the whole repository", workflowcmd.Neutralize(base), workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
	}
	return guard.ScanPaths([]string{r.root}, cfg.Guard)
}

// exitCode is the verdict's: 1 when a gate failed, or with fail-on: warning when any
// warning was found.
func (r *run) exitCode(res result.Result) int {
	if res.Verdict == result.Fail {
		return exitcode.Fail
	}
	if r.in.FailOn == "warning" {
		for _, g := range res.Gates {
			if g.Count(result.Warning) > 0 {
				return exitcode.Fail
			}
		}
	}
	return exitcode.Pass
}

// writeResultIn writes the result to file in the workspace ws, which the pull request
// fills: a link it committed in the file's place (to ~/.bashrc), or in place of a
// directory on its path (out -> ~/.ssh), is refused, never written through, and so is a
// FIFO (writeOut).
func writeResultIn(ws, file string, res result.Result) error {
	var b bytes.Buffer
	if err := result.Write(&b, res); err != nil {
		return exitcode.CouldNotRun(err)
	}
	if err := writeOut(ws, file, b.Bytes()); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return nil
}
