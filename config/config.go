package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
	"github.com/kernel-gate/kernel-gate/registry"
)

// Config is the whole file. Each field of a section type (one that has Resolve) is resolved
// by Parse, in field order.
type Config struct {
	// CUDA is a semver constraint on the toolkit that built the kernels, e.g. ">=12.2".
	CUDA        string             `yaml:"cuda"`
	PTXAS       ptxas.Config       `yaml:"ptxas"`
	SASS        sass.Config        `yaml:"sass"`
	Sanitizer   sanitizer.Config   `yaml:"sanitizer"`
	Correctness correctness.Config `yaml:"correctness"`
	Speedup     Speedup            `yaml:"speedup"`
	Guard       guard.Config       `yaml:"guard"`
	NCU         ncu.Config         `yaml:"ncu"`
	Run         Run                `yaml:"run"`
	Baseline    Baseline           `yaml:"baseline"`

	// Path is the file it came from; empty when no file was found (defaults).
	Path string `yaml:"-"`
	// Notices are what the file should change though it loads ("kernel-gate.yml:40:
	// bench: is deprecated, ..."), for the command to say.
	Notices []string `yaml:"-"`
	// registry lists the gates; its gates beyond the built-in ones have their sections in
	// added, by gate name.
	registry registry.Registry
	added    map[string]registry.Section
	// guardYAML is the guard section as written, without positions or comments, so that
	// GuardForChange can tell a change of it from a config it did not touch.
	guardYAML []byte
}

// DefaultPaths are tried in order when no --config is given.
var DefaultPaths = []string{"kernel-gate.yml", ".github/kernel-gate.yml"}

// Find loads the explicit path when given (it must exist), else the first default path
// that exists, else returns the defaults with an empty Path. A default path that names
// anything at all, a link that leads nowhere included, is loaded (and then must be a
// readable config): only a path that names nothing falls back to the defaults, so that a
// broken link cannot turn every limit off silently.
func Find(explicit string) (Config, error) {
	if explicit != "" {
		return Load(explicit)
	}
	for _, p := range DefaultPaths {
		if _, err := os.Lstat(p); err == nil {
			return Load(p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return Config{}, fmt.Errorf("config %s: %w", p, err)
		}
	}
	return Config{}, nil
}

// Load reads and validates one config file: a regular file (or a link to one) of at most
// input.Config's size.
func Load(path string) (Config, error) {
	raw, err := input.ReadFile(context.Background(), path, input.Config)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(raw, path)
	if err != nil {
		return Config{}, err
	}
	return c, nil
}

// Parse decodes and validates config text; name labels it in errors.
func Parse(raw []byte, name string) (Config, error) {
	return ParseWith(raw, name, registry.Builtin())
}

// ParseWith is Parse with the gates of reg: the sections of its gates beyond the built-in
// ones are decoded and resolved too, in reg's order after the built-in sections.
func ParseWith(raw []byte, name string, reg registry.Registry) (Config, error) {
	root, err := oneDocument(raw, name)
	if err != nil {
		return Config{}, err
	}
	c := Config{Path: name, registry: reg}
	for _, g := range reg.Gates() {
		if g.NewSection != nil {
			if c.added == nil {
				c.added = map[string]registry.Section{}
			}
			c.added[g.Name] = g.NewSection()
		}
	}
	if root.Kind != 0 && len(root.Content) > 0 { // else an empty file: defaults
		doc := root.Content[0]
		notice, err := moveBench(doc, name)
		if err != nil {
			return Config{}, err
		}
		if notice != "" {
			c.Notices = append(c.Notices, notice)
		}
		if err := checkTop(doc, c.addedTypes(), name); err != nil {
			return Config{}, err
		}
		if err := checkScalars(doc, name); err != nil {
			return Config{}, err
		}
		if err := doc.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("%s: %w", name, cleanYAMLError(err))
		}
		if err := c.decodeAdded(doc, name); err != nil {
			return Config{}, err
		}
		if c.guardYAML, err = sectionYAML(doc, reg.SectionOf(guard.Name)); err != nil {
			return Config{}, fmt.Errorf("%s: %w", name, err)
		}
		if c.CUDA != "" {
			if _, err := semver.NewConstraint(c.CUDA); err != nil {
				return Config{}, fmt.Errorf("%s:%d: cuda: %q is not a version constraint (e.g. \">=12.2\"): %v", name, keyLine(doc, "cuda"), c.CUDA, err)
			}
		}
	}
	for _, s := range c.sections() {
		if err := s.Resolve(name); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// checkScalars refuses a key or value holding a NUL byte or longer than shellcmd.MaxBytes,
// at its line: every string of the config ends up in a command's argument, a harness's
// environment (KG_SHAPES, KG_KERNELS, env:) or a file name, none of which can carry one
// (the process would not start, and sh -c would read the line cut at a NUL), so it is
// refused where it is written, not met later as a step that could not run.
func checkScalars(n *yaml.Node, name string) error {
	if n.Kind == yaml.ScalarNode {
		switch {
		case strings.ContainsRune(n.Value, 0):
			return fmt.Errorf("%s:%d: %q holds a NUL byte: no command, argument or variable can carry one", name, n.Line, msgtext.Clip(n.Value, 80))
		case len(n.Value) > shellcmd.MaxBytes:
			return fmt.Errorf("%s:%d: a value of %d bytes: no command, argument or variable can carry more than %d", name, n.Line, len(n.Value), shellcmd.MaxBytes)
		}
	}
	for _, c := range n.Content {
		if err := checkScalars(c, name); err != nil {
			return err
		}
	}
	return nil
}

// oneDocument decodes the file's one YAML document. A second one ("---" and more) is refused
// naming its line, even an empty one: yaml.Unmarshal would use the first and drop the rest
// without a word, and a limit a user wrote after the "---" would not be applied.
// Why: docs/threat-model.md, threat-model T5.
func oneDocument(raw []byte, name string) (yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return yaml.Node{}, nil // empty, or only comments: the defaults
		}
		return yaml.Node{}, fmt.Errorf("%s: %w", name, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
		return root, nil
	case err != nil:
		return yaml.Node{}, fmt.Errorf("%s: after its first YAML document: %w", name, err)
	}
	return yaml.Node{}, fmt.Errorf("%s:%d: a second YAML document starts here (\"---\"): a kernel-gate config is one document, and no part of it is ignored; put every setting in one document and remove the \"---\"", name, next.Line)
}

// sections are c's sections in the order Parse resolves them: its fields', then those of
// the registry's added gates.
func (c *Config) sections() []registry.Section {
	out := []registry.Section{&c.PTXAS, &c.SASS, &c.Sanitizer, &c.Correctness, &c.Speedup, &c.Guard, &c.NCU, &c.Run, &c.Baseline}
	for _, g := range c.Registry().Gates() {
		if s, ok := c.added[g.Name]; ok {
			out = append(out, s)
		}
	}
	return out
}

// Registry is the gates the config was parsed with (Builtin for a Config built in Go).
func (c Config) Registry() registry.Registry { return c.registry }

// Section is the section of a gate the registry added (nil when it has none). The built-in
// gates' sections are c's fields.
func (c Config) Section(gate string) registry.Section { return c.added[gate] }

// addedTypes maps the added gates' section keys to the types they decode into.
func (c Config) addedTypes() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, g := range c.Registry().Gates() {
		if s, ok := c.added[g.Name]; ok {
			out[g.Section] = reflect.TypeOf(s)
		}
	}
	return out
}

