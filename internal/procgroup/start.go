package procgroup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// A long-lived process (a harness that serves rounds: gates/speedup/abrun) is started with
// Start rather than Run: it gets requests on its standard input and writes its answers to
// a pipe of its own (AnswerFD), so that whatever else it prints — user code, libraries,
// warnings on stdout or stderr — goes to its log and can never be read as an answer.

// AnswerFD is the file descriptor a started process writes its answers to (Proc.Answers
// reads them): the first one after standard error.
const AnswerFD = 3

// StartSpec is one long-lived command.
type StartSpec struct {
	Argv []string
	Dir  string
	Env  []string // nil: this process's; either way less what childenv withholds (tokens)
	// Log gets everything the command prints on stdout and stderr (interleaved), at most
	// LogCap bytes of it; nil keeps nothing.
	Log    io.Writer
	LogCap int
	// TailBytes is how much of the output's end Proc.Outcome keeps (default
	// DefaultTailBytes).
	TailBytes int
}

// Proc is a started command: the leader of its own process group, killed with its whole
// group when the Start context is done, on Kill, or when Close's grace runs out.
type Proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	answers *os.File
	tail    *TailBuffer
	start   time.Time
	done    chan struct{}
	// mu guards out, written once by the waiter before done is closed.
	mu  sync.Mutex
	out Outcome
	ctx context.Context
}

// Start starts a command in its own process group with a pipe on its standard input
// (Proc.Stdin) and another as its file descriptor AnswerFD (Proc.Answers). When ctx is
// done the whole group is killed. The error is for a command that could not be started
// (no such program, a pipe that could not be made) or a ctx already done.
func Start(ctx context.Context, s StartSpec) (*Proc, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, errors.New("could not be started: no program named")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ar, aw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("could not be started: the answer pipe: %w", err)
	}
	cmd, tail := command(ctx, s.Argv, s.Dir, s.Env, s.Log, s.LogCap, s.TailBytes)
	cmd.ExtraFiles = []*os.File{aw} // fd 3 = AnswerFD
	stdin, err := cmd.StdinPipe()
	if err != nil {
		ar.Close()
		aw.Close()
		return nil, fmt.Errorf("could not be started: %w", err)
	}
	p := &Proc{cmd: cmd, stdin: stdin, answers: ar, tail: tail, done: make(chan struct{}), ctx: ctx}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		ar.Close()
		aw.Close()
		return nil, fmt.Errorf("could not be started: %w", err)
	}
	// Only the child keeps the write end: its exit (and its children's) is the answers' EOF.
	aw.Close()
	go p.wait()
	return p, nil
}

func (p *Proc) wait() {
	err := p.cmd.Wait()
	KillRest(p.cmd)
	out := Outcome{ExitCode: -1, Took: time.Since(p.start)}
	if p.cmd.ProcessState != nil {
		out.ExitCode = p.cmd.ProcessState.ExitCode()
	}
	switch {
	case p.cmd.ProcessState == nil:
		out.Why = fmt.Sprintf("could not be waited for: %v", err)
	default:
		out.Why = endedWhy(p.cmd.ProcessState, err)
	}
	out.Output = p.tail.String()
	p.mu.Lock()
	p.out = out
	p.mu.Unlock()
	close(p.done)
}

// Pid is the process's id (its group's id too).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Stdin is the process's standard input.
func (p *Proc) Stdin() io.Writer { return p.stdin }

// Answers is the read end of the process's AnswerFD: EOF once it and every child that
// inherited the descriptor have closed it (exited).
func (p *Proc) Answers() io.Reader { return p.answers }

// Done is closed once the process has exited and its output has been collected.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Outcome is how the process ended; valid once Done is closed (the zero Outcome before).
// Output is the end of what it printed.
func (p *Proc) Outcome() Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out
}

// Kill kills the whole process group and waits until the process is reaped.
func (p *Proc) Kill() Outcome {
	select {
	case <-p.done: // reaped already: its group id may belong to another process by now
	default:
		_ = p.cmd.Cancel()
		<-p.done
	}
	p.answers.Close()
	return p.Outcome()
}

// Close ends the process the polite way: it closes its standard input (end of the
// requests) and waits up to grace for it to exit; then it kills the whole group. exited
// is false when it had to be killed. Whatever is left of the group is killed either way.
func (p *Proc) Close(grace time.Duration) (out Outcome, exited bool) {
	_ = p.stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		p.answers.Close()
		return p.Outcome(), true
	case <-t.C:
	case <-p.ctx.Done():
	}
	return p.Kill(), false
}
