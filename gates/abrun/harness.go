package abrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/shell"

	"github.com/kernel-gate/kernel-gate/gates/benchfile"
	"github.com/kernel-gate/kernel-gate/gates/procgroup"
)

const (
	// waitDelay bounds the wait for a command's output pipes once it has exited or been
	// killed (a child left holding them cannot block the runner).
	waitDelay = 5 * time.Second
	// tailBytes is how much of a failed command's output a finding quotes.
	tailBytes = 2000
	// runLogBytes caps what one harness run adds to its side's log.
	runLogBytes = 1 << 20
	// buildLogBytes caps a build's log.
	buildLogBytes = 16 << 20
)

// Side is base or head.
type Side string

// The two sides.
const (
	Base Side = "base"
	Head Side = "head"
)

func (s Side) index() int {
	if s == Head {
		return 1
	}
	return 0
}

func sideOf(i int) Side {
	if i == 1 {
		return Head
	}
	return Base
}

// Command is one side's harness: the program with its arguments, and the directory it runs
// in ("" is the current one).
type Command struct {
	Argv []string
	Dir  string
}

// SplitCommand splits a command line into shell words (quotes and backslashes as a POSIX
// shell reads them; $VAR expands through getenv, nil for no variables). It runs nothing:
// no pipes, redirections or command substitutions.
func SplitCommand(line string, getenv func(string) string) ([]string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	w, err := shell.Fields(line, getenv)
	if err != nil {
		return nil, fmt.Errorf("%q is not a command: %v", line, err)
	}
	if len(w) == 0 || w[0] == "" {
		return nil, fmt.Errorf("%q is not a command: no program named", line)
	}
	return w, nil
}

// Failure is a harness run or a build that gave nothing usable: it fails the gate.
type Failure struct {
	Side Side `json:"side"`
	// Stage is "build" or "run".
	Stage string `json:"stage"`
	// Round is the round of a failed run, 1-based; 0 is the warm-up round.
	Round int `json:"round"`
	// Why says what went wrong: an exit status, a signal, a timeout, a missing or bad file.
	Why string `json:"why"`
	// Output is the end of what the command printed.
	Output string `json:"output,omitempty"`
	// File is the harness's file as it was left, kept in the artifacts.
	File string `json:"file,omitempty"`
	// Log is the command's log in the artifacts.
	Log string `json:"log,omitempty"`
}

// where names the failed step: "head, round 3", "base, warm-up round", "head build".
func (f *Failure) where() string {
	switch {
	case f.Stage == "build":
		return string(f.Side) + " build"
	case f.Round == 0:
		return string(f.Side) + " harness, warm-up round"
	}
	return fmt.Sprintf("%s harness, round %d", f.Side, f.Round)
}

