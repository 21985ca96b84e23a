package configpos

import (
	"cmp"
	"errors"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Section is embedded, with `yaml:",inline"`, in each gate's section of kernel-gate.yml:
//
//	type Config struct {
//		configpos.Section[compiled] `yaml:",inline"`
//		Kernels configpos.List[Rule] `yaml:"kernels"`
//	}
//
//	func (c *Config) Resolve(file string) error { return configpos.Resolve(c, file, Config.compile) }
//
// It says where the section sits (Origin) and keeps R, what the section resolved to (compiled
// patterns, parsed durations), beside the settings it was resolved from.
//
// A section is resolved once, when config.Parse loads it, and is read-only from then on: the
// gate uses the kept R, with no second check of the settings and no comparison with them. A
// copy that must differ (a setting from a flag, fewer rules) is made with Change or
// OnlyRules, which give the copy its own R; a field assigned by hand after Resolve would not
// be seen. A section built in Go, never resolved, resolves each time it is used.
//
// Section has no UnmarshalYAML of its own: an embedded one would be promoted to the gate's
// Config and decode the Section in place of the whole section.
type Section[R any] struct {
	Origin `yaml:",inline"`

	// kept is what Resolve resolved the settings to; nil until then. Every copy of the
	// section shares it, which is safe because nothing changes it after Resolve.
	kept *R
}

// section lets Resolve, Resolved, Change and Derive reach the Section that a Config embeds:
// only a type that embeds Section has this method.
func (s *Section[R]) section() *Section[R] { return s }

// sectionOf is a pointer to a gate's Config (C), which embeds Section[R].
type sectionOf[C, R any] interface {
	*C
	section() *Section[R]
}

// Resolve resolves c, a section read from file, and keeps the result for Resolved, so that
// the gate uses what was checked at load instead of compiling it again. config.Parse calls it
// for every section; the error is resolve's.
func Resolve[C, R any, P sectionOf[C, R]](c P, file string, resolve func(C) (R, error)) error {
	s := c.section()
	s.File, s.kept = file, nil
	r, err := resolve(*c)
	if err != nil {
		return err
	}
	s.kept = &r
	return nil
}

// Resolved returns what c resolves to: the form Resolve kept, else (a section built in Go)
// resolve(c).
func Resolved[C, R any, P sectionOf[C, R]](c C, resolve func(C) (R, error)) (R, error) {
	if k := P(&c).section().kept; k != nil {
		return *k, nil
	}
	return resolve(c)
}

// Change returns a copy of c changed by change and resolved again from the same file, so
// that the copy's settings and its kept form agree; the error is resolve's (a bad setting
// from a flag, say), naming the file. c is left as it was.
func Change[C, R any, P sectionOf[C, R]](c C, change func(*C), resolve func(C) (R, error)) (C, error) {
	change(&c)
	err := Resolve(P(&c), P(&c).section().File, resolve)
	return c, err
}

// Derive returns c changed by change. When c was resolved, the copy holds derive's change of
// its kept form, so that a copy with a subset of the rules stays resolved without compiling
// them again; otherwise the copy resolves when used.
func Derive[C, R any, P sectionOf[C, R]](c C, change func(*C), derive func(R) R) C {
	k := P(&c).section().kept
	change(&c)
	s := P(&c).section()
	s.kept = nil
	if k != nil {
		r := derive(*k)
		s.kept = &r
	}
	return c
}

// OnlyRules is a section's Only: the section with the rules (the list rules points at) that
// keep admits, in their order, and, when c was resolved, their compiled forms (the slice
// compiledRules points at, one per rule) cut by the same answers, so it stays resolved. keep
// is called once per rule.
func OnlyRules[C, R, Rule, X any, P sectionOf[C, R]](c C, rules func(*C) *List[Rule], compiledRules func(*R) *[]X, keep func(Rule) bool) C {
	var admitted []bool
	return Derive[C, R, P](c, func(c *C) {
		list := rules(c)
		for _, r := range *list {
			admitted = append(admitted, keep(r))
		}
		*list = Filter(*list, admitted)
	}, func(r R) R {
		compiled := compiledRules(&r)
		*compiled = Filter(*compiled, admitted)
		return r
	})
}

// Filter returns the items of s whose entry in keep is true, in order, in a new slice: for a
// section's Only, which cuts its rules and their compiled forms by the same answers.
func Filter[S ~[]E, E any](s S, keep []bool) S {
	var out S
	for i, e := range s {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out
}

// Origin says where a section of kernel-gate.yml sits: the file, and the lines of its keys.
type Origin struct {
	// File names the config file in messages; empty means DefaultFile.
	File string `yaml:"-"`
	// Lines is a named field, not an embedded one, so that its UnmarshalYAML is not promoted
	// to the section (which would then decode Lines alone); as an inline field, YAML calls it
	// with the section's own mapping, beside decoding every other field.
	Lines Lines `yaml:",inline"`
}

// FileName is File, or DefaultFile when it is empty.
func (o Origin) FileName() string { return cmp.Or(o.File, DefaultFile) }

// Where is "file:line", or the file alone when the line is unknown (0).
func (o Origin) Where(line int) string { return Where(o.File, line) }

// KeyLine is the line of one of the section's keys: "max_err"; a key of a mapping under it,
// "arch.sm_89"; or an item of a list under it, "disable[0]". It is 0 when unknown.
func (o Origin) KeyLine(key string) int { return o.Lines.byKey[key] }

// KeyWhere is Where(KeyLine(key)).
func (o Origin) KeyWhere(key string) string { return o.Where(o.KeyLine(key)) }

// Lines are the lines of a section's keys (see Origin.KeyLine).
type Lines struct {
	byKey map[string]int
}

// UnmarshalYAML records the lines. YAML calls it, as the inline field of a section, with the
// section's mapping; and again with each mapping merged into it ("<<: *defaults"), after the
// section's own keys, which keep their lines while the merged ones get none.
func (l *Lines) UnmarshalYAML(n *yaml.Node) error {
	if l.byKey != nil {
		return nil
	}
	l.byKey = KeyLines(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		switch val.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(val.Content); j += 2 {
				l.byKey[key.Value+"."+val.Content[j].Value] = val.Content[j].Line
			}
		case yaml.SequenceNode:
			for j, item := range val.Content {
				l.byKey[key.Value+"["+strconv.Itoa(j)+"]"] = item.Line
			}
		}
	}
	return nil
}

// KeyLines maps the keys of a YAML mapping to their lines (nil for any other node).
func KeyLines(n *yaml.Node) map[string]int {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	lines := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		lines[n.Content[i].Value] = n.Content[i].Line
	}
	return lines
}

