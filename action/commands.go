package main

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/kernel-gate/kernel-gate/action/config"
	"github.com/kernel-gate/kernel-gate/action/report"
	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/gates/toolkit"
)

// version is the tool's release; `go build -ldflags "-X main.version=v1.2.3"` sets it.
var version = "v0.1.0-dev"

// nvccTimeout bounds `nvcc --version` when the logs do not say which toolkit built them.
const nvccTimeout = 20 * time.Second

func toolName() string { return "kernel-gate " + version }

// ptxasInputs reads resource-usage logs into one Log and scans them for the toolkit version.
type ptxasInputs struct {
	log     ptxas.Log
	scanner toolkit.Scanner
}

func (in *ptxasInputs) read(r io.Reader, name string) error {
	return in.log.Parse(r, name, in.scanner.Line)
}

// readFiles reads each named file ("-" is standard input). Gzip-compressed input (kept
// artifacts often are) is decompressed as it streams, whatever its name.
func readFiles(files []string, stdin io.Reader, read func(io.Reader, string) error) error {
	for _, f := range files {
		if f == "-" {
			if err := readMaybeGzip(stdin, "stdin", read); err != nil {
				return usagef("%v", err)
			}
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			return usagef("%v", err)
		}
		err = readMaybeGzip(fh, f, read)
		fh.Close()
		if err != nil {
			return usagef("%v", err)
		}
	}
	return nil
}

func readMaybeGzip(r io.Reader, name string, read func(io.Reader, string) error) error {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		return read(zr, name)
	}
	return read(br, name)
}

// ptxasGates judges parsed resource usage (and the toolkit, when the config constrains it).
func ptxasGates(ctx context.Context, in *ptxasInputs, cfg config.Config, base *ptxas.Baseline, nvcc string, defaultArch string) ([]result.Gate, error) {
	if err := in.log.Check(); err != nil {
		return nil, usageError{err}
	}
	if defaultArch != "" {
		for i := range in.log.Kernels {
			if in.log.Kernels[i].Arch == "" {
				in.log.Kernels[i].Arch = defaultArch
			}
		}
	}
	g, err := ptxas.Evaluate(&in.log, cfg.PTXAS, base)
	if err != nil {
		return nil, err
	}
	gates := []result.Gate{g}
	if cfg.CUDA != "" {
		tk, err := toolkitGate(ctx, cfg.CUDA, in.scanner.Versions(), nvcc)
		if err != nil {
			return nil, err
		}
		gates = append(gates, tk)
	}
	return gates, nil
}

// toolkitGate checks the CUDA constraint against versions found in the inputs, asking nvcc
// only when they name none.
func toolkitGate(ctx context.Context, constraint string, versions []toolkit.Version, nvcc string) (result.Gate, error) {
	var lookupErr error
	if len(versions) == 0 && nvcc != "" {
		ctx, cancel := context.WithTimeout(ctx, nvccTimeout)
		v, err := toolkit.FromNVCC(ctx, nvcc)
		cancel()
		if err != nil {
			lookupErr = err
		} else {
			versions = []toolkit.Version{v}
		}
	} else if len(versions) == 0 {
		lookupErr = errors.New("the inputs print no `nvcc --version` banner and --nvcc is empty")
	}
	return toolkit.Check(constraint, versions, lookupErr)
}

func loadBaseline(path string) (*ptxas.Baseline, error) {
	if path == "" {
		return nil, nil
	}
	res, err := baseline.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	kernels, err := baseline.PtxasKernels(res)
	if err != nil {
		return nil, usageError{fmt.Errorf("baseline %s: %w", path, err)}
	}
	return ptxas.NewBaseline(filepath.Base(path), kernels), nil
}

