package guard

import (
	"path"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/guard/source"
	"github.com/kernel-gate/kernel-gate/gates/guard/workflow"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Classify decides a file's kind from its path (relative, either separator) and its first
// bytes (for a shebang). Code kinds win over the docs/ directory: a script under docs/ is
// still a script; any other file there is prose.
func Classify(p string, head []byte) Kind {
	p = strings.ReplaceAll(p, "\\", "/")
	base := path.Base(p)
	lower := strings.ToLower(base)
	ext := path.Ext(lower)
	dir := path.Dir(p)
	switch {
	case ext == ".md" || ext == ".markdown" || ext == ".rst" || ext == ".txt" || ext == ".adoc" || ext == ".rdoc":
		return KindDoc
	case (ext == ".yml" || ext == ".yaml") && (dir == ".github/workflows" || strings.HasSuffix(dir, "/.github/workflows")):
		return KindWorkflow
	case lower == "action.yml" || lower == "action.yaml":
		return KindAction
	case base == "Makefile" || base == "makefile" || base == "GNUmakefile" || ext == ".mk" || ext == ".make":
		return KindMakefile
	case lower == "dockerfile" || lower == "containerfile" || ext == ".dockerfile" || ext == ".containerfile" ||
		strings.HasPrefix(lower, "dockerfile.") || strings.HasPrefix(lower, "containerfile."):
		return KindDockerfile
	case ext == ".sh" || ext == ".bash" || ext == ".zsh" || ext == ".ksh" || ext == ".dash" ||
		lower == ".bashrc" || lower == ".bash_profile" || lower == ".profile" || lower == ".zshrc" || lower == ".bash_login":
		return KindShell
	case ext == ".py" || ext == ".pyw":
		return KindPython
	}
	if k := source.ShebangKind(head); k != KindNone {
		return k
	}
	if dir == "docs" || dir == "doc" || strings.HasPrefix(dir, "docs/") || strings.HasPrefix(dir, "doc/") ||
		strings.Contains("/"+dir+"/", "/docs/") {
		return KindDoc
	}
	return KindNone
}

// matchPathGlob reports whether glob g matches the relative path p, one of its parent
// directories, or (for a glob without '/') its base name.
func matchPathGlob(g, p string) bool {
	g = strings.TrimPrefix(strings.TrimPrefix(strings.ReplaceAll(g, "\\", "/"), "./"), "/")
	g = strings.TrimSuffix(g, "/")
	p = strings.TrimPrefix(strings.ReplaceAll(p, "\\", "/"), "./")
	if g == "" {
		return false
	}
	glob := kernelname.Glob(g)
	for q := p; q != "." && q != "/" && q != ""; q = path.Dir(q) {
		if glob.Match(q) {
			return true
		}
		if !strings.Contains(g, "/") && glob.Match(path.Base(q)) {
			return true
		}
	}
	return false
}

// isYAMLName reports a .yml or .yaml file.
func isYAMLName(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".yml" || ext == ".yaml"
}

// shapeKind is what a YAML file's keys make it, for a file whose path cannot say (named on
// the command line away from .github/workflows, or outside any repository): a mapping with
// `jobs` is a workflow, one whose `runs` has `using` an action. A file that is not YAML,
// or holds neither, is KindNone.
func shapeKind(content []byte) Kind {
	var root yaml.Node
	if err := yaml.Unmarshal(content, &root); err != nil || len(root.Content) == 0 {
		return KindNone
	}
	doc := root.Content[0]
	if j := workflow.MapGet(doc, "jobs"); j != nil && j.Kind == yaml.MappingNode {
		return KindWorkflow
	}
	if r := workflow.MapGet(doc, "runs"); r != nil && workflow.MapGet(r, "using") != nil {
		return KindAction
	}
	return KindNone
}
