package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
)

// SuggestID names the known ID closest to a mistyped one.
func SuggestID(id string, known map[string]bool) string {
	if best, ok := configpos.Closest(id, slices.Collect(maps.Keys(known))); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Set is a config's active rules, sorted by the front-end that uses them and by
// program name. It is built once per scan and only read afterwards.
type Set struct {
	ByID       map[string]*Rule   // the first pattern of each rule ID
	Families   map[string][]*Rule // lifecycle family rules by program (see Rule.family)
	Unresolved *Rule              // the vm-verb-unresolved pattern, unless disabled
	cmdByProg  map[string][]*Rule // rules whose Command is a plain name
	cmdGlob    []*Rule            // rules with a glob in Command
	WriteRules []*Rule
	CallRules  []*Rule
	KnownIDs   map[string]bool
}

// NewSet sorts the active rules; knownIDs are the rule IDs an allow comment may name
// (disabled ones too).
func NewSet(rules []Rule, knownIDs map[string]bool) *Set {
	rs := &Set{cmdByProg: map[string][]*Rule{}, Families: map[string][]*Rule{}, ByID: map[string]*Rule{}, KnownIDs: knownIDs}
	for i := range rules {
		r := &rules[i]
		if rs.ByID[r.ID] == nil {
			rs.ByID[r.ID] = r
		}
		if r.unresolved {
			rs.Unresolved = r
			continue
		}
		if r.family() {
			for _, c := range r.Command {
				rs.Families[c] = append(rs.Families[c], r)
			}
		}
		if r.IsCommandRule() {
			plain := true
			for _, c := range r.Command {
				if strings.ContainsAny(c, "*?|") {
					plain = false
				}
			}
			if plain {
				for _, c := range r.Command {
					if !slices.Contains(rs.cmdByProg[c], r) {
						rs.cmdByProg[c] = append(rs.cmdByProg[c], r)
					}
				}
			} else {
				rs.cmdGlob = append(rs.cmdGlob, r)
			}
		}
		if r.IsWriteRule() {
			rs.WriteRules = append(rs.WriteRules, r)
		}
		if r.IsCallRule() {
			rs.CallRules = append(rs.CallRules, r)
		}
	}
	return rs
}

// CommandRules are the rules that may match a program (by its base name).
func (rs *Set) CommandRules(prog string) []*Rule {
	if len(rs.cmdGlob) == 0 {
		return rs.cmdByProg[prog]
	}
	return append(slices.Clone(rs.cmdByProg[prog]), rs.cmdGlob...)
}
