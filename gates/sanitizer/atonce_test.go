//go:build unix

package sanitizer

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Four tools at once (AtOnce 4) each run their own compute-sanitizer process, all four at
// the same time (the command waits until four have started), and judge the same as one
// after the other; OnTool hears every tool once.
func TestRunGateAtOnce(t *testing.T) {
	fake, err := filepath.Abs(filepath.Join("..", "..", "testdata", "fakegpu", "compute-sanitizer"))
	if err != nil {
		t.Fatal(err)
	}
	meet := t.TempDir()
	// Each run marks its arrival, waits up to 10 s for four, and says whether they met.
	rendezvous := []string{"sh", "-c", `: >"$0/$$"; i=0; while [ "$(ls "$0" | grep -c -v met)" -lt 4 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; [ $i -lt 100 ] && : >"$0/met-$$"`, meet}
	var mu sync.Mutex
	var heard []string
	o := RunOptions{Sanitizer: fake, AtOnce: 4, OnTool: func(tool string, _ time.Time, took time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, tool)
	}}
	atOnce, err := RunGate(context.Background(), rendezvous, o, t.TempDir(), Config{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(meet)
	met := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "met-") {
			met++
		}
	}
	if met != 4 {
		t.Errorf("%d of the 4 tools' runs met at once", met)
	}
	slices.Sort(heard)
	if want := slices.Sorted(slices.Values(AllTools())); !slices.Equal(heard, want) {
		t.Errorf("OnTool heard %q, want %q", heard, want)
	}
	inTurn, err := RunGate(context.Background(), []string{"true"}, RunOptions{Sanitizer: fake}, t.TempDir(), Config{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if atOnce.Verdict != inTurn.Verdict || atOnce.Summary != inTurn.Summary || len(atOnce.Findings) != len(inTurn.Findings) {
		t.Errorf("at once: %s %q (%d findings); in turn: %s %q (%d)", atOnce.Verdict, atOnce.Summary, len(atOnce.Findings), inTurn.Verdict, inTurn.Summary, len(inTurn.Findings))
	}
}
