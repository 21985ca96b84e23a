package guard

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/childenv"
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
// definition may be what changed). A file that a changed line runs by its name (`bash
// ci/teardown`) is judged too, whole; a changed symbolic link is judged as the file it
// points to, and a changed executable without an extension or a shebang as a shell script.
func ScanDiff(ctx context.Context, repo string, spec gitdiff.Spec, cfg Config) (result.Gate, error) {
	changes, err := gitdiff.Changes(ctx, repo, spec)
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	rs := cfg.ruleSet()
	var paths []string
	for _, ch := range changes {
		paths = append(paths, ch.Path)
	}
	modes := treeModes(ctx, repo, spec.Head, paths)
	var findings []Finding
	var warnings []Warning
	type refFrom struct {
		ref     scriptRef
		from    string
		touched bool
	}
	var refs []refFrom
	read := map[string]Kind{}
	byPath := map[string]gitdiff.Change{}
	for _, ch := range changes {
		byPath[ch.Path] = ch
		if cfg.excluded(ch.Path) {
			continue
		}
		content, err := gitdiff.Show(ctx, repo, spec.Head, ch.Path)
		if err != nil {
			return result.Gate{}, exitcode.BadInput(err)
		}
		kind := Classify(ch.Path, headOf(content))
		whole := false // every finding counts: the change makes the file run as it is
		switch modes[ch.Path] {
		case "120000":
			target, w, ok := diffLink(ctx, repo, spec.Head, ch.Path, string(content), kind)
			if w != nil {
				warnings = append(warnings, *w)
			}
			if !ok {
				continue
			}
			content, whole = target, true
			if kind == KindNone {
				kind = shebangKind(headOf(content))
			}
		case "100755":
			if kind == KindNone && path.Ext(path.Base(ch.Path)) == "" && len(content) > 0 &&
				!bytes.HasPrefix(content, []byte("#!")) && bytes.IndexByte(headOf(content), 0) < 0 {
				kind = KindShell
			}
		}
		f, w, rf := scanKindRefs(ch.Path, kind, content, rs)
		if kind != KindNone && kind != KindDoc {
			read[ch.Path] = kind
		}
		for _, x := range f {
			if whole || ch.Touches(x.Line, x.EndLine) || indirect(x) && len(ch.Added) > 0 {
				findings = append(findings, x)
			}
		}
		warnings = append(warnings, w...)
		for _, r := range rf {
			refs = append(refs, refFrom{r, ch.Path, whole || ch.Touches(r.line, r.line)})
		}
	}
	// Files the changed files run by their names.
	seen := map[string]bool{}
	for k := 0; k < len(refs) && k < 1000; k++ {
		r := refs[k]
		if path.IsAbs(r.ref.path) || strings.HasPrefix(r.ref.path, "~") {
			continue
		}
		for _, cand := range []string{path.Clean(r.ref.path), path.Join(path.Dir(r.from), r.ref.path)} {
			if cand == "." || cand == ".." || strings.HasPrefix(cand, "../") || cfg.excluded(cand) {
				continue
			}
			mode := treeModes(ctx, repo, spec.Head, []string{cand})[cand]
			if mode != "100644" && mode != "100755" {
				continue
			}
			content, err := gitdiff.Show(ctx, repo, spec.Head, cand)
			if err != nil {
				continue
			}
			kind := r.ref.kind
			if kind == KindNone {
				kind = shebangKind(headOf(content))
				if kind == KindNone && !bytes.HasPrefix(content, []byte("#!")) && bytes.IndexByte(headOf(content), 0) < 0 {
					kind = KindShell
				}
			}
			if kind == KindNone || read[cand] == kind || r.ref.kind == KindNone && read[cand] != KindNone {
				break
			}
			ch, changed := byPath[cand]
			key := cand + "\x00" + string(kind) + "\x00" + strconv.FormatBool(r.touched)
			if seen[key] {
				break
			}
			seen[key] = true
			f, w, rf := scanKindRefs(cand, kind, content, rs)
			for _, x := range f {
				if r.touched || changed && (ch.Touches(x.Line, x.EndLine) || indirect(x) && len(ch.Added) > 0) {
					findings = append(findings, x)
				}
			}
			if r.touched || changed {
				warnings = append(warnings, w...)
			}
			for _, x := range rf {
				refs = append(refs, refFrom{x, cand, r.touched || changed && ch.Touches(x.line, x.line)})
			}
			break
		}
	}
	cfg.markSkipped(warnings)
	return Evaluate(findings, warnings, len(changes), cfg)
}

// diffLink reads the file a changed symbolic link points to, at the change's head, when it
// is in the repository.
func diffLink(ctx context.Context, repo, rev, link, dest string, byName Kind) ([]byte, *Warning, bool) {
	code := byName != KindNone && byName != KindDoc
	target := path.Clean(path.Join(path.Dir(link), dest))
	if path.IsAbs(dest) || target == ".." || strings.HasPrefix(target, "../") {
		if !code {
			return nil, nil, false
		}
		return nil, &Warning{Path: link, Unjudged: true, Message: fmt.Sprintf("a symbolic link to %q, outside the repository: the guard reads only the repository, so it cannot judge what runs through it", dest)}, false
	}
	for range 8 { // a link to a link
		switch treeModes(ctx, repo, rev, []string{target})[target] {
		case "100644", "100755":
			content, err := gitdiff.Show(ctx, repo, rev, target)
			return content, nil, err == nil
		case "120000":
			next, err := gitdiff.Show(ctx, repo, rev, target)
			if err != nil || path.IsAbs(string(next)) {
				return nil, nil, false
			}
			target = path.Clean(path.Join(path.Dir(target), string(next)))
			if strings.HasPrefix(target, "../") || target == ".." {
				return nil, nil, false
			}
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// treeModes asks git for the modes of paths at rev ("100644", "100755", "120000"; absent
// when the path is not a file there).
func treeModes(ctx context.Context, repo, rev string, paths []string) map[string]string {
	out := map[string]string{}
	for len(paths) > 0 {
		batch := paths[:min(len(paths), 256)]
		paths = paths[len(batch):]
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		cmd := exec.CommandContext(ctx, "git", append([]string{"ls-tree", "-z", "--full-tree", rev, "--"}, batch...)...)
		cmd.Dir = repo
		cmd.Env = childenv.Environ(nil)
		b, err := cmd.Output()
		cancel()
		if err != nil {
			continue
		}
		for _, rec := range bytes.Split(b, []byte{0}) {
			meta, p, ok := bytes.Cut(rec, []byte{'\t'})
			if !ok {
				continue
			}
			if f := strings.Fields(string(meta)); len(f) == 3 && f[1] == "blob" {
				out[string(p)] = f[0]
			}
		}
	}
	return out
}

// indirect reports a finding reached through a definition elsewhere in its file.
func indirect(f Finding) bool {
	return strings.Contains(f.Via, "function ") || strings.Contains(f.Via, "alias ") || strings.Contains(f.Via, "$")
}
