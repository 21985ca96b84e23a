// Package errtext says an error as a person running kernel-gate reads it: which file, and
// what went wrong with it, without the Go operation that failed ("open", "statat"), the
// context package's words ("context canceled") or exec's ("executable file not found in
// $PATH"). The command line uses it for the one line it prints before exiting.
package errtext

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"strings"
)

// Say is err's message with each of the wrapped errors it knows said plainly.
func Say(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	walk(err, func(e error) {
		var plain string
		switch t := e.(type) {
		case *fs.PathError:
			plain = t.Path + ": " + sayErrno(t.Err)
		case *exec.Error:
			plain = t.Name + ": " + sayExec(t.Err)
		default:
			return
		}
		msg = strings.Replace(msg, e.Error(), plain, 1)
	})
	for _, r := range []struct{ old, new string }{
		{context.Canceled.Error(), "stopped before it finished (interrupted)"},
		{context.DeadlineExceeded.Error(), "took too long and was stopped"},
	} {
		msg = strings.ReplaceAll(msg, r.old, r.new)
	}
	return msg
}

// walk calls f on err and every error it wraps, outermost first.
func walk(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, f)
		}
	}
}

// sayErrno is what went wrong with a file.
func sayErrno(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// sayExec is why a program could not be started.
func sayExec(err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		return "not found on PATH (install it, or name its path)"
	}
	return err.Error()
}

// Plain is err with Say's message; errors.Is and As still see err through it. Nil for nil.
func Plain(err error) error {
	if err == nil {
		return nil
	}
	return plain{err}
}

type plain struct{ err error }

func (p plain) Error() string { return Say(p.err) }
func (p plain) Unwrap() error { return p.err }
