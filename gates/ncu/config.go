package ncu

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Defaults used where the config sets nothing.
const (
	// DefaultLaunches is ncu's -c: the most kernel launches profiled in one run, over every
	// kernel the -k filter admits. The harness in check mode with KG_ROUNDS=1 launches each
	// kernel a few times (4 per flash_fwd variant in testdata/ncu-h200), so this profiles
	// all of them.
	DefaultLaunches = 32
	// MaxLaunches bounds launches: each profiled launch is replayed once per metric pass.
	MaxLaunches = 10000
	// DefaultTimeout bounds the ncu run; then it is killed with its process group.
	DefaultTimeout = 10 * time.Minute
)

// Config is the ncu section of kernel-gate.yml:
//
//	ncu:
//	  shape: mission        # KG_SHAPES of the profiled run: the main shape (default: the harness's)
//	  launches: 32          # ncu -c: launches profiled in the run, over all kernels (default 32)
//	  timeout: 10m          # the whole ncu run; then killed with its process group
//	  kernels:
//	    - match: "flash_fwd<*>"   # kernelname glob
//	      any:                    # at least one must hold
//	        - {metric: sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active, min: 50}
//	        - {metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}
//	      all:                    # every one must hold (a rule may have both)
//	        - {metric: gpu__time_duration.sum, max: 100000, unit: ns}
//	      reason: "attention must be Tensor Core bound or not DRAM bound"
type Config struct {
	configpos.Section[compiled] `yaml:",inline"`
	// Shape is KG_SHAPES for the profiled run; empty leaves the harness's default.
	Shape string `yaml:"shape"`
	// Launches is ncu's -c (default DefaultLaunches).
	Launches *int `yaml:"launches"`
	// Timeout bounds the ncu run (a Go duration; default DefaultTimeout).
	Timeout string `yaml:"timeout"`
	// Kernels are the rules, each for the kernels whose name matches its glob.
	Kernels configpos.List[Rule] `yaml:"kernels"`
}

// Rule holds thresholds for the kernels matching a glob. A kernel passes the rule when
// every threshold of All holds and, if Any is not empty, at least one of Any holds.
type Rule struct {
	// Match is a kernelname.Glob over the kernel's name in any of its forms.
	Match string                    `yaml:"match"`
	Any   configpos.List[Threshold] `yaml:"any"`
	All   configpos.List[Threshold] `yaml:"all"`
	// Reason is quoted in failure messages.
	Reason         string `yaml:"reason"`
	configpos.Item `yaml:"-"`
}

// Threshold bounds one metric: Min <= value <= Max, both inclusive, either optional.
type Threshold struct {
	// Metric is an ncu metric name, e.g. dram__throughput.avg.pct_of_peak_sustained_elapsed.
	Metric string   `yaml:"metric"`
	Min    *float64 `yaml:"min"`
	Max    *float64 `yaml:"max"`
	// Unit, when set, must equal the unit ncu printed ("%", "ns", "byte"): a value printed
	// in another unit fails instead of being compared as if it were in this one.
	Unit           string `yaml:"unit"`
	configpos.Item `yaml:"-"`
}

// Empty reports whether the config has no rules: there is nothing to profile or judge.
func (c Config) Empty() bool { return len(c.Kernels) == 0 }

// Resolve checks the section, read from file, and keeps what Options and Evaluate use. The
// error names every setting that cannot work, with its config line.
func (c *Config) Resolve(file string) error { return configpos.Resolve(c, file, Config.compile) }

// compiled returns the section resolved: as Resolve kept it, or resolved now.
func (c Config) compiled() (compiled, error) { return configpos.Resolved(c, Config.compile) }

// Only returns the section with the rules keep admits, in their order: what one target of
// kernel-gate run profiles. It stays resolved when c was (keep is called once per rule).
func (c Config) Only(keep func(Rule) bool) Config {
	return configpos.OnlyRules(c, func(c *Config) *configpos.List[Rule] { return &c.Kernels },
		func(cc *compiled) *[]compiledRule { return &cc.rules }, keep)
}

// ValidMetric reports whether s is an ncu metric name: "unit__counter" followed by
// ".rollup" and ".submetric" parts, letters, digits and underscores only
// (sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active, launch__grid_size).
// Section labels ("DRAM Throughput") and --metrics syntax (regex:, group:, breakdown:,
// lists) are not metric names.
func ValidMetric(s string) bool {
	unit, rest, ok := strings.Cut(s, "__")
	if !ok || unit == "" || rest == "" || !letter(unit[0]) {
		return false
	}
	for _, part := range strings.Split(rest, ".") {
		if part == "" {
			return false
		}
		for i := 0; i < len(part); i++ {
			if !letter(part[i]) && !(part[i] >= '0' && part[i] <= '9') && part[i] != '_' {
				return false
			}
		}
	}
	for i := 0; i < len(unit); i++ {
		if !letter(unit[i]) && !(unit[i] >= '0' && unit[i] <= '9') && unit[i] != '_' {
			return false
		}
	}
	return true
}

func letter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// compiled is a validated config: its rules are one per configured rule, in order.
type compiled struct {
	file     string
	shape    string
	launches int
	timeout  time.Duration
	rules    []compiledRule
}

type compiledRule struct {
	Rule
	glob kernelname.Glob
}

// compile checks and resolves the config; the error joins every problem found.
func (c Config) compile() (compiled, error) {
	cc := compiled{file: c.FileName(), shape: strings.TrimSpace(c.Shape), launches: DefaultLaunches, timeout: DefaultTimeout}
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: ncu.%s: %s", c.KeyWhere(key), key, fmt.Sprintf(format, a...)))
	}
	if strings.Contains(cc.shape, ",") {
		bad("shape", "%q: one shape, the main one (KG_SHAPES is comma-separated)", c.Shape)
	}
	if c.Launches != nil {
		if *c.Launches < 1 || *c.Launches > MaxLaunches {
			bad("launches", "must be between 1 and %d launches, got %d", MaxLaunches, *c.Launches)
		} else {
			cc.launches = *c.Launches
		}
	}
	if v := strings.TrimSpace(c.Timeout); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			bad("timeout", "%q is not a duration (e.g. \"10m\", \"90s\")", c.Timeout)
		case d <= 0:
			bad("timeout", "%q must be positive", c.Timeout)
		default:
			cc.timeout = d
		}
	}
	for i, r := range c.Kernels {
		prefix := fmt.Sprintf("%s: ncu.kernels[%d] (match %q)", c.Where(r.Line), i, r.Match)
		cr := compiledRule{Rule: r, glob: kernelname.Glob(r.Match)}
		if !cr.glob.Valid() {
			errs = append(errs, fmt.Errorf("%s: match must be a non-empty kernel glob", prefix))
		}
		if len(r.Any) == 0 && len(r.All) == 0 {
			errs = append(errs, fmt.Errorf("%s: the rule has neither any nor all, so it checks nothing", prefix))
		}
		for _, group := range []struct {
			name string
			ts   []Threshold
		}{{"any", r.Any}, {"all", r.All}} {
			for j, t := range group.ts {
				tp := fmt.Sprintf("%s: ncu.kernels[%d].%s[%d]", c.Where(cmp.Or(t.Line, r.Line)), i, group.name, j)
				errs = append(errs, t.check(tp)...)
			}
		}
		cc.rules = append(cc.rules, cr)
	}
	if len(errs) > 0 {
		return compiled{}, errors.Join(errs...)
	}
	return cc, nil
}

