package correctness

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
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
	Reason string `yaml:"reason"`
	// Line is the rule's line in the config file, set when decoded from YAML.
	Line int `yaml:"-"`
}

// Config is the correctness section of kernel-gate.yml.
type Config struct {
	Tolerance `yaml:",inline"`
	// Kernels override the tolerances for kernels matching a glob; later rules win.
	Kernels []Rule `yaml:"kernels"`
	// File names the config file in messages; empty means "kernel-gate.yml".
	File string `yaml:"-"`

	// lines holds the config lines of the top-level keys ("max_err"), set when decoded.
	lines map[string]int
}

// UnmarshalYAML keeps the lines of the top-level keys for messages.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	type plain Config
	if err := n.Decode((*plain)(c)); err != nil {
		return err
	}
	c.lines = configpos.KeyLines(n)
	return nil
}

// UnmarshalYAML keeps the rule's line for messages.
func (r *Rule) UnmarshalYAML(n *yaml.Node) error {
	type plain Rule
	if err := n.Decode((*plain)(r)); err != nil {
		return err
	}
	r.Line = n.Line
	return nil
}

func (c Config) file() string { return cmp.Or(c.File, configpos.DefaultFile) }

func (c Config) where(line int) string { return configpos.Where(c.File, line) }

// describe names a rule in messages: "flash_fwd*" or "flash_fwd* × long, mission".
func (r Rule) describe() string {
	if len(r.Shapes) == 0 {
		return r.Match
	}
	return r.Match + " × " + strings.Join(r.Shapes, ", ")
}

// Validate reports every setting that cannot work; each error names its config line.
func (c Config) Validate() error {
	var errs []error
	errs = append(errs, c.Tolerance.validate(func(key string) string {
		return fmt.Sprintf("%s: correctness.%s", c.where(c.lines[key]), key)
	})...)
	for i, r := range c.Kernels {
		prefix := fmt.Sprintf("%s: correctness.kernels[%d] (match %q)", c.where(r.Line), i, r.Match)
		if !kernelname.Glob(r.Match).Valid() {
			errs = append(errs, fmt.Errorf("%s: match must be a non-empty kernel glob", prefix))
		}
		for j, s := range r.Shapes {
			if strings.TrimSpace(s) == "" {
				errs = append(errs, fmt.Errorf("%s: shapes[%d] is empty", prefix, j))
			}
		}
		if r.Tolerance.empty() && len(r.Shapes) == 0 {
			errs = append(errs, fmt.Errorf("%s: the rule sets no tolerance and no shapes, so it does nothing", prefix))
		}
		errs = append(errs, r.Tolerance.validate(func(key string) string { return prefix + ": " + key })...)
	}
	return errors.Join(errs...)
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
			errs = append(errs, fmt.Errorf("%s: must be a finite number >= 0, got %s", name(f.key), fnum(*f.v)))
		case f.fraction && *f.v > 1:
			errs = append(errs, fmt.Errorf("%s: is a fraction of the output's elements, between 0 and 1; got %s", name(f.key), fnum(*f.v)))
		}
	}
	if t.MinChecks != nil && *t.MinChecks < 1 {
		errs = append(errs, fmt.Errorf("%s: must be at least 1 (a result with no check has nothing to judge), got %d", name("min_checks"), *t.MinChecks))
	}
	return errs
}

// fnum renders a number for messages: shortest form, NaN and ±Inf spelt out.
func fnum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
