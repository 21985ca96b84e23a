package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
)

// Speedup is the speedup section: the judge's settings (speedup.Config: the margin, the
// rounds, the GPU budget, the kernel rules) and the A/B run's (abrun.Config: the harness,
// samples, timeouts, serving), side by side in one mapping.
//
//	speedup:
//	  max_slowdown: 0.02    # the judge
//	  samples: 30           # the A/B run
//
// The A/B run's settings had a section of their own, bench:, which is still read as part
// of this one (moveBench), with a notice.
type Speedup struct {
	speedup.Config `yaml:",inline"`
	// ABRun is how the A/B run gets and runs base's and head's harnesses.
	ABRun abrun.Config `yaml:",inline"`
}

// Resolve resolves both parts, read from file; the error names every bad setting of either.
func (s *Speedup) Resolve(file string) error {
	return errors.Join(s.Config.Resolve(file), s.ABRun.Resolve(file))
}

// benchKey is the old section of the A/B run's settings, now part of speedup.
const benchKey = "bench"

// moveBench moves the keys of a bench: section (doc's, the file's top level) under
// speedup:, where they now belong, and returns the notice that says so ("" when there is
// none). bench: holds only the A/B run's keys; a key set under both is an error naming both
// lines. The moved keys keep their lines, so messages point where they are written. doc's
// nodes that an anchor may share are not changed: the speedup mapping is a new node.
func moveBench(doc *yaml.Node, file string) (string, error) {
	if doc.Kind != yaml.MappingNode {
		return "", nil // a type mismatch: Decode reports it with its line
	}
	bi := keyIndex(doc, benchKey)
	if bi < 0 {
		return "", nil
	}
	benchK, bench := doc.Content[bi], deref(doc.Content[bi+1])
	notice := fmt.Sprintf("%s:%d: bench: is deprecated, move its keys under speedup: (the A/B run's settings are part of the speedup section)", file, benchK.Line)
	var moved []*yaml.Node
	switch {
	case isNull(bench):
	case bench.Kind != yaml.MappingNode:
		return "", fmt.Errorf("%s:%d: bench: want a mapping of the A/B run's settings (better: put them under speedup:)", file, bench.Line)
	default:
		fields := map[string]reflect.Type{}
		collectFields(reflect.TypeFor[abrun.Config](), fields)
		if err := checkMapping(bench, fields, benchKey, file); err != nil {
			return "", err
		}
		moved = bench.Content
	}
	sk, sv := speedupNode(doc)
	if sv != nil && !isNull(sv) && sv.Kind != yaml.MappingNode {
		return "", nil // not a mapping: Decode reports it with its line
	}
	merged := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: benchK.Line, Column: benchK.Column}
	if sv != nil && sv.Kind == yaml.MappingNode {
		merged.Line, merged.Column = sv.Line, sv.Column
		merged.Content = append(merged.Content, sv.Content...)
	}
	var both []string
	for i := 0; i+1 < len(moved); i += 2 {
		k := moved[i]
		if j := keyIndex(merged, k.Value); j >= 0 {
			both = append(both, fmt.Sprintf("%s:%d: bench.%s and %s:%d: speedup.%s are the same setting: keep the one under speedup:", file, k.Line, k.Value, file, merged.Content[j].Line, k.Value))
			continue
		}
		merged.Content = append(merged.Content, moved[i], moved[i+1])
	}
	if len(both) > 0 {
		return "", errors.New(strings.Join(both, "; "))
	}
	// bench: goes; speedup: holds what both held.
	rest := append(append([]*yaml.Node{}, doc.Content[:bi]...), doc.Content[bi+2:]...)
	if sk == nil {
		rest = append(rest, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "speedup", Line: benchK.Line, Column: benchK.Column}, merged)
	} else {
		for i := 0; i+1 < len(rest); i += 2 {
			if rest[i] == sk {
				rest[i+1] = merged
			}
		}
	}
	doc.Content = rest
	return notice, nil
}

// speedupNode is the speedup key of doc and its value (dereferenced), nil when there is none.
func speedupNode(doc *yaml.Node) (key, value *yaml.Node) {
	if i := keyIndex(doc, "speedup"); i >= 0 {
		return doc.Content[i], deref(doc.Content[i+1])
	}
	return nil, nil
}

// keyIndex is the index of key's node in mapping m's Content, -1 when m lacks it.
func keyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }
