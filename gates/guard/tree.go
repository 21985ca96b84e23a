package guard

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// skipDir are directories ScanDir never enters (a file there that the repository runs by
// its name is still judged).
func skipDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", "node_modules", "vendor":
		return true
	}
	return false
}

// ScanDir scans every file under root (except .git, node_modules, vendor and the
// config's excludes) and reports paths relative to root.
func ScanDir(root string, cfg Config) ([]Finding, []Warning, error) {
	f, w, _, err := ScanTree(root, cfg)
	return f, w, err
}

// treeJob is one file of the tree to scan: where it is, the path it is reported under,
// and how to read it (KindNone: from its name and head).
type treeJob struct {
	abs, rel string
	kind     Kind
	link     string // the symbolic link it was reached through, for messages
	ref      bool   // another file runs it by its name
}

type treeResult struct {
	f       []Finding
	w       []Warning
	refs    []scriptRef
	kind    Kind // how it was read (KindNone: not read)
	scanned bool
}

// ScanTree is ScanDir that also says how many files it analysed (for Evaluate).
//
// Symbolic links are followed within the repository: a link to a file is judged as what
// its name says (once, when the file it points to is not already judged the same way); a
// link out of the repository, named like code, is a file the guard cannot judge. An
// extensionless executable text file without a shebang is a shell script (the kernel hands
// it to sh), and a file that another runs by its name (`bash ci/teardown`, `./tools/reap`,
// `source env.sh`, `python3 tools/x`) is judged as what runs it reads it.
func ScanTree(root string, cfg Config) (findings []Finding, warnings []Warning, files int, err error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("guard: %w", err)
	}
	if !info.IsDir() {
		return nil, nil, 0, fmt.Errorf("guard: %s is not a directory", root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("guard: %w", err)
	}
	realRoot, _ = filepath.Abs(realRoot)
	var jobs []treeJob
	var links []treeJob
	err = filepath.WalkDir(root, func(abs string, d fs.DirEntry, werr error) error {
		rel, rerr := filepath.Rel(root, abs)
		if rerr != nil {
			rel = abs
		}
		rel = filepath.ToSlash(rel)
		if werr != nil {
			if abs == root {
				return werr
			}
			w := Warning{Path: rel, Message: "not scanned: " + werr.Error()}
			if d == nil || !d.IsDir() {
				w.Unjudged = Classify(rel, nil) != KindNone && Classify(rel, nil) != KindDoc
			}
			warnings = append(warnings, w)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if abs != root && (skipDir(d.Name()) || cfg.excluded(rel)) {
				return fs.SkipDir
			}
			return nil
		}
		if cfg.excluded(rel) {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			links = append(links, treeJob{abs: abs, rel: rel})
		case d.Type().IsRegular():
			jobs = append(jobs, treeJob{abs: abs, rel: rel})
		}
		return nil
	})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("guard: walking %s: %w", root, err)
	}
	// Symbolic links: followed within the repository.
	regular := map[string]bool{}
	for _, j := range jobs {
		regular[j.rel] = true
	}
	for _, l := range links {
		j, w, ok := followLink(realRoot, root, l, cfg, regular)
		if w != nil {
			warnings = append(warnings, *w)
		}
		if ok {
			jobs = append(jobs, j)
		}
	}
	rs := cfg.ruleSet()
	results := scanJobs(jobs, rs)
	// Files run by their names, judged as what runs them reads them.
	done := map[string]Kind{}
	for i, j := range jobs {
		if results[i].kind != KindNone {
			done[j.rel] = results[i].kind
		}
	}
	resolved := map[string]resolvedPath{} // candidate path → where it leads, asked of the file system once
	for round := 0; round < 16; round++ {
		var more []treeJob
		seen := map[string]bool{}
		for i := range results {
			for _, r := range results[i].refs {
				j, ok := refJob(realRoot, root, jobs[i].rel, r, cfg, resolved)
				if !ok || seen[j.rel] || done[j.rel] == j.kind || done[j.rel] == KindShell && j.kind == KindNone {
					continue
				}
				if j.kind == KindNone && done[j.rel] != KindNone {
					continue // run by its shebang: already read as its shebang says
				}
				seen[j.rel] = true
				more = append(more, j)
			}
			results[i].refs = nil
		}
		if len(more) == 0 {
			break
		}
		res := scanJobs(more, rs)
		for i, j := range more {
			done[j.rel] = cmp.Or(res[i].kind, j.kind)
		}
		jobs = append(jobs, more...)
		results = append(results, res...)
	}
	for _, r := range results {
		findings = append(findings, r.f...)
		warnings = append(warnings, r.w...)
		if r.scanned {
			files++
		}
	}
	cfg.markSkipped(warnings)
	slices.SortStableFunc(findings, func(a, b Finding) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(warnings, func(a, b Warning) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	return findings, warnings, files, nil
}

// scanJobs scans files in parallel.
func scanJobs(jobs []treeJob, rs *ruleSet) []treeResult {
	results := make([]treeResult, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				results[i] = scanPath(jobs[i], rs)
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// followLink decides what a symbolic link in the tree is: a file of the repository to
// judge under the link's name (ok), nothing to judge, or a warning.
func followLink(realRoot, root string, l treeJob, cfg Config, regular map[string]bool) (treeJob, *Warning, bool) {
	byName := Classify(l.rel, nil)
	code := byName != KindNone && byName != KindDoc
	dest, _ := os.Readlink(l.abs)
	target, err := filepath.EvalSymlinks(l.abs)
	if err != nil {
		if !code {
			return treeJob{}, nil, false
		}
		return treeJob{}, &Warning{Path: l.rel, Message: fmt.Sprintf("a symbolic link to %q, which does not resolve (%v): nothing runs through it as it is", dest, unwrapPathErr(err))}, false
	}
	target, _ = filepath.Abs(target)
	trel, err := filepath.Rel(realRoot, target)
	if err != nil || trel == ".." || strings.HasPrefix(trel, ".."+string(filepath.Separator)) || filepath.IsAbs(trel) {
		tk := Classify(filepath.ToSlash(target), nil)
		if !code && (tk == KindNone || tk == KindDoc) {
			return treeJob{}, nil, false
		}
		return treeJob{}, &Warning{Path: l.rel, Unjudged: true, Message: fmt.Sprintf("a symbolic link to %q, outside the repository: the guard reads only the repository, so it cannot judge what runs through it", dest)}, false
	}
	st, err := os.Stat(target)
	if err != nil || !st.Mode().IsRegular() {
		return treeJob{}, nil, false // a directory: its files are judged where they are
	}
	trel = filepath.ToSlash(trel)
	if regular[trel] && !cfg.excluded(trel) && !underSkipDir(trel) && (byName == KindNone || byName == Classify(trel, nil)) {
		return treeJob{}, nil, false // judged as the file it points to
	}
	return treeJob{abs: target, rel: l.rel, link: dest}, nil, true
}

func unwrapPathErr(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// underSkipDir reports whether a relative path lies in a directory ScanTree never enters.
func underSkipDir(rel string) bool {
	for _, part := range strings.Split(path.Dir(rel), "/") {
		if skipDir(part) {
			return true
		}
	}
	return false
}

// refJob finds the repository file a script reference names: relative to the repository
// root (where CI steps run), then to the referring file's directory.
// resolvedPath is where a repository path leads: a regular file of the repository (ok).
type resolvedPath struct {
	real string
	ok   bool
}

func refJob(realRoot, root, from string, r scriptRef, cfg Config, cache map[string]resolvedPath) (treeJob, bool) {
	p := r.path
	if strings.HasPrefix(p, "~") || path.IsAbs(p) {
		return treeJob{}, false
	}
	for _, cand := range []string{path.Clean(p), path.Join(path.Dir(from), p)} {
		if cand == "." || cand == ".." || strings.HasPrefix(cand, "../") || cfg.excluded(cand) {
			continue
		}
		res, done := cache[cand]
		if !done {
			res = resolveInRepo(realRoot, root, cand)
			cache[cand] = res
		}
		if res.ok {
			return treeJob{abs: res.real, rel: cand, kind: r.kind, ref: true}, true
		}
	}
	return treeJob{}, false
}

// resolveInRepo follows a repository path to a regular file of the repository.
func resolveInRepo(realRoot, root, cand string) resolvedPath {
	abs := filepath.Join(root, filepath.FromSlash(cand))
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return resolvedPath{}
	}
	real, _ = filepath.Abs(real)
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return resolvedPath{} // a link out of the repository: reported where the link is
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return resolvedPath{}
	}
	return resolvedPath{real: real, ok: true}
}

// scanPath reads and scans one file, reading only its head when its name and head say
// it is not code.
func scanPath(j treeJob, rs *ruleSet) treeResult {
	kind := j.kind
	if kind == KindNone {
		kind = Classify(j.rel, nil)
		if j.ref && kind == KindDoc {
			kind = KindNone // run by its name: what it is named does not matter
		}
	}
	f, err := os.Open(j.abs)
	if err != nil {
		if kind == KindNone || kind == KindDoc {
			return treeResult{}
		}
		return treeResult{w: []Warning{{Path: j.rel, Unjudged: true, Message: "not scanned: " + err.Error()}}}
	}
	defer f.Close()
	if kind == KindNone {
		head := make([]byte, 256)
		n, _ := io.ReadFull(f, head)
		head = head[:n]
		if j.ref {
			kind = shebangKind(head)
		} else {
			kind = Classify(j.rel, head)
		}
		if kind == KindNone && (j.ref || isExecScript(f, j.rel, head)) {
			// Run by its name, or an executable without a shebang: the kernel hands it to sh.
			if bytes.HasPrefix(head, []byte("#!")) || bytes.IndexByte(head, 0) >= 0 {
				return treeResult{} // another interpreter, or a binary
			}
			kind = KindShell
		}
		if kind == KindNone || kind == KindDoc {
			return treeResult{}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return treeResult{w: []Warning{{Path: j.rel, Unjudged: true, Message: "not scanned: " + err.Error()}}}
		}
	} else if kind == KindDoc {
		return treeResult{}
	}
	content, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return treeResult{w: []Warning{{Path: j.rel, Unjudged: true, Message: "not scanned: " + err.Error()}}}
	}
	if len(content) > maxFileSize {
		return treeResult{w: []Warning{{Path: j.rel, Unjudged: true, Message: fmt.Sprintf("not scanned: larger than the %d bytes the guard reads, so it cannot judge this %s", maxFileSize, kindName(kind))}}}
	}
	fs, ws, refs := scanKindRefs(j.rel, kind, content, rs)
	if j.link != "" {
		for i := range ws {
			ws[i].Message += fmt.Sprintf(" (read through the symbolic link to %s)", j.link)
		}
	}
	return treeResult{f: fs, w: ws, refs: refs, kind: kind, scanned: bytes.IndexByte(content, 0) < 0}
}

// isExecScript reports whether a file of no known kind is an executable text file without
// an extension or a shebang: execve hands such a file to sh.
func isExecScript(f *os.File, rel string, head []byte) bool {
	if path.Ext(path.Base(rel)) != "" || len(head) == 0 || bytes.HasPrefix(head, []byte("#!")) || bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&0o111 != 0
}
