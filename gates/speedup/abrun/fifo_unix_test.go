//go:build unix

package abrun

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A harness that made KG_OUT a FIFO (it is the pull request's code) gets its run refused as
// a file that cannot be read, at once: the open would otherwise block past every timeout.
func TestHarnessFileFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan string, 1)
	go func() {
		done <- (func() string { f, why := readHarnessFile(fifo); _ = f; return why + harnessErrors(fifo) + "" })()
	}()
	select {
	case got := <-done:
		if !strings.Contains(got, "FIFO") {
			t.Errorf("got %q, want a refusal naming the FIFO", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting on the FIFO after 10s")
	}
}
