// Package gittest makes throwaway git repositories for tests: files written, committed by a
// fixed author, git run with t.Fatal on failure. It is for tests only: no package of the
// product imports it.
package gittest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/childenv"
)

// Repo is a git repository in a directory of the test's.
type Repo struct {
	t   testing.TB
	Dir string
}

// New makes an empty repository (branch main) in a new temporary directory.
func New(t testing.TB) *Repo {
	t.Helper()
	return Init(t, filepath.Join(t.TempDir(), "repo"))
}

// Init makes dir (and what is already in it) a repository with branch main.
func Init(t testing.TB, dir string) *Repo {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Repo{t: t, Dir: dir}
	r.Git("init", "-q", "-b", "main")
	return r
}

// env is what git runs with: no user or system config, and a fixed author and committer.
func env() []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=kernel-gate test", "GIT_AUTHOR_EMAIL=test@kernel-gate.invalid",
		"GIT_COMMITTER_NAME=kernel-gate test", "GIT_COMMITTER_EMAIL=test@kernel-gate.invalid")
}

// Git runs git in the repository and returns its standard output, trimmed; a failure
// fails the test, with what git said.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = childenv.Environ(env())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// Write writes files (slash-separated path → content) into the work tree, making their
// directories.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for rel, content := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Commit commits the whole work tree (git add -A) and returns the commit's SHA.
func (r *Repo) Commit(msg string) string {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-qm", msg)
	return r.Git("rev-parse", "HEAD")
}

// PullRequest makes a repository whose branch main holds base (one commit) and whose branch
// pr, checked out, changes it by head (one commit on top of main's).
func PullRequest(t testing.TB, base, head map[string]string) *Repo {
	t.Helper()
	r := New(t)
	r.Write(base)
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "pr")
	r.Write(head)
	r.Commit("head")
	return r
}
