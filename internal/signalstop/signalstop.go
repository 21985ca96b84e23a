// Package signalstop is how kernel-gate ends on SIGINT and SIGTERM: the context every
// command runs under is cancelled at the first signal, and the process exits 2 at a second
// one or when a grace period runs out, whatever the command is stuck in.
package signalstop

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

// Grace is how long a command has, after the first SIGINT or SIGTERM, to end by
// itself: every read, wait, tool and request it makes honours the cancelled context within
// milliseconds, and the cleanups that run anyway (a base worktree removed) within seconds.
// What is still running then waits where no context reaches (a system call that cannot be
// interrupted, such as a blocking open of a FIFO): the process exits regardless. GitHub's
// runner, cancelling a job, sends SIGINT, then SIGTERM 7.5 s later, then SIGKILL.
const Grace = 10 * time.Second

// GraceMessage is the start of what kernel-gate says when Grace ran out or a
// second signal came, and it exits without waiting for the command.
const GraceMessage = "kernel-gate: exiting without waiting for the command"

// Stop returns the context every command runs under, cancelled at the first SIGINT
// or SIGTERM, and exit, which main calls with the command's exit code once it returned:
// a command the signal stopped exits 2 (internal/exitcode), whatever it ended with (a
// harness killed mid-run is not a failed gate). After the first signal, a second one or
// grace (main's is Grace) ends the process at once, exit 2, so that no signal is ever
// ignored.
// Why: docs/threat-model.md, threat-model T16.
func Stop(stderr io.Writer, grace time.Duration) (ctx context.Context, exit func(code int) int) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		cancel(fmt.Errorf("%v received", s))
		var why string
		select {
		case s2 := <-sigs:
			why = fmt.Sprintf("a second signal (%v)", s2)
		case <-time.After(grace):
			why = fmt.Sprintf("it still runs %s after %v", grace, s)
		}
		fmt.Fprintf(stderr, "%s: %s\n", GraceMessage, why)
		os.Exit(exitcode.Usage)
	}()
	return ctx, func(code int) int {
		signal.Stop(sigs)
		if cause := context.Cause(ctx); cause != nil {
			if code != exitcode.Usage {
				fmt.Fprintf(stderr, "kernel-gate: stopped (%v): exit %d, whatever the command found\n", cause, exitcode.Usage)
			}
			return exitcode.Usage
		}
		return code
	}
}
