package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/pipeline"
	"github.com/kernel-gate/kernel-gate/report"
)

// version is the tool's release; `go build -ldflags "-X github.com/kernel-gate/kernel-gate/cli.version=v1.2.3"`
// sets it.
var version = "v0.1.0-dev"

func toolName() string { return "kernel-gate " + version }

func runPtxas(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var basePath, nvcc, arch string
	fs := newFlagSet("ptxas", e, &c)
	fs.StringVar(&basePath, "baseline", "", "baseline result `FILE` (a saved --format json result) for deltas and max_register_increase")
	fs.StringVar(&nvcc, "nvcc", "nvcc", "nvcc `PATH` asked for the toolkit version when the logs do not print it (empty: never run it)")
	fs.StringVar(&arch, "arch", "", "`ARCH` (e.g. sm_90a) for records whose input names none (cuobjdump of a cubin)")
	files, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	if err := validArch(arch); err != nil {
		return failed(err)
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Files: append(slices.Clone(files), basePath)})
	if err != nil {
		return failed(err)
	}
	base, err := pipeline.PtxasBaseline(ctx, basePath)
	if err != nil {
		return failed(err)
	}
	var in pipeline.PtxasInputs
	if err := input.Read(ctx, files, e.stdin, input.Log, in.Read); err != nil {
		return failed(err)
	}
	gates, err := pipeline.PtxasGates(ctx, &in, cfg, base, nvcc, arch)
	if err != nil {
		return failed(err)
	}
	return emit(result.New(toolName(), gates...), c, fmtr, e)
}

func runSass(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var files multiFlag
	var arch string
	fs := newFlagSet("sass", e, &c)
	fs.Var(&files, "sass", "`FILE` of cuobjdump --dump-sass or nvdisasm output (repeatable; \"-\" is standard input)")
	fs.StringVar(&arch, "arch", "", "`ARCH` for functions whose dump names none (a grep-filtered dump)")
	rest, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	files = append(files, rest...)
	if len(files) == 0 {
		return failed(usagef("no SASS input: pass --sass FILE (cuobjdump --dump-sass or nvdisasm output)"))
	}
	if err := validArch(arch); err != nil {
		return failed(err)
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Files: files})
	if err != nil {
		return failed(err)
	}
	g, err := pipeline.SASSGate(files, e.stdin, cfg, arch)
	if err != nil {
		return failed(err)
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

func runCheck(ctx context.Context, args []string, e env) (int, error) {
	var c common
	fs := newFlagSet("check", e, &c)
	files, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	if len(files) == 0 {
		return failed(usagef("no harness result: pass FILE (the KG_OUT of a KG_MODE=check run)"))
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Files: files})
	if err != nil {
		return failed(err)
	}
	var gates []result.Gate
	err = input.Read(ctx, files, e.stdin, input.JSON, func(r io.Reader, name string) error {
		g, err := pipeline.CorrectnessGate(r, name, cfg)
		gates = append(gates, g)
		return err
	})
	if err != nil {
		return failed(err)
	}
	return emit(result.New(toolName(), gates...), c, fmtr, e)
}

// runSpeedup is `kernel-gate speedup run|compare`, and `kernel-gate bench run|compare`, their
// old names, which workflows still use.
func runSpeedup(ctx context.Context, args []string, e env) (int, error) {
	if len(args) > 0 {
		switch args[0] {
		case "run":
			return runSpeedupRun(ctx, args[1:], e)
		case "compare":
			return runSpeedupCompare(args[1:], e)
		case "-h", "-help", "--help":
			fmt.Fprint(e.stderr, usageText("speedup-run"), "\n", usageText("speedup-compare"))
			return failed(flag.ErrHelp)
		}
	}
	return failed(usagef("usage: kernel-gate speedup run [flags] (the A/B run: time base and head side by side and judge them), or kernel-gate speedup compare [flags] BASE.json HEAD.json"))
}

// speedupRunFlags are `speedup run`'s own flags.
type speedupRunFlags struct {
	sides                           abrun.Sides
	artifacts, shapes, timeout, smi string
	roundsBudget, samples           int
}

