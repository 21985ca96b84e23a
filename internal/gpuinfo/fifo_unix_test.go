//go:build unix

package gpuinfo

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// A kept nvidia-smi answer that is a FIFO is refused at once.
func TestParseFileFIFORefused(t *testing.T) {
	fifo := hangtest.FIFO(t, filepath.Join(t.TempDir(), "gpu.csv"))
	err := hangtest.Within(t, 10*time.Second, "reading a FIFO answer", func() error {
		_, err := ParseFile(fifo)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("got %v, want a refusal naming the FIFO", err)
	}
}