// decodeAdded decodes the added gates' sections of doc.
func (c *Config) decodeAdded(doc *yaml.Node, file string) error {
	for _, g := range c.Registry().Gates() {
		s, ok := c.added[g.Name]
		if !ok {
			continue
		}
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == g.Section {
				if err := doc.Content[i+1].Decode(s); err != nil {
					return fmt.Errorf("%s: %w", file, cleanYAMLError(err))
				}
			}
		}
	}
	return nil
}

func cleanYAMLError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return errors.New(strings.Join(te.Errors, "; "))
	}
	return err
}

func keyLine(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return m.Line
}

// checkKeys walks the YAML tree beside the Go type it will decode into and rejects mapping
// keys the type does not have.
func checkKeys(n *yaml.Node, t reflect.Type, path, file string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return checkInteger(n, path, file)
	case reflect.Struct:
		fields := map[string]reflect.Type{}
		collectFields(t, fields)
		return checkMapping(n, fields, path, file)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkKeys(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), file); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, item := range n.Content {
			if err := checkKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), file); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTop checks the top level: Config's keys, and the sections of the gates the
// registry added (added, by key).
func checkTop(doc *yaml.Node, added map[string]reflect.Type, file string) error {
	fields := map[string]reflect.Type{}
	collectFields(reflect.TypeFor[Config](), fields)
	maps.Copy(fields, added)
	return checkMapping(doc, fields, "", file)
}

// checkMapping rejects the keys of a mapping that fields lacks, and checks each value
// against its field's type.
func checkMapping(n *yaml.Node, fields map[string]reflect.Type, path, file string) error {
	if n.Kind != yaml.MappingNode {
		return nil // a type mismatch: Decode reports it with its line
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("%s:%d: unknown key %q in %s%s", file, k.Line, k.Value, where(path), suggest(k.Value, fields))
		}
		if err := checkKeys(v, ft, join(path, k.Value), file); err != nil {
			return err
		}
	}
	return nil
}

// checkInteger refuses what YAML would decode into an integer setting but is not a whole
// number of at least 0: every integer setting is a count or a size (registers, bytes,
// rounds, samples, launches), and YAML would truncate 1.5 to 1 and take -1 as it is. A value
// that is no number at all is left to Decode, which names it.
func checkInteger(n *yaml.Node, path, file string) error {
	if n.Kind != yaml.ScalarNode {
		return nil
	}
	switch n.ShortTag() {
	case "!!float":
		return fmt.Errorf("%s:%d: %s: %s is not a whole number", file, n.Line, path, n.Value)
	case "!!int":
		var v int64
		if err := n.Decode(&v); err == nil && v < 0 {
			return fmt.Errorf("%s:%d: %s: %s is negative: want a whole number of at least 0", file, n.Line, path, n.Value)
		}
	}
	return nil
}

// collectFields maps YAML keys to field types, following ",inline" embedding.
func collectFields(t reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			collectFields(f.Type, out)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
}

func where(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// suggest names the closest valid key, or lists them all.
func suggest(bad string, fields map[string]reflect.Type) string {
	keys := slices.Sorted(maps.Keys(fields))
	if best, ok := configpos.Closest(bad, keys); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return " (valid keys: " + strings.Join(keys, ", ") + ")"
}
