package guard

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/internal/configpos"
)

// Config is the guard section of kernel-gate.yml:
//
//	guard:
//	  disable: [gpu-clocks]            # rule IDs switched off
//	  exclude: ["third_party/**"]      # path globs not scanned
//	  rules:                           # patterns of your own, in the table's shape
//	    - id: site-stop-vm
//	      what: stops the lab's GPU box
//	      why: it is the only one
//	      command: [labctl]
//	      args: [vm, "stop|halt"]
//	  warn: [gpu-reset]                # rule IDs reported as warnings, not refused
//	  block: [gpu-clocks]              # rule IDs refused although they warn by default
//	  unjudged: fail                   # a file the guard cannot judge: fail (default) or warn
//	  skip: ["vendor/**"]              # path globs whose files may go unjudged (a warning)
type Config struct {
	configpos.Section[*rules.Set] `yaml:",inline"`
	// Disable switches rule IDs off (every pattern of the ID).
	Disable []string `yaml:"disable"`
	// Rules are extra patterns; a rule with the ID of a built-in one adds a pattern to it.
	Rules configpos.List[RuleConfig] `yaml:"rules"`
	// Exclude are path globs (paths in the repository, '/'-separated, whatever directory
	// the guard was pointed at) not scanned: '*' matches any run of characters ('/'
	// included), '?' one; a glob matches a path when it matches the whole path, one of its
	// parent directories, or (a glob without '/') its base name. A path named on the
	// command line is judged although a glob matches it (a notice says so), and so is a
	// file that another runs by its name; excluded files are named in a notice.
	Exclude []string `yaml:"exclude"`
	// Warn are rule IDs whose findings are warnings: reported, not refused. The rules in
	// DefaultWarn (GPU clock and power-limit changes) warn unless Block names them.
	Warn []string `yaml:"warn"`
	// Block are rule IDs that are refused even though they warn by default.
	Block []string `yaml:"block"`
	// Unjudged is what a file the guard could not judge does (too large, binary, nested
	// beyond its limits, a link out of the repository, a step in a shell it does not read):
	// "fail" (the default: it fails the gate, naming the file and why) or "warn".
	Unjudged string `yaml:"unjudged"`
	// Skip are path globs (as Exclude) of files that may go unjudged, such as vendored
	// trees: they are scanned and their findings count, but a file there that the guard
	// cannot judge is a warning.
	Skip []string `yaml:"skip"`
}

// DefaultWarn are the rule IDs whose findings are warnings unless the config's block
// names them: they change how the GPU runs, not whether the machine is there.
var DefaultWarn = []string{"gpu-clocks"}

// warns reports whether findings of rule id are warnings rather than refusals.
func (c Config) warns(id string) bool {
	if slices.Contains(c.Block, id) {
		return false
	}
	return slices.Contains(c.Warn, id) || slices.Contains(DefaultWarn, id)
}

// skipped reports whether a path (relative, '/'-separated) may go unjudged.
func (c Config) skipped(rel string) bool {
	for _, g := range c.Skip {
		if matchPathGlob(g, rel) {
			return true
		}
	}
	return false
}

// skipWhere is where the config's skip glob that matches rel is, for messages.
func (c Config) skipWhere(rel string) string {
	for i, g := range c.Skip {
		if matchPathGlob(g, rel) {
			return c.Where(cmp.Or(c.KeyLine("skip["+strconv.Itoa(i)+"]"), c.KeyLine("skip")))
		}
	}
	return c.FileName()
}

// RuleConfig is a rule written in the config: the Rule fields, in YAML.
type RuleConfig struct {
	ID             string `yaml:"id"`
	What           string `yaml:"what"`
	Why            string `yaml:"why"`
	Command        Words  `yaml:"command"`
	Args           Words  `yaml:"args"`
	AnyFlag        Words  `yaml:"any_flag"`
	NoFlag         Words  `yaml:"no_flag"`
	ArgContains    Words  `yaml:"arg_contains"`
	ValueFlags     Words  `yaml:"value_flags"`
	Help           Words  `yaml:"help"`
	WriteTo        Words  `yaml:"write_to"`
	Call           Words  `yaml:"call"`
	Kwargs         Words  `yaml:"kwargs"`
	URL            Words  `yaml:"url"`
	Method         Words  `yaml:"method"`
	configpos.Item `yaml:"-"`
}

// Words is a list of strings that may also be written as one string.
type Words []string

// UnmarshalYAML accepts a scalar ("gcloud") or a sequence.
func (w *Words) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*w = Words{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*w = list
	return nil
}

var ruleIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// Resolve checks the section, read from file, and keeps the rule set every scan uses. The
// error names the first setting that cannot work, with its line.
func (c *Config) Resolve(file string) error {
	return configpos.Resolve(c, file, func(c Config) (*rules.Set, error) {
		if err := c.check(); err != nil {
			return nil, err
		}
		return rules.NewSet(c.rules(), c.knownIDs()), nil
	})
}

// ruleSet returns the rule set the scans use: as Resolve kept it, or built now. A scan has
// never refused a config built in Go, so this one is built unchecked.
func (c Config) ruleSet() *rules.Set {
	rs, _ := configpos.Resolved(c, func(c Config) (*rules.Set, error) { return rules.NewSet(c.rules(), c.knownIDs()), nil })
	return rs
}

