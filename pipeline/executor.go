package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
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
	// atOnce says that the steps ids (as many as start) run side by side: live, the
	// journal keeps them in this order and marks them parallel, whichever finishes first,
	// so that the journal and commands.sh do not depend on the order they finished in (a
	// replay looks steps up by id and ignores it).
	atOnce(ids ...string)
	// atOnceChain is atOnce for steps that ran one after another in a chain (a target's
	// sanitizer, then its check) beside other chains: commands.sh runs each chain in turn,
	// the chains at once.
	atOnceChain(chain string, ids ...string)
	// timing keeps the time of a part of the run that is no step of its own (the static
	// gates, one sanitizer tool) for the result's stages; id names it as a step would be.
	timing(id string, start time.Time, took time.Duration)
	// path is a file of the artifacts directory (the recording, replaying).
	path(rel string) string
	// has reports whether a step would run (live: always) or was recorded (replaying): a
	// step a run may leave out (a bounded profile) is replayed only where it ran.
	has(id string) bool
	// logCut says why the log rel (relative to the artifacts) does not hold all that its
	// step printed ("" when it does, or when no step wrote it): a gate that reads it fails
	// naming this, as what was cut could hold anything.
	logCut(rel string) string
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
	// partOf names the step that runs after this one and uses what it made (a source's
	// compile, for its build's link): commands.sh runs the two so.
	partOf string
	// logShare, when set, names steps whose logs keep one step's log cap together: a
	// binary's cubins' nvdisasm outputs, whose number the binary decides.
	// Why: docs/threat-model.md, threat-model T3.
	logShare string
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
	// DefaultLogCap bounds one step's log (a runaway harness cannot fill the disk): a gate
	// that reads a log cut there fails, naming the cap (Options.LogCap).
	// Why: docs/threat-model.md, threat-model T3.
	DefaultLogCap = 64 << 20
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
	// Shard is the shard the run gated (absent when it was not sharded): a replay gates
	// the same targets, none included, and records the same shard.
	Shard *result.Shard `json:"shard,omitempty"`
	// BaseCache is what the run did with its base cache (absent without one): "restored"
	// means base's build steps were answered from it (their steps say "cached").
	BaseCache *result.BaseCache `json:"base_cache,omitempty"`
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
	// Start is when it began, in seconds from the run's start (absent in older journals).
	Start float64 `json:"start_s,omitempty"`
	// Tail is the end of its output, for messages.
	Tail string `json:"tail,omitempty"`
	// LogCut says why Log does not hold all it printed (the log cap, a failed write); empty
	// when it does.
	LogCut string `json:"log_cut,omitempty"`
	// Script holds, for a stage, the same commands as plain shell lines (commands.sh).
	Script []string `json:"script,omitempty"`
	// Parallel marks a step that ran side by side with the steps next to it so marked
	// (base's and head's builds and first harness runs): commands.sh runs them so too.
	Parallel bool `json:"parallel,omitempty"`
	// PartOf names the step that ran after this one, on what it made (a source's compile:
	// its build's link); commands.sh runs the parts of a step at once, then the step.
	PartOf string `json:"part_of,omitempty"`
	// Chain names the chain of steps it ran in, one after another, beside the steps of other
	// chains (the targets' sanitizers and checks at once): commands.sh runs them so too.
	Chain string `json:"chain,omitempty"`
	// Cached marks a step of base's side that did not run: how it ended, and its log, came
	// from the base cache's entry (basecache.go).
	Cached bool `json:"cached,omitempty"`
	// reserved marks atOnce's place for a step that has not ended (never written).
	reserved bool
}

// failureText describes a step that did not exit 0, for findings. Every part is cut and
// cleaned (cleanText): a live tail is a tool's output, a replayed one whatever the journal
// says.
func (s step) failureText() string {
	msg := fmt.Sprintf("`%s` %s", cleanText(strings.Join(s.Argv, " "), 500, false), cleanText(s.Why, 300, false))
	if s.Log != "" {
		msg += " (log: " + cleanText(s.Log, 200, false) + ")"
	}
	if t := strings.TrimSpace(s.Tail); t != "" {
		tail := procgroup.TailBuffer{Max: 1500, Keep: procgroup.HarnessWarning}
		tail.Write([]byte(t))
		msg += "; its last output:\n" + cleanText(tail.String(), 1600, true)
	}
	return msg
}

