package abrun

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
)

// Defaults used where the config and the flags set nothing.
const (
	// DefaultSamples is KG_SAMPLES: single-launch timings per harness run (one round).
	DefaultSamples = 30
	// DefaultTimeout bounds one harness run; then it is killed with its process group.
	DefaultTimeout = 10 * time.Minute
	// DefaultBuildTimeout bounds one build (base or head).
	DefaultBuildTimeout = 30 * time.Minute
	// DefaultBaseRef is the branch whose merge base with HEAD is built as base.
	DefaultBaseRef = "origin/main"
	// DefaultRoundTimeout bounds one round of a serving harness (KG_MODE=serve): from the
	// request to its answer. A round is the timed launches of every kernel × shape, well
	// under a second for this repository's harnesses; two minutes leaves room for big
	// kernels and many samples while a hung kernel is found long before DefaultTimeout.
	DefaultRoundTimeout = 2 * time.Minute
	// DefaultRestartEvery is K: each serving process answers at most K rounds, so that a
	// process's memory layout and its lazily chosen kernels (a library's autotuning, a
	// PyTorch backend) cannot bias one side for the whole run. With DefaultServers
	// processes per side answering in turn, the first look (min_rounds, 16) sees 4
	// lifetimes of each side, so a bias of one lifetime moves at most a quarter of the
	// per-round ratios, short of the half a median needs. On an H200 it kept 36 served A/A
	// runs (172 lifetimes per side) free of a false slower (docs/speedup-serving.md).
	DefaultRestartEvery = 4
	// DefaultServers is P: each side's serving processes are started P at a time, side by
	// side, and answer the rounds in turn, so a side's start-up is paid once per P × K
	// rounds, in parallel, instead of once per K rounds in series: the start-up of a Python
	// harness (about 4 s on the H200) was most of a served run's wall time. Each process
	// holds its own CUDA context and inputs: on a GPU with little memory, speedup.servers: 1
	// starts one at a time (every K rounds) as before.
	DefaultServers = 4
	// maxServers bounds speedup.servers: every one is a process with a CUDA context.
	maxServers = 64
	// DefaultWallBudget bounds the wall time one A/B run (one target of kernel-gate run)
	// spends timing, from starting the harnesses to the last round; then pairs still
	// undecided are inconclusive (a warning). Five minutes lets a harness started once per
	// round (≈ 4 s a round for this repository's attention target with its PyTorch
	// reference) reach 64 rounds, the third look, and a serving one hundreds of rounds,
	// what a launch-bound kernel's 3% needs, instead of the hour 512 process rounds take.
	DefaultWallBudget = 5 * time.Minute
	// DefaultRunWallBudget bounds the timing of all targets of one kernel-gate run
	// together: four targets at their whole wall budget.
	DefaultRunWallBudget = 20 * time.Minute
)

// Serve says whether the runner asks the harnesses to serve rounds (KG_MODE=serve,
// docs/harness-protocol.md) or starts one process per round.
type Serve string

// The speedup.serve settings.
const (
	// ServeAuto starts each harness with KG_MODE=serve once and serves when base and head
	// both answer the handshake; otherwise it times one process per round, as before.
	ServeAuto Serve = "auto"
	// ServeOn requires base and head to serve: a harness that does not fails the run.
	ServeOn Serve = "true"
	// ServeOff starts one process per round, never asking for serve mode.
	ServeOff Serve = "false"
)