func runSpeedupRun(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var f speedupRunFlags
	fs := newFlagSet("speedup run", e, &c)
	fs.StringVar(&f.sides.BaseCmd, "base-cmd", "", "base's harness: a shell `CMD` (sh -c); goes with --head-cmd")
	fs.StringVar(&f.sides.HeadCmd, "head-cmd", "", "head's harness: a shell `CMD` (sh -c); goes with --base-cmd")
	fs.StringVar(&f.sides.BaseRef, "base", "", "build base from the merge base of `REV` and HEAD (default: the config's speedup.base_ref, else origin/main)")
	fs.StringVar(&f.sides.Build, "build", "", "shell `CMD` that builds the harness in each tree (default: the config's speedup.build)")
	fs.StringVar(&f.sides.Harness, "harness", "", "harness: a shell `CMD` (sh -c) run from each tree's root (default: the config's speedup.harness)")
	fs.IntVar(&f.roundsBudget, "rounds-budget", 0, "run at most `N` rounds, dropped ones included (default: the config's speedup.rounds_budget, else twice speedup.max_rounds)")
	fs.StringVar(&f.artifacts, "artifacts", "", "keep the merged base.json and head.json, the logs and a failed run's file in `DIR`")
	fs.IntVar(&f.samples, "samples", 0, "KG_SAMPLES: launches timed per round, `N` (default: the config's speedup.samples, else 30)")
	fs.StringVar(&f.shapes, "shapes", "", "KG_SHAPES: comma-separated `SHAPES` (default: the config's speedup.shapes, else the harness's)")
	fs.StringVar(&f.timeout, "timeout", "", "per-run `DURATION` before a harness is killed with its process group (default: the config's speedup.timeout, else 10m)")
	fs.StringVar(&f.smi, "nvidia-smi", "nvidia-smi", "nvidia-smi `PATH`, asked (read only) for clocks and throttling during each round")
	rest, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	if len(rest) > 0 {
		return failed(usagef("speedup run takes no file arguments (got %q): the harness commands are --base-cmd/--head-cmd or --harness", rest[0]))
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{})
	if err != nil {
		return failed(err)
	}
	set, err := cfg.Speedup.ABRun.Settings()
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	if err := f.apply(&set); err != nil {
		return failed(err)
	}
	o := abrun.Options{Settings: set, Speedup: cfg.Speedup.Config, ArtifactDir: f.artifacts, NvidiaSMI: f.smi,
		Progress: progressOf(e)}
	if err := f.sides.Apply(&o, set); err != nil {
		return failed(err)
	}
	g, err := abrun.Run(ctx, o)
	if err != nil {
		return failed(err)
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

// apply lets the flags override the config's A/B run settings.
func (f speedupRunFlags) apply(set *abrun.Settings) error {
	if f.samples != 0 {
		if f.samples < 0 {
			return usagef("--samples %d: want a positive number of launches", f.samples)
		}
		set.Samples = f.samples
	}
	if f.shapes != "" {
		set.Shapes = splitList(f.shapes)
	}
	if f.timeout != "" {
		d, err := positiveDuration("--timeout", f.timeout)
		if err != nil {
			return err
		}
		set.Timeout = d
	}
	if f.roundsBudget != 0 {
		if f.roundsBudget < 0 {
			return usagef("--rounds-budget %d: want a positive number of rounds", f.roundsBudget)
		}
		set.RoundsBudget = f.roundsBudget
	}
	return nil
}

func runSpeedupCompare(args []string, e env) (int, error) {
	var c common
	var maxSlowdown float64
	fs := newFlagSet("speedup compare", e, &c)
	fs.Float64Var(&maxSlowdown, "max-slowdown", -1, "largest head/base slowdown that is not a failure, as a `FRACTION` (default: the config's, else 0.02)")
	files, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	if len(files) != 2 {
		return failed(usagef("want BASE.json and HEAD.json, got %d file(s)", len(files)))
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Files: files})
	if err != nil {
		return failed(err)
	}
	if maxSlowdown >= 0 {
		if maxSlowdown >= 1 {
			return failed(usagef("--max-slowdown %g: want a fraction such as 0.02", maxSlowdown))
		}
		if cfg.Speedup.Config, err = cfg.Speedup.With(func(s *speedup.Config) { s.MaxSlowdown = &maxSlowdown }); err != nil {
			return failed(exitcode.BadInput(err))
		}
	}
	g, err := pipeline.CompareFiles(files[0], files[1], e.stdin, cfg)
	if err != nil {
		return failed(err)
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

func runReport(ctx context.Context, args []string, e env) (int, error) {
	var c common
	fs := newFlagSet("report", e, &c)
	files, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	if len(files) != 1 {
		return failed(usagef("want exactly one result FILE, got %d", len(files)))
	}
	f, err := report.ParseFormat(c.format)
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	if err := outfile.Check(c.out, outfile.Reads{Files: files}); err != nil {
		return failed(err)
	}
	var res result.Result
	err = input.Read(ctx, files, e.stdin, input.JSON, func(r io.Reader, name string) error {
		var err error
		res, err = result.Read(r)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return failed(err)
	}
	// Rendering again publishes nothing: the run that made the result already did.
	if _, err := render(res, c, f, e); err != nil {
		return failed(err)
	}
	return exitPass, nil
}

func runVersion(_ context.Context, args []string, e env) (int, error) {
	if len(args) > 0 {
		return failed(usagef("version takes no arguments"))
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return exitInternal, exitcode.CouldNotRunf("the build's version %q is not semver: %w", version, err)
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
		fmt.Fprintf(e.stdout, "kernel-gate v%s%s (%s)\n", v, rev, bi.GoVersion)
		return exitPass, nil
	}
	fmt.Fprintf(e.stdout, "kernel-gate v%s\n", v)
	return exitPass, nil
}

func validArch(a string) error {
	if a == "" {
		return nil
	}
	if !strings.HasPrefix(a, "sm_") || len(a) < 5 {
		return usagef("--arch %q: want an SM arch such as sm_90a", a)
	}
	return nil
}

// positiveDuration reads a duration flag.
func positiveDuration(flag, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, usagef("%s %q: want a positive duration such as 90s or 10m", flag, s)
	}
	return d, nil
}

// splitList reads a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }
