package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// An executor is how the pipeline runs its steps. The live one runs them, keeping each
// process's output in the artifacts directory and how it ended in the journal; the
// replayer reads a recording's journal instead of running anything, and every gate then
// reads the same files it would have read live.
type executor interface {
	// run starts one process, or returns how the recorded one ended. The error is only for
	// a cancelled ctx, an unwritable artifacts directory or a step the recording lacks.
	run(ctx context.Context, p proc) (step, error)
	// stage runs a step that starts its processes itself (the sanitizer's tools, the A/B
	// rounds, Nsight Compute) and returns its gate; replaying, it re-reads what the live
	// stage kept.
	stage(s stage) (result.Gate, error)
	// note records work that started no process of the pipeline's own but belongs in the
	// plain script (the base worktree).
	note(id string, took time.Duration, script ...string)
	// path is a file of the artifacts directory (the recording, replaying).
	path(rel string) string
	// finish completes the result: live, it writes result.json, the journal and
	// commands.sh; replaying, it labels the result a replay.
	finish(res *result.Result, d Decisions, wall time.Duration) error
}

// proc is one process of the run.
type proc struct {
	// id names the step: "build/head/attention", "check/attention", ...
	id      string
	argv    []string
	dir     string
	env     []string // added to the environment (KG_MODE=check, ...)
	timeout time.Duration
	log     string // its output, relative to the artifacts
	// fresh are artifacts the process writes, removed before it starts so that a file left
	// from an earlier run cannot speak for it.
	fresh []string
}

// stage is a step that runs its processes itself.
type stage struct {
	id string
	// live runs it; script then says its processes as plain shell lines (commands.sh).
	live   func() (result.Gate, error)
	script func(result.Gate) []string
	// reread judges what live kept, for a replay.
	reread func() (result.Gate, error)
}

// The journal's file and format.
const (
	journalFile   = "journal.json"
	journalSchema = "kernel-gate/run-journal/v1"
	// logCap bounds one step's log (a runaway harness cannot fill the disk).
	logCap = 64 << 20
	// resultFile is the live run's result, beside the journal.
	resultFile = "result.json"
	// RecordedFile, in a recording, is one line saying where and when it was made; a replay
	// shows it.
	RecordedFile = "RECORDED"
)

// journal is the run's record: what ran, how it ended, how long it took.
type journal struct {
	Schema string `json:"schema"`
	Tool   string `json:"tool"`
	// Started is when the run began (UTC, RFC 3339).
	Started string `json:"started"`
	Decisions
	Steps []step `json:"steps"`
	// WallSeconds is the whole run; StepSeconds the sum of its steps' own times (builds run
	// side by side, so it can exceed the wall time).
	WallSeconds float64 `json:"wall_seconds"`
	StepSeconds float64 `json:"step_seconds"`
	// OwnCPUSeconds is the CPU time kernel-gate itself used (user + system, not its
	// children's): its overhead, apart from waiting on the tools it runs.
	OwnCPUSeconds float64 `json:"own_cpu_seconds"`
}

// Decisions are what a run decided before it ran anything, which a replay repeats.
type Decisions struct {
	// BaseRef and BaseRev: the branch and the merge base built as base; BaseRev is empty
	// when there was no base (NoBase says why).
	BaseRef string `json:"base_ref,omitempty"`
	BaseRev string `json:"base_rev,omitempty"`
	NoBase  string `json:"no_base,omitempty"`
	// Arch is the architectures built, "native" resolved.
	Arch []string `json:"arch"`
	// All and KeepGoing are the run's --all and --keep-going.
	All       bool `json:"all,omitempty"`
	KeepGoing bool `json:"keep_going,omitempty"`
	// Targets are the targets that ran, in order.
	Targets []string `json:"targets"`
}

// step is one process (or one stage) of the run, as the journal keeps it.
type step struct {
	ID   string   `json:"id"`
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	// Env is what the run added to the environment.
	Env []string `json:"env,omitempty"`
	// Log is the step's output, relative to the artifacts directory.
	Log string `json:"log,omitempty"`
	// Why is "" when it exited 0, else how it ended ("exited with status 1", "timed out
	// after 10m0s: killed with its process group").
	Why      string  `json:"why,omitempty"`
	Exit     int     `json:"exit"`
	TimedOut bool    `json:"timed_out,omitempty"`
	Seconds  float64 `json:"seconds"`
	// Tail is the end of its output, for messages.
	Tail string `json:"tail,omitempty"`
	// Script holds, for a stage, the same commands as plain shell lines (commands.sh).
	Script []string `json:"script,omitempty"`
}

