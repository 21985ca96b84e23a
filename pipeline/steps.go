package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// harnessEnv is the target's KG_ variables for one mode.
func harnessEnv(t config.Target, mode string, shapes []string, extra ...string) []string {
	env := []string{"KG_MODE=" + mode}
	if len(shapes) > 0 {
		env = append(env, "KG_SHAPES="+strings.Join(shapes, ","))
	}
	if len(t.Kernels) > 0 {
		env = append(env, kernelsVar(t.Kernels))
	}
	return append(env, extra...)
}

// kernelsVar is the KG_KERNELS variable naming kernels, for the harness.
func kernelsVar(kernels []string) string { return "KG_KERNELS=" + strings.Join(kernels, ",") }

// withoutKernelsVar is env without KG_KERNELS, which a caller sets its own way.
func withoutKernelsVar(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(v string) bool { return strings.HasPrefix(v, "KG_KERNELS=") })
}

// readNCULog reads a recorded Nsight Compute log, rel inside the artifacts, through input
// (a FIFO or a device in the recording is refused, not waited on): the report, or why ncu's
// output does not parse (perr), or why the file cannot be read (err). Each caller decides
// what a log that does not parse means for it.
func (p *pipeline) readNCULog(ctx context.Context, rel string) (rep *ncu.Report, perr, err error) {
	err = input.Read(ctx, []string{p.x.path(rel)}, nil, input.Log, func(r io.Reader, _ string) error {
		rep, perr = ncu.Parse(r, rel)
		return nil
	})
	return rep, perr, err
}

// sanitize runs compute-sanitizer's tools on head's harness, on the sanitizer's shape.
func (p *pipeline) sanitize(ctx context.Context, t target) (result.Gate, error) {
	rel := t.Name + "/sanitize"
	dir := p.x.path(rel)
	o, err := p.cfg.Sanitizer.RunOptions()
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	tools := o.Tools // the config's, else every tool
	p.progress("%s: compute-sanitizer (%s)", t.Name, strings.Join(tools, ", "))
	o.Sanitizer = p.o.Tools.Sanitizer
	if p.gpuSlots != nil {
		// The targets at once: every tool may start, each holding one of the GPU's places.
		o.AtOnce, o.Slots, o.Label = len(tools), p.gpuSlots, t.Name
	} else if o.AtOnce, err = p.sanitizerAtOnce(ctx, t, len(tools)); err != nil {
		return result.Gate{}, err
	}
	o.OnTool = func(tool string, start time.Time, took time.Duration) {
		p.x.timing("sanitize/"+t.Name+"/"+tool, start, took)
	}
	cmd, env := p.inTree(t, sideHead, t.SanitizeCommand())
	if t.b.cmd != nil {
		// PyTorch's caching allocator pools allocations, so memcheck would see a pool's
		// bounds instead of each tensor's; without it every tensor is its own allocation.
		env = append(env, "PYTORCH_NO_CUDA_MEMORY_CACHING=1")
	}
	o.ExtraEnv = append(append(o.ExtraEnv, env...), harnessEnv(t.Target, "", t.Shapes.Sanitize)[1:]...)
	return p.x.stage(stage{
		id: "sanitize/" + t.Name,
		live: func() (result.Gate, error) {
			// Made inside the artifacts: the build or the check run, the pull request's
			// code, may have put a link out of them where this directory goes.
			if err := procgroup.MkdirArtifact(p.x.path(""), rel); err != nil {
				return result.Gate{}, err
			}
			return sanitizer.RunGate(ctx, cmd, o, dir, p.cfg.Sanitizer, p.o.Progress)
		},
		script: func(result.Gate) []string {
			// The same compute-sanitizer runs, as sanitizer.RunGate starts them.
			var lines []string
			for _, tool := range tools {
				env := append(slices.Clone(o.ExtraEnv), "KG_MODE=sanitize", "KG_OUT="+sanitizer.HarnessOut(dir, tool)+".plain")
				argv := append(append([]string{o.Sanitizer}, sanitizer.Args(tool, filepath.Join(dir, tool+".xml.plain"), filepath.Join(dir, tool+".log.plain"), o)...), cmd...)
				lines = append(lines, "env "+procgroup.ShellJoin(env)+" "+procgroup.ShellJoin(argv)+" >"+procgroup.ShellQuote(filepath.Join(dir, sanitizer.ProgramOut(tool)+".plain"))+" 2>&1")
			}
			return lines
		},
		reread: func() (result.Gate, error) {
			g, ok, err := sanitizer.ReadKept(dir, p.cfg.Sanitizer)
			if err != nil {
				return result.Gate{}, err
			}
			if !ok {
				return failedGate(sanitizer.Name, "run", "did not run", fmt.Sprintf("%s: the recording has no sanitizer logs in %s", t.Name, rel)), nil
			}
			return g, nil
		},
	})
}

