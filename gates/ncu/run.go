package ncu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// ErrNCUMissing reports an ncu binary that cannot be found or started. The gate fails on
// it (MissingGate): a missing profiler must never read as a pass.
var ErrNCUMissing = errors.New("ncu (Nsight Compute CLI) not found")

// Files Run writes in the artifact directory.
const (
	// LogFile is everything ncu and the harness printed: the CSV table, ncu's messages.
	LogFile = "ncu.log"
	// HarnessFile is the harness's KG_OUT of the profiled run.
	HarnessFile = "harness-ncu.json"
)

// maxLog bounds the log: ncu's table is launches × metrics rows, and a harness that
// floods its output must not fill the disk. A log cut there fails the gate (Parse sees
// procgroup's cut marker).
const maxLog = 256 << 20

// Options configure Run. Config.Options fills them from the ncu section.
type Options struct {
	// NCU is the path or name (looked up on PATH) of ncu; empty means "ncu".
	NCU string
	// Command is the harness and its arguments.
	Command []string
	// Metrics are asked for with --metrics; Run refuses to run without any.
	Metrics []string
	// KernelFilter is ncu's -k value ("regex:flash_fwd|row_softmax"); empty profiles every
	// kernel (up to Launches).
	KernelFilter string
	// Launches is ncu's -c; zero means DefaultLaunches.
	Launches int
	// Shape is KG_SHAPES; empty leaves the harness's default.
	Shape string
	// Timeout bounds the run; zero means DefaultTimeout. Past it ncu, the harness and
	// everything they started are killed as one process group.
	Timeout time.Duration
	// ArtifactDir keeps LogFile and HarnessFile; empty means a temporary directory that is
	// removed afterwards.
	ArtifactDir string
	// ExtraEnv is added to the harness's environment (KG_KERNELS=..., say); the variables
	// Run sets (KG_MODE, KG_SHAPES, KG_ROUNDS, KG_OUT) win over it.
	ExtraEnv []string
}

// Options returns the Run options the config sets for the harness cmd.
func (c Config) Options(cmd []string) (Options, error) {
	cc, err := c.compiled()
	if err != nil {
		return Options{}, err
	}
	return Options{
		Command: cmd, Metrics: Metrics(c), KernelFilter: KernelFilter(c),
		Launches: cc.launches, Shape: cc.shape, Timeout: cc.timeout,
	}, nil
}

