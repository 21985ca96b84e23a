//go:build unix

package ncu

import (
	"fmt"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// ncu's log replaced by a FIFO (the harness ran in its directory) is refused at once.
func TestLogFIFORefused(t *testing.T) {
	hangtest.RefusesFIFO(t, "ncu.log", func(fifo string) string {
		_, err := parseFile(fifo, "ncu.log")
		return fmt.Sprint(err)
	})
}
