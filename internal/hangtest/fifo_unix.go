//go:build unix

package hangtest

import (
	"syscall"
	"testing"
)

// FIFO makes a FIFO (named pipe) at path, which nothing writes, and returns path; where
// the file system cannot hold one it skips the test.
func FIFO(t testing.TB, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}