// message is the finding's text.
func (f *Failure) message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the %s failed: %s", f.where(), f.Why)
	if f.Stage == "run" {
		b.WriteString("; nothing is judged from a run that failed, and the gate does not pass")
	}
	if f.Log != "" {
		fmt.Fprintf(&b, " (log: %s)", f.Log)
	}
	if f.File != "" {
		fmt.Fprintf(&b, " (its file: %s)", f.File)
	}
	if out := strings.TrimSpace(f.Output); out != "" {
		fmt.Fprintf(&b, "; its last output:\n%s", out)
	}
	return b.String()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	s := string(t.buf)
	if t.cut {
		// Start at a line (or at least a character) boundary.
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
		s = "…" + strings.ToValidUTF8(s, "")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// capWriter passes on at most left bytes to w, then notes the cut once. Write errors of
// w are remembered, not returned, so the command never sees a broken pipe from a log.
type capWriter struct {
	w    io.Writer
	left int
	cut  bool
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.w == nil {
		return len(p), nil
	}
	if c.left <= 0 {
		if !c.cut {
			c.cut = true
			_, _ = io.WriteString(c.w, "\n[kernel-gate: output cut here: the log keeps the first part only]\n")
		}
		return len(p), nil
	}
	n := min(len(p), c.left)
	_, _ = c.w.Write(p[:n])
	c.left -= n
	return len(p), nil
}

// runSpec is one external command the runner starts.
type runSpec struct {
	argv    []string
	dir     string
	env     []string
	timeout time.Duration
	log     io.Writer // may be nil
	logCap  int
}

// runResult is what a command did.
type runResult struct {
	why    string // "" when it exited 0
	output string // the tail of its output
	took   time.Duration
}

// execute runs a command in its own process group; at its timeout, or when ctx is done,
// the whole group is killed, and whatever the command left behind is killed after it
// exits. The error is only for ctx being done.
func execute(ctx context.Context, s runSpec) (runResult, error) {
	tctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, s.argv[0], s.argv[1:]...)
	cmd.Dir = s.dir
	cmd.Env = s.env
	tail := &tailBuffer{max: tailBytes}
	w := io.MultiWriter(tail, &capWriter{w: s.log, left: s.logCap})
	cmd.Stdout, cmd.Stderr = w, w
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = waitDelay
	start := time.Now()
	err := cmd.Run()
	procgroup.KillRest(cmd)
	res := runResult{output: tail.String(), took: time.Since(start)}
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("cancelled while running %s: %w", s.argv[0], ctx.Err())
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		res.why = fmt.Sprintf("timed out after %s: killed with its process group", s.timeout)
	case cmd.ProcessState == nil:
		res.why = fmt.Sprintf("could not be started: %v", err)
	case !cmd.ProcessState.Success():
		if code := cmd.ProcessState.ExitCode(); code >= 0 {
			res.why = fmt.Sprintf("exited with status %d", code)
		} else {
			res.why = "was killed by " + cmd.ProcessState.String() // "signal: segmentation fault"
		}
	case err != nil:
		// It exited 0 but its output could not be collected (a child kept the pipes).
		res.why = fmt.Sprintf("exited, but its output could not be read: %v", err)
	}
	return res, nil
}

// harnessEnv is the environment of one harness run.
func harnessEnv(environ, extra []string, shapes []string, samples int, out string) []string {
	env := slices.Clone(environ)
	env = append(env, extra...)
	env = append(env, "KG_MODE="+benchfile.ModeBench, "KG_ROUNDS=1", "KG_SAMPLES="+strconv.Itoa(samples), "KG_OUT="+out)
	if len(shapes) > 0 {
		env = append(env, "KG_SHAPES="+strings.Join(shapes, ","))
	}
	return env
}

// readHarnessFile reads what a run wrote at KG_OUT; why is set when it is missing or bad.
func readHarnessFile(path string) (f *benchfile.File, why string) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "it wrote no file at KG_OUT (" + path + ")"
	}
	if err != nil {
		return nil, fmt.Sprintf("its file cannot be read: %v", err)
	}
	defer fh.Close()
	f, err = benchfile.Read(fh)
	if err != nil {
		return nil, fmt.Sprintf("it wrote an invalid file: %v", err)
	}
	return f, ""
}

// harnessErrors lists the errors a harness file reports, for a failed run's message.
func harnessErrors(path string) string {
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	f, err := benchfile.Read(fh)
	if err != nil {
		return ""
	}
	var msgs []string
	for _, r := range f.Results {
		if r.Error != "" {
			msgs = append(msgs, fmt.Sprintf("%s × %s: %s", r.Kernel, r.Shape, clip(strings.TrimSpace(r.Error), 300)))
		}
		if len(msgs) == 3 {
			msgs = append(msgs, "…")
			break
		}
	}
	return strings.Join(msgs, "; ")
}

// keepFile copies a failed run's file into the artifacts; "" when there is none.
func keepFile(src, dir, name string) string {
	if dir == "" {
		return ""
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return ""
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, raw, 0o644); err != nil {
		return ""
	}
	return dst
}
