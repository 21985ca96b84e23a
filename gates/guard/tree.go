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

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
	fileinput "github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/repopath"
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
	given    bool   // named on the command line: read as code when its shape says so, never dropped unnamed
	shape    bool   // a YAML file whose path says nothing is read as what its keys make it
}

type treeResult struct {
	f       []Finding
	w       []Warning
	refs    []shell.ScriptRef
	kind    Kind // how it was read (KindNone: not read)
	scanned bool
	skip    *skipped // not read, and why
}

// skipped is a file or directory the guard did not read, named in the report so that
// nobody takes a pass for a judgement of it.
type skipped struct {
	path  string
	why   string
	given bool
}

// Why a file was not read (the notices group the files by these).
const (
	whyNotCode  = "not a shell script, workflow, composite action, Makefile, Dockerfile or Python file (by its path, first line and mode), and run by none of them by its name"
	whyProse    = "prose (Markdown, text, docs/), never blocked"
	whyExcluded = "excluded by guard.exclude"
	whySkipDir  = "in a directory the guard does not enter (vendor, node_modules, .hg, .svn; a file there that the repository runs by its name is judged)"
	whyLink     = "a symbolic link to a directory (its files are judged where they are), or one that leads nowhere or out of the repository, named like no code"
)

// treeOut is what scanning a tree gives.
type treeOut struct {
	findings []Finding
	warnings []Warning
	files    int
	skipped  []skipped
	notes    []string // notices about how the paths named were read
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
	out, err := scanTree(root, []treeStart{{rel: "."}}, cfg, false)
	return out.findings, out.warnings, out.files, err
}

// treeStart is a file or directory of the tree to judge, relative to its root; given is
// true for one named on the command line.
type treeStart struct {
	rel   string
	given bool
}

