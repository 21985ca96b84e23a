//go:build unix

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// action.yml's steps write GITHUB_OUTPUT only through kg_output, which appends only to a
// regular file: a link an earlier step of the job put in its place (to ~/.bashrc) is left
// alone, and so is a FIFO, whose open would block the step; both say so in a warning.
func TestActionYAMLWritesGitHubOutputOnlyAsAFile(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	raw, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	var fn string
	for _, s := range a.Runs.Steps {
		if !strings.Contains(s.Run, "GITHUB_OUTPUT") {
			continue
		}
		start := strings.Index(s.Run, "kg_output() {")
		end := strings.Index(s.Run[max(start, 0):], "\n}\n")
		if start < 0 || end < 0 {
			t.Fatalf("step %s writes GITHUB_OUTPUT without kg_output:\n%s", s.ID, s.Run)
		}
		body := s.Run[start : start+end+3]
		for _, line := range strings.Split(strings.Replace(s.Run, body, "", 1), "\n") {
			if l := strings.TrimSpace(line); !strings.HasPrefix(l, "#") && strings.Contains(l, "GITHUB_OUTPUT") {
				t.Errorf("step %s writes GITHUB_OUTPUT outside kg_output: %s", s.ID, l)
			}
		}
		if fn != "" && body != fn {
			t.Errorf("step %s has another kg_output", s.ID)
		}
		fn = body
	}
	if fn == "" {
		t.Fatal("no step defines kg_output")
	}
	out := func(t *testing.T, path string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bash, "-euc", fn+"kg_output result-path kernel-gate-result.json\n")
		cmd.Env = []string{"GITHUB_OUTPUT=" + path, "PATH=" + os.Getenv("PATH")}
		b, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%s: still writing after 10s", path)
		}
		if err != nil {
			t.Fatalf("%s: %v: %s", path, err, b)
		}
		return string(b)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "set_output")
	os.WriteFile(file, nil, 0o644)
	if got := out(t, file); got != "" {
		t.Errorf("a regular file: %q", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "result-path=kernel-gate-result.json\n" {
		t.Errorf("the output file: %q", b)
	}
	victim := filepath.Join(t.TempDir(), ".bashrc")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(victim, link)
	fifo := hangtest.FIFO(t, filepath.Join(dir, "fifo"))
	for _, p := range []string{link, fifo} {
		if got := out(t, p); !strings.Contains(got, "::warning::") || !strings.Contains(got, "result-path not set") {
			t.Errorf("%s: %q", p, got)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("written through the link: %q", b)
	}
}
