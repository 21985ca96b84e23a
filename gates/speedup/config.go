package speedup

import (
	"errors"
	"fmt"
	"math"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
)

// Defaults used where the config sets nothing. docs/speedup-evaluation.md measures them on
// real H200 timings.
const (
	// DefaultMaxSlowdown is the effect-size margin: a head slower than base by less than 2%
	// is not a failure, and one slower by more must be shown to be, with confidence.
	DefaultMaxSlowdown = 0.02
	// DefaultConfidence is the confidence level over every comparison of one run and every
	// look of the add-rounds loop, before the corrections (see Limits.Level).
	DefaultConfidence = 0.99
	// DefaultMinRounds is the first look of the add-rounds loop, and the fewest rounds any
	// decision is made on.
	DefaultMinRounds = 16
	// DefaultMaxRounds is the last look: the loop doubles the rounds from MinRounds up to it.
	DefaultMaxRounds = 512
	// DefaultGPUSecondsBudget bounds the GPU time (both sides' timed launches, and the
	// reference's) that the loop may spend on one kernel × shape.
	DefaultGPUSecondsBudget = 60.0
)

// Config is the speedup section of kernel-gate.yml:
//
//	speedup:
//	  max_slowdown: 0.02        # effect-size margin; default 0.02
//	  confidence: 0.99          # before the corrections for many pairs and many looks
//	  min_rounds: 16            # first look, and the fewest rounds a decision is made on
//	  max_rounds: 512           # last look (the loop doubles the rounds)
//	  gpu_seconds_budget: 60    # per kernel × shape
//	  kernels:
//	    - match: "flash_fwd*"
//	      shapes: [mission]
//	      max_slowdown: 0.05
//	      min_speedup_vs_reference: 15
//	      reason: "the 15x over PyTorch SDPA we promised"
type Config struct {
	configpos.Section[compiled] `yaml:",inline"`
	// MaxSlowdown is the margin (default DefaultMaxSlowdown); rules may override it.
	MaxSlowdown *float64 `yaml:"max_slowdown"`
	// Confidence is the family-wide confidence level (default DefaultConfidence).
	Confidence *float64 `yaml:"confidence"`
	// MinRounds and MaxRounds are the first and last looks of the add-rounds loop.
	MinRounds *int `yaml:"min_rounds"`
	MaxRounds *int `yaml:"max_rounds"`
	// GPUSecondsBudget bounds the GPU time spent on one kernel × shape.
	GPUSecondsBudget *float64 `yaml:"gpu_seconds_budget"`
	// Kernels override the margin and set reference goals per kernel glob; later rules win.
	Kernels configpos.List[Rule] `yaml:"kernels"`
}

// Rule sets the margin and the reference goal of the results whose kernel matches Match (and,
// when Shapes is set, whose shape is one of Shapes). A rule with Shapes also requires every
// kernel it matches to report those shapes in head.
type Rule struct {
	// Match is a kernelname.Glob over the kernel's name as the harness writes it.
	Match string `yaml:"match"`
	// Shapes limits the rule to these shapes, by exact name.
	Shapes []string `yaml:"shapes"`
	// MaxSlowdown overrides the margin.
	MaxSlowdown *float64 `yaml:"max_slowdown"`
	// MinSpeedupVsReference is a goal: reference median / head median, per round, from the
	// head run's reference timings (15 for "15x faster than PyTorch SDPA").
	MinSpeedupVsReference *float64 `yaml:"min_speedup_vs_reference"`
	// Reason is quoted in the messages of the limits the rule sets.
	Reason         string `yaml:"reason"`
	configpos.Item `yaml:"-"`
}

// Resolve checks the section, read from file, and keeps what Compare and Limits use. The
// error names every setting that cannot work, with its config line.
func (c *Config) Resolve(file string) error { return configpos.Resolve(c, file, Config.compile) }

// With returns a copy of the section changed by change (a setting from a flag) and resolved
// again; the error names a setting that cannot work. A loaded section is read-only: a field
// assigned by hand would not be seen.
func (c Config) With(change func(*Config)) (Config, error) {
	return configpos.Change(c, change, Config.compile)
}

// compiled returns the section resolved: as Resolve kept it, or resolved now.
func (c Config) compiled() (compiled, error) { return configpos.Resolved(c, Config.compile) }

// Only returns the section with the rules keep admits, in their order: what one target of
// kernel-gate run is judged by, so that it does not warn about rules meant for another. It
// stays resolved when c was (keep is called once per rule).
func (c Config) Only(keep func(Rule) bool) Config {
	return configpos.OnlyRules(c, func(c *Config) *configpos.List[Rule] { return &c.Kernels },
		func(cc *compiled) *[]compiledRule { return &cc.rules }, keep)
}

// compiled is the section resolved: the limits every kernel × shape starts from and the
// rules, one per configured rule, in order.
type compiled struct {
	configpos.Origin // for messages
	top              Limits
	margin           setting // where top's margin came from
	rules            []compiledRule
}

type compiledRule struct {
	Rule
	configpos.KernelMatch
}

