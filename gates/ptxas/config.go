package ptxas

import (
	"fmt"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Limits are the PTXAS thresholds. A nil field sets nothing at its level; the first level
// that sets a limit, from the most specific, decides it.
type Limits struct {
	MaxRegisters   *int64 `yaml:"max_registers"`
	MaxSpillStores *int64 `yaml:"max_spill_stores"`
	MaxSpillLoads  *int64 `yaml:"max_spill_loads"`
	MaxStackFrame  *int64 `yaml:"max_stack_frame"`
	MaxLmem        *int64 `yaml:"max_lmem"`
	MaxSmem        *int64 `yaml:"max_smem"`
	// MaxRegisterIncrease bounds registers minus the baseline's, for the same kernel × arch.
	MaxRegisterIncrease *int64 `yaml:"max_register_increase"`
}

// Config is the ptxas section of kernel-gate.yml.
type Config struct {
	configpos.Section[compiled] `yaml:",inline"`
	Limits                      `yaml:",inline"`
	// Arch overrides the limits for one arch ("sm_90a"; "sm_90" also covers "sm_90a").
	Arch map[string]Limits `yaml:"arch"`
	// Kernels override the limits for kernels matching a glob; later rules win.
	Kernels configpos.List[KernelRule] `yaml:"kernels"`
}

// KernelRule sets limits for the kernels whose name matches Match.
type KernelRule struct {
	Match          string `yaml:"match"`
	Limits         `yaml:",inline"`
	Arch           map[string]Limits `yaml:"arch"`
	Reason         string            `yaml:"reason"`
	configpos.Item `yaml:"-"`
}

// Resolve checks the section, read from file, and keeps what Evaluate uses. The error names
// the first rule that cannot work.
func (c *Config) Resolve(file string) error { return configpos.Resolve(c, file, Config.compile) }

// level is the limits one level of the config sets, and the words that say where.
type level struct {
	Limits
	from string
}

// compiled is the section resolved: every level with the line that set it.
type compiled struct {
	top   []limitAt        // one per metric the top level sets
	arch  map[string]level // by the config's arch key
	rules []compiledRule
}

type limitAt struct {
	metric string
	limit
}

type compiledRule struct {
	KernelRule
	glob kernelname.Glob
	at   string // "kernel-gate.yml:12"
}

// compile resolves every level; the error names the first rule that cannot work, but the
// compiled form is whole either way (a rule with an empty glob matches nothing).
func (c Config) compile() (compiled, error) {
	var cc compiled
	var err error
	// Every limit is a count or a size: a negative one is a config error, named.
	negative := func(where, key string, l Limits) {
		for m, v := range pick(l) {
			if v != nil && *v < 0 && err == nil {
				err = fmt.Errorf("%s: %smax_%s: %d is negative: want a whole number of at least 0", where, key, m, *v)
			}
		}
	}
	for m, v := range pick(c.Limits) {
		if v != nil {
			if *v < 0 && err == nil {
				err = fmt.Errorf("%s: ptxas.max_%s: %d is negative: want a whole number of at least 0", c.KeyWhere("max_"+m), m, *v)
			}
			cc.top = append(cc.top, limitAt{m, limit{*v, c.KeyWhere("max_" + m)}})
		}
	}
	for key, l := range c.Arch {
		if cc.arch == nil {
			cc.arch = map[string]level{}
		}
		negative(c.KeyWhere("arch."+key), "ptxas.arch."+key+".", l)
		cc.arch[key] = level{l, fmt.Sprintf("%s (arch %s)", c.KeyWhere("arch."+key), key)}
	}
	for i, r := range c.Kernels {
		cr := compiledRule{KernelRule: r, glob: kernelname.Glob(r.Match), at: c.Where(r.Line)}
		if !cr.glob.Valid() && err == nil {
			err = fmt.Errorf("%s: ptxas.kernels[%d]: match must be a non-empty kernel glob", c.Where(r.Line), i)
		}
		negative(c.Where(r.Line), fmt.Sprintf("ptxas.kernels[%d].", i), r.Limits)
		for key, l := range r.Arch {
			negative(c.Where(r.Line), fmt.Sprintf("ptxas.kernels[%d].arch.%s.", i, key), l)
		}
		cc.rules = append(cc.rules, cr)
	}
	return cc, err
}

// limit is one resolved threshold and where it came from.
type limit struct {
	value int64
	from  string
}

type resolved map[string]limit

func pick(l Limits) map[string]*int64 {
	return map[string]*int64{
		MetricRegisters: l.MaxRegisters, MetricSpillStores: l.MaxSpillStores, MetricSpillLoads: l.MaxSpillLoads,
		MetricStackFrame: l.MaxStackFrame, MetricLmem: l.MaxLmem, MetricSmem: l.MaxSmem,
		MetricRegisterIncrease: l.MaxRegisterIncrease,
	}
}

// archLimits finds the arch override: exact key first, then the key without the arch's
// feature suffix ("sm_90" for "sm_90a").
func archLimits[V any](m map[string]V, arch string) (V, string, bool) {
	if l, ok := m[arch]; ok {
		return l, arch, true
	}
	if base := strings.TrimRight(arch, "abcdefghijklmnopqrstuvwxyz"); base != arch {
		if l, ok := m[base]; ok {
			return l, base, true
		}
	}
	var zero V
	return zero, "", false
}

// resolve computes the limits for one kernel × arch: defaults, then the config's top level,
// its arch section, each matching kernel rule in order, and that rule's arch section.
func (cc compiled) resolve(name kernelname.Name, arch string) resolved {
	r := resolved{
		MetricRegisters:   {255, "default"},
		MetricSpillStores: {0, "default"},
		MetricSpillLoads:  {0, "default"},
		MetricStackFrame:  {0, "default"},
	}
	apply := func(l Limits, from string) {
		for m, v := range pick(l) {
			if v != nil {
				r[m] = limit{*v, from}
			}
		}
	}
	for _, l := range cc.top {
		r[l.metric] = l.limit
	}
	if l, _, ok := archLimits(cc.arch, arch); ok {
		apply(l.Limits, l.from)
	}
	for _, rule := range cc.rules {
		if !name.Matches(rule.glob) {
			continue
		}
		apply(rule.Limits, fmt.Sprintf("%s (%s)", rule.at, rule.Match))
		if l, key, ok := archLimits(rule.Arch, arch); ok {
			apply(l, fmt.Sprintf("%s (%s, %s)", rule.at, rule.Match, key))
		}
	}
	return r
}
