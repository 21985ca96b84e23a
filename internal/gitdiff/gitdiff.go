// Package gitdiff asks git which lines a change adds or modifies, and for the files as they
// are after it, so a gate can judge only what a pull request brings while still reading
// whole files for context.
package gitdiff

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/childenv"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// Range is a run of added lines, both ends included (1-based).
type Range struct{ Start, End int }

// Change is one file as it is after the change, with the lines the change added. A new file
// has every line added.
type Change struct {
	Path  string
	Added []Range
}

// Touches reports whether any line in [start, end] was added.
func (c Change) Touches(start, end int) bool {
	if end < start {
		end = start
	}
	for _, r := range c.Added {
		if start <= r.End && end >= r.Start {
			return true
		}
	}
	return false
}

// Spec is what --diff names: "BASE..HEAD" (the two commits) or "BASE...HEAD" (from their
// merge base, as a pull request shows it). A lone "BASE" means BASE..HEAD.
type Spec struct {
	Base, Head string
	MergeBase  bool
}

// ParseSpec reads a --diff argument.
func ParseSpec(s string) (Spec, error) {
	if s == "" || strings.HasPrefix(s, "-") {
		return Spec{}, fmt.Errorf("--diff %q: want BASE..HEAD or BASE...HEAD", s)
	}
	if base, head, ok := strings.Cut(s, "..."); ok {
		return spec(base, head, true, s)
	}
	if base, head, ok := strings.Cut(s, ".."); ok {
		return spec(base, head, false, s)
	}
	return Spec{Base: s, Head: "HEAD"}, nil
}

func spec(base, head string, mb bool, s string) (Spec, error) {
	if base == "" {
		return Spec{}, fmt.Errorf("--diff %q: no base commit", s)
	}
	if head == "" {
		head = "HEAD"
	}
	return Spec{Base: base, Head: head, MergeBase: mb}, nil
}

// timeout bounds each git command.
const timeout = 2 * time.Minute

// Changes lists the files the change adds or modifies (deleted files are gone: nothing to
// judge) with their added lines.
func Changes(ctx context.Context, dir string, s Spec) ([]Change, error) {
	rng := s.Base + ".." + s.Head
	if s.MergeBase {
		rng = s.Base + "..." + s.Head
	}
	out, err := git(ctx, dir, "diff", "--no-color", "--no-ext-diff", "--unified=0", "--diff-filter=ACMRT",
		"--find-renames", "--src-prefix=a/", "--dst-prefix=b/", rng, "--")
	if err != nil {
		return nil, err
	}
	return parseDiff(bytes.NewReader(out))
}

// Show returns a file as it is at rev.
func Show(ctx context.Context, dir, rev, path string) ([]byte, error) {
	return git(ctx, dir, "show", rev+":"+path)
}

// parseDiff reads `git diff --unified=0` output: "+++ b/path" names the file, each
// "@@ -a,b +c,d @@" hunk adds lines c..c+d-1.
func parseDiff(r io.Reader) ([]Change, error) {
	var changes []Change
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "+++ "):
			name := strings.TrimPrefix(line, "+++ ")
			if name == "/dev/null" {
				continue
			}
			changes = append(changes, Change{Path: unquote(strings.TrimPrefix(unquote(name), "b/"))})
		case strings.HasPrefix(line, "@@ ") && len(changes) > 0:
			rg, err := hunk(line)
			if err != nil {
				return nil, err
			}
			if rg.End >= rg.Start {
				c := &changes[len(changes)-1]
				c.Added = append(c.Added, rg)
			}
		}
	}
	return changes, sc.Err()
}

// hunk reads the added range of "@@ -12,3 +14,5 @@ context".
func hunk(line string) (Range, error) {
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[2], "+") {
		return Range{}, fmt.Errorf("git diff: cannot read hunk header %q", line)
	}
	start, count := f[2][1:], "1"
	if s, c, ok := strings.Cut(start, ","); ok {
		start, count = s, c
	}
	a, err1 := strconv.Atoi(start)
	n, err2 := strconv.Atoi(count)
	if err1 != nil || err2 != nil || a < 0 || n < 0 {
		return Range{}, fmt.Errorf("git diff: cannot read hunk header %q", line)
	}
	return Range{Start: a, End: a + n - 1}, nil
}

// unquote undoes git's C-style quoting of unusual path names ("a/\303\251.sh").
func unquote(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = childenv.Environ(nil)
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return nil, fmt.Errorf("git %s: %s", strings.Join(args[:1], " "), msg)
		}
		return nil, fmt.Errorf("git %s: %w", strings.Join(args[:1], " "), err)
	}
	return out, nil
}
