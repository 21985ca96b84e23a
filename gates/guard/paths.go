package guard

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// ScanPaths is the guard over files and directory trees as they are on disk; findings'
// paths are relative to where the command runs.
func ScanPaths(paths []string, cfg Config) (result.Gate, error) {
	var findings []Finding
	var warnings []Warning
	files := 0
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return result.Gate{}, exitcode.BadInput(err)
		}
		if st.IsDir() {
			f, w, n, err := ScanTree(p, cfg)
			if err != nil {
				return result.Gate{}, exitcode.BadInput(err)
			}
			for i := range f {
				f[i].Path = filepath.ToSlash(filepath.Join(p, f[i].Path))
			}
			for i := range w {
				w[i].Path = filepath.ToSlash(filepath.Join(p, w[i].Path))
			}
			findings, warnings, files = append(findings, f...), append(warnings, w...), files+n
			continue
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return result.Gate{}, exitcode.BadInput(err)
		}
		f, w := ScanFile(filepath.ToSlash(p), content, cfg)
		findings, warnings, files = append(findings, f...), append(warnings, w...), files+1
	}
	return Evaluate(findings, warnings, files, cfg)
}

// ScanDiff is the guard over what a change brings: every file the change adds or modifies
// is read whole and as it is at its head (so functions, aliases and variables defined
// elsewhere in it are known), and a finding counts when it is on an added line, or is
// reached through a function, alias or variable of a file the change touched (the
// definition may be what changed).
func ScanDiff(ctx context.Context, repo string, spec gitdiff.Spec, cfg Config) (result.Gate, error) {
	changes, err := gitdiff.Changes(ctx, repo, spec)
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	var findings []Finding
	var warnings []Warning
	for _, ch := range changes {
		content, err := gitdiff.Show(ctx, repo, spec.Head, ch.Path)
		if err != nil {
			return result.Gate{}, exitcode.BadInput(err)
		}
		f, w := ScanFile(ch.Path, content, cfg)
		for _, x := range f {
			if ch.Touches(x.Line, x.EndLine) || indirect(x) && len(ch.Added) > 0 {
				findings = append(findings, x)
			}
		}
		warnings = append(warnings, w...)
	}
	return Evaluate(findings, warnings, len(changes), cfg)
}

// indirect reports a finding reached through a definition elsewhere in its file.
func indirect(f Finding) bool {
	return strings.Contains(f.Via, "function ") || strings.Contains(f.Via, "alias ") || strings.Contains(f.Via, "$")
}
