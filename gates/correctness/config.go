package correctness

import (
	"errors"
	"fmt"
	"math"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
)

// Defaults used where no level of the config sets a limit.
const (
	// DefaultMaxErr is the absolute max error the kernel teams gate fp16 kernels with today.
	DefaultMaxErr = 0.06
	// DefaultRepeatTol requires repeated launches on the same input to be bit-identical;
	// kernels with floating-point atomics set their own repeat_tol in a rule.
	DefaultRepeatTol = 0.0
)

// Tolerance is one level of limits. A nil field sets nothing at its level; the most specific
// level that sets a limit decides it.
type Tolerance struct {
	// MaxErr bounds the absolute max error (default DefaultMaxErr).
	MaxErr *float64 `yaml:"max_err"`
	// MeanErr bounds the mean absolute error (no default).
	MeanErr *float64 `yaml:"mean_err"`
	// RTol bounds max_err relative to the reference: max_err <= rtol × ref_max_abs, judged
	// for results that report a finite, positive ref_max_abs (no default).
	RTol *float64 `yaml:"rtol"`
	// BadFraction bounds the fraction of elements outside the harness's own tolerance
	// (no default).
	BadFraction *float64 `yaml:"bad_fraction"`
	// RepeatTol bounds the difference between repeated launches on the same input
	// (default DefaultRepeatTol: bit-identical).
	RepeatTol *float64 `yaml:"repeat_tol"`
	// MinChecks is the fewest checks a result may report (default: the request's rounds
	// when present, else 1). A result never passes with fewer checks than the request's
	// rounds, whatever MinChecks says.
	MinChecks *int `yaml:"min_checks"`
}

// empty reports whether t sets no limit.
func (t Tolerance) empty() bool {
	return t.MaxErr == nil && t.MeanErr == nil && t.RTol == nil && t.BadFraction == nil &&
		t.RepeatTol == nil && t.MinChecks == nil
}

// Rule sets tolerances for the results whose kernel matches Match (and, when Shapes is set,
// whose shape is one of Shapes). A rule with Shapes also requires every kernel it matches
// to report those shapes, and at least one kernel to match.
type Rule struct {
	// Match is a kernelname.Glob over the kernel's name as the harness writes it.
	Match string `yaml:"match"`
	// Shapes limits the rule to these shapes, by exact name.
	Shapes    []string `yaml:"shapes"`
	Tolerance `yaml:",inline"`
	// Reason is quoted in the messages of the limits the rule sets.
	Reason         string `yaml:"reason"`
	configpos.Item `yaml:"-"`
}

// Config is the correctness section of kernel-gate.yml.
type Config struct {
	configpos.Section[compiled] `yaml:",inline"`
	Tolerance                   `yaml:",inline"`
	// Kernels override the tolerances for kernels matching a glob; later rules win.
	Kernels configpos.List[Rule] `yaml:"kernels"`
}

// Resolve checks the section, read from file, and keeps what Evaluate uses. The error names
// every setting that cannot work, with its config line.
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

// compiled is the section resolved: the limits every result starts from and the rules,
// one per configured rule, in order.
type compiled struct {
	configpos.Origin // for messages
	top              limits
	rules            []compiledRule
}

type compiledRule struct {
	Rule
	configpos.KernelMatch
}

// compile checks every setting and resolves the section; the error joins every problem found,
// each with its config line.
func (c Config) compile() (compiled, error) {
	cc := compiled{Origin: c.Origin, top: limits{
		maxErr:    limit{value: DefaultMaxErr, set: true, from: "default"},
		repeatTol: limit{value: DefaultRepeatTol, set: true, from: "default"},
		minChecks: limit{value: 1, set: true, from: "default"},
	}}
	cc.top.apply(c.Tolerance, c.KeyWhere, "")
	var errs []error
	errs = append(errs, c.Tolerance.validate(func(key string) string {
		return fmt.Sprintf("%s: correctness.%s", c.KeyWhere(key), key)
	})...)
	for i, r := range c.Kernels {
		m, prefix, bad := c.KernelRule("correctness", i, r.Line, r.Match, r.Shapes)
		errs = append(errs, bad...)
		cr := compiledRule{Rule: r, KernelMatch: m}
		if r.Tolerance.empty() && len(r.Shapes) == 0 {
			errs = append(errs, fmt.Errorf("%s: the rule sets no tolerance and no shapes, so it does nothing", prefix))
		}
		errs = append(errs, r.Tolerance.validate(func(key string) string { return prefix + ": " + key })...)
		cc.rules = append(cc.rules, cr)
	}
	return cc, errors.Join(errs...)
}

// validate checks one level; name(key) prefixes the error for a key.
func (t Tolerance) validate(name func(key string) string) []error {
	var errs []error
	for _, f := range []struct {
		key      string
		v        *float64
		fraction bool
	}{
		{"max_err", t.MaxErr, false}, {"mean_err", t.MeanErr, false}, {"rtol", t.RTol, false},
		{"bad_fraction", t.BadFraction, true}, {"repeat_tol", t.RepeatTol, false},
	} {
		switch {
		case f.v == nil:
		case math.IsNaN(*f.v) || math.IsInf(*f.v, 0) || *f.v < 0:
			errs = append(errs, fmt.Errorf("%s: must be a finite number >= 0, got %s", name(f.key), numtext.Short(*f.v)))
		case f.fraction && *f.v > 1:
			errs = append(errs, fmt.Errorf("%s: is a fraction of the output's elements, between 0 and 1; got %s", name(f.key), numtext.Short(*f.v)))
		}
	}
	if t.MinChecks != nil && *t.MinChecks < 1 {
		errs = append(errs, fmt.Errorf("%s: must be at least 1 (a result with no check has nothing to judge), got %d", name("min_checks"), *t.MinChecks))
	}
	return errs
}
