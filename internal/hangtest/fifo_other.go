//go:build !unix

package hangtest

import (
	"runtime"
	"testing"
)

// FIFO skips the test: there are no FIFOs on this system.
func FIFO(t testing.TB, path string) string {
	t.Helper()
	t.Skipf("no FIFOs on %s", runtime.GOOS)
	return path
}
