package sanitizer

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
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
	configpos.Section[compiled] `yaml:",inline"`
	Tools                       []string                    `yaml:"tools"`
	Timeout                     string                      `yaml:"timeout"`
	Leaks                       string                      `yaml:"leaks"`
	RacecheckWarnings           string                      `yaml:"racecheck_warnings"`
	APIErrors                   string                      `yaml:"api_errors"`
	Suppress                    configpos.List[Suppression] `yaml:"suppress"`
}

// Suppression silences the records it matches; every field given must match.
type Suppression struct {
	Tool           string `yaml:"tool"`
	Kind           string `yaml:"kind"`
	Kernel         string `yaml:"kernel"`
	At             string `yaml:"at"`
	Reason         string `yaml:"reason"`
	configpos.Item `yaml:"-"`
}

// Resolve checks the section, read from file, and keeps what RunOptions and Evaluate use.
// The error names every setting that cannot work, with its line.
func (c *Config) Resolve(file string) error { return configpos.Resolve(c, file, Config.compile) }

// With returns a copy of the section changed by change (a setting from a flag) and resolved
// again; the error names a setting that cannot work. A loaded section is read-only: a field
// assigned by hand would not be seen.
func (c Config) With(change func(*Config)) (Config, error) {
	return configpos.Change(c, change, Config.compile)
}

// compiled returns the section resolved: as Resolve kept it, or resolved now.
func (c Config) compiled() (compiled, error) { return configpos.Resolved(c, Config.compile) }

// RunOptions returns the RunTools options the config sets (tools and timeout).
func (c Config) RunOptions() (RunOptions, error) {
	cc, err := c.compiled()
	if err != nil {
		return RunOptions{}, err
	}
	// The caller may change its options; the kept tools are shared by every copy of c.
	return RunOptions{Tools: slices.Clone(cc.tools), Timeout: cc.timeout}, nil
}

// compiled is a validated config.
type compiled struct {
	configpos.Origin // for messages
	tools            []string
	explicit         bool // tools were configured
	timeout          time.Duration
	leaks            string
	raceWarn         string
	apiErrors        string
	supp             []compiledSuppression
}

type compiledSuppression struct {
	Suppression
	glob kernelname.Glob
	file string
	line int
}

func (c Config) compile() (compiled, error) {
	cc := compiled{Origin: c.Origin, timeout: DefaultTimeout, tools: AllTools()}
	var errs []error
	if len(c.Tools) > 0 {
		cc.tools, cc.explicit = nil, true
		seen := map[string]bool{}
		for _, t := range c.Tools {
			if !validTool(t) {
				errs = append(errs, fmt.Errorf("%s: sanitizer.tools: unknown tool %q (want %s)", c.KeyWhere("tools"), t, strings.Join(AllTools(), ", ")))
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
			errs = append(errs, fmt.Errorf("%s: sanitizer.timeout: %q is not a duration (e.g. \"2m\", \"90s\")", c.KeyWhere("timeout"), c.Timeout))
		case d <= 0:
			errs = append(errs, fmt.Errorf("%s: sanitizer.timeout: %q must be positive", c.KeyWhere("timeout"), c.Timeout))
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
		errs = append(errs, fmt.Errorf("%s: sanitizer.%s: %q is not one of error, warning, ignore", c.KeyWhere(key), key, v))
		return def
	}
	cc.leaks = policy("leaks", c.Leaks, PolicyError)
	cc.raceWarn = policy("racecheck_warnings", c.RacecheckWarnings, PolicyWarning)
	cc.apiErrors = policy("api_errors", c.APIErrors, PolicyError)
	for i, s := range c.Suppress {
		prefix := fmt.Sprintf("%s: sanitizer.suppress[%d]", c.Where(s.Line), i)
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
