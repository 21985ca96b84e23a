package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

func runSanitize(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var tools, artifacts, bin, timeout string
	var logs, xmls, harness multiFlag
	fs := newFlagSet("sanitize", e, &c)
	fs.StringVar(&tools, "tools", "", "comma-separated `TOOLS` to run (default: the config's, else memcheck,racecheck,initcheck,synccheck)")
	fs.StringVar(&artifacts, "artifacts", "", "keep each tool's log, XML and the harness's output in `DIR`")
	fs.StringVar(&bin, "sanitizer", "compute-sanitizer", "compute-sanitizer `PATH`")
	fs.StringVar(&timeout, "timeout", "", "per-tool `DURATION` before the command is killed with its process group (default: the config's, else 2m)")
	fs.Var(&logs, "log", "read a compute-sanitizer (or cuda-memcheck) text `FILE` instead of running (repeatable)")
	fs.Var(&xmls, "xml", "read a compute-sanitizer --xml --save `FILE` instead of running (repeatable)")
	fs.Var(&harness, "harness", "with --log/--xml: the harness's KG_OUT `FILE` of that run, which says how many kernels it launched")
	cmd, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Files: append(append(slices.Clone(logs), xmls...), harness...)})
	if err != nil {
		return failed(err)
	}
	if tools != "" {
		// The tools asked for are the tools expected: a listed tool without a run fails.
		if cfg.Sanitizer, err = cfg.Sanitizer.With(func(s *sanitizer.Config) { s.Tools = strings.Split(tools, ",") }); err != nil {
			return failed(exitcode.BadInput(err))
		}
	}
	reading := len(logs)+len(xmls) > 0
	switch {
	case reading && len(cmd) > 0:
		return failed(usagef("give either a command to run or --log/--xml files to read, not both"))
	case !reading && len(cmd) == 0:
		return failed(usagef("nothing to sanitize: give a command after -- (kernel-gate sanitize -- ./harness) or --log/--xml files"))
	case !reading && len(harness) > 0:
		return failed(usagef("--harness goes with --log/--xml; a run reads the harness's output itself"))
	case reading:
		if err := ignored(fs, "--log/--xml (nothing is run)", "artifacts", "sanitizer", "timeout"); err != nil {
			return failed(err)
		}
	}
	var g result.Gate
	if reading {
		g, err = sanitizer.ReadGate(logs, xmls, harness, e.stdin, cfg.Sanitizer)
	} else {
		var o sanitizer.RunOptions
		o, err = sanitizeOptions(cfg, timeout, bin)
		if err == nil {
			g, err = sanitizer.RunGate(ctx, cmd, o, artifacts, cfg.Sanitizer, progressOf(e))
		}
	}
	if err != nil {
		return failed(err)
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

// sanitizeOptions merges the config (--tools already in it) with the flags, which win.
func sanitizeOptions(cfg config.Config, timeout, bin string) (sanitizer.RunOptions, error) {
	o, err := cfg.Sanitizer.RunOptions()
	if err != nil {
		return o, exitcode.BadInput(err)
	}
	o.Sanitizer = bin
	if timeout != "" {
		if o.Timeout, err = positiveDuration("--timeout", timeout); err != nil {
			return o, err
		}
	}
	return o, nil
}