// check reports the first setting that cannot work, naming its line in the config file.
func (c Config) check() error {
	known := map[string]bool{}
	for _, r := range DefaultRules() {
		known[r.ID] = true
	}
	for i, r := range c.Rules {
		at := c.Where(cmp.Or(r.Line, c.KeyLine("rules["+strconv.Itoa(i)+"]")))
		switch {
		case !ruleIDPattern.MatchString(r.ID):
			return fmt.Errorf("%s: guard.rules[%d]: id %q must be lower-case letters, digits, '.', '_' or '-'", at, i, r.ID)
		case len(r.Command) == 0 && len(r.WriteTo) == 0 && len(r.Call) == 0:
			return fmt.Errorf("%s: guard.rules[%d] (%s): set command (a program), write_to (a file) or call (a Python call)", at, i, r.ID)
		}
		for _, list := range [][]string{r.Command, r.Args, r.WriteTo, r.Call} {
			for _, w := range list {
				if strings.TrimSpace(w) == "" || strings.Contains(w, "||") || strings.HasPrefix(w, "|") || strings.HasSuffix(w, "|") {
					return fmt.Errorf("%s: guard.rules[%d] (%s): empty word or alternative in %q", at, i, r.ID, w)
				}
			}
		}
		for _, f := range slices.Concat(r.AnyFlag, r.NoFlag, r.ValueFlags) {
			if !strings.HasPrefix(f, "-") {
				return fmt.Errorf("%s: guard.rules[%d] (%s): flag %q must start with '-'", at, i, r.ID, f)
			}
		}
		known[r.ID] = true
	}
	for i, id := range c.Disable {
		if !known[id] {
			return fmt.Errorf("%s: guard.disable: unknown rule ID %q%s", c.Where(cmp.Or(c.KeyLine("disable["+strconv.Itoa(i)+"]"), c.KeyLine("disable"))), id, rules.SuggestID(id, known))
		}
	}
	for _, key := range []string{"warn", "block"} {
		list := c.Warn
		if key == "block" {
			list = c.Block
		}
		for i, id := range list {
			if !known[id] {
				return fmt.Errorf("%s: guard.%s: unknown rule ID %q%s", c.Where(cmp.Or(c.KeyLine(key+"["+strconv.Itoa(i)+"]"), c.KeyLine(key))), key, id, rules.SuggestID(id, known))
			}
		}
	}
	for i, id := range c.Block {
		if slices.Contains(c.Warn, id) {
			return fmt.Errorf("%s: guard.block[%d]: %s is also in guard.warn; name it in one of them", c.Where(cmp.Or(c.KeyLine("block["+strconv.Itoa(i)+"]"), c.KeyLine("block"))), i, id)
		}
	}
	switch c.Unjudged {
	case "", "fail", "warn":
	default:
		return fmt.Errorf("%s: guard.unjudged: %q must be fail (the default: a file the guard cannot judge fails the gate) or warn", c.KeyWhere("unjudged"), c.Unjudged)
	}
	for _, key := range []string{"exclude", "skip"} {
		list := c.Exclude
		if key == "skip" {
			list = c.Skip
		}
		for i, g := range list {
			if strings.TrimSpace(g) == "" {
				return fmt.Errorf("%s: guard.%s[%d]: empty path glob", c.Where(cmp.Or(c.KeyLine(key+"["+strconv.Itoa(i)+"]"), c.KeyLine(key))), key, i)
			}
		}
	}
	return nil
}

// rules returns the active patterns: the table without the disabled IDs, plus the
// config's own.
func (c Config) rules() []Rule {
	off := map[string]bool{}
	for _, id := range c.Disable {
		off[id] = true
	}
	var out []Rule
	for _, r := range DefaultRules() {
		if !off[r.ID] {
			out = append(out, r)
		}
	}
	for _, rc := range c.Rules {
		if off[rc.ID] {
			continue
		}
		out = append(out, Rule{
			ID: rc.ID, What: cmp.Or(rc.What, "matches rule "+rc.ID+" of "+c.FileName()),
			Why:     cmp.Or(rc.Why, "refused by "+c.Where(rc.Line)),
			Command: rc.Command, Args: rc.Args, AnyFlag: rc.AnyFlag, NoFlag: rc.NoFlag, ArgContains: rc.ArgContains,
			ValueFlags: rc.ValueFlags, Help: rc.Help, WriteTo: rc.WriteTo, Call: rc.Call, Kwargs: rc.Kwargs, URL: rc.URL, Method: rc.Method,
		})
	}
	return out
}

// knownIDs are the rule IDs an allow comment may name.
func (c Config) knownIDs() map[string]bool {
	ids := map[string]bool{}
	for _, r := range DefaultRules() {
		ids[r.ID] = true
	}
	for _, r := range c.Rules {
		ids[r.ID] = true
	}
	return ids
}

// excluded reports whether a path (relative, '/'-separated) matches an exclude glob.
func (c Config) excluded(rel string) bool {
	for _, g := range c.Exclude {
		if matchPathGlob(g, rel) {
			return true
		}
	}
	return false
}

// markSkipped marks the unjudged warnings about paths that guard.skip lets go unjudged.
func (c Config) markSkipped(ws []Warning) {
	for i := range ws {
		if ws[i].Unjudged && !ws[i].Skipped && c.skipped(ws[i].Path) {
			ws[i].Skipped = true
			ws[i].Message += " (" + c.skipWhere(ws[i].Path) + ": guard.skip lets it go unjudged)"
		}
	}
}
