package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kernel-gate/kernel-gate/action/config"
	"github.com/kernel-gate/kernel-gate/action/gitdiff"
	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

func runGuard(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var diff, repo string
	fs := newFlagSet("guard", e, &c)
	fs.StringVar(&diff, "diff", "", "judge only what the change `BASE..HEAD` (or BASE...HEAD, from the merge base) adds or modifies")
	fs.StringVar(&repo, "repo", ".", "the git repository `DIR` for --diff")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, `Usage: kernel-gate guard [flags] [PATHS...]
       kernel-gate guard [flags] --diff BASE..HEAD

Blocks commands that would stop, deallocate, reboot or reset the GPU machine, found by
parsing workflows, composite actions, shell scripts, Makefiles, Dockerfiles and Python.
Exit 1 when anything is blocked.

`)
		fs.PrintDefaults()
	}
	paths, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage, err
	}
	cfg, fmtr, err := setup(c)
	if err != nil {
		return exitUsage, err
	}
	var g result.Gate
	if diff != "" {
		if len(paths) > 0 {
			return exitUsage, usagef("--diff judges the change's files; give no PATHS with it")
		}
		spec, err := gitdiff.ParseSpec(diff)
		if err != nil {
			return exitUsage, usageError{err}
		}
		g, err = guardDiff(ctx, repo, spec, cfg)
		if err != nil {
			return exitUsage, err
		}
	} else {
		if len(paths) == 0 {
			paths = []string{"."}
		}
		g, err = guardPaths(paths, cfg)
		if err != nil {
			return exitUsage, err
		}
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

// guardPaths scans files and directory trees as they are on disk.
func guardPaths(paths []string, cfg config.Config) (result.Gate, error) {
	var findings []guard.Finding
	var warnings []guard.Warning
	files := 0
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return result.Gate{}, usageError{err}
		}
		if st.IsDir() {
			f, w, n, err := guard.ScanTree(p, cfg.Guard)
			if err != nil {
				return result.Gate{}, err
			}
			findings, warnings, files = append(findings, prefix(p, f)...), append(warnings, prefixW(p, w)...), files+n
			continue
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return result.Gate{}, usageError{err}
		}
		f, w := guard.ScanFile(filepath.ToSlash(p), content, cfg.Guard)
		findings, warnings, files = append(findings, f...), append(warnings, w...), files+1
	}
	return guard.Evaluate(findings, warnings, files, cfg.Guard)
}

// guardDiff scans every file the change adds or modifies, whole and as it is at HEAD (so
// functions, aliases and variables defined elsewhere in it are known), and keeps what the
// change brings: a finding on an added line, or one reached through a function, alias or
// variable of a file the change touched (the definition may be what changed).
func guardDiff(ctx context.Context, repo string, spec gitdiff.Spec, cfg config.Config) (result.Gate, error) {
	changes, err := gitdiff.Changes(ctx, repo, spec)
	if err != nil {
		return result.Gate{}, usageError{err}
	}
	var findings []guard.Finding
	var warnings []guard.Warning
	for _, ch := range changes {
		content, err := gitdiff.Show(ctx, repo, spec.Head, ch.Path)
		if err != nil {
			return result.Gate{}, usageError{err}
		}
		f, w := guard.ScanFile(ch.Path, content, cfg.Guard)
		for _, x := range f {
			if ch.Touches(x.Line, x.EndLine) || indirect(x) && len(ch.Added) > 0 {
				findings = append(findings, x)
			}
		}
		warnings = append(warnings, w...)
	}
	return guard.Evaluate(findings, warnings, len(changes), cfg.Guard)
}

// indirect reports a finding reached through a definition elsewhere in its file.
func indirect(f guard.Finding) bool {
	return strings.Contains(f.Via, "function ") || strings.Contains(f.Via, "alias ") || strings.Contains(f.Via, "$")
}

// prefix makes ScanTree's root-relative paths relative to where the command runs.
func prefix(root string, fs []guard.Finding) []guard.Finding {
	for i := range fs {
		fs[i].Path = filepath.ToSlash(filepath.Join(root, fs[i].Path))
	}
	return fs
}

func prefixW(root string, ws []guard.Warning) []guard.Warning {
	for i := range ws {
		ws[i].Path = filepath.ToSlash(filepath.Join(root, ws[i].Path))
	}
	return ws
}
