package toolkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

const (
	// maxOutput bounds how much of nvcc's stdout is kept (its banner is five lines).
	maxOutput = 64 << 10
	// maxStderr bounds how much of its stderr is kept for an error message.
	maxStderr = 4 << 10
	// waitDelay bounds the wait for the output pipes after nvcc is killed or exits.
	waitDelay = 2 * time.Second
)

// FromNVCC runs `nvcc --version` and parses its output. nvcc is the binary's name (looked
// up on PATH) or path; empty means "nvcc". ctx bounds the run: when it is done the process
// (and, on Unix, its process group) is killed and FromNVCC returns ctx's error, wrapped.
// The Version's Source is "<nvcc> --version".
func FromNVCC(ctx context.Context, nvcc string) (Version, error) {
	if nvcc == "" {
		nvcc = "nvcc"
	}
	what := nvcc + " --version"
	if err := ctx.Err(); err != nil {
		return Version{}, fmt.Errorf("running %s: %w", what, err)
	}
	cmd := procgroup.Command(ctx, nil, nvcc, "--version")
	cmd.WaitDelay = waitDelay
	stdout := &capped{max: maxOutput}
	stderr := &capped{max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Version{}, fmt.Errorf("running %s: %w (%v)", what, ctxErr, err)
		}
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if msg := strings.TrimSpace(stderr.String()); msg != "" {
				return Version{}, fmt.Errorf("running %s: %w: %s", what, err, msgtext.Clip(msg, 200))
			}
		}
		return Version{}, fmt.Errorf("running %s: %w", what, err)
	}
	v, err := Parse(stdout.String())
	if err != nil {
		return Version{}, fmt.Errorf("parsing %s: %w", what, err)
	}
	v.Source = what
	return v, nil
}

// capped keeps the first max bytes written to it and drops the rest, while reporting every
// write as complete so that the child never blocks or fails on its output.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.buf.String() }
