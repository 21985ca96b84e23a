package abrun

import (
	"testing"
)

// A serving harness's note quotes its own kg_bench warnings before its last line.
func TestLastOutputShowsHarnessWarnings(t *testing.T) {
	got := lastOutput("kg_bench: time_launches: fn waits for the GPU\nround 3\nCUDA error: out of memory\n")
	if got != "; its own warnings: kg_bench: time_launches: fn waits for the GPU; its last output: CUDA error: out of memory" {
		t.Errorf("%q", got)
	}
	if got := lastOutput("round 3\nboom\n"); got != "; its last output: boom" {
		t.Errorf("%q", got)
	}
}