// compile checks every setting and resolves the section; the error joins every problem found,
// each with its config line. The compiled form is whole either way: Limits has never refused
// a config built in Go.
func (c Config) compile() (compiled, error) {
	cc := compiled{Origin: c.Origin, top: c.base(), margin: setting{from: "default"}}
	if c.MaxSlowdown != nil {
		cc.margin = setting{from: c.KeyWhere("max_slowdown")}
	}
	var errs []error
	top := func(key string) string { return fmt.Sprintf("%s: speedup.%s", c.KeyWhere(key), key) }
	if err := validMargin(c.MaxSlowdown); err != nil {
		errs = append(errs, fmt.Errorf("%s: %v", top("max_slowdown"), err))
	}
	if c.Confidence != nil && !(*c.Confidence >= 0.5 && *c.Confidence < 1) {
		errs = append(errs, fmt.Errorf("%s: must be at least 0.5 and below 1 (0.99 is 99%%), got %s", top("confidence"), numtext.Short(*c.Confidence)))
	}
	if c.MinRounds != nil && *c.MinRounds < 2 {
		errs = append(errs, fmt.Errorf("%s: must be at least 2 (a median of per-round ratios needs rounds), got %d", top("min_rounds"), *c.MinRounds))
	}
	if c.MaxRounds != nil && *c.MaxRounds < 2 {
		errs = append(errs, fmt.Errorf("%s: must be at least 2, got %d", top("max_rounds"), *c.MaxRounds))
	}
	if c.MinRounds != nil && c.MaxRounds != nil && *c.MaxRounds < *c.MinRounds {
		errs = append(errs, fmt.Errorf("%s: %d is below min_rounds %d", top("max_rounds"), *c.MaxRounds, *c.MinRounds))
	} else if c.MaxRounds != nil && c.MinRounds == nil && *c.MaxRounds < DefaultMinRounds {
		errs = append(errs, fmt.Errorf("%s: %d is below the default min_rounds %d (set min_rounds too)", top("max_rounds"), *c.MaxRounds, DefaultMinRounds))
	} else if c.MinRounds != nil && c.MaxRounds == nil && *c.MinRounds > DefaultMaxRounds {
		errs = append(errs, fmt.Errorf("%s: %d is above the default max_rounds %d (set max_rounds too)", top("min_rounds"), *c.MinRounds, DefaultMaxRounds))
	}
	if c.GPUSecondsBudget != nil && !(*c.GPUSecondsBudget > 0 && !math.IsInf(*c.GPUSecondsBudget, 0)) {
		errs = append(errs, fmt.Errorf("%s: must be a finite number of seconds > 0, got %s", top("gpu_seconds_budget"), numtext.Short(*c.GPUSecondsBudget)))
	}
	for i, r := range c.Kernels {
		m, prefix, bad := c.KernelRule("speedup", i, r.Line, r.Match, r.Shapes)
		errs = append(errs, bad...)
		cc.rules = append(cc.rules, compiledRule{Rule: r, KernelMatch: m})
		if r.MaxSlowdown == nil && r.MinSpeedupVsReference == nil && len(r.Shapes) == 0 {
			errs = append(errs, fmt.Errorf("%s: the rule sets no max_slowdown, min_speedup_vs_reference or shapes, so it does nothing", prefix))
		}
		if err := validMargin(r.MaxSlowdown); err != nil {
			errs = append(errs, fmt.Errorf("%s: max_slowdown: %v", prefix, err))
		}
		if g := r.MinSpeedupVsReference; g != nil && !(*g > 0 && !math.IsInf(*g, 0)) {
			errs = append(errs, fmt.Errorf("%s: min_speedup_vs_reference: must be a finite ratio > 0 (15 for 15x faster than the reference), got %s", prefix, numtext.Short(*g)))
		}
	}
	return cc, errors.Join(errs...)
}

// validMargin checks a max_slowdown: a fraction, 0 <= m < 1.
func validMargin(m *float64) error {
	if m == nil {
		return nil
	}
	if !(*m >= 0 && *m < 1) {
		return fmt.Errorf("must be a fraction >= 0 and below 1 (0.02 is 2%%), got %s", numtext.Short(*m))
	}
	return nil
}

// setting is one resolved value and where it came from.
type setting struct {
	from   string // "default", "kernel-gate.yml:4" or "kernel-gate.yml:12 (flash_fwd* × long)"
	reason string
}

// text is "(from X)" with the rule's reason when it has one.
func (s setting) text() string {
	if s.reason != "" {
		return fmt.Sprintf("(from %s: %q)", s.from, s.reason)
	}
	return "(from " + s.from + ")"
}

// resolved is the limits for one kernel × shape and where the margin and goal came from.
type resolved struct {
	Limits
	margin, goal setting
	matched      []int
}

// base returns the limits every kernel × shape starts from: the defaults and the top level.
func (c Config) base() Limits {
	l := DefaultLimits()
	if c.MaxSlowdown != nil {
		l.MaxSlowdown = *c.MaxSlowdown
	}
	if c.Confidence != nil {
		l.Confidence = *c.Confidence
	}
	if c.MinRounds != nil {
		l.MinRounds = *c.MinRounds
	}
	if c.MaxRounds != nil {
		l.MaxRounds = *c.MaxRounds
	}
	if c.GPUSecondsBudget != nil {
		l.GPUSecondsBudget = *c.GPUSecondsBudget
	}
	return l
}

// Limits returns the resolved limits for one kernel × shape: the defaults, the top level,
// then each matching rule in order. The runner calls it for NeedMore.
func (c Config) Limits(kernel, shape string) Limits {
	cc, _ := c.compiled() // Compare reports an invalid config; the limits are whole anyway
	return cc.resolve(kernelname.Parse(kernel), shape).Limits
}

func (cc compiled) resolve(name kernelname.Name, shape string) resolved {
	r := resolved{Limits: cc.top, margin: cc.margin}
	for i, rule := range cc.rules {
		if !rule.Matches(name, shape) {
			continue
		}
		r.matched = append(r.matched, i)
		if rule.MaxSlowdown != nil {
			r.MaxSlowdown, r.margin = *rule.MaxSlowdown, setting{from: rule.From, reason: rule.Reason}
		}
		if rule.MinSpeedupVsReference != nil {
			r.MinSpeedupVsReference, r.goal = *rule.MinSpeedupVsReference, setting{from: rule.From, reason: rule.Reason}
		}
	}
	return r
}
