//go:build unix

package ncu

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// ncu's log replaced by a FIFO (the harness ran in its directory) is refused at once.
func TestLogFIFORefused(t *testing.T) {
	fifo := hangtest.FIFO(t, filepath.Join(t.TempDir(), "ncu.log"))
	err := hangtest.Within(t, 10*time.Second, "reading a FIFO log", func() error {
		_, err := parseFile(fifo, "ncu.log")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("got %v, want a refusal naming the FIFO", err)
	}
}
