package abrun

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
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
)

// Config is the bench section of kernel-gate.yml: how `kernel-gate bench run` gets and runs
// the two harnesses. The statistics (min_rounds, max_rounds, gpu_seconds_budget, margins)
// stay in the speedup section, which the judge reads.
//
//	bench:
//	  build: "nvcc -O3 -lineinfo -arch=native -o build/harness kernels/harness.cu"
//	  harness: "./build/harness"    # run in each tree, relative to it
//	  base_ref: origin/main         # base = git merge-base base_ref HEAD
//	  shapes: [mission, long]       # KG_SHAPES
//	  samples: 30                   # KG_SAMPLES: launches per round
//	  timeout: 10m                  # per harness run
//	  build_timeout: 30m            # per build
//	  rounds_budget: 1024           # most rounds run, dropped ones included
//	  env: {KG_KERNELS: flash_fwd}  # more variables for the harness
type Config struct {
	configpos.Section[Settings] `yaml:",inline"`
	// Build is a shell command (run with sh -c) that builds the harness in a tree: the
	// merge base checked out in a temporary git worktree, then the working tree. Empty: no
	// build step (a Python harness).
	Build string `yaml:"build"`
	// Harness is the harness command, shell words, run in each tree; a first word with a
	// slash is relative to the tree.
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
	// Env holds more variables for the harness (KG_KERNELS, say). The KG_ variables the
	// runner sets cannot be set here.
	Env map[string]string `yaml:"env"`
}

// Resolve checks the section, read from file, and keeps its Settings. The error names every
// bad setting and its line.
func (c *Config) Resolve(file string) error { return configpos.Resolve(c, file, Config.resolve) }

// ParseSection decodes the bench section of a whole kernel-gate.yml (raw) and validates
// it; a file without one gives the zero Config. Only the bench section is read: the rest
// of the file is action/config's business. name labels the file in messages.
func ParseSection(raw []byte, name string) (Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	var c Config
	c.File = name
	if root.Kind == 0 || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return c, nil
	}
	doc := root.Content[0]
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "bench" {
			continue
		}
		sec := doc.Content[i+1]
		if err := checkKeys(sec, name); err != nil {
			return Config{}, err
		}
		if err := sec.Decode(&c); err != nil {
			var te *yaml.TypeError
			if errors.As(err, &te) {
				err = errors.New(strings.Join(te.Errors, "; "))
			}
			return Config{}, fmt.Errorf("%s: bench: %w", name, err)
		}
	}
	err := c.Resolve(name)
	return c, err
}

// sectionKeys are the bench section's keys, for checkKeys.
func sectionKeys() []string {
	return []string{"build", "harness", "base_ref", "shapes", "samples", "timeout", "build_timeout", "rounds_budget", "env"}
}

// checkKeys rejects unknown keys of the bench section (action/config does the same for the
// whole file once the section is part of it).
func checkKeys(sec *yaml.Node, file string) error {
	if sec.Kind != yaml.MappingNode {
		return nil // Decode reports the type mismatch
	}
	keys := sectionKeys()
	for i := 0; i+1 < len(sec.Content); i += 2 {
		k := sec.Content[i]
		if !slices.Contains(keys, k.Value) {
			return fmt.Errorf("%s:%d: unknown key %q in bench (valid keys: %s)", file, k.Line, k.Value, strings.Join(keys, ", "))
		}
	}
	return nil
}

func (c Config) keyWhere(key string) string { return c.KeyWhere(key) + ": bench." + key }

// runnerVars are the variables the runner sets for every harness run.
func runnerVars() []string {
	return []string{"KG_MODE", "KG_ROUNDS", "KG_SAMPLES", "KG_SHAPES", "KG_OUT"}
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

// Settings are the bench section resolved: defaults filled in, durations parsed.
type Settings struct {
	Build, Harness, BaseRef string
	Shapes                  []string
	Samples                 int
	Timeout, BuildTimeout   time.Duration
	// RoundsBudget is 0 when the config sets none (the runner then uses twice max_rounds).
	RoundsBudget int
	// Env is "NAME=value", sorted by name.
	Env []string
}

// Settings returns the section resolved: as Resolve kept it, or resolved now. The error names
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
	}
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", c.keyWhere(key), fmt.Sprintf(format, a...)))
	}
	if s.Harness != "" {
		if _, err := SplitCommand(s.Harness, nil); err != nil {
			bad("harness", "%v (want shell words such as \"./build/harness --fast\")", err)
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
