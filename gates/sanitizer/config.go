package sanitizer

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
)

// Policy words for leaks, racecheck warnings and API errors.
const (
	PolicyError   = "error"
	PolicyWarning = "warning"
	PolicyIgnore  = "ignore"
)

// Config is the sanitizer section of kernel-gate.yml:
//
//	sanitizer:
//	  tools: [memcheck, racecheck, initcheck, synccheck]   # default all four
//	  timeout: 2m                  # per tool run (Go duration)
//	  leaks: error                 # error | warning | ignore
//	  racecheck_warnings: warning  # error | warning | ignore
//	  api_errors: error            # error | warning | ignore
//	  suppress:
//	    - tool: racecheck          # each field optional, at least one of them given
//	      kind: race-war           # a Kind; "race" covers race-raw, race-war and race-waw
//	      kernel: "softmax<*>"     # kernelname glob
//	      at: softmax.cu:88        # "file:line" or "file"; a path suffix matches
//	      reason: "warp-synchronous reduction, reviewed in #42"   # required
type Config struct {
	Tools             []string      `yaml:"tools"`
	Timeout           string        `yaml:"timeout"`
	Leaks             string        `yaml:"leaks"`
	RacecheckWarnings string        `yaml:"racecheck_warnings"`
	APIErrors         string        `yaml:"api_errors"`
	Suppress          []Suppression `yaml:"suppress"`
	// File names the config file in messages; empty means "kernel-gate.yml".
	File string `yaml:"-"`

	// lines of the keys, when decoded from YAML.
	lines map[string]int
}

// Suppression silences the records it matches; every field given must match.
type Suppression struct {
	Tool   string `yaml:"tool"`
	Kind   string `yaml:"kind"`
	Kernel string `yaml:"kernel"`
	At     string `yaml:"at"`
	Reason string `yaml:"reason"`
	// Line is the suppression's line in the config file, set when decoded from YAML.
	Line int `yaml:"-"`
}

// UnmarshalYAML keeps the lines of the keys for messages.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	type plain Config
	if err := n.Decode((*plain)(c)); err != nil {
		return err
	}
	c.lines = configpos.KeyLines(n)
	return nil
}

// UnmarshalYAML keeps the suppression's line.
func (s *Suppression) UnmarshalYAML(n *yaml.Node) error {
	type plain Suppression
	if err := n.Decode((*plain)(s)); err != nil {
		return err
	}
	s.Line = n.Line
	return nil
}

func (c Config) file() string { return cmp.Or(c.File, configpos.DefaultFile) }

func (c Config) where(line int) string { return configpos.Where(c.File, line) }

func (c Config) keyWhere(key string) string { return c.where(c.lines[key]) }

// Validate reports every setting that cannot work; each error names its line.
func (c Config) Validate() error {
	_, err := c.compile()
	return err
}

// RunOptions returns the RunTools options the config sets (tools and timeout).
func (c Config) RunOptions() (RunOptions, error) {
	cc, err := c.compile()
	if err != nil {
		return RunOptions{}, err
	}
	return RunOptions{Tools: cc.tools, Timeout: cc.timeout}, nil
}

// compiled is a validated config.
type compiled struct {
	cfg       Config
	tools     []string
	explicit  bool // tools were configured
	timeout   time.Duration
	leaks     string
	raceWarn  string
	apiErrors string
	supp      []compiledSuppression
}

type compiledSuppression struct {
	Suppression
	glob kernelname.Glob
	file string
	line int
}

