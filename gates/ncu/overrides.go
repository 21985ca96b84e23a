package ncu

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Overrides are a run's settings as `kernel-gate ncu` is given them; each one set wins over
// the config's.
type Overrides struct {
	NCU, ArtifactDir, Shape string
	Timeout                 time.Duration
	Launches                int
}

// OptionsWith is Options(cmd) with ov applied. The config's error is exitcode.BadInput; a
// shape list or a launch count out of range too, naming its flag.
func (c Config) OptionsWith(cmd []string, ov Overrides) (Options, error) {
	o, err := c.Options(cmd)
	if err != nil {
		return o, exitcode.BadInput(err)
	}
	o.NCU, o.ArtifactDir = ov.NCU, ov.ArtifactDir
	if ov.Timeout > 0 {
		o.Timeout = ov.Timeout
	}
	if ov.Shape != "" {
		if strings.Contains(ov.Shape, ",") {
			return o, exitcode.BadInputf("--shape %q: one shape, the main one", ov.Shape)
		}
		o.Shape = ov.Shape
	}
	if ov.Launches != 0 {
		if ov.Launches < 0 || ov.Launches > MaxLaunches {
			return o, exitcode.BadInputf("--launches %d: want 1 to %d launches", ov.Launches, MaxLaunches)
		}
		o.Launches = ov.Launches
	}
	return o, nil
}

// RunGateShown is RunGate saying on progress the command it runs and, once done, how long
// it took (nothing when the config asks for no metrics).
func RunGateShown(ctx context.Context, cfg Config, o Options, progress io.Writer) (result.Gate, error) {
	if !cfg.Empty() {
		fmt.Fprintf(progress, "kernel-gate ncu: %s %s %s\n", o.NCU, strings.Join(Args(o), " "), strings.Join(o.Command, " "))
	}
	start := time.Now()
	g, err := RunGate(ctx, cfg, o)
	if err != nil {
		return g, err
	}
	if !cfg.Empty() {
		fmt.Fprintf(progress, "kernel-gate ncu: done in %s\n", time.Since(start).Round(time.Millisecond))
	}
	return g, nil
}