// check runs head's harness in check mode and judges the file it writes. A harness
// target's check is its first harness run, made before the static gates (firstRun): that
// run's gate is returned.
func (p *pipeline) check(ctx context.Context, t target) (result.Gate, error) {
	if t.b.cmd != nil && t.b.cmd.checked != nil {
		return *t.b.cmd.checked, nil
	}
	rel := t.Name + "/check.json"
	out := p.x.path(rel)
	env := harnessEnv(t.Target, "check", t.Shapes.Check, fmt.Sprintf("KG_ROUNDS=%d", p.set.CheckRounds), "KG_OUT="+out)
	p.progress("%s: correctness check (%s)", t.Name, strings.Join(env[1:len(env)-1], " "))
	argv, sideEnv := p.harnessArgv(t, sideHead, t.Harness)
	s, err := p.x.run(ctx, proc{id: "check/" + t.Name, argv: argv, dir: p.headDir, env: append(sideEnv, env...),
		timeout: p.set.Timeout, log: t.Name + "/check.log", fresh: []string{rel}})
	if err != nil {
		return result.Gate{}, err
	}
	p.mu.Lock()
	if p.builtIn == "" {
		p.builtIn = s.Dir // a JIT harness target's tree, when nothing was built before it
	}
	p.mu.Unlock()
	var g result.Gate
	wrote := input.Exists(out)
	if wrote {
		// The harness may have left a FIFO, a device or a directory at KG_OUT: refused at
		// once (input), where a plain open would wait for a writer that never comes.
		raw, err := input.ReadFile(ctx, out, input.JSON)
		if err == nil {
			g, err = CorrectnessGate(bytes.NewReader(raw), rel, p.targetConfig(t.Target))
		}
		if cerr := ctx.Err(); cerr != nil {
			return result.Gate{}, cerr
		}
		if err != nil {
			g = failedGate(correctness.Name, "harness_file", "did not run", fmt.Sprintf("%s: the harness's file %s cannot be read: %v", t.Name, rel, err))
		}
	}
	if s.Why != "" {
		msg := fmt.Sprintf("%s: the harness in check mode %s", t.Name, s.failureText())
		if why := gpuError(s.Tail); why != "" {
			rest := "the target's remaining steps are skipped"
			if t.b.cmd != nil {
				rest = "the target is not timed or profiled; compute-sanitizer runs on it to find where"
			}
			msg = fmt.Sprintf("%s: a GPU error (%s) in the check run: %s; %s", t.Name, why, s.failureText(), rest)
			p.gpuErrorSeen(ctx, t.Name)
		}
		g.Name = correctness.Name
		g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Metric: abrun.MetricRun, Message: msg})
		g.Decide(true)
		if g.Summary == "" {
			g.Summary = "the harness failed"
		}
	} else if !wrote {
		g = failedGate(correctness.Name, "harness_file", "did not run", fmt.Sprintf("%s: the harness exited 0 but wrote no file at KG_OUT (%s): nothing was checked", t.Name, rel))
	}
	return g, nil
}

