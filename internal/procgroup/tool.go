package procgroup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Tool is an external tool found for a run, and the directory the run writes in.
type Tool struct {
	// Bin is the tool's path as exec.LookPath found it.
	Bin string
	// Dir is where the run's logs and record files go.
	Dir string
	// Keep is true when Dir is the caller's artifact directory: what the run writes there
	// stays and may be named in a report. A temporary Dir is Close's to remove.
	Keep bool
}

// FindTool looks name up on PATH (a path is taken as it is) and readies the directory its
// run writes in: dir, created when missing, or, when dir is "", a new temporary directory
// named after pattern (as os.MkdirTemp), which Close removes.
//
// The tool is looked up first, so that a missing tool is reported as such whatever else is
// wrong; that error wraps missing, the gate's own "not found" error, and names the tool.
// The other errors are ctx's and a directory that cannot be made.
func FindTool(ctx context.Context, name string, missing error, dir, pattern string) (Tool, error) {
	bin, err := exec.LookPath(name)
	if err != nil {
		return Tool{}, fmt.Errorf("%w: %q: %w", missing, name, err)
	}
	if err := ctx.Err(); err != nil {
		return Tool{}, err
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Tool{}, fmt.Errorf("artifact directory: %w", err)
		}
		return Tool{Bin: bin, Dir: dir, Keep: true}, nil
	}
	if dir, err = os.MkdirTemp("", pattern); err != nil {
		return Tool{}, fmt.Errorf("temporary directory for the logs: %w", err)
	}
	return Tool{Bin: bin, Dir: dir}, nil
}

// Close removes a temporary Dir and what the run left in it; the caller's Dir stays.
func (t Tool) Close() {
	if !t.Keep && t.Dir != "" {
		_ = os.RemoveAll(t.Dir)
	}
}

// Create creates the run's file name in Dir (CreateArtifact): nothing outside Dir is
// written, whatever Dir holds.
func (t Tool) Create(name string) (*os.File, error) { return CreateArtifact(t.Dir, name, 0o644) }

// Clear readies name in Dir for a file the tool or its command writes (ClearArtifact).
func (t Tool) Clear(name string) error { return ClearArtifact(t.Dir, name) }
