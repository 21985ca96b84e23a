package pipeline

import (
	"strings"
	"testing"
)

// A failed step's finding shows the harness's own kg_bench warning before the rest of its
// last output, however long the output after it was (issue 21).
func TestFailureTextShowsHarnessWarningsFirst(t *testing.T) {
	warning := "kg_bench: time_launches: fn (h.py:12 (step)) waits for the GPU: it is timed unheld"
	s := step{Argv: []string{"sh", "-c", "python3 h.py"}, Why: "exited with status 1",
		Tail: "loading\n" + warning + "\n" + strings.Repeat("a torch line\n", 500) + "RuntimeError: boom\n"}
	msg := s.failureText()
	i := strings.Index(msg, "its last output:\n")
	if i < 0 || !strings.HasPrefix(msg[i+len("its last output:\n"):], warning+"\n") || !strings.Contains(msg, "RuntimeError: boom") {
		t.Errorf("message %q", msg)
	}
}