// bench times base's and head's harnesses side by side (the A/B runner) and judges them.
func (p *pipeline) bench(ctx context.Context, t target) (result.Gate, error) {
	rel := t.Name + "/bench"
	dir := p.x.path(rel)
	p.progress("%s: timing base and head side by side (%s)", t.Name, strings.Join(t.Shapes.Bench, ","))
	cfg := p.targetConfig(t.Target)
	set, err := p.cfg.Speedup.ABRun.Settings()
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	if len(t.Shapes.Bench) > 0 {
		set.Shapes = t.Shapes.Bench
	}
	if len(t.Kernels) > 0 {
		set.Env = append(withoutKernelsVar(set.Env), kernelsVar(t.Kernels))
	}
	baseArgv, baseEnv := p.harnessArgv(t, sideBase, t.Harness)
	headArgv, headEnv := p.harnessArgv(t, sideHead, t.Harness)
	o := abrun.Options{
		Base:     abrun.Command{Argv: baseArgv, Dir: p.baseDir, Env: baseEnv},
		Head:     abrun.Command{Argv: headArgv, Dir: p.headDir, Env: headEnv},
		Settings: set, Speedup: cfg.Speedup.Config, ArtifactDir: dir, NvidiaSMI: p.o.Tools.NvidiaSMI,
		Progress: p.o.Progress, ReferenceName: t.ReferenceName,
		// speedup.run_wall_budget bounds the timing of every target together.
		RunWallBudget: set.RunWallBudget, RunWallSpent: p.benchSpent,
	}
	if t.Reference != "" {
		o.Reference = abrun.Command{Argv: shellcmd.Argv(t.Reference), Dir: p.headDir}
	}
	record := filepath.Join(dir, runnerRecordFile)
	return p.x.stage(stage{
		id: "bench/" + t.Name,
		live: func() (result.Gate, error) {
			if err := procgroup.MkdirArtifact(p.x.path(""), rel); err != nil { // as sanitize's
				return result.Gate{}, err
			}
			g, err := abrun.Run(ctx, o)
			if err != nil {
				return g, err
			}
			var d abrun.Data
			if json.Unmarshal(g.Data, &d) == nil {
				p.benchSpent += time.Duration(d.Runner.TimingSeconds * float64(time.Second))
			}
			return g, saveRunnerRecord(g, p.x.path(""), rel+"/"+runnerRecordFile)
		},
		script: func(g result.Gate) []string { return benchScript(g, o, dir) },
		reread: func() (result.Gate, error) { return rejudgeBench(ctx, dir, record, cfg) },
	})
}

// rejudgeBench judges a recorded A/B run again as abrun.Run judged it live: the merged
// base.json and head.json (absent when the run failed, or its budget was spent, before a
// round was kept) with the runner's record.
func rejudgeBench(ctx context.Context, dir, record string, cfg config.Config) (result.Gate, error) {
	rec, err := readRunnerRecord(ctx, record)
	if err != nil {
		return result.Gate{}, err
	}
	var files [2]*benchfile.File
	for i, name := range []string{"base.json", "head.json"} {
		path := filepath.Join(dir, name)
		if !input.Exists(path) && (rec.Runner.Failure != nil || rec.Runner.Rounds == 0) {
			continue
		}
		err := input.Files([]string{path}, nil, func(r io.Reader, name string) error {
			f, err := benchfile.Read(r)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			files[i] = f
			return nil
		})
		if err != nil {
			return result.Gate{}, exitcode.BadInput(err)
		}
	}
	g, err := abrun.Judge(files[0], files[1], cfg.Speedup.Config, rec.Runner, rec.Findings)
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	return g, nil
}

