package errtext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSay(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, statat := root.Stat("result.json")
	_, open := os.Open(filepath.Join(dir, "nope.log"))
	_, lookPath := exec.LookPath("kernel-gate-no-such-tool")
	for _, c := range []struct {
		err       error
		want      string
		forbidden []string
	}{
		{fmt.Errorf("recorded case clean: %w", statat), "recorded case clean: result.json: no such file or directory", []string{"statat"}},
		{fmt.Errorf("reading: %w", open), "reading: " + filepath.Join(dir, "nope.log") + ": no such file or directory", []string{"open "}},
		{fmt.Errorf("running it: %w", lookPath), "running it: kernel-gate-no-such-tool: not found on PATH", []string{"exec:", "$PATH"}},
		{fmt.Errorf("reading -: %w", context.Canceled), "reading -: stopped before it finished (interrupted)", []string{"context"}},
		{errors.Join(errors.New("a"), fmt.Errorf("b: %w", open)), "b: " + filepath.Join(dir, "nope.log") + ": no such file", []string{"open "}},
		{errors.New("plain words stay"), "plain words stay", nil},
	} {
		got := Say(c.err)
		if !strings.Contains(got, c.want) {
			t.Errorf("Say(%v) = %q, want it to say %q", c.err, got, c.want)
		}
		for _, f := range c.forbidden {
			if strings.Contains(got, f) {
				t.Errorf("Say(%v) = %q says %q", c.err, got, f)
			}
		}
	}
	if Say(nil) != "" {
		t.Error("Say(nil) is not empty")
	}
}

func TestPlain(t *testing.T) {
	_, open := os.Open(filepath.Join(t.TempDir(), "nope.json"))
	err := Plain(fmt.Errorf("the result to report: %w", open))
	if strings.Contains(err.Error(), "open ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Plain: %q, Is ErrNotExist %v", err, errors.Is(err, os.ErrNotExist))
	}
	if Plain(nil) != nil {
		t.Error("Plain(nil) is not nil")
	}
}