// notWhole says why what a step printed into log (relative to the artifacts) cannot be
// read as all of it ("" when it can): the step failed, or the log was cut, and lost says
// what the cut took. what names the step in the message.
func (s step) notWhole(what, log, lost string) string {
	switch {
	case s.Why != "":
		return what + ": " + s.failureText()
	case s.LogCut != "":
		return fmt.Sprintf("%s (%s): %s, so %s", what, log, s.LogCut, lost)
	}
	return ""
}

// cleanText makes text from a process or a recording safe to show (msgtext.Clean) and
// neutralizes any line GitHub Actions would read as a workflow command.
func cleanText(s string, max int, multiline bool) string {
	return workflowcmd.Neutralize(msgtext.Clean(s, max, multiline))
}

// ---- live ----

// live runs every step.
type live struct {
	dir     string // the artifacts directory, absolute
	environ []string
	// logCap is the most bytes one step's log keeps.
	logCap int
	// started is the run's start; timed, what timing kept.
	started time.Time
	mu      sync.Mutex
	j       journal
	timed   []result.Stage
	// cached are the steps a restored base cache entry answers, by id (basecache.go).
	cached map[string]step
	// shares are what each proc.logShare's logs may still keep.
	shares map[string]*logShare
}

// logShare is the bytes that the logs of a group of steps may still keep together.
type logShare struct {
	mu   sync.Mutex
	left int
}

// take is how many of n bytes a log may still keep, counted against the share.
func (s *logShare) take(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := min(n, s.left)
	s.left -= k
	return k
}

// share is the logShare of name (nil for none), made with one step's log cap on first use.
func (l *live) share(name string) *logShare {
	if name == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shares == nil {
		l.shares = map[string]*logShare{}
	}
	if l.shares[name] == nil {
		l.shares[name] = &logShare{left: l.logCap}
	}
	return l.shares[name]
}

