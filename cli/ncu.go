package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// runNCU is `kernel-gate ncu`: profile the harness with Nsight Compute and apply the ncu
// gate, or judge ncu --csv output saved elsewhere. A missing ncu is a failed gate (exit 1),
// like a missing compute-sanitizer: the gate cannot pass without profiling.
func runNCU(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var csvFiles multiFlag
	var bin, artifacts, timeout, shape string
	var launches int
	fs := newFlagSet("ncu", e, &c)
	fs.Var(&csvFiles, "csv", "judge ncu --csv output saved in `FILE` instead of running ncu (repeatable; \"-\" is standard input)")
	fs.StringVar(&bin, "ncu", "ncu", "ncu `PATH`")
	fs.StringVar(&artifacts, "artifacts", "", "keep ncu's log ("+ncu.LogFile+") and the harness's output ("+ncu.HarnessFile+") in `DIR`")
	fs.StringVar(&timeout, "timeout", "", "`DURATION` before ncu and the harness are killed with their process group (default: the config's ncu.timeout, else 10m)")
	fs.StringVar(&shape, "shape", "", "KG_SHAPES of the profiled run, one `SHAPE` (default: the config's ncu.shape, else the harness's)")
	fs.IntVar(&launches, "launches", 0, "ncu -c: profile at most `N` launches in the run, over all kernels (default: the config's ncu.launches, else 32)")
	flagArgs, cmd := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		// The command keeps its own flags: parse ours only before "--".
		flagArgs, cmd = args[:i], args[i+1:]
	}
	positional, err := parse(fs, flagArgs, `Usage: kernel-gate ncu [flags] -- CMD [ARGS...]
       kernel-gate ncu [flags] --csv FILE [FILE...]

Runs Nsight Compute once on CMD (the kernel harness, with KG_MODE=check, KG_ROUNDS=1 and
KG_SHAPES set to the main shape): ncu --csv --clock-control none --metrics M... with the
metrics the config's ncu.kernels name, and applies the ncu gate. kernel-gate never lets ncu
lock the GPU's clocks. With --csv it judges output saved elsewhere (files after the flags
are more CSV files then).

`, e)
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
	case reading && (artifacts != "" || timeout != "" || shape != "" || launches != 0):
		return failed(usagef("--artifacts, --timeout, --shape and --launches go with a run, not with --csv"))
	case reading:
		if err := ignored(fs, "--csv (ncu is not run)", "ncu"); err != nil {
			return failed(err)
		}
	}
	cfg, fmtr, err := setup(c, outfile.Reads{Files: csvFiles})
	if err != nil {
		return failed(err)
	}
	var g result.Gate
	if reading {
		g, err = ncu.ReadGate(csvFiles, e.stdin, cfg.NCU)
	} else {
		var o ncu.Options
		o, err = ncuOptions(cfg.NCU, cmd, bin, artifacts, timeout, shape, launches)
		if err == nil {
			g, err = ncuRun(ctx, cfg.NCU, o, e)
		}
	}
	if err != nil {
		return failed(err)
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

// ncuOptions merges the config with the flags, which win.
func ncuOptions(cfg ncu.Config, cmd []string, bin, artifacts, timeout, shape string, launches int) (ncu.Options, error) {
	o, err := cfg.Options(cmd)
	if err != nil {
		return o, exitcode.BadInput(err)
	}
	o.NCU, o.ArtifactDir = bin, artifacts
	if timeout != "" {
		if o.Timeout, err = positiveDuration("--timeout", timeout); err != nil {
			return o, err
		}
	}
	if shape != "" {
		if strings.Contains(shape, ",") {
			return o, usagef("--shape %q: one shape, the main one", shape)
		}
		o.Shape = shape
	}
	if launches != 0 {
		if launches < 0 || launches > ncu.MaxLaunches {
			return o, usagef("--launches %d: want 1 to %d launches", launches, ncu.MaxLaunches)
		}
		o.Launches = launches
	}
	return o, nil
}

// ncuRun profiles the command and judges it; progress goes to standard error.
func ncuRun(ctx context.Context, cfg ncu.Config, o ncu.Options, e env) (result.Gate, error) {
	if !cfg.Empty() {
		fmt.Fprintf(e.stderr, "kernel-gate ncu: %s %s %s\n", o.NCU, strings.Join(ncu.Args(o), " "), strings.Join(o.Command, " "))
	}
	start := time.Now()
	g, err := ncu.RunGate(ctx, cfg, o)
	if err != nil {
		return g, err
	}
	if !cfg.Empty() {
		fmt.Fprintf(e.stderr, "kernel-gate ncu: done in %s\n", time.Since(start).Round(time.Millisecond))
	}
	return g, nil
}
