//go:build unix

package abrun

import (
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// A harness that made KG_OUT a FIFO (it is the pull request's code) gets its run refused as
// a file that cannot be read, at once: the open would otherwise block past every timeout.
func TestHarnessFileFIFORefused(t *testing.T) {
	hangtest.RefusesFIFO(t, "out.json", func(fifo string) string {
		_, why := readHarnessFile(fifo)
		return why + harnessErrors(fifo)
	})
}
