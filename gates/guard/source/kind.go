package source

import (
	"bytes"
	"path"
	"strings"
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

// ShebangKind reads "#!/bin/bash", "#!/usr/bin/env -S python3 -u" and the like.
func ShebangKind(head []byte) Kind {
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
func ShebangShell(head []byte) string {
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
