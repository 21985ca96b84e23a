//go:build unix

package sanitizer

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// A log that the harness replaced by a FIFO is a problem of the run, found at once, not an
// open that blocks past the tool's timeout.
func TestLogFIFORefused(t *testing.T) {
	fifo := hangtest.FIFO(t, filepath.Join(t.TempDir(), "memcheck.log"))
	got := hangtest.Within(t, 10*time.Second, "reading a FIFO log", func() string {
		return strings.Join(readLog(fifo, "memcheck", textOptions{}).Problems, "; ")
	})
	if !strings.Contains(got, "FIFO") {
		t.Errorf("got %q, want a refusal naming the FIFO", got)
	}
}
