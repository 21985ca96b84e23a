//go:build unix

package gpuinfo

import (
	"fmt"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// A kept nvidia-smi answer that is a FIFO is refused at once.
func TestParseFileFIFORefused(t *testing.T) {
	hangtest.RefusesFIFO(t, "gpu.csv", func(fifo string) string {
		_, err := ParseFile(fifo)
		return fmt.Sprint(err)
	})
}