// scanTree judges the files at and under starts, paths relative to root, the repository's
// root: they are classified, excluded and reported by their paths in the repository, and
// the files they run by their names are found from the root (where CI steps run) wherever
// those lie. shapes reads a YAML file whose path says nothing by its keys (outside any
// repository, where a path cannot say what a file is).
func scanTree(root string, starts []treeStart, cfg Config, shapes bool) (out treeOut, err error) {
	info, err := os.Stat(root)
	if err != nil {
		return out, fmt.Errorf("guard: %w", err)
	}
	if !info.IsDir() {
		return out, fmt.Errorf("guard: %s is not a directory", root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return out, fmt.Errorf("guard: %w", err)
	}
	realRoot, _ = filepath.Abs(realRoot)
	var jobs []treeJob
	var links []treeJob
	walked := map[string]bool{} // paths met in the walk
	skip := func(rel, why string, given bool) {
		out.skipped = append(out.skipped, skipped{path: rel, why: why, given: given})
	}
	// special is what is neither a directory, a regular file nor a symbolic link (a FIFO, a
	// socket, a device): git stores none, reading one could block, and `bash fifo` or
	// `source fifo` runs what comes through it, so the guard cannot judge it.
	special := func(rel string, mode fs.FileMode) {
		out.warnings = append(out.warnings, Warning{Path: rel, Unjudged: true,
			Message: fmt.Sprintf("not scanned: it is %s, not a regular file, so the guard cannot read it", fileinput.KindOf(mode))})
	}
	for _, st := range starts {
		startAbs := filepath.Join(root, filepath.FromSlash(st.rel))
		// A path named on the command line is judged, whole, though guard.exclude
		// matches it: the globs that match it do not apply beneath it (others do).
		excl := cfg
		if st.given {
			var kept, dropped []string
			for _, g := range cfg.Exclude {
				if matchPathGlob(g, st.rel) {
					dropped = append(dropped, g)
				} else {
					kept = append(kept, g)
				}
			}
			if len(dropped) > 0 {
				excl.Exclude = kept
				out.notes = append(out.notes, fmt.Sprintf("%s was named on the command line, so it is judged although guard.exclude matches it (%s)", repopath.Quote(st.rel), strings.Join(dropped, ", ")))
			}
		}
		lst, err := os.Lstat(startAbs)
		if err != nil {
			return out, fmt.Errorf("guard: %w", err)
		}
		if !lst.IsDir() {
			rel := path.Clean(st.rel)
			switch {
			case walked[rel]:
			case excl.excluded(rel):
				skip(rel, whyExcluded, st.given)
			case lst.Mode()&fs.ModeSymlink != 0:
				links = append(links, treeJob{abs: startAbs, rel: rel, given: st.given, shape: shapes || st.given})
			case lst.Mode().IsRegular():
				jobs = append(jobs, treeJob{abs: startAbs, rel: rel, given: st.given, shape: shapes || st.given})
			default:
				special(rel, lst.Mode())
			}
			walked[rel] = true
			continue
		}
		err = filepath.WalkDir(startAbs, func(abs string, d fs.DirEntry, werr error) error {
			rel, rerr := filepath.Rel(root, abs)
			if rerr != nil {
				rel = abs
			}
			rel = filepath.ToSlash(rel)
			if werr != nil {
				if abs == startAbs {
					return werr
				}
				// A directory or file that cannot be listed or read: whatever is in it
				// could run, so it is not judged safe.
				out.warnings = append(out.warnings, Warning{Path: rel, Unjudged: true, Message: "not scanned: " + unwrapPathErr(werr).Error() + ": the guard cannot read it, so it cannot judge what is in it"})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if abs == startAbs {
					return nil
				}
				if walked[rel+"/"] {
					return fs.SkipDir
				}
				walked[rel+"/"] = true
				switch {
				case excl.excluded(rel):
					skip(rel+"/", whyExcluded, false)
					return fs.SkipDir
				case skipDir(d.Name()):
					if d.Name() != ".git" {
						skip(rel+"/", whySkipDir, false)
					}
					return fs.SkipDir
				}
				return nil
			}
			if walked[rel] {
				return nil
			}
			walked[rel] = true
			if excl.excluded(rel) {
				skip(rel, whyExcluded, false)
				return nil
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				links = append(links, treeJob{abs: abs, rel: rel, shape: shapes})
			case d.Type().IsRegular():
				jobs = append(jobs, treeJob{abs: abs, rel: rel, shape: shapes})
			default:
				special(rel, d.Type())
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("guard: walking %s: %w", startAbs, err)
		}
	}
	// Symbolic links: followed within the repository.
	regular := map[string]bool{}
	for _, j := range jobs {
		regular[j.rel] = true
	}
	for _, l := range links {
		j, w, ok := followLink(realRoot, root, l, cfg, regular)
		switch {
		case w != nil:
			out.warnings = append(out.warnings, *w)
		case ok:
			jobs = append(jobs, j)
		case j.abs == "":
			skip(l.rel, whyLink, l.given)
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
	warnedRef := map[string]bool{}
	for round := 0; round < 16; round++ {
		var more []treeJob
		seen := map[string]bool{}
		for i := range results {
			for _, r := range results[i].refs {
				j, ok := refJob(realRoot, root, jobs[i].rel, r, cfg, resolved)
				if !ok && j.rel != "" && !warnedRef[j.rel] && !walked[j.rel] {
					// Run by its name, and not a regular file: nothing the guard can read.
					warnedRef[j.rel] = true
					out.warnings = append(out.warnings, Warning{Path: j.rel, Unjudged: true,
						Message: fmt.Sprintf("not scanned: %s runs it by its name (line %d), but it is %s, not a regular file, so the guard cannot read it", jobs[i].rel, r.Line, fileinput.KindOf(resolved[j.rel].special))})
				}
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
	for i, r := range results {
		out.findings = append(out.findings, r.f...)
		out.warnings = append(out.warnings, r.w...)
		if r.scanned {
			out.files++
		}
		// A file skipped by its name but run by another's is judged: not skipped.
		if r.skip != nil && done[jobs[i].rel] == KindNone {
			out.skipped = append(out.skipped, *r.skip)
		}
	}
	cfg.markSkipped(out.warnings)
	slices.SortStableFunc(out.findings, func(a, b Finding) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(out.warnings, func(a, b Warning) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	return out, nil
}

// scanJobs scans files in parallel.
func scanJobs(jobs []treeJob, rs *rules.Set) []treeResult {
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
// judge under the link's name (ok), nothing to judge (a returned job with abs set: the file
// it points to is judged as it is; abs empty: skipped, to be named), or a warning. A link
// named like code (or named on the command line) that cannot be followed to a regular
// file is one the guard cannot judge: what it leads to when the job runs is not what is
// here.
func followLink(realRoot, root string, l treeJob, cfg Config, regular map[string]bool) (treeJob, *Warning, bool) {
	byName := Classify(l.rel, nil)
	code := l.given || byName != KindNone && byName != KindDoc
	dest, _ := os.Readlink(l.abs)
	target, err := filepath.EvalSymlinks(l.abs)
	if err != nil {
		if !code {
			return treeJob{}, nil, false
		}
		return treeJob{}, &Warning{Path: l.rel, Unjudged: true, Message: fmt.Sprintf("a symbolic link to %q, which does not resolve (%v): the guard cannot read what it will lead to, so it cannot judge it", dest, unwrapPathErr(err))}, false
	}
	target, _ = filepath.Abs(target)
	trel, err := filepath.Rel(realRoot, target)
	out := err != nil || trel == ".." || strings.HasPrefix(trel, ".."+string(filepath.Separator)) || filepath.IsAbs(trel)
	tk := Classify(filepath.ToSlash(target), nil)
	if out && l.given {
		// Named on the command line: read where it leads, as asked, as what its name
		// says, else as what the path it leads to says.
		if st, err := os.Stat(target); err == nil && st.Mode().IsRegular() {
			j := treeJob{abs: target, rel: l.rel, link: dest, given: true, shape: true}
			if byName == KindNone && tk != KindDoc {
				j.kind = tk
			}
			return j, nil, true
		}
	}
	if out {
		if !code && (tk == KindNone || tk == KindDoc) {
			return treeJob{}, nil, false
		}
		return treeJob{}, &Warning{Path: l.rel, Unjudged: true, Message: fmt.Sprintf("a symbolic link to %q, outside the repository: the guard reads only the repository, so it cannot judge what runs through it", dest)}, false
	}
	st, err := os.Stat(target)
	switch {
	case err != nil:
		if !code {
			return treeJob{}, nil, false
		}
		return treeJob{}, &Warning{Path: l.rel, Unjudged: true, Message: fmt.Sprintf("a symbolic link to %q, which cannot be read (%v): the guard cannot judge it", dest, unwrapPathErr(err))}, false
	case st.IsDir():
		return treeJob{}, nil, false // a directory: its files are judged where they are
	case !st.Mode().IsRegular():
		if !code {
			return treeJob{}, nil, false
		}
		return treeJob{}, &Warning{Path: l.rel, Unjudged: true, Message: fmt.Sprintf("a symbolic link to %q, which is %s, not a regular file: the guard cannot read it, so it cannot judge it", dest, fileinput.KindOf(st.Mode()))}, false
	}
	trel = filepath.ToSlash(trel)
	if regular[trel] && !cfg.excluded(trel) && !underSkipDir(trel) && (byName == KindNone || byName == Classify(trel, nil)) {
		return treeJob{abs: target}, nil, false // judged as the file it points to
	}
	return treeJob{abs: target, rel: l.rel, link: dest, given: l.given, shape: l.shape}, nil, true
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

// refCandidates are the paths a file that from runs by the name p may be, in order: from
// the root of the project whose .github holds from (a workflow or action of a project
// nested in the repository runs its steps there), from the repository's root (where CI
// steps run), and from from's directory.
func refCandidates(from, p string) []string {
	var out []string
	if i := strings.LastIndex("/"+from, "/.github/"); i > 0 {
		out = append(out, path.Join(from[:i-1], p))
	}
	for _, c := range []string{path.Clean(p), path.Join(path.Dir(from), p)} {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// resolvedPath is where a repository path leads: a regular file of the repository (ok).
type resolvedPath struct {
	real    string
	ok      bool
	special fs.FileMode // not ok: a FIFO, socket or device of the repository (its type)
}

// refJob finds the repository file a script reference names (see refCandidates).
func refJob(realRoot, root, from string, r shell.ScriptRef, cfg Config, cache map[string]resolvedPath) (treeJob, bool) {
	p := r.Path
	if strings.HasPrefix(p, "~") || path.IsAbs(p) {
		return treeJob{}, false
	}
	for _, cand := range refCandidates(from, p) {
		if cand == "." || cand == ".." || strings.HasPrefix(cand, "../") || cfg.excluded(cand) {
			continue
		}
		res, done := cache[cand]
		if !done {
			res = resolveInRepo(realRoot, root, cand)
			cache[cand] = res
		}
		if res.ok {
			return treeJob{abs: res.real, rel: cand, kind: r.Kind, ref: true}, true
		}
		if res.special != 0 {
			return treeJob{rel: cand}, false
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
	switch {
	case err != nil || st.IsDir():
		return resolvedPath{}
	case !st.Mode().IsRegular():
		return resolvedPath{special: st.Mode().Type()}
	}
	return resolvedPath{real: real, ok: true}
}

// scanPath reads and scans one file, reading only its head when its name and head say
// it is not code. A file that cannot be opened or read is one the guard cannot judge,
// unless its name says it is prose and nothing runs it.
func scanPath(j treeJob, rs *rules.Set) treeResult {
	kind := j.kind
	if kind == KindNone {
		kind = Classify(j.rel, nil)
		if j.ref && kind == KindDoc {
			kind = KindNone // run by its name: what it is named does not matter
		}
	}
	unreadable := func(err error) treeResult {
		return treeResult{w: []Warning{{Path: j.rel, Unjudged: true, Message: "not scanned: " + unwrapPathErr(err).Error() + ": the guard cannot read it, so it cannot judge it"}}}
	}
	f, err := fileinput.Open(j.abs)
	if err != nil {
		if kind == KindDoc && !j.given {
			return treeResult{skip: &skipped{path: j.rel, why: whyProse}}
		}
		return unreadable(err)
	}
	defer f.Close()
	notRead := func(k Kind) treeResult {
		if k == KindDoc {
			return treeResult{skip: &skipped{path: j.rel, why: whyProse, given: j.given}}
		}
		return treeResult{skip: &skipped{path: j.rel, why: whyNotCode, given: j.given}}
	}
	var content []byte
	if kind == KindNone {
		head := make([]byte, 256)
		n, err := io.ReadFull(f, head)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return unreadable(err)
		}
		head = head[:n]
		if j.ref {
			kind = source.ShebangKind(head)
		} else {
			kind = Classify(j.rel, head)
		}
		if kind == KindNone && (j.ref || isExecScript(f, j.rel, head)) {
			// Run by its name, or an executable without a shebang: the kernel hands it to sh.
			if bytes.HasPrefix(head, []byte("#!")) || bytes.IndexByte(head, 0) >= 0 {
				return notRead(KindNone) // another interpreter, or a binary
			}
			kind = KindShell
		}
		if kind == KindNone && j.shape && isYAMLName(j.rel) {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return unreadable(err)
			}
			if content, err = io.ReadAll(io.LimitReader(f, maxFileSize+1)); err != nil {
				return unreadable(err)
			}
			if len(content) <= maxFileSize {
				kind = shapeKind(content)
			}
		}
		if kind == KindNone || kind == KindDoc {
			return notRead(kind)
		}
		if content == nil {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return unreadable(err)
			}
		}
	} else if kind == KindDoc {
		return notRead(kind)
	}
	if content == nil {
		if content, err = io.ReadAll(io.LimitReader(f, maxFileSize+1)); err != nil {
			return unreadable(err)
		}
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