// benchScript is the A/B runner's processes as plain shell lines: before each round (the
// warm-up too) nvidia-smi, then base and head (and the reference) once each in bench mode.
func benchScript(g result.Gate, o abrun.Options, dir string) []string {
	var d abrun.Data
	if json.Unmarshal(g.Data, &d) != nil {
		return nil
	}
	env := append(slices.Clone(o.Settings.Env), "KG_MODE=bench", "KG_ROUNDS=1", fmt.Sprintf("KG_SAMPLES=%d", o.Settings.Samples))
	if len(o.Settings.Shapes) > 0 {
		env = append(env, "KG_SHAPES="+strings.Join(o.Settings.Shapes, ","))
	}
	run := func(c abrun.Command, side string) string {
		e := append(append(slices.Clone(c.Env), env...), "KG_OUT="+filepath.Join(dir, side+".plain.json"))
		return "  (cd " + procgroup.ShellQuote(c.Dir) + " && env " + procgroup.ShellJoin(e) + " " + procgroup.ShellJoin(c.Argv) + ") >>" + procgroup.ShellQuote(filepath.Join(dir, side+"-harness.log.plain")) + " 2>&1"
	}
	smi := "  " + procgroup.ShellJoin(append([]string{o.NvidiaSMI}, abrun.ClockQueryArgs()...)) + " >/dev/null"
	// The reference is timed up to its last round: ReferenceLastRound when the runner stopped
	// timing it early, else every round.
	refLast := d.Runner.RoundsRun
	if l := d.Runner.ReferenceLastRound; l > 0 {
		refLast = min(l, refLast)
	}
	if d.Runner.Serve == nil || !d.Runner.Serve.Serving {
		lines := []string{fmt.Sprintf("for round in $(seq 0 %d); do", d.Runner.RoundsRun), smi, run(o.Base, "base"), run(o.Head, "head")}
		if len(o.Reference.Argv) > 0 {
			lines = append(lines, fmt.Sprintf("  [ $round -gt %d ] ||", refLast)+run(o.Reference, "reference"))
		}
		return append(lines, "done")
	}
	// Served: each set of processes in turn and, within a set, each side's processes one
	// after another, each fed its warm-up request and its rounds' at once (the run starts a
	// set side by side and interleaves the rounds ABBA; the processes and their work are
	// the same).
	k := max(d.Runner.Serve.RestartEvery, 1)
	p := max(d.Runner.Serve.Servers, 1)
	req := fmt.Sprintf(`{"round": %%d, "samples": %d`, o.Settings.Samples)
	if len(o.Settings.Shapes) > 0 {
		raw, _ := json.Marshal(o.Settings.Shapes)
		req += `, "shapes": ` + string(raw)
	}
	req += "}\\n"
	serve := func(c abrun.Command, side, last string) string {
		e := append(slices.Clone(o.Settings.Env), "KG_MODE="+abrun.ModeServe, "KG_ROUNDS=1", fmt.Sprintf("KG_SAMPLES=%d", o.Settings.Samples),
			"KG_OUT="+filepath.Join(dir, side+".plain.json"), abrun.ServeFDVar+"=3")
		if len(o.Settings.Shapes) > 0 {
			e = append(e, "KG_SHAPES="+strings.Join(o.Settings.Shapes, ","))
		}
		return "    { printf " + procgroup.ShellQuote(req) + " 0; for round in $(seq $((first + s)) " + strconv.Itoa(p) + " " + last + "); do printf " + procgroup.ShellQuote(req) + " $round; done; } | (cd " + procgroup.ShellQuote(c.Dir) + " && env " + procgroup.ShellJoin(e) + " " + procgroup.ShellJoin(c.Argv) + " 3>>" + procgroup.ShellQuote(filepath.Join(dir, side+"-answers.plain")) + ") >>" + procgroup.ShellQuote(filepath.Join(dir, side+"-harness.log.plain")) + " 2>&1"
	}
	set := p * k
	lines := []string{fmt.Sprintf("for first in $(seq 1 %d %d); do", set, max(d.Runner.RoundsRun, 1)),
		fmt.Sprintf("  last=$((first + %d)); [ $last -le %d ] || last=%d", set-1, d.Runner.RoundsRun, d.Runner.RoundsRun),
		fmt.Sprintf("  reflast=$((last < %d ? last : %d))", refLast, refLast),
		smi, fmt.Sprintf("  for s in $(seq 0 %d); do", p-1), serve(o.Base, "base", "$last"), serve(o.Head, "head", "$last")}
	for _, s := range d.Runner.Serve.Sides {
		if s.Side == abrun.Reference && s.Serving {
			lines = append(lines, fmt.Sprintf("  [ $first -gt %d ] ||", refLast)+serve(o.Reference, "reference", "$reflast"))
		}
	}
	lines = append(lines, "  done")
	for _, s := range d.Runner.Serve.Sides {
		if s.Side == abrun.Reference && !s.Serving {
			lines = append(lines, "  for round in $(seq $((first == 1 ? 0 : first)) $reflast); do", "  "+run(o.Reference, "reference"), "  done")
		}
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

// saveRunnerRecord writes the record at rel inside the artifacts dir, never through a link
// the harnesses, which ran just before, could have left in its path.
func saveRunnerRecord(g result.Gate, dir, rel string) error {
	var d abrun.Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		return fmt.Errorf("the speedup gate's data: %w", err)
	}
	rec := runnerRecord{Runner: d.Runner, Findings: []result.Finding{}}
	for _, f := range g.Findings {
		if slices.Contains(abrun.Metrics(), f.Metric) {
			rec.Findings = append(rec.Findings, f)
		}
	}
	raw, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return procgroup.WriteArtifact(dir, rel, append(raw, '\n'), 0o644)
}

// readRunnerRecord reads a recorded runner's record (strictly: a key given twice is refused).
func readRunnerRecord(ctx context.Context, path string) (runnerRecord, error) {
	var rec runnerRecord
	raw, err := input.ReadFile(ctx, path, input.JSON)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, exitcode.BadInputf("the recording lacks the runner's record: %w", err)
	}
	if err != nil {
		return rec, exitcode.BadInputf("the runner's record: %w", err)
	}
	if err := strictjson.Unmarshal(raw, &rec, strictjson.Options{}); err != nil {
		return rec, exitcode.BadInputf("%s: %w", path, err)
	}
	return rec, nil
}