func (o Options) withDefaults() Options {
	if o.NCU == "" {
		o.NCU = "ncu"
	}
	if o.Launches <= 0 {
		o.Launches = DefaultLaunches
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Args returns ncu's arguments before the harness command:
//
//   - --csv: the table Parse reads, one metric per row;
//   - --clock-control none: always. ncu otherwise locks the GPU's clocks to base while it
//     profiles; kernel-gate never changes GPU settings (the values are then measured at
//     the clocks the GPU runs at, as ncu's "unmodified GPU clocks" note says);
//   - --print-units base: values in the metric's base unit (ns, byte, not usecond or
//     Mbyte), so a threshold means the same whatever the magnitude;
//   - --print-kernel-base mangled: kernel names as the other gates read them, demangled
//     the same way, so that one glob matches everywhere;
//   - --metrics M1,M2,...: the metrics the rules name;
//   - -k KernelFilter, when set, and -c Launches.
func Args(o Options) []string {
	o = o.withDefaults()
	a := []string{"--csv", "--clock-control", "none", "--print-units", "base", "--print-kernel-base", "mangled",
		"--metrics", strings.Join(o.Metrics, ",")}
	if o.KernelFilter != "" {
		a = append(a, "-k", o.KernelFilter)
	}
	return append(a, "-c", strconv.Itoa(o.Launches))
}

// Env returns the variables Run sets for the harness: KG_MODE=check, KG_ROUNDS=1,
// KG_SHAPES (when a shape is set) and KG_OUT=out.
func Env(o Options, out string) []string {
	env := []string{"KG_MODE=check", "KG_ROUNDS=1", "KG_OUT=" + out}
	if o.Shape != "" {
		env = append(env, "KG_SHAPES="+o.Shape)
	}
	return env
}

// Run profiles the harness under ncu once (Args, Env) and returns what ncu printed, parsed.
//
// Everything ncu and the harness print goes to LogFile (at most 256 MiB; a cut log fails
// the gate), never into memory. The run is its own process group (procgroup.Run): at the timeout, or when ctx is done, the whole group is killed
// (ncu, the harness it launched, anything the harness started). What makes the run prove
// less than it should is a Report.Problem, which fails the gate in Evaluate: a nonzero
// exit status, a hang (Report.TimedOut), output that holds no ncu table. ncu's ==ERROR==
// lines and "No kernels were profiled." are kept by Parse and fail it too.
//
// The error is nil unless the options cannot work (no command, no metrics), the
// artifact directory cannot be written, ctx is done (the report so far comes with it), or
// ncu cannot be found or started: then it wraps ErrNCUMissing and names the binary.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	if len(o.Command) == 0 || o.Command[0] == "" {
		return nil, errors.New("ncu: no command to profile")
	}
	if len(o.Metrics) == 0 {
		return nil, errors.New("ncu: no metrics to collect (the config's ncu.kernels name none)")
	}
	for _, m := range o.Metrics {
		if !ValidMetric(m) {
			return nil, fmt.Errorf("ncu: %q is not an ncu metric name", m)
		}
	}
	tool, err := procgroup.FindTool(ctx, o.NCU, ErrNCUMissing, o.ArtifactDir, "kernel-gate-ncu-")
	if err != nil {
		return nil, fmt.Errorf("ncu: %w", err)
	}
	defer tool.Close()
	bin, keep := tool.Bin, tool.Keep
	logPath, out := filepath.Join(tool.Dir, LogFile), filepath.Join(tool.Dir, HarnessFile)
	// A file left by an earlier run must not speak for this one; neither file is written
	// through a link of its name (procgroup.CreateArtifact).
	if err := tool.Clear(HarnessFile); err != nil {
		return nil, fmt.Errorf("ncu: %w", err)
	}
	f, err := tool.Create(LogFile)
	if err != nil {
		return nil, fmt.Errorf("ncu: creating the log: %w", err)
	}
	args := append(Args(o), o.Command...)
	// Later entries win: the runner's variables over ExtraEnv over the inherited ones.
	env := append(append(os.Environ(), o.ExtraEnv...), Env(o, out)...)
	res, runErr := procgroup.Run(ctx, procgroup.Spec{Argv: append([]string{bin}, args...), Env: env, Timeout: o.Timeout, Log: f, LogCap: maxLog})
	if cerr := f.Close(); cerr != nil && runErr == nil {
		return nil, fmt.Errorf("ncu: writing the log: %w", cerr)
	}
	cancelled := runErr != nil
	if !cancelled && res.ExitCode < 0 && !res.TimedOut && strings.HasPrefix(res.Why, "could not be started") {
		return nil, fmt.Errorf("ncu: %w: %s %s", ErrNCUMissing, bin, res.Why)
	}
	timedOut := res.TimedOut

	name := "ncu output"
	if keep {
		name = logPath
	}
	rep, perr := parseFile(logPath, name)
	var first []string // the run's own problems, before those of its output
	if perr != nil {
		rep = &Report{Inputs: []string{name}}
		if !timedOut && !cancelled {
			first = append(first, fmt.Sprintf("ncu printed no table and no message of its own: %v", perr))
		}
	}
	rep.Args = append([]string{bin}, args...)
	rep.Limit = o.Launches
	if keep {
		rep.Log = logPath
	}
	switch {
	case cancelled:
		first = append(first, "cancelled: the run was killed with its process group before it finished")
	case timedOut:
		rep.TimedOut = true
		first = append(first, fmt.Sprintf("the run hung: ncu and the harness were killed after %s with their process group (%d launches profiled by then)", o.Timeout, len(rep.Launches)))
	case res.ExitCode >= 0:
		code := res.ExitCode
		rep.ExitCode = &code
		if code != 0 {
			first = append(first, fmt.Sprintf("ncu exited with status %d (ncu passes the harness's status through; its errors are listed apart)", code))
		}
	default:
		first = append(first, "ncu "+res.Why)
	}
	rep.Problems = append(first, rep.Problems...)
	if cancelled {
		return rep, fmt.Errorf("ncu: %w", runErr)
	}
	return rep, nil
}

func parseFile(path, name string) (*Report, error) {
	f, err := input.Open(path) // never a FIFO the harness left there

	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, name)
}

// RunGate profiles the harness as cfg and o say (Run) and judges the output (Evaluate):
// the ncu gate of a pipeline. A config without rules skips the gate without running ncu;
// a missing ncu fails it (MissingGate). The error is non-nil when cfg is invalid, o
// cannot work, the artifact directory cannot be written or ctx is done.
func RunGate(ctx context.Context, cfg Config, o Options) (result.Gate, error) {
	if _, err := cfg.compiled(); err != nil {
		return result.Gate{Name: Name, Findings: []result.Finding{}}, fmt.Errorf("ncu gate: invalid config: %w", err)
	}
	if cfg.Empty() {
		return SkipGate(cfg), nil
	}
	rep, err := Run(ctx, o)
	if errors.Is(err, ErrNCUMissing) {
		return MissingGate(err), nil
	}
	if err != nil {
		return result.Gate{Name: Name, Findings: []result.Finding{}}, err
	}
	return Evaluate(rep, cfg)
}

// MissingGate is the gate when ncu cannot run: a failure, never a pass.
func MissingGate(err error) result.Gate {
	g := result.Gate{Name: Name, Findings: []result.Finding{{
		Severity: result.Error, Metric: MetricRun,
		Message: fmt.Sprintf("%v: install Nsight Compute (it comes with the CUDA toolkit) or pass --ncu PATH; the gate cannot pass without profiling", err),
	}}, Summary: "ncu did not run"}
	_ = g.SetData(Data{Inputs: []string{}, Kernels: []KernelData{}}) // plain structs: cannot fail
	g.Decide(true)
	return g
}

// SkipGate is the gate of a config without ncu rules: nothing is profiled or judged.
func SkipGate(cfg Config) result.Gate {
	g := result.Gate{Name: Name, Findings: []result.Finding{{
		Severity: result.Notice, File: cfg.FileName(),
		Message: fmt.Sprintf("no ncu rules are configured (ncu.kernels in %s): ncu was not run", cfg.FileName()),
	}}, Summary: "no ncu rules configured"}
	_ = g.SetData(Data{Inputs: []string{}, Kernels: []KernelData{}})
	g.Decide(false)
	return g
}