// newLive prepares an empty artifacts directory. A directory that holds an earlier run's
// journal is cleared; any other non-empty directory is refused, so a wrong --artifacts
// cannot delete someone's files. A symbolic link that leads out of its own directory is
// refused too: the action's artifacts go to the workspace (DefaultArtifacts), where the
// pull request can commit a link of that name to a directory of the runner's.
func newLive(dir string, environ []string, tool string, started time.Time, logCap int) (*live, error) {
	if err := linkOut(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, exitcode.BadInputf("--artifacts %s: %v", dir, err)
	case len(entries) > 0:
		if !holdsRun(dir) {
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
	return &live{dir: abs, environ: environ, logCap: cmp.Or(logCap, DefaultLogCap), started: started, j: journal{Schema: journalSchema, Tool: tool,
		Started: started.UTC().Format(time.RFC3339), Steps: []step{}}}, nil
}

// linkOut refuses (exit 2) an artifacts directory that is a symbolic link leading out of
// the directory it is in, or naming its target by an absolute path (as os.Root takes
// one), dangling or not; a link to a directory beside it is followed.
func linkOut(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	parent, name := filepath.Split(filepath.Clean(dir))
	root, err := os.OpenRoot(cmp.Or(parent, "."))
	if err != nil {
		return exitcode.BadInputf("--artifacts %s: %v", dir, err)
	}
	defer root.Close()
	if st, err := root.Stat(name); err != nil || !st.IsDir() {
		return exitcode.BadInputf("--artifacts %s is a symbolic link that leads out of its directory, or to no directory: refusing to write through it (name the directory itself)", dir)
	}
	return nil
}

// holdsRun reports whether dir holds an earlier run: its journal, a regular file of the
// journal's schema (a file of that name alone, or a link, does not make a directory ours to
// clear).
func holdsRun(dir string) bool {
	st, err := os.Lstat(filepath.Join(dir, journalFile))
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	raw, err := input.ReadFile(context.Background(), filepath.Join(dir, journalFile), input.JSON)
	var j struct {
		Schema string `json:"schema"`
	}
	return err == nil && json.Unmarshal(raw, &j) == nil && j.Schema == journalSchema
}

func (l *live) path(rel string) string { return filepath.Join(l.dir, filepath.FromSlash(rel)) }

func (l *live) has(string) bool { return true }

func (l *live) run(ctx context.Context, p proc) (step, error) {
	if s, ok := l.fromCache(p); ok {
		return s, nil
	}
	s := step{ID: p.id, Argv: p.argv, Dir: p.dir, Env: p.env, Log: p.log, PartOf: p.partOf}
	// Nothing is written through a link in the artifacts (a harness could plant one): a
	// file the process writes itself is cleared, the log is made new (procgroup's
	// artifact helpers).
	for _, f := range p.fresh {
		if err := procgroup.ClearArtifact(l.dir, f); err != nil {
			return s, err
		}
	}
	f, err := procgroup.CreateArtifact(l.dir, p.log, 0o644)
	if err != nil {
		return s, err
	}
	defer f.Close()
	environ := append(append([]string(nil), l.environ...), p.env...)
	// The step's log is capped here, where the cut is known (stepLog), not by procgroup.
	lw := &stepLog{w: f, max: l.logCap, left: l.logCap, share: l.share(p.logShare)}
	s.Start = sinceStart(l.started, time.Now())
	out, err := procgroup.Run(ctx, procgroup.Spec{Argv: p.argv, Dir: p.dir, Env: environ, Timeout: p.timeout, Log: lw, LogCap: math.MaxInt, TailBytes: 4000})
	s.Why, s.Exit, s.TimedOut, s.Tail = out.Why, out.ExitCode, out.TimedOut, out.Output
	if cerr := f.Close(); cerr != nil && lw.err == nil {
		lw.err = cerr
	}
	s.LogCut = lw.why()
	s.Seconds = roundMillis(out.Took.Seconds())
	l.add(s)
	return s, err
}

func (l *live) logCut(rel string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.j.Steps {
		if s.Log == rel && s.LogCut != "" {
			return s.LogCut
		}
	}
	return ""
}

// stepLog writes the first max bytes a step prints to its log, then a line that says the
// rest was cut, and keeps why the log is not all of it: the cap, or a write that failed (a
// full disk). It never fails a write: the step runs on, and the gates that read its log
// fail naming why (executor.logCut).
type stepLog struct {
	w         io.Writer
	max, left int
	// share, when set, is what this log and the others of its group may still keep
	// together; shareCut is set when it, not this log's own cap, cut it.
	share    *logShare
	shareCut bool
	dropped  int64
	err      error
}

// cutMarker begins the line a cut log ends with (procgroup's cut says the same).
const cutMarker = "[kernel-gate: output cut here"

func (s *stepLog) Write(p []byte) (int, error) {
	n := 0
	if s.err == nil && s.left > 0 && s.dropped == 0 {
		n = min(len(p), s.left)
		if s.share != nil {
			if k := s.share.take(n); k < n {
				n, s.shareCut = k, true
			}
		}
		if _, err := s.w.Write(p[:n]); err != nil {
			s.err = err
		}
		s.left -= n
	}
	if n < len(p) {
		if s.dropped == 0 && s.err == nil {
			_, s.err = fmt.Fprintf(s.w, "\n%s at the %s log cap%s: the rest is not kept, and no gate passes on this log]\n", cutMarker, numtext.Bytes(int64(s.max)), s.sharedText())
		}
		s.dropped += int64(len(p) - n)
	}
	return len(p), nil
}

// sharedText says that the cap was the group's, when it was.
func (s *stepLog) sharedText() string {
	if s.shareCut {
		return " of its binary's cubins' logs together"
	}
	return ""
}

// why is "" for a whole log, else what is missing from it.
func (s *stepLog) why() string {
	switch {
	case s.err != nil:
		return fmt.Sprintf("its log could not be written whole (%v)", s.err)
	case s.dropped > 0 && s.shareCut:
		return fmt.Sprintf("it and the other cubins of its binary printed more than the %s their logs keep together: the %d bytes after them were cut", numtext.Bytes(int64(s.max)), s.dropped)
	case s.dropped > 0:
		return fmt.Sprintf("it printed more than the %s a step's log keeps: the %d bytes after them were cut", numtext.Bytes(int64(s.max)), s.dropped)
	}
	return ""
}

func (l *live) stage(st stage) (result.Gate, error) {
	start := time.Now()
	g, err := st.live()
	s := step{ID: st.id, Seconds: roundMillis(time.Since(start).Seconds()), Start: sinceStart(l.started, start), Script: st.script(g)}
	if err != nil {
		s.Why = err.Error()
	}
	l.add(s)
	return g, err
}

func (l *live) note(id string, took time.Duration, script ...string) {
	l.add(step{ID: id, Seconds: roundMillis(took.Seconds()), Start: sinceStart(l.started, time.Now().Add(-took)), Script: script})
}

func (l *live) timing(id string, start time.Time, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timed = append(l.timed, result.Stage{ID: id, StartSeconds: sinceStart(l.started, start), WallSeconds: roundMillis(took.Seconds())})
}

func (l *live) add(s step) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, r := range l.j.Steps {
		if r.reserved && r.ID == s.ID {
			s.Parallel, s.Chain = true, r.Chain
			l.j.Steps[i] = s
			return
		}
	}
	l.j.Steps = append(l.j.Steps, s)
}

// dropReserved drops the places atOnce kept for steps that never started (a side with no
// build command).
func (l *live) dropReserved() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.j.Steps = slices.DeleteFunc(l.j.Steps, func(s step) bool { return s.reserved })
}

