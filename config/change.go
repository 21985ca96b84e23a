package config

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
)

// GuardForChange is the guard section a change (the diff spec, in the git repository
// around dir) is judged with: the one of the config as it is at the change's base, never
// the change's own. A pull request that adds a script which stops the machine could
// otherwise exclude it, skip it or disable the rule in the same change's kernel-gate.yml,
// and pass the guard it changed; its settings take effect once it is merged, as any
// reviewed code does. head is the config the command loaded (the change's); its path
// names the file to read at the base (when none was found, the default paths are looked
// for there). A config outside the repository is not part of any change: head's guard
// section is used.
//
// note is "" when the change leaves the guard section as it was, else a sentence for a
// notice that says the change's own settings were not used. A base that has no config
// gives the defaults (the strictest); one that cannot be read or parsed is an error.
// Why: docs/threat-model.md, threat-model T13.
func GuardForChange(ctx context.Context, dir string, spec gitdiff.Spec, head Config) (g guard.Config, note string, err error) {
	top, err := gitdiff.TopLevel(ctx, dir)
	if err != nil {
		return guard.Config{}, "", err
	}
	candidates := DefaultPaths
	if head.Path != "" {
		abs, err := filepath.Abs(head.Path)
		if err != nil {
			return guard.Config{}, "", err
		}
		if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(real, filepath.Base(abs))
		}
		realTop, err := filepath.EvalSymlinks(top)
		if err != nil {
			return guard.Config{}, "", err
		}
		rel, err := filepath.Rel(realTop, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return head.Guard, "", nil
		}
		candidates = []string{filepath.ToSlash(rel)}
	}
	base, err := gitdiff.BaseCommit(ctx, top, spec)
	if err != nil {
		return guard.Config{}, "", fmt.Errorf("the guard's settings at the change's base: %w", err)
	}
	var raw []byte
	name := ""
	for _, p := range candidates {
		if gitdiff.Exists(ctx, top, base, p) {
			if raw, err = gitdiff.Show(ctx, top, base, p); err != nil {
				return guard.Config{}, "", fmt.Errorf("the config at the change's base: %w", err)
			}
			name = p
			break
		}
	}
	short := abrun.ShortRev(base)
	var at Config
	if name != "" {
		if at, err = Parse(raw, short+":"+name); err != nil {
			return guard.Config{}, "", fmt.Errorf("the config at the change's base, which judges the change's guard: %w", err)
		}
	}
	if !bytes.Equal(head.guardYAML, at.guardYAML) {
		where := "has no config"
		if name != "" {
			where = "has in " + name
		}
		note = fmt.Sprintf("the change edits the guard's settings (the guard section of %s): it was judged with the settings its base %s %s; its own apply once it is merged", cmp.Or(head.Path, "the config"), short, where)
	}
	return at.Guard, note, nil
}

// sectionYAML is the section key of a config document, as YAML without positions or
// comments (nil when the document has none).
func sectionYAML(doc *yaml.Node, key string) ([]byte, error) {
	if doc.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == key {
			return yaml.Marshal(stripped(doc.Content[i+1]))
		}
	}
	return nil, nil
}

// stripped is n without comments, which do not change what the guard does.
func stripped(n *yaml.Node) *yaml.Node {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = stripped(k)
	}
	return &c
}
