// Package pathglob matches and expands '/'-separated path globs in which a segment "**"
// stands for any number of directories (none included), and every other segment is a
// path.Match pattern of one name: "build/**/*.so" matches build/a.so and build/x/y/a.so,
// "build/*.so" only the first. It is what run.targets[].binaries names files with.
//
// Expand walks one directory tree and never leaves it: directories are not followed
// through links, and a matching link is taken only when it resolves to a regular file
// inside the tree.
package pathglob

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of one glob and one walk: a glob is a few segments, and a walk that would visit a
// whole disk is refused, not run to the end.
const (
	maxSegments   = 64
	maxDoubleStar = 8
	// MaxVisited is the most directory entries one Expand looks at.
	MaxVisited = 200_000
	// MaxMatches is the most files one Expand returns.
	MaxMatches = 1000
)

// Check reports what is wrong with a glob: it must be relative, '/'-separated, without
// empty, "." or ".." segments (a leading "./" is allowed), "**" only as a whole segment, and
// each segment a valid path.Match pattern.
func Check(glob string) error {
	_, err := split(glob)
	return err
}

func split(glob string) ([]string, error) {
	g := strings.TrimPrefix(glob, "./")
	switch {
	case strings.TrimSpace(g) == "":
		return nil, errors.New("empty glob")
	case strings.HasPrefix(g, "/"):
		return nil, fmt.Errorf("%q is absolute: a glob is relative to the directory it is expanded in", glob)
	case strings.Contains(g, "\\"):
		return nil, fmt.Errorf("%q has a backslash: separate directories with '/' (a backslash escapes nothing here)", glob)
	}
	segs := strings.Split(g, "/")
	if len(segs) > maxSegments {
		return nil, fmt.Errorf("%q has more than %d segments", glob, maxSegments)
	}
	stars := 0
	for _, s := range segs {
		switch {
		case s == "" || s == "." || s == "..":
			return nil, fmt.Errorf("%q has an empty, \".\" or \"..\" segment: it must stay inside the directory it is expanded in", glob)
		case s == "**":
			stars++
		case strings.Contains(s, "**"):
			return nil, fmt.Errorf("%q: \"**\" must be a whole segment (dir/**/name)", glob)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("%q: segment %q: %v", glob, s, err)
		}
	}
	if stars > maxDoubleStar {
		return nil, fmt.Errorf("%q has more than %d \"**\" segments", glob, maxDoubleStar)
	}
	return segs, nil
}

// Match reports whether rel, a '/'-separated relative path, matches glob. A glob Check
// refuses matches nothing.
func Match(glob, rel string) bool {
	segs, err := split(glob)
	if err != nil {
		return false
	}
	return matchSegments(segs, strings.Split(strings.TrimPrefix(rel, "./"), "/"))
}

// matchSegments matches glob segments against path segments: dynamic programming over both,
// so "**" never backtracks exponentially.
func matchSegments(g, p []string) bool {
	// ok[j] says whether g[i:] matches p[j:], for the current i, from the end backwards.
	ok := make([]bool, len(p)+1)
	ok[len(p)] = true
	for i := len(g) - 1; i >= 0; i-- {
		next := make([]bool, len(p)+1)
		for j := len(p); j >= 0; j-- {
			switch {
			case g[i] == "**":
				// None of p[j:] (ok[j]), or p[j] and then still "**" (next[j+1]).
				next[j] = ok[j] || j < len(p) && next[j+1]
			case j < len(p):
				m, _ := path.Match(g[i], p[j])
				next[j] = m && ok[j+1]
			}
		}
		ok = next
	}
	return ok[0]
}

// literal reports whether a segment matches only itself.
func literal(seg string) bool { return !strings.ContainsAny(seg, "*?[\\") }

// Expand returns the files under root whose paths relative to root match glob, sorted,
// '/'-separated. Only regular files match, and links that resolve to a regular file inside
// root; a matching link that leads out of root, or to something else, is an error naming
// it. Directories named .git are not entered. The walk is bounded (MaxVisited, MaxMatches).
func Expand(root, glob string) ([]string, error) {
	segs, err := split(glob)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	// The walk starts below the glob's literal directories: "build/lib/*.so" walks build/lib.
	fixed := 0
	for fixed < len(segs)-1 && literal(segs[fixed]) {
		fixed++
	}
	start := filepath.Join(real, filepath.FromSlash(path.Join(segs[:fixed]...)))
	maxDepth := -1 // unbounded below "**"
	if !slices.Contains(segs, "**") {
		maxDepth = len(segs) - fixed
	}
	var out []string
	visited := 0
	err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // nothing there: no match
			}
			return err
		}
		if visited++; visited > MaxVisited {
			return fmt.Errorf("more than %d entries under %s: name the files more narrowly than %q", MaxVisited, start, glob)
		}
		rel, err := filepath.Rel(real, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p == start {
				return nil
			}
			below, err := filepath.Rel(start, p)
			if err != nil {
				return err
			}
			// A directory as deep as the glob's last segment holds no match.
			depth := strings.Count(filepath.ToSlash(below), "/") + 1
			if d.Name() == ".git" || maxDepth >= 0 && depth >= maxDepth {
				return fs.SkipDir
			}
			return nil
		}
		if !matchSegments(segs, strings.Split(rel, "/")) {
			return nil
		}
		switch t := d.Type(); {
		case t.IsRegular():
		case t&fs.ModeSymlink != 0:
			if err := insideRegular(real, p); err != nil {
				return fmt.Errorf("%s matches %q but %v", rel, glob, err)
			}
		default:
			return nil // a FIFO, socket or device is no binary
		}
		if len(out) == MaxMatches {
			return fmt.Errorf("%q matches more than %d files: name the binaries more narrowly", glob, MaxMatches)
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// insideRegular checks that a link resolves to a regular file inside root.
func insideRegular(root, link string) error {
	target, err := filepath.EvalSymlinks(link)
	if err != nil {
		return errors.New("is a link that leads nowhere")
	}
	rel, err := filepath.Rel(root, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return errors.New("is a link that leads out of the directory it was looked for in")
	}
	st, err := os.Stat(target)
	if err != nil || !st.Mode().IsRegular() {
		return errors.New("is a link to something other than a regular file")
	}
	return nil
}
