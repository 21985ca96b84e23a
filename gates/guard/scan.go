package guard

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/kernel-gate/kernel-gate/gates/guard/dockerfile"
	"github.com/kernel-gate/kernel-gate/gates/guard/makefile"
	"github.com/kernel-gate/kernel-gate/gates/guard/python"
	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/workflow"
)

// maxFileSize is the largest file the guard reads.
const maxFileSize = 2 << 20

// ScanFile scans one file (path relative to the repository root) with the config's
// rules. Prose and files of no known kind give nothing; a file that is too large or
// binary, or that does not parse, gives a warning.
func ScanFile(path string, content []byte, cfg Config) ([]Finding, []Warning) {
	f, w, _ := scanFile(path, content, cfg)
	return f, w
}

// scanFile is ScanFile that also says how many bytes of text the scan went over
// (shell.File.Scanned).
func scanFile(path string, content []byte, cfg Config) ([]Finding, []Warning, int) {
	rel := filepath.ToSlash(path)
	if cfg.excluded(rel) {
		return nil, nil, 0
	}
	f, w, _, scanned := scanKindWork(rel, Classify(rel, headOf(content)), content, cfg.ruleSet())
	cfg.markSkipped(w)
	return f, w, scanned
}

func headOf(content []byte) []byte { return content[:min(len(content), 512)] }

func scanKind(p string, kind Kind, content []byte, rs *rules.Set) (findings []Finding, warnings []Warning) {
	findings, warnings, _ = scanKindRefs(p, kind, content, rs)
	return findings, warnings
}

// scanKindRefs is scanKind that also returns the files the file runs by their names.
func scanKindRefs(p string, kind Kind, content []byte, rs *rules.Set) (findings []Finding, warnings []Warning, refs []shell.ScriptRef) {
	findings, warnings, refs, _ = scanKindWork(p, kind, content, rs)
	return findings, warnings, refs
}

// scanKindWork is scanKindRefs that also returns how many bytes of text the scan went
// over (shell.File.Scanned).
func scanKindWork(p string, kind Kind, content []byte, rs *rules.Set) (findings []Finding, warnings []Warning, refs []shell.ScriptRef, scanned int) {
	switch {
	case kind == KindNone || kind == KindDoc:
		return nil, nil, nil, 0
	case len(content) > maxFileSize:
		return nil, []Warning{{Path: p, Unjudged: true, Message: fmt.Sprintf("not scanned: %d bytes is more than the %d the guard reads, so it cannot judge this %s", len(content), maxFileSize, kindName(kind))}}, nil, 0
	case bytes.IndexByte(content, 0) >= 0:
		return nil, []Warning{{Path: p, Unjudged: true, Message: fmt.Sprintf("not scanned: binary file (contains a NUL byte, first on line %d), named like a %s: the guard cannot judge it",
			fileLine(content, bytes.IndexByte(content, 0)), kindName(kind))}}, nil, 0
	}
	fc := shell.NewFile(p, content, rs, python.Read)
	defer func() {
		refs, scanned = fc.Refs, fc.Scanned
		if r := recover(); r != nil {
			findings, warnings = fc.Finish()
			warnings = append(warnings, Warning{Path: p, Unjudged: true, Message: fmt.Sprintf("internal error while scanning (%v): the rest of the file was not analysed, so the guard cannot judge it; please report it", r)})
		}
	}()
	// One case per front end ("Adding a front end" in doc.go).
	switch kind {
	case KindShell:
		shell.Scan(fc)
	case KindWorkflow, KindAction:
		workflow.Scan(fc, kind)
	case KindMakefile:
		makefile.Scan(fc)
	case KindDockerfile:
		dockerfile.Scan(fc)
	case KindPython:
		python.Scan(fc)
	}
	findings, warnings = fc.Finish()
	return findings, warnings, fc.Refs, fc.Scanned
}

// kindName names a kind of file in messages.
func kindName(k Kind) string {
	switch k {
	case KindShell:
		return "shell script"
	case KindWorkflow:
		return "workflow"
	case KindAction:
		return "composite action"
	case KindMakefile:
		return "Makefile"
	case KindDockerfile:
		return "Dockerfile"
	case KindPython:
		return "Python file"
	}
	return "file"
}

// fileLine is the 1-based line of byte offset o.
func fileLine(content []byte, o int) int {
	return bytes.Count(content[:min(max(o, 0), len(content))], []byte("\n")) + 1
}
