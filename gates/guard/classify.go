package guard

import (
	"bytes"
	"path"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Kind is how the guard reads a file.
type Kind string

const (
	KindShell      Kind = "shell"
	KindWorkflow   Kind = "workflow"
	KindAction     Kind = "action"
	KindMakefile   Kind = "makefile"
	KindDockerfile Kind = "dockerfile"
	KindPython     Kind = "python"
	// KindDoc is prose (Markdown, reStructuredText, text, docs/): never blocked.
	KindDoc Kind = "doc"
	// KindNone is a file the guard does not scan.
	KindNone Kind = ""
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
	if k := shebangKind(head); k != KindNone {
		return k
	}
	if dir == "docs" || dir == "doc" || strings.HasPrefix(dir, "docs/") || strings.HasPrefix(dir, "doc/") ||
		strings.Contains("/"+dir+"/", "/docs/") {
		return KindDoc
	}
	return KindNone
}

// shebangKind reads "#!/bin/bash", "#!/usr/bin/env -S python3 -u" and the like.
func shebangKind(head []byte) Kind {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return KindNone
	}
	line := head[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	for i := 0; i < len(fields); i++ {
		name := path.Base(fields[i])
		if name == "env" {
			continue
		}
		if strings.HasPrefix(fields[i], "-") || strings.Contains(fields[i], "=") {
			continue // env's -S, VAR=value
		}
		switch {
		case name == "sh" || name == "bash" || name == "dash" || name == "zsh" || name == "ksh" || name == "mksh" || name == "ash":
			return KindShell
		case name == "python" || strings.HasPrefix(name, "python2") || strings.HasPrefix(name, "python3") ||
			name == "pypy" || name == "pypy3":
			return KindPython
		}
		return KindNone
	}
	return KindNone
}

// shellLang names the shell of a shebang ("zsh"), or "" when there is none.
func shebangShell(head []byte) string {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line := head[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	for _, f := range strings.Fields(string(line)) {
		if n := path.Base(f); n != "env" && !strings.HasPrefix(f, "-") {
			return n
		}
	}
	return ""
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
	if j := mapGet(doc, "jobs"); j != nil && j.Kind == yaml.MappingNode {
		return KindWorkflow
	}
	if r := mapGet(doc, "runs"); r != nil && mapGet(r, "using") != nil {
		return KindAction
	}
	return KindNone
}
