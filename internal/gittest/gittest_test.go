package gittest

import (
	"os"
	"path/filepath"
	"testing"
)

// A repository made by New holds what Write wrote once Commit has run, on main, by the
// fixed author; Commit returns the commit.
func TestNewWriteCommit(t *testing.T) {
	r := New(t)
	r.Write(map[string]string{"a/b.txt": "one\n", "c.txt": "two\n"})
	sha := r.Commit("first")
	if got := r.Git("rev-parse", "main"); got != sha || len(sha) != 40 {
		t.Errorf("Commit returned %q, main is %q", sha, got)
	}
	if got := r.Git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"); got != "kernel-gate test <test@kernel-gate.invalid>|kernel-gate test <test@kernel-gate.invalid>|first" {
		t.Errorf("commit: %q", got)
	}
	if got := r.Git("show", "HEAD:a/b.txt"); got != "one" {
		t.Errorf("a/b.txt: %q", got)
	}
	os.Remove(filepath.Join(r.Dir, "c.txt"))
	r.Commit("second")
	if got := r.Git("ls-files"); got != "a/b.txt" {
		t.Errorf("a removed file is still tracked: %q", got)
	}
}

// PullRequest leaves branch pr checked out, one commit on top of main, which holds base.
func TestPullRequest(t *testing.T) {
	r := PullRequest(t, map[string]string{"a.txt": "base\n", "b.txt": "kept\n"}, map[string]string{"a.txt": "head\n"})
	if got := r.Git("rev-parse", "--abbrev-ref", "HEAD"); got != "pr" {
		t.Errorf("checked out %q, want pr", got)
	}
	if got := r.Git("rev-list", "--count", "main..pr"); got != "1" {
		t.Errorf("pr is %s commits past main, want 1", got)
	}
	if got := r.Git("show", "main:a.txt") + " " + r.Git("show", "pr:a.txt") + " " + r.Git("show", "pr:b.txt"); got != "base head kept" {
		t.Errorf("contents %q", got)
	}
}