// Config is the A/B run's part of the speedup section of kernel-gate.yml (config.Speedup
// holds it beside the judge's speedup.Config, in one mapping): how `kernel-gate speedup
// run` gets and runs the two harnesses. The statistics (min_rounds, max_rounds,
// gpu_seconds_budget, margins) are the judge's.
//
//	speedup:
//	  build: "nvcc -O3 -lineinfo -arch=native -o build/harness kernels/harness.cpp kernels/harness_cases.cpp kernels/harness_device.cu kernels/flash_fwd.cu kernels/gemm_wmma.cu kernels/softmax.cu"
//	  harness: "./build/harness"    # sh -c in each tree, from its root
//	  base_ref: origin/main         # base = git merge-base base_ref HEAD
//	  shapes: [mission, long]       # KG_SHAPES
//	  samples: 30                   # KG_SAMPLES: launches per round
//	  timeout: 10m                  # per harness run
//	  build_timeout: 30m            # per build
//	  rounds_budget: 1024           # most rounds run, dropped ones included
//	  serve: auto                   # auto | true | false: KG_MODE=serve, one process for many rounds
//	  restart_every: 4              # rounds per serving process
//	  servers: 4                    # serving processes per side, answering in turn
//	  round_timeout: 2m             # one served round, request to answer
//	  wall_budget: 5m               # timing wall time per A/B run (a target of kernel-gate run)
//	  run_wall_budget: 20m          # the same over all targets of one kernel-gate run
//	  env: {KG_KERNELS: flash_fwd}  # more variables for the harness
//
// These keys had a section of their own, bench:, which config still reads (deprecated).
type Config struct {
	configpos.Section[Settings] `yaml:",inline"`
	// Build is a shell command (run with sh -c) that builds the harness in a tree: the
	// merge base checked out in a temporary git worktree, then the working tree. Empty: no
	// build step (a Python harness).
	Build string `yaml:"build"`
	// Harness is the harness command, run by sh -c in each tree (from its root, so that
	// "./build/harness" is the tree's).
	Harness string `yaml:"harness"`
	// BaseRef names the branch base is taken from: the merge base of it and HEAD.
	BaseRef string `yaml:"base_ref"`
	// Shapes is KG_SHAPES; empty leaves the harness's default.
	Shapes []string `yaml:"shapes"`
	// Samples is KG_SAMPLES, the launches timed per round (default DefaultSamples).
	Samples *int `yaml:"samples"`
	// Timeout bounds one harness run (a Go duration; default DefaultTimeout).
	Timeout string `yaml:"timeout"`
	// BuildTimeout bounds one build (default DefaultBuildTimeout).
	BuildTimeout string `yaml:"build_timeout"`
	// RoundsBudget is the most rounds run, dropped (throttled) ones included; default twice
	// the speedup section's max_rounds, so a GPU that stays throttled cannot keep the
	// runner going.
	RoundsBudget *int `yaml:"rounds_budget"`
	// Serve is auto (default), true or false: whether the harnesses serve rounds
	// (KG_MODE=serve) or run once per round.
	Serve string `yaml:"serve"`
	// RestartEvery is how many rounds one serving process answers before it is restarted
	// (default DefaultRestartEvery).
	RestartEvery *int `yaml:"restart_every"`
	// Servers is how many serving processes per side are started together and answer the
	// rounds in turn (default DefaultServers).
	Servers *int `yaml:"servers"`
	// RoundTimeout bounds one served round (default DefaultRoundTimeout).
	RoundTimeout string `yaml:"round_timeout"`
	// WallBudget bounds the wall time of one A/B run's timing (default DefaultWallBudget).
	WallBudget string `yaml:"wall_budget"`
	// RunWallBudget bounds the timing of every target of one kernel-gate run together
	// (default DefaultRunWallBudget).
	RunWallBudget string `yaml:"run_wall_budget"`
	// Env holds more variables for the harness (KG_KERNELS, say). The KG_ variables the
	// runner sets cannot be set here.
	Env map[string]string `yaml:"env"`
}

// Resolve checks the settings, read from file, and keeps them resolved. The error names
// every bad setting and its line.
func (c *Config) Resolve(file string) error { return configpos.Resolve(c, file, Config.resolve) }

func (c Config) keyWhere(key string) string { return c.KeyWhere(key) + ": speedup." + key }

// runnerVars are the variables the runner sets for every harness run.
func runnerVars() []string {
	return []string{"KG_MODE", "KG_ROUNDS", "KG_SAMPLES", "KG_SHAPES", "KG_OUT", ServeFDVar}
}

// ValidEnvName reports whether s is a portable environment variable name (letters, digits
// and "_", not starting with a digit).
func ValidEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Settings are the A/B run's settings resolved: defaults filled in, durations parsed.
type Settings struct {
	Build, Harness, BaseRef string
	Shapes                  []string
	Samples                 int
	Timeout, BuildTimeout   time.Duration
	// RoundsBudget is 0 when the config sets none (the runner then uses twice max_rounds).
	RoundsBudget int
	// Serve is ServeAuto, ServeOn or ServeOff ("" reads as ServeAuto).
	Serve Serve
	// RestartEvery is the rounds one serving process answers before it is restarted.
	RestartEvery int
	// Servers is how many serving processes of each side answer the rounds in turn.
	Servers int
	// RoundTimeout bounds one served round; WallBudget one A/B run's timing; RunWallBudget
	// the timing of every target of a kernel-gate run (read by action/pipeline).
	RoundTimeout, WallBudget, RunWallBudget time.Duration
	// Env is "NAME=value", sorted by name.
	Env []string
}

