package procgroup

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A program that cannot be started is named, with what to do, and no Go words.
func TestRunNamesAMissingProgram(t *testing.T) {
	for _, c := range []struct{ program, want string }{
		{"kernel-gate-no-such-tool", "could not be started: kernel-gate-no-such-tool is not on PATH"},
		{filepath.Join(t.TempDir(), "nvcc"), "nvcc does not exist"},
	} {
		res, err := Run(context.Background(), Spec{Argv: []string{c.program, "--version"}, Timeout: time.Minute})
		if err != nil || !strings.Contains(res.Why, c.want) || strings.Contains(res.Why, "exec:") || strings.Contains(res.Why, "$PATH") {
			t.Errorf("%s: %q, %v; want it to say %q", c.program, res.Why, err, c.want)
		}
	}
}