// Item is embedded, with `yaml:"-"`, in the items of a List (rules, targets, thresholds): their
// line, for messages.
type Item struct {
	// Line is the item's line in the config file, set when decoded from YAML; 0 when unknown.
	Line int `yaml:"-"`
}

func (it *Item) item() *Item { return it }

// List is a list of items that keep their own line: each item of type T that embeds Item gets
// the line of its YAML node.
type List[T any] []T

// UnmarshalYAML decodes the items and sets their lines. Each item is decoded as a list of
// one, so that YAML leaves out what it leaves out of a list (a null item) and the lines stay
// with their items.
func (l *List[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		var items []T
		err := n.Decode(&items) // YAML's own error, for anything but a list
		*l = items
		return err
	}
	var items []T
	var typeErrs []string
	for _, node := range n.Content {
		var one []T
		err := (&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{node}}).Decode(&one)
		var te *yaml.TypeError
		switch {
		case errors.As(err, &te):
			typeErrs = append(typeErrs, te.Errors...)
			continue
		case err != nil:
			return err
		case len(one) == 0:
			continue
		}
		if node.Kind == yaml.AliasNode && node.Alias != nil {
			node = node.Alias
		}
		if it, ok := any(&one[0]).(interface{ item() *Item }); ok {
			it.item().Line = node.Line
		}
		items = append(items, one[0])
	}
	*l = items
	if typeErrs != nil {
		return &yaml.TypeError{Errors: typeErrs}
	}
	return nil
}
