//go:build unix

package sanitizer

import (
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// A log that the harness replaced by a FIFO is a problem of the run, found at once, not an
// open that blocks past the tool's timeout.
func TestLogFIFORefused(t *testing.T) {
	hangtest.RefusesFIFO(t, "memcheck.log", func(fifo string) string {
		return strings.Join(readLog(fifo, "memcheck", textOptions{}).Problems, "; ")
	})
}
