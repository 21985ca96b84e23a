//go:build unix

package hangtest

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
)

// ExitCode is the exit code of a child that exited by itself, from what its Wait (or Run)
// returned: 0 for nil. A death by a signal fails the test (the child was to end on its own,
// or by kernel-gate's doing), and so does an error that is not an exit status.
func ExitCode(t testing.TB, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("waiting: %v", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("killed by %v, not ended by kernel-gate", ws.Signal())
	}
	return ee.ExitCode()
}
