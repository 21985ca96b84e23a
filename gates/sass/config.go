package sass

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Config is the sass section of kernel-gate.yml.
type Config struct {
	configpos.Section[compiled] `yaml:",inline"`
	// Require and Forbid apply to every function not known to be a device function.
	Require []string `yaml:"require"`
	Forbid  []string `yaml:"forbid"`
	// Kernels are rules for the functions whose name matches a glob.
	Kernels configpos.List[Rule] `yaml:"kernels"`
}

// Rule checks the functions matching a glob.
type Rule struct {
	// Match is a kernelname.Glob over the kernel's name in any of its forms.
	Match string `yaml:"match"`
	// Arch, when set, limits the rule to these archs; "sm_90" also covers "sm_90a".
	Arch    []string `yaml:"arch"`
	Require []string `yaml:"require"`
	Forbid  []string `yaml:"forbid"`
	// Reason is quoted in failure messages.
	Reason         string `yaml:"reason"`
	configpos.Item `yaml:"-"`
}

// Pattern is a compiled instruction pattern (see the package documentation).
type Pattern struct {
	src string
	re  *regexp.Regexp
}

// CompilePattern compiles s as ^(?:s)(?:\.|$).
func CompilePattern(s string) (Pattern, error) {
	if strings.TrimSpace(s) == "" {
		return Pattern{}, errors.New("empty instruction pattern")
	}
	// Compile s alone first: a pattern such as "A)|(B" must fail, not change meaning
	// inside the wrapper, and the error should show what the user wrote.
	if _, err := regexp.Compile(s); err != nil {
		return Pattern{}, err
	}
	re, err := regexp.Compile(`^(?:` + s + `)(?:\.|$)`)
	if err != nil {
		return Pattern{}, err
	}
	return Pattern{src: s, re: re}, nil
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.src }

// Match reports whether p matches an opcode with modifiers, such as "HMMA.16816.F32".
func (p Pattern) Match(opcode string) bool { return p.re != nil && p.re.MatchString(opcode) }

// Resolve checks the section, read from file, and keeps its compiled patterns for Evaluate.
// The error names every rule that cannot work, with its line.
func (c *Config) Resolve(file string) error { return configpos.Resolve(c, file, Config.compile) }

// compiled returns the section's compiled patterns: those Resolve kept, or compiled now.
func (c Config) compiled() (compiled, error) { return configpos.Resolved(c, Config.compile) }

const (
	kindRequire = "require"
	kindForbid  = "forbid"
)

// check is one pattern of one rule.
type check struct {
	kind string // kindRequire or kindForbid
	pat  Pattern
	from string // "rule kernel-gate.yml:12" or "sass.require (kernel-gate.yml:4)"
	// reason is the rule's reason, for messages.
	reason string
	column int // index into compiled.columns
	line   int
	rule   int // index into compiled.rules; -1 for the top level
}

// compiledRule is a Rule ready to match.
type compiledRule struct {
	Rule
	glob   kernelname.Glob
	archs  []string
	checks []check
}

type compiled struct {
	file    string
	top     []check
	rules   []compiledRule
	columns []string // "require HMMA|HGMMA", in config order
}

func (c compiled) empty() bool { return len(c.top) == 0 && len(c.rules) == 0 }

func (c compiled) where(line int) string {
	if line > 0 {
		return c.file + ":" + strconv.Itoa(line)
	}
	return c.file
}

// compile checks and compiles the config; the error joins every problem found.
func (c Config) compile() (compiled, error) {
	cc := compiled{file: c.FileName()}
	var errs []error
	colIndex := map[string]int{}
	add := func(kind string, pats []string, from, reason string, line, rule int, prefix string) []check {
		var out []check
		for i, s := range pats {
			p, err := CompilePattern(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %s[%d] %q: %w", prefix, kind, i, s, err))
				continue
			}
			col := kind + " " + s
			ci, ok := colIndex[col]
			if !ok {
				ci = len(cc.columns)
				colIndex[col] = ci
				cc.columns = append(cc.columns, col)
			}
			out = append(out, check{kind: kind, pat: p, from: from, reason: reason, column: ci, line: line, rule: rule})
		}
		return out
	}
	requireLine, forbidLine := c.KeyLine("require"), c.KeyLine("forbid")
	cc.top = append(cc.top, add(kindRequire, c.Require, "sass.require ("+c.Where(requireLine)+")", "", requireLine, -1, c.Where(requireLine)+": sass")...)
	cc.top = append(cc.top, add(kindForbid, c.Forbid, "sass.forbid ("+c.Where(forbidLine)+")", "", forbidLine, -1, c.Where(forbidLine)+": sass")...)
	for i, r := range c.Kernels {
		prefix := fmt.Sprintf("%s: sass.kernels[%d] (match %q)", c.Where(r.Line), i, r.Match)
		cr := compiledRule{Rule: r, glob: kernelname.Glob(r.Match)}
		if !cr.glob.Valid() {
			errs = append(errs, fmt.Errorf("%s: match must be a non-empty kernel glob", prefix))
		}
		if len(r.Require) == 0 && len(r.Forbid) == 0 {
			errs = append(errs, fmt.Errorf("%s: the rule has neither require nor forbid, so it checks nothing", prefix))
		}
		for _, a := range r.Arch {
			na, err := normArch(a)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: arch: %w", prefix, err))
				continue
			}
			cr.archs = append(cr.archs, na)
		}
		from := "rule " + c.Where(r.Line)
		cr.checks = append(cr.checks, add(kindRequire, r.Require, from, r.Reason, r.Line, i, prefix)...)
		cr.checks = append(cr.checks, add(kindForbid, r.Forbid, from, r.Reason, r.Line, i, prefix)...)
		cc.rules = append(cc.rules, cr)
	}
	if len(errs) > 0 {
		return compiled{}, errors.Join(errs...)
	}
	return cc, nil
}

// normArch accepts "sm_90", "sm_90a", "SM_90A" and returns the lower-case form.
func normArch(a string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(a))
	if strings.HasPrefix(s, "compute_") {
		return "", fmt.Errorf("%q is a PTX (virtual) arch; SASS archs are sm_XX, e.g. %q", a, "sm_"+s[len("compute_"):])
	}
	digits := strings.TrimPrefix(s, "sm_")
	if digits == s {
		return "", fmt.Errorf("%q: want a SASS arch such as sm_90 or sm_90a", a)
	}
	n := 0
	for n < len(digits) && digits[n] >= '0' && digits[n] <= '9' {
		n++
	}
	suffix := digits[n:]
	if n == 0 || len(suffix) > 1 || (len(suffix) == 1 && (suffix[0] < 'a' || suffix[0] > 'z')) {
		return "", fmt.Errorf("%q: want a SASS arch such as sm_90 or sm_90a", a)
	}
	return s, nil
}

// archMatches reports whether a function of arch is covered by filter: equal, or filter
// without arch's one-letter feature suffix ("sm_90" covers "sm_90a", not "sm_900").
func archMatches(filter, arch string) bool {
	arch = strings.ToLower(arch)
	if arch == filter {
		return true
	}
	if len(arch) != len(filter)+1 || !strings.HasPrefix(arch, filter) {
		return false
	}
	last := arch[len(arch)-1]
	return last >= 'a' && last <= 'z'
}

// matchesArch reports whether the rule's arch filter admits arch.
func (r compiledRule) matchesArch(arch string) bool {
	if len(r.archs) == 0 {
		return true
	}
	for _, f := range r.archs {
		if archMatches(f, arch) {
			return true
		}
	}
	return false
}