// Settings returns the settings resolved: as Resolve kept it, or resolved now. The error names
// every bad setting and its line.
func (c Config) Settings() (Settings, error) {
	s, err := configpos.Resolved(c, Config.resolve)
	// The caller may change its copy; the kept one is shared by every copy of c.
	s.Shapes, s.Env = slices.Clone(s.Shapes), slices.Clone(s.Env)
	return s, err
}

func (c Config) resolve() (Settings, error) {
	s := Settings{
		Build: strings.TrimSpace(c.Build), Harness: strings.TrimSpace(c.Harness),
		BaseRef: cmp.Or(strings.TrimSpace(c.BaseRef), DefaultBaseRef),
		Shapes:  c.Shapes, Samples: DefaultSamples, Timeout: DefaultTimeout, BuildTimeout: DefaultBuildTimeout,
		Serve: ServeAuto, RestartEvery: DefaultRestartEvery, Servers: DefaultServers, RoundTimeout: DefaultRoundTimeout,
		WallBudget: DefaultWallBudget, RunWallBudget: DefaultRunWallBudget,
	}
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", c.keyWhere(key), fmt.Sprintf(format, a...)))
	}
	if s.Harness != "" {
		if err := shellcmd.Check(s.Harness); err != nil {
			bad("harness", "%v (want a shell command such as \"./build/harness --fast\")", err)
		}
	}
	if s.Build != "" {
		if err := shellcmd.Check(s.Build); err != nil {
			bad("build", "%v", err)
		}
	}
	if s.Build != "" && s.Harness == "" {
		bad("build", "set harness too: the command that runs what build makes")
	}
	if strings.HasPrefix(s.BaseRef, "-") {
		bad("base_ref", "%q is not a git revision", c.BaseRef)
	}
	for i, sh := range c.Shapes {
		if strings.TrimSpace(sh) == "" || strings.Contains(sh, ",") {
			bad("shapes", "shapes[%d] %q: a shape name is non-empty and has no comma (KG_SHAPES is comma-separated)", i, sh)
		}
	}
	if c.Samples != nil {
		if *c.Samples < 1 || *c.Samples > 1_000_000 {
			bad("samples", "must be between 1 and 1000000 launches per round, got %d", *c.Samples)
		} else {
			s.Samples = *c.Samples
		}
	}
	dur := func(key, v string, def time.Duration) time.Duration {
		if strings.TrimSpace(v) == "" {
			return def
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		switch {
		case err != nil:
			bad(key, "%q is not a duration (e.g. \"10m\", \"90s\")", v)
		case d <= 0:
			bad(key, "%q must be positive", v)
		default:
			return d
		}
		return def
	}
	s.Timeout = dur("timeout", c.Timeout, DefaultTimeout)
	s.BuildTimeout = dur("build_timeout", c.BuildTimeout, DefaultBuildTimeout)
	s.RoundTimeout = dur("round_timeout", c.RoundTimeout, DefaultRoundTimeout)
	s.WallBudget = dur("wall_budget", c.WallBudget, DefaultWallBudget)
	s.RunWallBudget = dur("run_wall_budget", c.RunWallBudget, DefaultRunWallBudget)
	switch v := Serve(strings.ToLower(strings.TrimSpace(c.Serve))); v {
	case "":
	case ServeAuto, ServeOn, ServeOff:
		s.Serve = v
	default:
		bad("serve", "%q: want auto, true or false", c.Serve)
	}
	if c.RestartEvery != nil {
		if *c.RestartEvery < 1 {
			bad("restart_every", "must be at least 1 round per serving process, got %d", *c.RestartEvery)
		} else {
			s.RestartEvery = *c.RestartEvery
		}
	}
	if c.Servers != nil {
		if *c.Servers < 1 || *c.Servers > maxServers {
			bad("servers", "must be between 1 and %d serving processes per side, got %d", maxServers, *c.Servers)
		} else {
			s.Servers = *c.Servers
		}
	}
	if c.RoundsBudget != nil {
		if *c.RoundsBudget < 1 {
			bad("rounds_budget", "must be at least 1, got %d", *c.RoundsBudget)
		} else {
			s.RoundsBudget = *c.RoundsBudget
		}
	}
	names := make([]string, 0, len(c.Env))
	for k := range c.Env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		switch {
		case !ValidEnvName(k):
			bad("env", "%q is not a variable name", k)
		case slices.Contains(runnerVars(), k):
			bad("env", "%s is set by the runner (use shapes and samples)", k)
		default:
			s.Env = append(s.Env, k+"="+c.Env[k])
		}
	}
	return s, errors.Join(errs...)
}