func runPtxas(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var basePath, nvcc, arch string
	fs := newFlagSet("ptxas", e, &c)
	fs.StringVar(&basePath, "baseline", "", "baseline result `FILE` (a saved --format json result) for deltas and max_register_increase")
	fs.StringVar(&nvcc, "nvcc", "nvcc", "nvcc `PATH` asked for the toolkit version when the logs do not print it (empty: never run it)")
	fs.StringVar(&arch, "arch", "", "`ARCH` (e.g. sm_90a) for records whose input names none (cuobjdump of a cubin)")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, "Usage: kernel-gate ptxas [flags] [FILES...]\n\nReads nvcc -Xptxas -v / --resource-usage build logs, ptxas or nvlink output, or\ncuobjdump --dump-resource-usage listings (standard input when no FILES, or \"-\").\n\n")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	if err := validArch(arch); err != nil {
		return exitUsage, err
	}
	cfg, fmtr, err := setup(c)
	if err != nil {
		return exitUsage, err
	}
	base, err := loadBaseline(basePath)
	if err != nil {
		return exitUsage, err
	}
	var in ptxasInputs
	if err := readFiles(files, e.stdin, in.read); err != nil {
		return exitUsage, err
	}
	gates, err := ptxasGates(ctx, &in, cfg, base, nvcc, arch)
	if err != nil {
		return exitUsage, err
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
	fs.Usage = func() {
		fmt.Fprint(e.stderr, "Usage: kernel-gate sass [flags] --sass FILE [FILE...]\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage, err
	}
	files = append(files, rest...)
	if len(files) == 0 {
		return exitUsage, usagef("no SASS input: pass --sass FILE (cuobjdump --dump-sass or nvdisasm output)")
	}
	if err := validArch(arch); err != nil {
		return exitUsage, err
	}
	cfg, fmtr, err := setup(c)
	if err != nil {
		return exitUsage, err
	}
	g, err := sassGate(files, e.stdin, cfg, arch)
	if err != nil {
		return exitUsage, err
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

// sassGate reads every dump and judges them together.
func sassGate(files []string, stdin io.Reader, cfg config.Config, arch string) (result.Gate, error) {
	var all sass.Dump
	err := readFiles(files, stdin, func(r io.Reader, name string) error {
		d, err := sass.Parse(r, sass.ParseOptions{Arch: arch})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if all.Format == "" {
			all.Format = d.Format
		}
		all.Functions = append(all.Functions, d.Functions...)
		return nil
	})
	if err != nil {
		return result.Gate{}, err
	}
	return sass.Evaluate(&all, cfg.SASS)
}

func runCheck(ctx context.Context, args []string, e env) (int, error) {
	var c common
	fs := newFlagSet("check", e, &c)
	fs.Usage = func() {
		fmt.Fprint(e.stderr, "Usage: kernel-gate check [flags] FILE...\n\nJudges kernel-gate/bench/v1 harness results (KG_MODE=check) against the correctness\ntolerances of the config (\"-\" is standard input).\n\n")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(files) == 0 {
		return exitUsage, usagef("no harness result: pass FILE (the KG_OUT of a KG_MODE=check run)")
	}
	cfg, fmtr, err := setup(c)
	if err != nil {
		return exitUsage, err
	}
	var gates []result.Gate
	err = readFiles(files, e.stdin, func(r io.Reader, name string) error {
		g, err := correctnessGate(r, name, cfg)
		gates = append(gates, g)
		return err
	})
	if err != nil {
		return exitUsage, err
	}
	return emit(result.New(toolName(), gates...), c, fmtr, e)
}

// correctnessGate reads one harness file and judges it.
func correctnessGate(r io.Reader, name string, cfg config.Config) (result.Gate, error) {
	f, err := benchfile.Read(r)
	if err != nil {
		return result.Gate{}, fmt.Errorf("%s: %w", name, err)
	}
	return correctness.Evaluate(f, name, cfg.Correctness)
}

func runBench(ctx context.Context, args []string, e env) (int, error) {
	if len(args) == 0 || (args[0] != "compare" && args[0] != "run") {
		return exitUsage, usagef("usage: kernel-gate bench run [flags] (time base and head side by side and judge them), or kernel-gate bench compare [flags] BASE.json HEAD.json")
	}
	if args[0] == "run" {
		var c common
		var baseCmd, headCmd, baseRef, buildCmd, harnessCmd, artifacts, shapes, timeout, smi string
		var roundsBudget, samples int
		fs := newFlagSet("bench run", e, &c)
		fs.StringVar(&baseCmd, "base-cmd", "", "base's harness `CMD` (shell words); goes with --head-cmd")
		fs.StringVar(&headCmd, "head-cmd", "", "head's harness `CMD` (shell words); goes with --base-cmd")
		fs.StringVar(&baseRef, "base", "", "build base from the merge base of `REV` and HEAD (default: the config's bench.base_ref, else origin/main)")
		fs.StringVar(&buildCmd, "build", "", "shell `CMD` that builds the harness in each tree (default: the config's bench.build)")
		fs.StringVar(&harnessCmd, "harness", "", "harness `CMD` run in each tree, relative to it (default: the config's bench.harness)")
		fs.IntVar(&roundsBudget, "rounds-budget", 0, "run at most `N` rounds, dropped ones included (default: the config's bench.rounds_budget, else twice speedup.max_rounds)")
		fs.StringVar(&artifacts, "artifacts", "", "keep the merged base.json and head.json, the logs and a failed run's file in `DIR`")
		fs.IntVar(&samples, "samples", 0, "KG_SAMPLES: launches timed per round, `N` (default: the config's bench.samples, else 30)")
		fs.StringVar(&shapes, "shapes", "", "KG_SHAPES: comma-separated `SHAPES` (default: the config's bench.shapes, else the harness's)")
		fs.StringVar(&timeout, "timeout", "", "per-run `DURATION` before a harness is killed with its process group (default: the config's bench.timeout, else 10m)")
		fs.StringVar(&smi, "nvidia-smi", "nvidia-smi", "nvidia-smi `PATH`, asked (read only) for clocks and throttling before each round")
		fs.Usage = func() {
			fmt.Fprint(e.stderr, `Usage: kernel-gate bench run [flags] --base-cmd CMD --head-cmd CMD
       kernel-gate bench run [flags] [--base REV] [--build CMD] --harness CMD

Runs the base and head harnesses (KG_MODE=bench, KG_ROUNDS=1) alternately on one GPU in ABBA
order after a warm-up, drops rounds the GPU was throttled in (nvidia-smi, read only), adds
rounds while a kernel × shape is inconclusive, and judges them with the speedup gate. Without
--base-cmd/--head-cmd, base is built from the merge base with REV in a temporary git
worktree and head from the working tree. A harness that crashes, hangs or writes no valid
file fails the gate.

`)
			fs.PrintDefaults()
		}
		rest, err := parseInterspersed(fs, args[1:])
		if err != nil {
			return exitUsage, err
		}
		if len(rest) > 0 {
			return exitUsage, usagef("bench run takes no file arguments (got %q): the harness commands are --base-cmd/--head-cmd or --harness", rest[0])
		}
		cfg, fmtr, err := setup(c)
		if err != nil {
			return exitUsage, err
		}
		bc := cfg.Bench
		set, err := bc.Settings()
		if err != nil {
			return exitUsage, usageError{err}
		}
		if samples != 0 {
			if samples < 0 {
				return exitUsage, usagef("--samples %d: want a positive number of launches", samples)
			}
			set.Samples = samples
		}
		if shapes != "" {
			set.Shapes = nil
			for _, s := range strings.Split(shapes, ",") {
				if s = strings.TrimSpace(s); s != "" {
					set.Shapes = append(set.Shapes, s)
				}
			}
		}
		if timeout != "" {
			d, err := time.ParseDuration(timeout)
			if err != nil || d <= 0 {
				return exitUsage, usagef("--timeout %q: want a positive duration such as 90s or 10m", timeout)
			}
			set.Timeout = d
		}
		if roundsBudget != 0 {
			if roundsBudget < 0 {
				return exitUsage, usagef("--rounds-budget %d: want a positive number of rounds", roundsBudget)
			}
			set.RoundsBudget = roundsBudget
		}
		o := abrun.Options{Bench: set, Speedup: cfg.Speedup, ArtifactDir: artifacts, NvidiaSMI: smi,
			Progress: e.stderr, Getenv: e.getenv}
		switch {
		case baseCmd != "" || headCmd != "":
			if baseCmd == "" || headCmd == "" {
				return exitUsage, usagef("--base-cmd and --head-cmd go together")
			}
			if baseRef != "" || buildCmd != "" || harnessCmd != "" {
				return exitUsage, usagef("give either --base-cmd and --head-cmd, or --base/--build/--harness, not both")
			}
			for i, line := range []string{baseCmd, headCmd} {
				argv, err := abrun.SplitCommand(line, e.getenv)
				if err != nil {
					return exitUsage, usagef("--%s-cmd: %v", []string{"base", "head"}[i], err)
				}
				if i == 0 {
					o.Base = abrun.Command{Argv: argv}
				} else {
					o.Head = abrun.Command{Argv: argv}
				}
			}
		default:
			w := abrun.Worktree{Dir: ".", BaseRef: cmp.Or(baseRef, set.BaseRef), Build: cmp.Or(buildCmd, set.Build), Harness: cmp.Or(harnessCmd, set.Harness)}
			if w.Harness == "" {
				return exitUsage, usagef("nothing to run: give --base-cmd and --head-cmd, or --harness (with --build to build it), or set bench.harness and bench.build in the config")
			}
			if _, err := abrun.SplitCommand(w.Harness, e.getenv); err != nil {
				return exitUsage, usagef("--harness: %v", err)
			}
			o.Worktree = &w
		}
		g, err := abrun.Run(ctx, o)
		if err != nil {
			return exitUsage, err
		}
		return emit(result.New(toolName(), g), c, fmtr, e)
	}
	var c common
	var maxSlowdown float64
	fs := newFlagSet("bench compare", e, &c)
	fs.Float64Var(&maxSlowdown, "max-slowdown", -1, "largest head/base slowdown that is not a failure, as a `FRACTION` (default: the config's, else 0.02)")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, "Usage: kernel-gate bench compare [flags] BASE.json HEAD.json\n\nJudges two kernel-gate/bench/v1 files made side by side (round i of base beside round i of\nhead): slower, same, faster or inconclusive per kernel × shape.\n\n")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return exitUsage, err
	}
	if len(files) != 2 {
		return exitUsage, usagef("want BASE.json and HEAD.json, got %d file(s)", len(files))
	}
	cfg, fmtr, err := setup(c)
	if err != nil {
		return exitUsage, err
	}
	if maxSlowdown >= 0 {
		if maxSlowdown >= 1 {
			return exitUsage, usagef("--max-slowdown %g: want a fraction such as 0.02", maxSlowdown)
		}
		cfg.Speedup.MaxSlowdown = &maxSlowdown
	}
	g, err := compareFiles(files[0], files[1], e.stdin, cfg)
	if err != nil {
		return exitUsage, err
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

// compareFiles reads a base and a head harness file and judges them with the speedup gate.
func compareFiles(base, head string, stdin io.Reader, cfg config.Config) (result.Gate, error) {
	var sides [2]*benchfile.File
	for i, name := range []string{base, head} {
		err := readFiles([]string{name}, stdin, func(r io.Reader, name string) error {
			f, err := benchfile.Read(r)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			sides[i] = f
			return nil
		})
		if err != nil {
			return result.Gate{}, err
		}
	}
	g, err := speedup.Compare(sides[0], sides[1], cfg.Speedup)
	if err != nil {
		return result.Gate{}, usageError{err}
	}
	return g, nil
}

func runReport(ctx context.Context, args []string, e env) (int, error) {
	var c common
	fs := newFlagSet("report", e, &c)
	fs.Usage = func() {
		fmt.Fprint(e.stderr, "Usage: kernel-gate report [flags] FILE\n\nRenders a result saved with --format json again (\"-\" is standard input). Exits 0 once rendered.\n\n")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(files) != 1 {
		return exitUsage, usagef("want exactly one result FILE, got %d", len(files))
	}
	f, err := report.ParseFormat(c.format)
	if err != nil {
		return exitUsage, usageError{err}
	}
	var res result.Result
	err = readFiles(files, e.stdin, func(r io.Reader, name string) error {
		var err error
		res, err = result.Read(r)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return exitUsage, err
	}
	// Rendering again publishes nothing: the run that made the result already did.
	if _, err := render(res, c, f, e); err != nil {
		return exitUsage, err
	}
	return exitPass, nil
}

func runVersion(args []string, e env) (int, error) {
	if len(args) > 0 {
		return exitUsage, usagef("version takes no arguments")
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return exitUsage, fmt.Errorf("the build's version %q is not semver: %w", version, err)
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

// setup loads the config and checks the format.
func setup(c common) (config.Config, report.Format, error) {
	f, err := report.ParseFormat(c.format)
	if err != nil {
		return config.Config{}, "", usageError{err}
	}
	cfg, err := config.Find(c.config)
	if err != nil {
		return config.Config{}, "", usageError{err}
	}
	return cfg, f, nil
}

// emit renders the result where --out says, publishes it to GitHub Actions when running
// there, and returns the exit code of its verdict.
func emit(res result.Result, c common, f report.Format, e env) (int, error) {
	code, err := render(res, c, f, e)
	if err != nil {
		return code, err
	}
	if err := githubOutputs(res, e); err != nil {
		return exitUsage, err
	}
	return code, nil
}

// render writes the report and returns the exit code of the verdict.
func render(res result.Result, c common, f report.Format, e env) (int, error) {
	var buf bytes.Buffer
	opts := report.Options{}
	if c.out == "" && f == report.Text {
		if file, ok := e.stdout.(*os.File); ok {
			opts.Color = report.ColorWanted(file, e.getenv)
		}
	}
	if err := report.Render(&buf, res, f, opts); err != nil {
		return exitUsage, err
	}
	if c.out != "" {
		if err := os.WriteFile(c.out, buf.Bytes(), 0o644); err != nil {
			return exitUsage, usagef("writing the report: %v", err)
		}
	} else if _, err := e.stdout.Write(buf.Bytes()); err != nil {
		return exitUsage, err
	}
	if res.Verdict == result.Fail {
		return exitFail, nil
	}
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

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }
