package procgroup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/childenv"
)

// waitDelay bounds the wait for a command's output pipes once it has exited or been
// killed (a child left holding them cannot block the caller).
const waitDelay = 5 * time.Second

// DefaultTailBytes is how much of a command's output Outcome.Output keeps by default.
const DefaultTailBytes = 2000

// Spec is one external command.
type Spec struct {
	Argv    []string
	Dir     string
	Env     []string // nil: this process's; either way less what childenv withholds (tokens)
	Timeout time.Duration
	// Log gets everything the command prints (stdout and stderr interleaved), at most
	// LogCap bytes of it; nil keeps nothing.
	Log    io.Writer
	LogCap int
	// TailBytes is how much of the output's end Outcome.Output keeps (default
	// DefaultTailBytes).
	TailBytes int
}

// Outcome is what a command did.
type Outcome struct {
	// Why is "" when the command exited 0, else what went wrong in words: "exited with
	// status 2", "timed out after 2m0s: killed with its process group", "could not be
	// started: ...", "was killed by signal: segmentation fault".
	Why string
	// ExitCode is the exit status; -1 when it did not exit by itself.
	ExitCode int
	TimedOut bool
	// Output is the end of what it printed.
	Output string
	Took   time.Duration
}

// Run runs a command in its own process group; at its timeout, or when ctx is done, the
// whole group is killed, and whatever the command left behind is killed after it exits.
// The error is only for ctx being done.
func Run(ctx context.Context, s Spec) (Outcome, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return Outcome{Why: "could not be started: no program named", ExitCode: -1}, nil
	}
	tctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd, tail := command(tctx, s.Argv, s.Dir, s.Env, s.Log, s.LogCap, s.TailBytes)
	start := time.Now()
	err := cmd.Run()
	KillRest(cmd)
	res := Outcome{Output: tail.String(), Took: time.Since(start), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("cancelled while running %s: %w", s.Argv[0], ctx.Err())
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		res.Why = fmt.Sprintf("timed out after %s: killed with its process group", s.Timeout)
		res.TimedOut = true
	case cmd.ProcessState == nil:
		res.Why = notStarted(s.Argv[0], err)
	default:
		res.Why = endedWhy(cmd.ProcessState, err)
	}
	return res, nil
}

// Command is every external command's exec.Cmd: the leader of a new process group, the
// whole group killed when ctx is done (KillOnCancel), the child environment (env, nil for
// this process's, less what childenv withholds: tokens), and its output pipes waited for at
// most 5 s once it has exited, so a child left holding them cannot block the caller (set
// WaitDelay for another bound). Call KillRest after it has been waited for.
func Command(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = childenv.Environ(env)
	KillOnCancel(cmd)
	cmd.WaitDelay = waitDelay
	return cmd
}

// command is the command Run and Start run: in dir, with its stdout and stderr kept
// together in a tail of tailBytes (default DefaultTailBytes) and at most logCap bytes of
// log.
func command(ctx context.Context, argv []string, dir string, env []string, log io.Writer, logCap, tailBytes int) (*exec.Cmd, *TailBuffer) {
	cmd := Command(ctx, env, argv[0], argv[1:]...)
	cmd.Dir = dir
	tail := &TailBuffer{Max: tailBytes, Keep: HarnessWarning}
	if tail.Max <= 0 {
		tail.Max = DefaultTailBytes
	}
	w := io.MultiWriter(tail, &CapWriter{W: log, Left: logCap})
	cmd.Stdout, cmd.Stderr = w, w
	return cmd, tail
}

// endedWhy says in words what went wrong with a command that ran and was waited for
// (Outcome.Why): "" when it exited 0 and its output was read.
func endedWhy(ps *os.ProcessState, err error) string {
	switch {
	case !ps.Success():
		if code := ps.ExitCode(); code >= 0 {
			return fmt.Sprintf("exited with status %d", code)
		}
		return "was killed by " + ps.String() // "signal: segmentation fault"
	case err != nil:
		// It exited 0 but its output could not be collected (a child kept the pipes).
		return fmt.Sprintf("exited, but its output could not be read: %v", err)
	}
	return ""
}

// TailBuffer keeps the last Max bytes written to it, and, wherever they were printed, the
// first lines that begin with Keep (a harness's own "kg_bench:" warnings: a tail of a long
// output would lose the one line that says why its timings are odd).
type TailBuffer struct {
	buf []byte
	Max int
	cut bool
	// Keep is the line prefix of the lines kept whole beside the tail ("": none).
	Keep string
	kept []string
	line []byte // the current line's start, up to maxKeptLine bytes, while it may match Keep
	skip bool   // the current line does not begin with Keep
}

// HarnessWarning is the prefix of a harness helper's own warnings (kernels/kg_bench.py,
// kg_bench.h), which every failure message shows first.
const HarnessWarning = "kg_bench:"

const (
	maxKeptLines = 8
	maxKeptLine  = 400
)

func (t *TailBuffer) Write(p []byte) (int, error) {
	if t.Keep != "" {
		t.keepLines(p)
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// keepLines follows line starts through p, keeping the lines that begin with Keep.
func (t *TailBuffer) keepLines(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !t.skip && len(t.kept) < maxKeptLines {
			room := maxKeptLine - len(t.line)
			t.line = append(t.line, part[:min(len(part), max(room, 0))]...)
			n := min(len(t.line), len(t.Keep))
			if string(t.line[:n]) != t.Keep[:n] {
				t.skip, t.line = true, t.line[:0]
			}
		}
		if i < 0 {
			return
		}
		if !t.skip && len(t.line) >= len(t.Keep) && len(t.kept) < maxKeptLines {
			t.kept = append(t.kept, strings.ToValidUTF8(strings.TrimRight(string(t.line), "\r"), "\uFFFD"))
		}
		t.line, t.skip = t.line[:0], false
		p = p[i+1:]
	}
}

// Kept are the lines that began with Keep, in the order written (at most 8, each cut at
// 400 bytes).
func (t *TailBuffer) Kept() []string { return t.kept }

// String is the kept tail, starting at a line boundary when it was cut, valid UTF-8,
// after the kept lines (Keep) that the tail itself no longer holds.
func (t *TailBuffer) String() string {
	s := string(t.buf)
	if t.cut {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
		s = "…" + strings.ToValidUTF8(s, "")
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var first []string
	for _, k := range t.kept {
		if !strings.Contains(s, k) {
			first = append(first, k)
		}
	}
	if len(first) == 0 {
		return s
	}
	return strings.Join(first, "\n") + "\n" + s
}

// CapWriter passes on at most Left bytes to W, then notes the cut once. Write errors of
// W are ignored, so the command never sees a broken pipe from a log.
type CapWriter struct {
	W    io.Writer
	Left int
	cut  bool
}

func (c *CapWriter) Write(p []byte) (int, error) {
	if c.W == nil {
		return len(p), nil
	}
	if c.Left <= 0 {
		if !c.cut {
			c.cut = true
			_, _ = io.WriteString(c.W, "\n[kernel-gate: output cut here: the log keeps the first part only]\n")
		}
		return len(p), nil
	}
	n := min(len(p), c.Left)
	_, _ = c.W.Write(p[:n])
	c.Left -= n
	return len(p), nil
}

// ShellQuote quotes a word so that sh reads it back as the same word: words of only
// letters, digits and a few safe punctuation marks stay as they are, others go in single
// quotes.
func ShellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:+@%") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// ShellJoin renders argv as one command line sh runs as the same words: for messages,
// logs and scripts.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}