func (c Config) compile() (compiled, error) {
	cc := compiled{cfg: c, timeout: DefaultTimeout, tools: AllTools()}
	var errs []error
	if len(c.Tools) > 0 {
		cc.tools, cc.explicit = nil, true
		seen := map[string]bool{}
		for _, t := range c.Tools {
			if !validTool(t) {
				errs = append(errs, fmt.Errorf("%s: sanitizer.tools: unknown tool %q (want %s)", c.keyWhere("tools"), t, strings.Join(AllTools(), ", ")))
				continue
			}
			if !seen[t] {
				seen[t] = true
				cc.tools = append(cc.tools, t)
			}
		}
	}
	if strings.TrimSpace(c.Timeout) != "" {
		d, err := time.ParseDuration(strings.TrimSpace(c.Timeout))
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: sanitizer.timeout: %q is not a duration (e.g. \"2m\", \"90s\")", c.keyWhere("timeout"), c.Timeout))
		case d <= 0:
			errs = append(errs, fmt.Errorf("%s: sanitizer.timeout: %q must be positive", c.keyWhere("timeout"), c.Timeout))
		default:
			cc.timeout = d
		}
	}
	policy := func(key, v, def string) string {
		switch v = strings.TrimSpace(v); v {
		case "":
			return def
		case PolicyError, PolicyWarning, PolicyIgnore:
			return v
		}
		errs = append(errs, fmt.Errorf("%s: sanitizer.%s: %q is not one of error, warning, ignore", c.keyWhere(key), key, v))
		return def
	}
	cc.leaks = policy("leaks", c.Leaks, PolicyError)
	cc.raceWarn = policy("racecheck_warnings", c.RacecheckWarnings, PolicyWarning)
	cc.apiErrors = policy("api_errors", c.APIErrors, PolicyError)
	for i, s := range c.Suppress {
		prefix := fmt.Sprintf("%s: sanitizer.suppress[%d]", c.where(s.Line), i)
		cs := compiledSuppression{Suppression: s, glob: kernelname.Glob(s.Kernel)}
		if strings.TrimSpace(s.Reason) == "" {
			errs = append(errs, fmt.Errorf("%s: reason is required: say why these errors may stay", prefix))
		}
		if s.Tool == "" && s.Kind == "" && s.Kernel == "" && s.At == "" {
			errs = append(errs, fmt.Errorf("%s: matches every record; give at least one of tool, kind, kernel, at", prefix))
		}
		if s.Tool != "" && !validTool(s.Tool) {
			errs = append(errs, fmt.Errorf("%s: tool %q is not one of %s", prefix, s.Tool, strings.Join(AllTools(), ", ")))
		}
		if s.Kind != "" && !validKind(s.Kind) {
			errs = append(errs, fmt.Errorf("%s: kind %q is not one of %s", prefix, s.Kind, strings.Join(Kinds(), ", ")))
		}
		if s.Kernel != "" && !cs.glob.Valid() {
			errs = append(errs, fmt.Errorf("%s: kernel must be a non-empty glob", prefix))
		}
		if at := strings.TrimSpace(s.At); at != "" {
			cs.file = at
			if i := strings.LastIndexByte(at, ':'); i > 0 {
				if n, err := strconv.Atoi(at[i+1:]); err == nil {
					if n <= 0 {
						errs = append(errs, fmt.Errorf("%s: at %q: the line must be positive", prefix, s.At))
					}
					cs.file, cs.line = at[:i], n
				}
			}
		}
		cc.supp = append(cc.supp, cs)
	}
	if len(errs) > 0 {
		return compiled{}, errors.Join(errs...)
	}
	return cc, nil
}

// matches reports whether the suppression covers r.
func (s compiledSuppression) matches(r Record) bool {
	if s.Tool != "" && s.Tool != r.Tool {
		return false
	}
	if s.Kind != "" && s.Kind != r.Kind {
		if s.Kind != KindRace || !strings.HasPrefix(r.Kind, "race-") {
			return false
		}
	}
	if s.Kernel != "" && (r.Kernel == "" || !name(r.Kernel).Matches(s.glob)) {
		return false
	}
	if s.file != "" {
		if !sameFile(r.File, s.file) {
			return false
		}
		if s.line > 0 && r.Line != s.line {
			return false
		}
	}
	return true
}

// sameFile matches a record's file (a full path from the XML, a base name from the text)
// against a configured one: equal, or one ends with the other at a path boundary.
func sameFile(have, want string) bool {
	have, want = strings.ReplaceAll(have, "\\", "/"), strings.TrimPrefix(strings.ReplaceAll(want, "\\", "/"), "./")
	if have == "" || want == "" {
		return false
	}
	if have == want {
		return true
	}
	return strings.HasSuffix(have, "/"+want) || strings.HasSuffix(want, "/"+have)
}
