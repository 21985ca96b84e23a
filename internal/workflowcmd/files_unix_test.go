//go:build unix

package workflowcmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// GITHUB_OUTPUT and GITHUB_STEP_SUMMARY replaced by a step before kernel-gate's (the pull
// request's code runs in the same job): a link to a file outside their directory (the
// runner's ~/.bashrc) is refused and the file is left as it was; a FIFO, with or without
// a reader, is refused at once, never waited on; a link inside the directory is followed.
func TestRunnerFilesRefuseLinksOutAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), ".bashrc")
	os.WriteFile(victim, []byte("export PATH=/usr/bin\n"), 0o644)
	absLink := filepath.Join(dir, "abs-link")
	os.Symlink(victim, absLink)
	rel, _ := filepath.Rel(dir, victim)
	relLink := filepath.Join(dir, "rel-link")
	os.Symlink(rel, relLink)
	dangling := filepath.Join(dir, "dangling-link") // O_CREATE would make its target
	os.Symlink(filepath.Join(filepath.Dir(victim), "authorized_keys"), dangling)
	lonely := filepath.Join(dir, "fifo-no-reader")
	read := filepath.Join(dir, "fifo-read")
	hangtest.FIFO(t, lonely)
	hangtest.FIFO(t, read)
	// A reader that never reads: a write that fills the pipe would wait for ever.
	r, err := os.OpenFile(read, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fifoLink := filepath.Join(dir, "fifo-link")
	os.Symlink("fifo-read", fifoLink)

	for _, tc := range []struct {
		path, want string
	}{
		{absLink, "leads out of its directory"},
		{relLink, "leads out of its directory"},
		{dangling, "leads out of its directory"},
		{lonely, "FIFO"},
		{read, "FIFO"},
		{fifoLink, "FIFO"},
		{"/dev/null", "character device"},
	} {
		vars := env(map[string]string{"GITHUB_OUTPUT": tc.path, "GITHUB_STEP_SUMMARY": tc.path})
		for name, write := range map[string]func() error{
			"SetOutput":     func() error { return SetOutput(vars, "verdict", "pass") },
			"AppendSummary": func() error { return AppendSummary(vars, strings.Repeat("# big\n", 20000), 0) },
		} {
			err := hangtest.Within(t, 10*time.Second, name+" to "+tc.path, write)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s to %s: %v, want an error saying %q", name, tc.path, err, tc.want)
			}
			if tc.want == "FIFO" && !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s to %s: %v is not ErrNotRegular", name, tc.path, err)
			}
		}
	}
	if raw, _ := os.ReadFile(victim); string(raw) != "export PATH=/usr/bin\n" {
		t.Errorf("written through a link out of the directory: %q", raw)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(victim), "authorized_keys")); err == nil {
		t.Error("a dangling link out of the directory created its target")
	}

	// A link to a file in the same directory is the runner's file under another name.
	real := filepath.Join(dir, "set_output_1")
	os.WriteFile(real, nil, 0o644)
	os.Symlink("set_output_1", filepath.Join(dir, "inner-link"))
	if err := SetOutput(env(map[string]string{"GITHUB_OUTPUT": filepath.Join(dir, "inner-link")}), "verdict", "pass"); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(real); !strings.HasPrefix(string(raw), "verdict<<ghadelimiter_") {
		t.Errorf("the file behind a link inside the directory: %q", raw)
	}
}
