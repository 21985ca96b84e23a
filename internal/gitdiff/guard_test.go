package gitdiff_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The attack the hunk counting closes, end to end: a change adds "++ README.md" to a
// script (git shows it as "+++ README.md") and, further down, a shutdown. Read line by
// line, the shutdown's hunk went to README.md and `kernel-gate guard --diff` passed.
func TestGuardDiffSeesAddedLinesAfterAHeaderLookalike(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, "echo step "+strconv.Itoa(i))
	}
	write := func(name string, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("ci.sh", strings.Join(lines, "\n")+"\n")
	write("README.md", "hello\n")
	git("add", "-A")
	git("commit", "-qm", "base")
	lines[1], lines[14] = "++ README.md", "sudo shutdown -h now"
	write("ci.sh", strings.Join(lines, "\n")+"\n")
	git("commit", "-qam", "head")
	g, err := guard.ScanDiff(context.Background(), dir, gitdiff.Spec{Base: "HEAD~1", Head: "HEAD", MergeBase: true}, guard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail || len(g.Findings) == 0 || g.Findings[0].File != "ci.sh" || g.Findings[0].Line != 15 {
		t.Errorf("guard --diff: %s with %+v, want the shutdown on ci.sh:15 failing it", g.Verdict, g.Findings)
	}
}
