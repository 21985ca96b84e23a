package baseline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/input"
)

// AddArtifacts adds the head's own timings that a run left in its artifacts directory
// (kernel-gate run --artifacts DIR, or a recording): DIR/<target>/bench/head.json, the
// A/B runner's merged file of every round head ran. A directory without one (a target
// that was not timed) adds nothing. Files are read through an os.Root of dir: a link out
// of it, or anything but a regular file, is an error, never followed.
func (e *Entry) AddArtifacts(ctx context.Context, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("baseline: the run's artifacts: %w", err)
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return fmt.Errorf("baseline: the run's artifacts %s: %w", dir, err)
	}
	var targets []string
	for _, d := range entries {
		if d.IsDir() && d.Name() != "base" && d.Name() != "head" {
			targets = append(targets, d.Name())
		}
	}
	slices.Sort(targets)
	for _, t := range targets {
		name := path.Join(t, "bench", "head.json")
		b, err := input.ReadFileIn(ctx, root, name, input.JSON)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		f, err := benchfile.Read(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("baseline: %s: %w", path.Join(dir, name), err)
		}
		if err := e.AddBench(t, f); err != nil {
			return err
		}
	}
	return nil
}
