package guard

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
	"github.com/kernel-gate/kernel-gate/internal/childenv"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// ScanPaths is the guard over files and directory trees as they are on disk. What a file
// is (a workflow, a composite action, a script...) is decided from its path in its
// repository, found by walking up from it to the directory that holds .git, whatever
// directory was named or the command runs in: `guard .github`, `guard .github/workflows`,
// `guard ci.yml` run in .github/workflows, or a link to one of them, judge the workflows
// as workflows. Findings are reported by that path. For a path outside any repository,
// the repository is taken to be the directory above its last .github (a
// .github/workflows/x.yml in the path is a workflow), or else the directory named (or the
// named file's), and findings keep the path as named; a YAML file whose path says nothing
// is read by its keys there, and so is any named on the command line.
//
// A file named or found that the guard did not read is named in a notice; one it should
// have read but could not (unreadable, not a regular file, too large, a link that does
// not resolve) fails the gate.
// Why: docs/threat-model.md, threat-model T13.
func ScanPaths(paths []string, cfg Config) (result.Gate, error) {
	type group struct {
		root    string // the repository's root, real and absolute
		display string // what reported paths are joined to: "" in a repository
		repo    bool
		starts  []treeStart
	}
	var groups []*group
	for _, p := range paths {
		t, err := locate(p)
		if err != nil {
			return result.Gate{}, exitcode.BadInput(err)
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.root == t.root && g.display == t.display })
		if i < 0 {
			groups = append(groups, &group{root: t.root, display: t.display, repo: t.repo})
			i = len(groups) - 1
		}
		groups[i].starts = append(groups[i].starts, treeStart{rel: t.rel, given: true})
	}
	var all treeOut
	for _, g := range groups {
		out, err := scanTree(g.root, g.starts, cfg, !g.repo)
		if err != nil {
			return result.Gate{}, exitcode.BadInput(err)
		}
		if g.display != "" {
			show := func(rel string) string {
				dir := strings.HasSuffix(rel, "/")
				p := filepath.ToSlash(filepath.Join(g.display, filepath.FromSlash(rel)))
				if dir {
					p += "/"
				}
				return p
			}
			for i := range out.findings {
				out.findings[i].Path = show(out.findings[i].Path)
			}
			for i := range out.warnings {
				out.warnings[i].Path = show(out.warnings[i].Path)
			}
			for i := range out.skipped {
				out.skipped[i].path = show(out.skipped[i].path)
			}
		}
		all.findings = append(all.findings, out.findings...)
		all.warnings = append(all.warnings, out.warnings...)
		all.skipped = append(all.skipped, out.skipped...)
		all.notes = append(all.notes, out.notes...)
		all.files += out.files
	}
	return evaluate(all, cfg)
}

// target is a path named on the command line: the root of its repository (real and
// absolute), its path there ('/'-separated, "." for the root itself), and what reported
// paths are joined to ("" in a repository, where they are the repository's paths).
type target struct {
	root, rel, display string
	repo               bool
}

// locate finds the repository of a named path. A directory is followed through symbolic
// links to where it is; a file keeps its name (a link named like a script is judged as
// one) in the directory it really is in.
func locate(p string) (target, error) {
	st, err := os.Stat(p)
	if err != nil {
		return target{}, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return target{}, err
	}
	var real, dir string
	if st.IsDir() {
		if real, err = filepath.EvalSymlinks(abs); err != nil {
			return target{}, err
		}
		dir = real
	} else {
		if dir, err = filepath.EvalSymlinks(filepath.Dir(abs)); err != nil {
			return target{}, err
		}
		real = filepath.Join(dir, filepath.Base(abs))
	}
	t := target{}
	t.root, t.repo = repoRoot(dir)
	if !t.repo {
		t.root = dir
		if i := strings.LastIndex(filepath.ToSlash(real)+"/", "/.github/"); i > 0 {
			t.root = filepath.FromSlash(filepath.ToSlash(real)[:i])
		}
	}
	rel, err := filepath.Rel(t.root, real)
	if err != nil {
		return target{}, err
	}
	t.rel = filepath.ToSlash(rel)
	if !t.repo {
		// Paths as named: the named path less its part below the root, else the root.
		named := filepath.ToSlash(filepath.Clean(p))
		switch {
		case t.rel == ".":
			t.display = named
		case named == t.rel:
			t.display = "."
		case strings.HasSuffix(named, "/"+t.rel):
			t.display = strings.TrimSuffix(named, "/"+t.rel)
		default:
			t.display = filepath.ToSlash(t.root)
		}
	}
	return t, nil
}

// repoRoot is the nearest directory at or above dir that holds .git (a directory, or the
// file of a worktree or submodule).
func repoRoot(dir string) (string, bool) {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		up := filepath.Dir(d)
		if up == d {
			return "", false
		}
		d = up
	}
}

