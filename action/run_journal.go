package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// The journal is how `kernel-gate run --replay` can feed a recording through the same code
// as a live run: every process the live run starts goes through one place (runner.exec),
// which keeps its output in the artifacts directory and writes down how it ended in
// journal.json. A replay reads the journal instead of running anything, and every gate then
// reads the same files it would have read live.
const (
	journalFile   = "journal.json"
	journalSchema = "kernel-gate/run-journal/v1"
	// logCap bounds one step's log (a runaway harness cannot fill the disk).
	logCap = 64 << 20
)

// journal is the run's record: what ran, how it ended, how long it took.
type journal struct {
	Schema string `json:"schema"`
	Tool   string `json:"tool"`
	// Started is when the run began (UTC, RFC 3339).
	Started string `json:"started"`
	// BaseRef and BaseRev: the branch and the merge base built as base; BaseRev is empty
	// when there was no base (NoBase says why).
	BaseRef string `json:"base_ref,omitempty"`
	BaseRev string `json:"base_rev,omitempty"`
	NoBase  string `json:"no_base,omitempty"`
	// Arch is the architectures built, "native" resolved.
	Arch []string `json:"arch"`
	// All and KeepGoing are the run's --all and --keep-going, which a replay repeats.
	All       bool `json:"all,omitempty"`
	KeepGoing bool `json:"keep_going,omitempty"`
	// Targets are the targets that ran, in order.
	Targets []string `json:"targets"`
	Steps   []step   `json:"steps"`
	// WallSeconds is the whole run; StepSeconds the sum of its steps' own times (builds run
	// side by side, so it can exceed the wall time).
	WallSeconds float64 `json:"wall_seconds"`
	StepSeconds float64 `json:"step_seconds"`
	// OwnCPUSeconds is the CPU time kernel-gate itself used (user + system, not its
	// children's): its overhead, apart from waiting on the tools it runs.
	OwnCPUSeconds float64 `json:"own_cpu_seconds"`
}

// step is one process (or one package-run stage, such as the sanitizer's four tools) of the run.
type step struct {
	// ID names the step: "build/head/attention", "check/attention", ...
	ID   string   `json:"id"`
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	// Env is what the run added to the environment (KG_MODE=check, ...).
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
	// Script holds, for a stage that runs its processes itself (the sanitizer's tools, the
	// A/B rounds), the same commands as plain shell lines: commands.sh (see writeScript).
	Script []string `json:"script,omitempty"`
}

// runner executes steps live, or looks them up in a recording.
type runner struct {
	dir      string // the artifacts directory (the recording when replaying)
	replay   bool
	environ  []string
	mu       sync.Mutex
	j        journal
	recorded map[string]step
}

// newLiveRunner prepares an empty artifacts directory. A directory that holds an earlier
// run's journal is cleared; any other non-empty directory is refused, so a wrong --artifacts
// cannot delete someone's files.
func newLiveRunner(dir string, environ []string) (*runner, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, usagef("--artifacts %s: %v", dir, err)
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, journalFile)); err != nil {
			return nil, usagef("--artifacts %s is not empty and holds no earlier run (%s): choose an empty or new directory", dir, journalFile)
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, usagef("--artifacts %s: clearing the earlier run: %v", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("--artifacts: %v", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, usagef("--artifacts: %v", err)
	}
	return &runner{dir: abs, environ: environ, j: journal{Schema: journalSchema, Steps: []step{}}}, nil
}

// newReplayRunner reads a recording's journal.
func newReplayRunner(dir string) (*runner, error) {
	raw, err := os.ReadFile(filepath.Join(dir, journalFile))
	if err != nil {
		return nil, usagef("--replay %s: %v (a recording is the --artifacts directory of a kernel-gate run)", dir, err)
	}
	var j journal
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, usagef("--replay %s: %s: %v", dir, journalFile, err)
	}
	if j.Schema != journalSchema {
		return nil, usagef("--replay %s: %s has schema %q, want %q", dir, journalFile, j.Schema, journalSchema)
	}
	r := &runner{dir: dir, replay: true, j: j, recorded: map[string]step{}}
	for _, s := range j.Steps {
		r.recorded[s.ID] = s
	}
	return r, nil
}

