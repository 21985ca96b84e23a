package cli

import (
	"context"
	"slices"

	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// runNCU is `kernel-gate ncu`: profile the harness with Nsight Compute and apply the ncu
// gate, or judge ncu --csv output saved elsewhere. A missing ncu is a failed gate (exit 1),
// like a missing compute-sanitizer: the gate cannot pass without profiling.
func runNCU(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var csvFiles multiFlag
	var ov ncu.Overrides
	var timeout string
	fs := newFlagSet("ncu", e, &c)
	fs.Var(&csvFiles, "csv", "judge ncu --csv output saved in `FILE` instead of running ncu (repeatable; \"-\" is standard input)")
	fs.StringVar(&ov.NCU, "ncu", "ncu", "ncu `PATH`")
	fs.StringVar(&ov.ArtifactDir, "artifacts", "", "keep ncu's log ("+ncu.LogFile+") and the harness's output ("+ncu.HarnessFile+") in `DIR`")
	fs.StringVar(&timeout, "timeout", "", "`DURATION` before ncu and the harness are killed with their process group (default: the config's ncu.timeout, else 10m)")
	fs.StringVar(&ov.Shape, "shape", "", "KG_SHAPES of the profiled run, one `SHAPE` (default: the config's ncu.shape, else the harness's)")
	fs.IntVar(&ov.Launches, "launches", 0, "ncu -c: profile at most `N` launches in the run, over all kernels (default: the config's ncu.launches, else 32)")
	flagArgs, cmd := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		// The command keeps its own flags: parse ours only before "--".
		flagArgs, cmd = args[:i], args[i+1:]
	}
	positional, err := parse(fs, flagArgs, e)
	if err != nil {
		return failed(err)
	}
	reading := len(csvFiles) > 0
	if reading {
		csvFiles = append(csvFiles, positional...)
	} else {
		cmd = append(positional, cmd...)
	}
	switch {
	case reading && len(cmd) > 0:
		return failed(usagef("give either a command to profile or --csv files to read, not both"))
	case !reading && len(cmd) == 0:
		return failed(usagef("nothing to profile: give a command after -- (kernel-gate ncu -- ./harness) or --csv FILE"))
	case reading:
		if err := ignored(fs, "--csv (the flags of a run go with a run)", "ncu", "artifacts", "timeout", "shape", "launches"); err != nil {
			return failed(err)
		}
	case timeout != "":
		if ov.Timeout, err = positiveDuration("--timeout", timeout); err != nil {
			return failed(err)
		}
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Files: csvFiles})
	if err != nil {
		return failed(err)
	}
	var g result.Gate
	if reading {
		g, err = ncu.ReadGate(csvFiles, e.stdin, cfg.NCU)
	} else {
		var o ncu.Options
		if o, err = cfg.NCU.OptionsWith(cmd, ov); err == nil {
			g, err = ncu.RunGateShown(ctx, cfg.NCU, o, progressOf(e))
		}
	}
	if err != nil {
		return failed(err)
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}
