//go:build unix

package abrun

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// A harness that made KG_OUT a FIFO (it is the pull request's code) gets its run refused as
// a file that cannot be read, at once: the open would otherwise block past every timeout.
func TestHarnessFileFIFORefused(t *testing.T) {
	fifo := hangtest.FIFO(t, filepath.Join(t.TempDir(), "out.json"))
	got := hangtest.Within(t, 10*time.Second, "reading a FIFO harness file", func() string {
		_, why := readHarnessFile(fifo)
		return why + harnessErrors(fifo)
	})
	if !strings.Contains(got, "FIFO") {
		t.Errorf("got %q, want a refusal naming the FIFO", got)
	}
}