// ScanDiff is the guard over what a change brings: every file the change adds or modifies
// is read whole and as it is at its head (so functions, aliases and variables defined
// elsewhere in it are known), and a finding counts when it is on an added line, or is
// reached through a function, alias or variable of a file the change touched (the
// definition may be what changed). A file that a changed line runs by its name (`bash
// ci/teardown`) is judged too, whole; a changed symbolic link is judged as the file it
// points to, and a changed executable without an extension or a shebang as a shell script.
//
// repo may be any directory of the repository (.github, a subdirectory): the change is
// read from the repository's top level, so its paths are the repository's whatever git's
// diff.relative says, and a changed file the guard does not read is named in a notice.
// Why: docs/threat-model.md, threat-model T13.
func ScanDiff(ctx context.Context, repo string, spec gitdiff.Spec, cfg Config) (result.Gate, error) {
	repo, err := gitdiff.TopLevel(ctx, repo)
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	changes, err := gitdiff.Changes(ctx, repo, spec)
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	// A file renamed, copied, retyped or made executable may now run (a YAML file moved
	// into .github/workflows) although no line of it was added: it is judged whole.
	movedList, err := gitdiff.Moved(ctx, repo, spec)
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	listed := map[string]bool{}
	for _, ch := range changes {
		listed[ch.Path] = true
	}
	moved := map[string]bool{}
	for _, p := range movedList {
		moved[p] = true
		if !listed[p] { // no line of it was added, so the content diff does not list it
			changes = append(changes, gitdiff.Change{Path: p})
			listed[p] = true
		}
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
		ref     shell.ScriptRef
		from    string
		touched bool
	}
	var refs []refFrom
	read := map[string]Kind{}
	byPath := map[string]gitdiff.Change{}
	var skips []skipped
	for _, ch := range changes {
		byPath[ch.Path] = ch
		if cfg.excluded(ch.Path) {
			skips = append(skips, skipped{path: ch.Path, why: whyExcluded, given: true})
			continue
		}
		content, err := gitdiff.Show(ctx, repo, spec.Head, ch.Path)
		if err != nil {
			return result.Gate{}, exitcode.BadInput(err)
		}
		kind := Classify(ch.Path, headOf(content))
		whole := moved[ch.Path] // every finding counts: the change makes the file run as it is
		switch modes[ch.Path] {
		case "120000":
			target, to, w, ok := diffLink(ctx, repo, spec.Head, ch.Path, string(content), kind)
			if w != nil {
				warnings = append(warnings, *w)
			}
			if !ok {
				if w == nil {
					skips = append(skips, skipped{path: ch.Path, why: whyLink, given: true})
				}
				continue
			}
			content, whole = target, true
			if kind == KindNone {
				kind = source.ShebangKind(headOf(content))
			}
			if kind != KindNone && kind != KindDoc {
				read[to] = kind // judged through the link
			}
		case "100755":
			if kind == KindNone && path.Ext(path.Base(ch.Path)) == "" && len(content) > 0 &&
				!bytes.HasPrefix(content, []byte("#!")) && bytes.IndexByte(headOf(content), 0) < 0 {
				kind = KindShell
			}
		}
		f, w, rf := scanKindRefs(ch.Path, kind, content, rs)
		switch kind {
		case KindNone:
			skips = append(skips, skipped{path: ch.Path, why: whyNotCode, given: true})
		case KindDoc:
			skips = append(skips, skipped{path: ch.Path, why: whyProse, given: true})
		default:
			read[ch.Path] = kind
		}
		for _, x := range f {
			if whole || ch.Touches(x.Line, x.EndLine) || indirect(x) && len(ch.Added) > 0 {
				findings = append(findings, x)
			}
		}
		warnings = append(warnings, w...)
		for _, r := range rf {
			refs = append(refs, refFrom{r, ch.Path, whole || ch.Touches(r.Line, r.Line)})
		}
	}
	// Files the changed files run by their names.
	seen := map[string]bool{}
	for k := 0; k < len(refs) && k < 1000; k++ {
		r := refs[k]
		if path.IsAbs(r.ref.Path) || strings.HasPrefix(r.ref.Path, "~") {
			continue
		}
		for _, cand := range refCandidates(r.from, r.ref.Path) {
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
			kind := r.ref.Kind
			if kind == KindNone {
				kind = source.ShebangKind(headOf(content))
				if kind == KindNone && !bytes.HasPrefix(content, []byte("#!")) && bytes.IndexByte(headOf(content), 0) < 0 {
					kind = KindShell
				}
			}
			if kind == KindNone || read[cand] == kind || r.ref.Kind == KindNone && read[cand] != KindNone {
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
				refs = append(refs, refFrom{x, cand, r.touched || changed && ch.Touches(x.Line, x.Line)})
			}
			break
		}
	}
	cfg.markSkipped(warnings)
	// A changed file skipped by its name but run by a changed file by its name was judged.
	skips = slices.DeleteFunc(skips, func(s skipped) bool { return read[s.path] != KindNone })
	return evaluate(treeOut{findings: findings, warnings: warnings, files: len(changes), skipped: skips}, cfg)
}

// diffLink reads the file a changed symbolic link points to (to), at the change's head,
// when it is in the repository.
func diffLink(ctx context.Context, repo, rev, link, dest string, byName Kind) (content []byte, to string, w *Warning, ok bool) {
	code := byName != KindNone && byName != KindDoc
	target := path.Clean(path.Join(path.Dir(link), dest))
	if path.IsAbs(dest) || target == ".." || strings.HasPrefix(target, "../") {
		if !code {
			return nil, "", nil, false
		}
		return nil, "", &Warning{Path: link, Unjudged: true, Message: fmt.Sprintf("a symbolic link to %q, outside the repository: the guard reads only the repository, so it cannot judge what runs through it", dest)}, false
	}
	for range 8 { // a link to a link
		switch treeModes(ctx, repo, rev, []string{target})[target] {
		case "100644", "100755":
			content, err := gitdiff.Show(ctx, repo, rev, target)
			return content, target, nil, err == nil
		case "120000":
			next, err := gitdiff.Show(ctx, repo, rev, target)
			if err != nil || path.IsAbs(string(next)) {
				return nil, "", nil, false
			}
			target = path.Clean(path.Join(path.Dir(target), string(next)))
			if strings.HasPrefix(target, "../") || target == ".." {
				return nil, "", nil, false
			}
		default:
			return nil, "", nil, false
		}
	}
	return nil, "", nil, false
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
