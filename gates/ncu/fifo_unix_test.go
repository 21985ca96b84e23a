//go:build unix

package ncu

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ncu's log replaced by a FIFO (the harness ran in its directory) is refused at once.
func TestLogFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ncu.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan string, 1)
	go func() {
		done <- (func() string {
			_, err := parseFile(fifo, "ncu.log")
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