func (l *live) atOnce(ids ...string) { l.atOnceChain("", ids...) }

func (l *live) atOnceChain(chain string, ids ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.j.Steps = append(l.j.Steps, step{ID: id, Chain: chain, reserved: true})
	}
}

func (l *live) finish(res *result.Result, d Decisions, wall time.Duration) error {
	l.j.Decisions = d
	l.dropReserved()
	l.j.WallSeconds = roundMillis(wall.Seconds())
	l.j.OwnCPUSeconds = roundMillis(ownCPUSeconds())
	total := 0.0
	for _, s := range l.j.Steps {
		total += s.Seconds
	}
	l.j.StepSeconds = roundMillis(total)
	res.Stages = l.stages()
	res.CriticalPath = criticalPath(res.Stages)
	raw, err := json.MarshalIndent(l.j, "", "  ")
	if err != nil {
		return exitcode.CouldNotRun(err)
	}
	if err := procgroup.WriteArtifact(l.dir, journalFile, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	if err := procgroup.WriteArtifact(l.dir, scriptFile, []byte(script(l.j.Steps, l.path)), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", scriptFile, err)
	}
	return writeResult(l.dir, resultFile, *res)
}

func writeResult(dir, rel string, res result.Result) error {
	f, err := procgroup.CreateArtifact(dir, rel, 0o644)
	if err != nil {
		return err
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
	// A step's parts run at once in its own group, then the step: a build's compiles, then
	// its link. A part whose step never ran (a compile failed: no link) stands alone.
	ran := map[string]bool{}
	for _, s := range steps {
		ran[s.ID] = true
	}
	parts := map[string][]step{}
	for _, s := range steps {
		if ran[s.PartOf] {
			parts[s.PartOf] = append(parts[s.PartOf], s)
		}
	}
	cmd := func(s step) string {
		line := ""
		if s.Dir != "" {
			if isDumpDir(s.Dir, path("")) {
				// Made by the run for the step (cuobjdump -xelf's) and removed after it.
				line = "mkdir -p " + procgroup.ShellQuote(s.Dir) + " && "
			}
			line += "cd " + procgroup.ShellQuote(s.Dir) + " && "
		}
		if len(s.Env) > 0 {
			line += "env " + procgroup.ShellJoin(s.Env) + " "
		}
		return line + procgroup.ShellJoin(s.Argv) + " >" + procgroup.ShellQuote(path(s.Log)+".plain") + " 2>&1"
	}
	// Steps run together only with their own kind (base's and head's builds, their SASS
	// dumps, their first runs): each kind waits for the one before, as the run did.
	kind := func(id string) string {
		k, _, _ := strings.Cut(id, "/")
		if k == "compile" {
			return "build" // a compile whose link never ran: one of the builds
		}
		return k
	}
	open, openKind := false, ""
	for i := 0; i < len(steps); i++ {
		s := steps[i]
		if ran[s.PartOf] {
			continue // in its step's group
		}
		if s.Chain != "" {
			if open {
				b.WriteString("wait\n")
				open = false
			}
			// The chains next to each other ran at once, each one step after another.
			var order []string
			chains := map[string][]string{}
			for ; i < len(steps) && steps[i].Chain != ""; i++ {
				c := steps[i]
				if _, ok := chains[c.Chain]; !ok {
					order = append(order, c.Chain)
				}
				if len(c.Argv) > 0 {
					chains[c.Chain] = append(chains[c.Chain], cmd(c))
				}
				chains[c.Chain] = append(chains[c.Chain], c.Script...)
			}
			i--
			for _, c := range order {
				b.WriteString("(\n" + strings.Join(chains[c], "\n") + "\n) &\n")
			}
			b.WriteString("wait\n")
			continue
		}
		if s.Cached {
			b.WriteString("# " + s.ID + ": restored from the base cache, not run\n")
			continue
		}
		together := s.Parallel || strings.HasPrefix(s.ID, "build/") // base and head side by side
		if open && (!together || kind(s.ID) != openKind) {
			b.WriteString("wait\n")
			open = false
		}
		if len(s.Argv) > 0 {
			line := cmd(s)
			if ps := parts[s.ID]; len(ps) > 0 {
				var g strings.Builder
				g.WriteString("\n")
				for _, part := range ps {
					g.WriteString("(" + cmd(part) + ") &\n")
				}
				line = g.String() + "wait\n" + line + "\n"
			}
			if together {
				b.WriteString("(" + line + ") &\n")
				open, openKind = true, kind(s.ID)
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

// replayer reads a recording. It reads only the recording's own regular files: newReplayer
// refuses a recording that holds a link out of it (or to nothing), a FIFO, a device or a
// socket, naming it and never showing what it leads to, before the pipeline reads anything;
// the gates then read the files by name (they were checked, with the recording at rest).
// What the journal says of a step (its reason, its output's tail) is cut and cleaned before
// any message shows it, and a step whose exit status and reason disagree is refused: the
// pipeline judges a step by its reason, so an exit status of 1 without one would replay as a
// pass.
type replayer struct {
	dir      string
	j        journal
	recorded map[string]step
}

// Bounds of what a replay takes from the journal for messages.
const (
	replayTailBytes = 4096 // a live tail keeps 4000
	replayWhyBytes  = 500
)

func newReplayer(dir string) (*replayer, error) {
	bad := func(format string, a ...any) error {
		return exitcode.BadInputf("--replay %s: %s", dir, fmt.Sprintf(format, a...))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, bad("%v (a recording is the --artifacts directory of a kernel-gate run)", err)
	}
	defer root.Close()
	if err := checkRecording(root); err != nil {
		return nil, bad("%v", err)
	}
	raw, err := input.ReadFileIn(context.Background(), root, journalFile, input.JSON)
	if err != nil {
		return nil, bad("%v (a recording is the --artifacts directory of a kernel-gate run)", err)
	}
	var j journal
	// Strictly: a step given twice must not pick its own status.
	if err := strictjson.Unmarshal(raw, &j, strictjson.Options{}); err != nil {
		return nil, bad("%s: %v", journalFile, err)
	}
	if j.Schema != journalSchema {
		return nil, bad("%s has schema %q, want %q", journalFile, cleanText(j.Schema, 100, false), journalSchema)
	}
	j.BaseRef, j.BaseRev, j.NoBase = cleanText(j.BaseRef, 200, false), cleanText(j.BaseRev, 100, false), cleanText(j.NoBase, replayWhyBytes, false)
	if bc := j.BaseCache; bc != nil {
		bc.Key, bc.Action, bc.Note = cleanText(bc.Key, 64, false), cleanText(bc.Action, 16, false), cleanText(bc.Note, replayWhyBytes, false)
	}
	r := &replayer{dir: dir, j: j, recorded: map[string]step{}}
	for i, s := range j.Steps {
		id := cleanText(s.ID, 200, false)
		if err := s.checkStatus(); err != nil {
			return nil, bad("%s: step %d (%q): %v: the recording cannot be trusted", journalFile, i, id, err)
		}
		if _, dup := r.recorded[s.ID]; dup {
			return nil, bad("%s: step %q is recorded twice", journalFile, id)
		}
		s.Why = cleanText(s.Why, replayWhyBytes, false)
		s.Tail = cleanText(s.Tail, replayTailBytes, true)
		s.LogCut = cleanText(s.LogCut, replayWhyBytes, false)
		r.recorded[s.ID] = s
	}
	return r, nil
}

// outputUnreadable begins the reason of a process that exited 0 but whose output could not
// be collected (procgroup.Run): the one reason recorded beside exit 0.
const outputUnreadable = "exited, but its output could not be read"

// checkStatus refuses a step whose recorded exit status and reason disagree.
func (s step) checkStatus() error {
	switch {
	case s.Exit < -1 || s.Exit > 255:
		return fmt.Errorf("exit %d is no exit status", s.Exit)
	case s.Exit != 0 && s.Why == "":
		return fmt.Errorf("exit %d, but no reason (why) says it failed", s.Exit)
	case s.TimedOut && s.Why == "":
		return errors.New("timed out, but no reason (why) says so")
	case s.Why != "" && s.Exit == 0 && !s.TimedOut && (len(s.Argv) == 0 || !strings.HasPrefix(s.Why, outputUnreadable)):
		return errors.New("a reason (why) it failed, but exit 0")
	}
	return nil
}

// checkRecording walks the recording through root: directories and regular files, and
// links that resolve inside it to one of those, are all it may hold. The error names the
// entry, never where it leads or what it holds.
func checkRecording(root *os.Root) error {
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		t := d.Type()
		switch {
		case t.IsDir(), t.IsRegular():
			return nil
		case t&fs.ModeSymlink != 0:
			st, err := root.Stat(filepath.FromSlash(p)) // follows links inside root only
			if err != nil {
				return fmt.Errorf("%s is a symbolic link that leads out of the recording, or nowhere: a replay reads only the recording's own files", p)
			}
			if !st.IsDir() && !st.Mode().IsRegular() {
				return fmt.Errorf("%s is a symbolic link to %s: a recording holds regular files only", p, input.KindOf(st.Mode()))
			}
			return nil
		}
		return fmt.Errorf("%s is %s: a recording holds regular files only", p, input.KindOf(t))
	})
}

func (r *replayer) path(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

func (r *replayer) has(id string) bool { _, ok := r.recorded[id]; return ok }

func (r *replayer) run(_ context.Context, p proc) (step, error) { return r.lookup(p.id) }

func (r *replayer) logCut(rel string) string {
	for _, s := range r.j.Steps {
		if s.Log == rel {
			if rs := r.recorded[s.ID]; rs.LogCut != "" {
				return rs.LogCut
			}
		}
	}
	return ""
}

func (r *replayer) stage(st stage) (result.Gate, error) {
	if _, err := r.lookup(st.id); err != nil {
		return result.Gate{}, err
	}
	return st.reread()
}

func (r *replayer) note(string, time.Duration, ...string) {}

func (r *replayer) atOnce(...string) {}

func (r *replayer) atOnceChain(string, ...string) {}

func (r *replayer) timing(string, time.Time, time.Duration) {}

func (r *replayer) lookup(id string) (step, error) {
	s, ok := r.recorded[id]
	if !ok {
		var ids []string
		for _, s := range r.j.Steps {
			ids = append(ids, cleanText(s.ID, 100, false))
		}
		if len(ids) > 12 {
			ids = append(ids[:12], "…")
		}
		return step{}, exitcode.BadInputf("the recording in %s has no step %q: it was made with another config or version (recorded steps: %s)", r.dir, id, strings.Join(ids, ", "))
	}
	return s, nil
}

// finish labels the result with the recording's RECORDED line when it has one: its first
// line, cut and cleaned.
func (r *replayer) finish(res *result.Result, _ Decisions, _ time.Duration) error {
	res.Replay = "replay of " + r.dir
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return exitcode.BadInputf("--replay %s: %v", r.dir, err)
	}
	defer root.Close()
	raw, err := input.ReadFileIn(context.Background(), root, RecordedFile, input.Line)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return exitcode.BadInputf("--replay %s: %v", r.dir, err)
	default:
		line, _, _ := strings.Cut(string(raw), "\n")
		if line = strings.TrimSpace(cleanText(line, 300, false)); line != "" {
			res.Replay += ": " + line
		}
	}
	return nil
}