// failureText describes a step that did not exit 0, for findings.
func (s step) failureText() string {
	msg := fmt.Sprintf("`%s` %s", strings.Join(s.Argv, " "), s.Why)
	if s.Log != "" {
		msg += " (log: " + s.Log + ")"
	}
	if t := strings.TrimSpace(s.Tail); t != "" {
		tail := procgroup.TailBuffer{Max: 1500}
		tail.Write([]byte(t))
		msg += "; its last output:\n" + tail.String()
	}
	return msg
}

// ---- live ----

// live runs every step.
type live struct {
	dir     string // the artifacts directory, absolute
	environ []string
	mu      sync.Mutex
	j       journal
}

// newLive prepares an empty artifacts directory. A directory that holds an earlier run's
// journal is cleared; any other non-empty directory is refused, so a wrong --artifacts
// cannot delete someone's files.
func newLive(dir string, environ []string, tool string, started time.Time) (*live, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, exitcode.BadInputf("--artifacts %s: %v", dir, err)
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, journalFile)); err != nil {
			return nil, exitcode.BadInputf("--artifacts %s is not empty and holds no earlier run (%s): choose an empty or new directory", dir, journalFile)
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, exitcode.CouldNotRunf("--artifacts %s: clearing the earlier run: %v", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, exitcode.CouldNotRunf("--artifacts: %v", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, exitcode.CouldNotRunf("--artifacts: %v", err)
	}
	return &live{dir: abs, environ: environ, j: journal{Schema: journalSchema, Tool: tool,
		Started: started.UTC().Format(time.RFC3339), Steps: []step{}}}, nil
}

func (l *live) path(rel string) string { return filepath.Join(l.dir, filepath.FromSlash(rel)) }

func (l *live) run(ctx context.Context, p proc) (step, error) {
	s := step{ID: p.id, Argv: p.argv, Dir: p.dir, Env: p.env, Log: p.log}
	for _, f := range p.fresh {
		if err := os.Remove(l.path(f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return s, exitcode.CouldNotRun(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(l.path(p.log)), 0o755); err != nil {
		return s, exitcode.CouldNotRun(err)
	}
	f, err := os.Create(l.path(p.log))
	if err != nil {
		return s, exitcode.CouldNotRun(err)
	}
	defer f.Close()
	environ := append(append([]string(nil), l.environ...), p.env...)
	out, err := procgroup.Run(ctx, procgroup.Spec{Argv: p.argv, Dir: p.dir, Env: environ, Timeout: p.timeout, Log: f, LogCap: logCap, TailBytes: 4000})
	s.Why, s.Exit, s.TimedOut, s.Tail = out.Why, out.ExitCode, out.TimedOut, out.Output
	s.Seconds = roundMillis(out.Took.Seconds())
	l.add(s)
	return s, err
}

func (l *live) stage(st stage) (result.Gate, error) {
	start := time.Now()
	g, err := st.live()
	s := step{ID: st.id, Seconds: roundMillis(time.Since(start).Seconds()), Script: st.script(g)}
	if err != nil {
		s.Why = err.Error()
	}
	l.add(s)
	return g, err
}

func (l *live) note(id string, took time.Duration, script ...string) {
	l.add(step{ID: id, Seconds: roundMillis(took.Seconds()), Script: script})
}

func (l *live) add(s step) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.j.Steps = append(l.j.Steps, s)
}

func (l *live) finish(res *result.Result, d Decisions, wall time.Duration) error {
	l.j.Decisions = d
	l.j.WallSeconds = roundMillis(wall.Seconds())
	l.j.OwnCPUSeconds = roundMillis(ownCPUSeconds())
	total := 0.0
	for _, s := range l.j.Steps {
		total += s.Seconds
	}
	l.j.StepSeconds = roundMillis(total)
	raw, err := json.MarshalIndent(l.j, "", "  ")
	if err != nil {
		return exitcode.CouldNotRun(err)
	}
	if err := os.WriteFile(l.path(journalFile), append(raw, '\n'), 0o644); err != nil {
		return exitcode.CouldNotRunf("writing the journal: %w", err)
	}
	if err := os.WriteFile(l.path(scriptFile), []byte(script(l.j.Steps, l.path)), 0o755); err != nil {
		return exitcode.CouldNotRunf("writing %s: %w", scriptFile, err)
	}
	return writeResult(l.path(resultFile), *res)
}

func writeResult(path string, res result.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return exitcode.CouldNotRun(err)
	}
	if err := result.Write(f, res); err != nil {
		f.Close()
		return exitcode.CouldNotRun(err)
	}
	return exitcode.CouldNotRun(f.Close())
}

// scriptFile is the run as a plain shell script: the same processes, in the same order,
// with the same arguments and variables, without kernel-gate. Timing it beside the run
// measures kernel-gate's own overhead (docs/overhead.md).
const scriptFile = "commands.sh"

func script(steps []step, path func(string) string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).\n")
	open := false
	for _, s := range steps {
		if open && !strings.HasPrefix(s.ID, "build/") {
			b.WriteString("wait\n")
			open = false
		}
		if len(s.Argv) > 0 {
			line := ""
			if s.Dir != "" {
				line = "cd " + procgroup.ShellQuote(s.Dir) + " && "
			}
			if len(s.Env) > 0 {
				line += "env " + procgroup.ShellJoin(s.Env) + " "
			}
			line += procgroup.ShellJoin(s.Argv) + " >" + procgroup.ShellQuote(path(s.Log)+".plain") + " 2>&1"
			if strings.HasPrefix(s.ID, "build/") { // base and head build side by side
				b.WriteString("(" + line + ") &\n")
				open = true
				continue
			}
			b.WriteString("(" + line + ")\n")
		}
		for _, l := range s.Script {
			b.WriteString(l + "\n")
		}
	}
	if open {
		b.WriteString("wait\n")
	}
	return b.String()
}

func roundMillis(s float64) float64 { return float64(int64(s*1000+0.5)) / 1000 }

// ---- replay ----

// replayer reads a recording.
type replayer struct {
	dir      string
	j        journal
	recorded map[string]step
}

func newReplayer(dir string) (*replayer, error) {
	raw, err := os.ReadFile(filepath.Join(dir, journalFile))
	if err != nil {
		return nil, exitcode.BadInputf("--replay %s: %v (a recording is the --artifacts directory of a kernel-gate run)", dir, err)
	}
	var j journal
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, exitcode.BadInputf("--replay %s: %s: %v", dir, journalFile, err)
	}
	if j.Schema != journalSchema {
		return nil, exitcode.BadInputf("--replay %s: %s has schema %q, want %q", dir, journalFile, j.Schema, journalSchema)
	}
	r := &replayer{dir: dir, j: j, recorded: map[string]step{}}
	for _, s := range j.Steps {
		r.recorded[s.ID] = s
	}
	return r, nil
}