// profile runs Nsight Compute on head's harness with the rules that name its kernels.
func (p *pipeline) profile(ctx context.Context, t target) (result.Gate, error) {
	group, err := p.profileGroup(t)
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	if len(group) > 1 {
		gates, ok, err := p.profileTogether(ctx, group)
		if err != nil {
			return result.Gate{}, err
		}
		if ok {
			for i, g := range group[1:] {
				gate := gates[i+1]
				g.r.out.parts[ncu.Name] = &targetPart{gate: &gate}
				g.r.profiledWith = t.Name
			}
			return gates[0], nil
		}
	}
	cfg, o := group[0].cfg, group[0].o
	rel := t.Name + "/ncu"
	dir := p.x.path(rel)
	p.progress("%s: Nsight Compute (%d rule(s), --clock-control none)", t.Name, len(cfg.Kernels))
	o.ArtifactDir = dir
	return p.x.stage(stage{
		id: "ncu/" + t.Name,
		live: func() (result.Gate, error) {
			if err := procgroup.MkdirArtifact(p.x.path(""), rel); err != nil { // as sanitize's
				return result.Gate{}, err
			}
			rep, err := ncu.Run(ctx, o)
			if errors.Is(err, ncu.ErrNCUMissing) {
				return ncu.MissingGate(err), p.noteNCUMissing(rel, err)
			}
			if err != nil {
				return result.Gate{}, err
			}
			return ncu.Evaluate(rep, cfg)
		},
		script: func(result.Gate) []string { return ncuScript(o, dir) },
		reread: func() (result.Gate, error) {
			if err := p.recordedNCUMissing(ctx, rel); err != nil {
				return ncu.MissingGate(err), nil
			}
			rep, perr, err := p.readNCULog(ctx, rel+"/"+ncu.LogFile)
			if err != nil {
				return result.Gate{}, err
			}
			if perr != nil {
				return failedGate(ncu.Name, ncu.MetricRun, "did not run", fmt.Sprintf("%s: the recorded ncu output cannot be read: %v", t.Name, perr)), nil
			}
			return ncu.Evaluate(rep, cfg)
		},
	})
}

// ncuScript is an Nsight Compute run kept in dir, as a plain shell line (commands.sh).
func ncuScript(o ncu.Options, dir string) []string {
	env := append(slices.Clone(o.ExtraEnv), ncu.Env(o, filepath.Join(dir, ncu.HarnessFile)+".plain")...)
	argv := append(append([]string{o.NCU}, ncu.Args(o)...), o.Command...)
	return []string{"env " + procgroup.ShellJoin(env) + " " + procgroup.ShellJoin(argv) + " >" + procgroup.ShellQuote(filepath.Join(dir, ncu.LogFile+".plain")) + " 2>&1"}
}
