package gitdiff_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The attack the hunk counting closes, end to end: a change adds "++ README.md" to a
// script (git shows it as "+++ README.md") and, further down, a shutdown. Read line by
// line, the shutdown's hunk went to README.md and `kernel-gate guard --diff` passed.
func TestGuardDiffSeesAddedLinesAfterAHeaderLookalike(t *testing.T) {
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, "echo step "+strconv.Itoa(i))
	}
	repo := gittest.New(t)
	repo.Write(map[string]string{"ci.sh": strings.Join(lines, "\n") + "\n", "README.md": "hello\n"})
	repo.Commit("base")
	lines[1], lines[14] = "++ README.md", "sudo shutdown -h now"
	repo.Write(map[string]string{"ci.sh": strings.Join(lines, "\n") + "\n"})
	repo.Commit("head")
	g, err := guard.ScanDiff(context.Background(), repo.Dir, gitdiff.Spec{Base: "HEAD~1", Head: "HEAD", MergeBase: true}, guard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail || len(g.Findings) == 0 || g.Findings[0].File != "ci.sh" || g.Findings[0].Line != 15 {
		t.Errorf("guard --diff: %s with %+v, want the shutdown on ci.sh:15 failing it", g.Verdict, g.Findings)
	}
}
