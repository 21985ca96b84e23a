//go:build unix

package sanitizer

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A log that the harness replaced by a FIFO is a problem of the run, found at once, not an
// open that blocks past the tool's timeout.
func TestLogFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "memcheck.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan string, 1)
	go func() { done <- strings.Join(readLog(fifo, "memcheck", textOptions{}).Problems, "; ") }()
	select {
	case got := <-done:
		if !strings.Contains(got, "FIFO") {
			t.Errorf("got %q, want a refusal naming the FIFO", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting on the FIFO after 10s")
	}
}