// note records a step that ran no process of its own but belongs in the plain script
// (the git worktree of base).
func (r *runner) note(id string, took time.Duration, script ...string) {
	if !r.replay {
		r.add(step{ID: id, Seconds: roundMillis(took.Seconds()), Script: script})
	}
}

// path is a file of the artifacts directory.
func (r *runner) path(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

// exec runs one process with its output in the artifacts file log (relative), or, when
// replaying, returns how it ended in the recording. The error is only for a cancelled ctx,
// an unwritable artifacts directory or a step the recording lacks.
func (r *runner) exec(ctx context.Context, id string, argv []string, dir string, env []string, timeout time.Duration, log string) (step, error) {
	if r.replay {
		return r.lookup(id)
	}
	s := step{ID: id, Argv: argv, Dir: dir, Env: env, Log: log}
	if err := os.MkdirAll(filepath.Dir(r.path(log)), 0o755); err != nil {
		return s, err
	}
	f, err := os.Create(r.path(log))
	if err != nil {
		return s, err
	}
	defer f.Close()
	environ := append(slices.Clone(r.environ), env...)
	out, err := procgroup.Run(ctx, procgroup.Spec{Argv: argv, Dir: dir, Env: environ, Timeout: timeout, Log: f, LogCap: logCap, TailBytes: 4000})
	s.Why, s.Exit, s.TimedOut, s.Tail = out.Why, out.ExitCode, out.TimedOut, out.Output
	s.Seconds = roundMillis(out.Took.Seconds())
	r.add(s)
	return s, err
}

// timed records a stage that runs its processes itself (the sanitizer, the A/B runner),
// or, when replaying, checks that the recording has it. script returns the stage's
// commands as plain shell lines, once it has run.
func (r *runner) timed(id string, fn func() error, script func() []string) (step, error) {
	if r.replay {
		return r.lookup(id)
	}
	start := time.Now()
	err := fn()
	s := step{ID: id, Seconds: roundMillis(time.Since(start).Seconds()), Script: script()}
	if err != nil {
		s.Why = err.Error()
	}
	r.add(s)
	return s, err
}

func (r *runner) lookup(id string) (step, error) {
	s, ok := r.recorded[id]
	if !ok {
		return step{}, usagef("the recording in %s has no step %q: it was made with another config or version (recorded steps: %s)", r.dir, id, r.stepIDs())
	}
	return s, nil
}

func (r *runner) stepIDs() string {
	var ids []string
	for _, s := range r.j.Steps {
		ids = append(ids, s.ID)
	}
	if len(ids) > 12 {
		ids = append(ids[:12], "…")
	}
	return strings.Join(ids, ", ")
}

func (r *runner) add(s step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.j.Steps = append(r.j.Steps, s)
}

// finish writes the journal (live runs only).
func (r *runner) finish(wall time.Duration, ownCPU float64) error {
	if r.replay {
		return nil
	}
	r.j.WallSeconds = roundMillis(wall.Seconds())
	r.j.OwnCPUSeconds = roundMillis(ownCPU)
	total := 0.0
	for _, s := range r.j.Steps {
		total += s.Seconds
	}
	r.j.StepSeconds = roundMillis(total)
	raw, err := json.MarshalIndent(r.j, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(r.path(journalFile), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(r.path(scriptFile), []byte(r.script()), 0o755)
}

// scriptFile is the run as a plain shell script: the same processes, in the same order,
// with the same arguments and variables, without kernel-gate. Timing it beside the run
// measures kernel-gate's own overhead (docs/overhead.md).
const scriptFile = "commands.sh"

func (r *runner) script() string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).\n")
	open := false
	for _, s := range r.j.Steps {
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
				line += "env"
				for _, e := range s.Env {
					line += " " + procgroup.ShellQuote(e)
				}
				line += " "
			}
			line += procgroup.ShellJoin(s.Argv) + " >" + procgroup.ShellQuote(r.path(s.Log)+".plain") + " 2>&1"
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