// check returns what is wrong with one threshold.
func (t Threshold) check(prefix string) []error {
	var errs []error
	switch {
	case strings.TrimSpace(t.Metric) == "":
		errs = append(errs, fmt.Errorf("%s: metric is required (an ncu metric name such as dram__throughput.avg.pct_of_peak_sustained_elapsed)", prefix))
	case !ValidMetric(t.Metric):
		errs = append(errs, fmt.Errorf("%s: metric %q is not an ncu metric name (unit__counter.rollup.submetric, e.g. dram__throughput.avg.pct_of_peak_sustained_elapsed; section labels such as \"DRAM Throughput\" are not names: `ncu --query-metrics` lists them)", prefix, t.Metric))
	}
	if t.Min == nil && t.Max == nil {
		errs = append(errs, fmt.Errorf("%s: give min, max or both", prefix))
	}
	for _, b := range []struct {
		name string
		v    *float64
	}{{"min", t.Min}, {"max", t.Max}} {
		if b.v != nil && (math.IsNaN(*b.v) || math.IsInf(*b.v, 0)) {
			errs = append(errs, fmt.Errorf("%s: %s must be a finite number, got %v", prefix, b.name, *b.v))
		}
	}
	if t.Min != nil && t.Max != nil && *t.Min > *t.Max {
		errs = append(errs, fmt.Errorf("%s: min %s is above max %s: no value can pass", prefix, num(*t.Min), num(*t.Max)))
	}
	if t.Unit != "" && strings.TrimSpace(t.Unit) != t.Unit {
		errs = append(errs, fmt.Errorf("%s: unit %q has surrounding spaces", prefix, t.Unit))
	}
	return errs
}

// String writes the bounds: ">= 50", "<= 50 %", "in [30, 70]".
func (t Threshold) String() string {
	var s string
	switch {
	case t.Min != nil && t.Max != nil:
		s = "in [" + num(*t.Min) + ", " + num(*t.Max) + "]"
	case t.Min != nil:
		s = ">= " + num(*t.Min)
	case t.Max != nil:
		s = "<= " + num(*t.Max)
	}
	if t.Unit != "" {
		s += " " + t.Unit
	}
	return s
}

// Metrics returns the metrics the rules name, sorted and without repeats: what --metrics
// asks ncu for.
func Metrics(c Config) []string {
	var ms []string
	for _, r := range c.Kernels {
		for _, t := range slices.Concat(r.Any, r.All) {
			if m := strings.TrimSpace(t.Metric); m != "" {
				ms = append(ms, m)
			}
		}
	}
	slices.Sort(ms)
	return slices.Compact(ms)
}

// KernelFilter returns ncu's -k value for the rules ("regex:flash_fwd|row_softmax"), or ""
// when some rule's glob does not name its function exactly, so that no filter could
// admit all it matches; Evaluate then picks the kernels out of everything profiled. The
// filter is only a cost saving: it admits a superset of the rules' kernels (ncu matches it
// anywhere in the function name without namespace or template arguments).
func KernelFilter(c Config) string {
	var names []string
	for _, r := range c.Kernels {
		n, ok := functionName(r.Match)
		if !ok {
			return ""
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return "regex:" + strings.Join(slices.Compact(names), "|")
}

// functionName returns the function a glob names when its part before the template
// arguments or parameters has no wildcard: "flash_fwd<*>", "kg::flash_fwd<64, *>",
// "void flash_fwd<*>(*)" and "row_softmax" name flash_fwd and row_softmax; "flash_*",
// "*::flash_fwd<*>" and mangled names do not.
func functionName(glob string) (string, bool) {
	g := strings.TrimSpace(glob)
	g = strings.TrimPrefix(g, "void ")
	if i := strings.IndexAny(g, "<("); i >= 0 {
		g = g[:i]
	}
	if strings.ContainsAny(g, "*?") || strings.HasPrefix(g, "_Z") {
		return "", false
	}
	if i := strings.LastIndex(g, "::"); i >= 0 {
		g = g[i+2:]
	}
	if g == "" || !(letter(g[0]) || g[0] == '_') || strings.HasPrefix(g, "operator") {
		return "", false
	}
	for i := 0; i < len(g); i++ {
		if !letter(g[i]) && !(g[i] >= '0' && g[i] <= '9') && g[i] != '_' {
			return "", false
		}
	}
	return g, true
}

// num formats a number as short as it reads back, to 12 significant digits (a median of
// two printed values is "2.015", not "2.0149999999999997").
func num(v float64) string { return strconv.FormatFloat(round12(v), 'f', -1, 64) }

// round12 rounds v to 12 significant digits.
func round12(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil {
		return v
	}
	return r
}

func (c compiled) where(line int) string { return configpos.Where(c.file, line) }
