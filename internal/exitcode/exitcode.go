// Package exitcode says which of kernel-gate's exit codes an error means, so that a command,
// the pipeline and the gates mark an error once, where its cause is known, and the command
// line (package cli) only maps it:
//
//	0 Pass      every gate passed (or had nothing to judge)
//	1 Fail      a gate failed (a missing tool such as compute-sanitizer is a failed gate too)
//	2 Usage     bad usage, or input kernel-gate could not read (a file, the config, a recording);
//	            also a run stopped by SIGINT or SIGTERM
//	3 Internal  kernel-gate itself could not run a step (a git worktree, the artifacts
//	            directory, a full disk, a tool it started that it could not wait for)
//
// An error nobody marked is Internal: kernel-gate failed to do its own work, and a caller
// who could blame the input would have said so.
package exitcode

import (
	"context"
	"errors"
	"flag"
	"fmt"
)

// The codes.
const (
	Pass     = 0
	Fail     = 1
	Usage    = 2
	Internal = 3
)

// coded is an error with the code it exits with.
type coded struct {
	err  error
	code int
}

func (e coded) Error() string { return e.err.Error() }
func (e coded) Unwrap() error { return e.err }

// BadInput marks err as bad usage or unreadable input (exit 2). A nil err stays nil; an
// error already marked keeps its mark, since the innermost caller knew the cause best.
func BadInput(err error) error { return mark(err, Usage) }

// BadInputf is BadInput(fmt.Errorf(...)).
func BadInputf(format string, a ...any) error { return BadInput(fmt.Errorf(format, a...)) }

// CouldNotRun marks err as a step kernel-gate itself could not run (exit 3).
func CouldNotRun(err error) error { return mark(err, Internal) }

// CouldNotRunf is CouldNotRun(fmt.Errorf(...)).
func CouldNotRunf(format string, a ...any) error { return CouldNotRun(fmt.Errorf(format, a...)) }

func mark(err error, code int) error {
	if err == nil {
		return nil
	}
	var c coded
	if errors.As(err, &c) {
		return err
	}
	return coded{err: err, code: code}
}

// Of is the exit code of a command that ended with err: Pass for nil and for -h (help was
// asked for and printed), Usage for a marked BadInput error and for a cancelled run (SIGINT
// or SIGTERM), the mark of any other marked error, else Internal.
func Of(err error) int {
	var c coded
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return Pass
	case errors.As(err, &c):
		return c.code
	case errors.Is(err, context.Canceled):
		return Usage
	}
	return Internal
}
