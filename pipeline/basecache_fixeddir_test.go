//go:build unix

package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/gittest"
)

// The fixed directories of a base cache run (fixedDir) are made by this run or not used:
// a name already there (a link another process planted to lead the worktree elsewhere, a
// directory with files in it) means a random directory, and nothing is written through or
// into it. The new one is this user's alone (0700). This passed before this round: a
// defence proven, not a fix.
func TestFixedDirIsNeverReused(t *testing.T) {
	repo := gittest.New(t)
	repo.Write(map[string]string{"a.cu": "// a\n"})
	repo.Commit("base")
	tree := strings.TrimSpace(repo.Git("rev-parse", "HEAD^{tree}"))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fixed := filepath.Join(tmp, baseDirPrefix+tree[:16])
	var progress bytes.Buffer
	p := &pipeline{o: Options{BaseCache: t.TempDir(), Progress: &progress}}
	fixedFor := func() string { return p.fixedDir(context.Background(), repo.Dir, "HEAD", baseDirPrefix) }

	got := fixedFor()
	if got != fixed {
		t.Fatalf("fixedDir = %q, want %q", got, fixed)
	}
	if st, err := os.Lstat(got); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("made %v %v, want a directory of mode 0700", st.Mode(), err)
	}
	if again := fixedFor(); again != "" {
		t.Errorf("a directory there already was used again: %q", again)
	}
	os.Remove(fixed)

	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, fixed); err != nil {
		t.Fatal(err)
	}
	if got := fixedFor(); got != "" {
		t.Errorf("a planted link was used: %q", got)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("written through the planted link: %v", entries)
	}
	if !strings.Contains(progress.String(), "is taken") {
		t.Errorf("the progress does not say the name was taken:\n%s", progress.String())
	}
}