func (r *replayer) path(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

func (r *replayer) run(_ context.Context, p proc) (step, error) { return r.lookup(p.id) }

func (r *replayer) stage(st stage) (result.Gate, error) {
	if _, err := r.lookup(st.id); err != nil {
		return result.Gate{}, err
	}
	return st.reread()
}

func (r *replayer) note(string, time.Duration, ...string) {}

func (r *replayer) lookup(id string) (step, error) {
	s, ok := r.recorded[id]
	if !ok {
		var ids []string
		for _, s := range r.j.Steps {
			ids = append(ids, s.ID)
		}
		if len(ids) > 12 {
			ids = append(ids[:12], "…")
		}
		return step{}, exitcode.BadInputf("the recording in %s has no step %q: it was made with another config or version (recorded steps: %s)", r.dir, id, strings.Join(ids, ", "))
	}
	return s, nil
}

// finish labels the result with the recording's RECORDED line when it has one.
func (r *replayer) finish(res *result.Result, _ Decisions, _ time.Duration) error {
	res.Replay = "replay of " + r.dir
	if raw, err := os.ReadFile(filepath.Join(r.dir, RecordedFile)); err == nil {
		if line := strings.TrimSpace(string(raw)); line != "" {
			res.Replay += ": " + line
		}
	}
	return nil
}
