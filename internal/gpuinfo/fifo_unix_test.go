//go:build unix

package gpuinfo

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A kept nvidia-smi answer that is a FIFO is refused at once.
func TestParseFileFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "gpu.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan string, 1)
	go func() {
		done <- (func() string {
			_, err := ParseFile(fifo)
			if err == nil {
				return ""
			}
			return err.Error()
		})()
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
