package procgroup

import (
	"strings"
	"testing"
)

// A harness's own warning ("kg_bench: ...") printed early in a long output is shown first,
// whole, even where the tail no longer holds it; lines that only contain the prefix later,
// or begin with something else, are not kept; writes may split a line anywhere.
func TestTailBufferKeepsHarnessWarnings(t *testing.T) {
	warning := "kg_bench: time_launches: fn (h.py:12 (step)) waits for the GPU: it is timed unheld"
	out := "starting\n" + warning + "\n" + strings.Repeat("progress line, not a warning kg_bench: no\n", 200) + "Traceback: boom\n"
	for _, chunk := range []int{1, 7, 64, len(out)} {
		tb := TailBuffer{Max: 500, Keep: HarnessWarning}
		for i := 0; i < len(out); i += chunk {
			tb.Write([]byte(out[i:min(i+chunk, len(out))]))
		}
		got := tb.String()
		if !strings.HasPrefix(got, warning+"\n…") || !strings.HasSuffix(got, "Traceback: boom\n") || strings.Count(got, "kg_bench: time_launches") != 1 {
			t.Errorf("writes of %d bytes: %q", chunk, got)
		}
	}
	// Kept lines the tail still holds are not repeated; without Keep nothing is kept.
	tb := TailBuffer{Max: 4096, Keep: HarnessWarning}
	tb.Write([]byte(out[:len("starting\n")+len(warning)+1]))
	if got := tb.String(); got != "starting\n"+warning+"\n" {
		t.Errorf("short output %q", got)
	}
	plain := TailBuffer{Max: 500}
	plain.Write([]byte(out))
	if strings.Contains(plain.String(), "time_launches") {
		t.Errorf("kept without Keep: %q", plain.String())
	}
	// At most maxKeptLines lines of at most maxKeptLine bytes.
	many := TailBuffer{Max: 10, Keep: HarnessWarning}
	for i := 0; i < 20; i++ {
		many.Write([]byte(HarnessWarning + strings.Repeat("x", 1000) + "\n"))
	}
	kept := 0
	for _, l := range strings.Split(many.String(), "\n") {
		if strings.HasPrefix(l, HarnessWarning) {
			kept++
			if len(l) > maxKeptLine {
				t.Errorf("a kept line of %d bytes", len(l))
			}
		}
	}
	if kept != maxKeptLines {
		t.Errorf("%d kept lines, want %d", kept, maxKeptLines)
	}
}
