package pipeline

import (
	"cmp"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/kernelsrc"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
)

// sourceExts are the files a kernel may be defined in, beside a target's sources.
func sourceExts() []string {
	return []string{".cu", ".cuh", ".h", ".hpp", ".hh", ".inl", ".cpp", ".cc"}
}

// locate puts every finding where a reviewer reads it: a path under a tree the run built
// (head, or the base worktree) becomes relative to the repository's root, and a finding
// about a kernel that points at no source file of the repository (ptxas, sass, a wrong
// result in the harness's file) goes to the kernel's `__global__` line in the targets'
// sources. A replay reads the sources in Options.Dir as they are now.
func (p *pipeline) locate(gates []result.Gate) {
	root := p.headDir
	if root == "" {
		root = cmp.Or(p.o.Dir, ".")
	}
	var idx kernelsrc.Index
	for gi := range gates {
		for fi := range gates[gi].Findings {
			f := &gates[gi].Findings[fi]
			if filepath.IsAbs(f.File) {
				for _, dir := range []string{p.builtIn, p.headDir, p.baseDir} {
					if rel, ok := result.Under(dir, f.File); ok {
						f.File = rel
						break
					}
				}
			}
			if f.Kernel == "" || f.Line > 0 && isFile(root, f.File) {
				continue
			}
			if idx == nil {
				idx = p.kernelIndex(root)
			}
			if d, ok := p.definition(idx, f.Kernel); ok {
				f.File, f.Line, f.Column = d.File, d.Line, 0
			}
		}
	}
}

// definition finds a kernel by the name a tool printed or, for a harness's own label of a
// kernel (a run.targets kernels entry, such as "flash_fwd_causal"), by its target's
// functions.
func (p *pipeline) definition(idx kernelsrc.Index, kernel string) (kernelsrc.Def, bool) {
	if d, ok := idx.Find(kernelsrc.Identifier(kernelname.Parse(kernel).Short)); ok {
		return d, true
	}
	globs, _ := p.harnessGlobs(kernel)
	for _, glob := range globs {
		if id := kernelsrc.Identifier(glob); !strings.ContainsAny(id, "*?[") {
			if d, ok := idx.Find(id); ok {
				return d, true
			}
		}
	}
	return kernelsrc.Def{}, false
}

// harnessGlobs maps a harness's own label of a kernel (a run.targets kernels entry, such
// as "flash_fwd_causal") to the function globs of its target, and the target (nil: no
// target has that label).
func (p *pipeline) harnessGlobs(kernel string) ([]string, *config.Target) {
	for i, t := range p.targets {
		if slices.Contains(t.Kernels, kernel) {
			return t.Functions, &p.targets[i]
		}
	}
	return nil, nil
}

// kernelIndex scans the targets' sources and the CUDA sources beside them; for a harness
// target, the directories of the files its commands name (kernels/torch/kg_harness.py) and
// the directories above those, where the kernels it binds usually are.
func (p *pipeline) kernelIndex(root string) kernelsrc.Index {
	idx := kernelsrc.Index{}
	var dirs, files []string
	for _, t := range p.targets {
		for _, src := range t.Sources {
			dirs = append(dirs, filepath.Dir(filepath.FromSlash(src)))
		}
		dirs = append(dirs, commandDirs(root, t)...)
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := filepath.ToSlash(filepath.Join(dir, e.Name()))
			if e.Type().IsRegular() && slices.Contains(sourceExts(), filepath.Ext(e.Name())) && !slices.Contains(files, name) {
				files = append(files, name)
			}
		}
	}
	for _, name := range files {
		_ = addSource(idx, root, name) // an unreadable file only leaves its kernels unlocated
	}
	return idx
}

// addSource scans one source file of the repository at root into idx. Through input.Open:
// the build, still running in the background, may have put a FIFO where ReadDir saw a
// file, which a plain open would wait on for ever; it is refused at once (Scan bounds the
// size).
func addSource(idx kernelsrc.Index, root, name string) error {
	f, err := input.Open(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return err
	}
	defer f.Close()
	return idx.Add(f, name)
}

// isFile reports whether rel names a regular file of the repository at root.
func isFile(root, rel string) bool {
	if rel == "" || filepath.IsAbs(rel) {
		return false
	}
	st, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil && st.Mode().IsRegular()
}

// commandDirs are the directories of the repository's files that a harness target's
// commands name, and the directory above each.
func commandDirs(root string, t config.Target) []string {
	var out []string
	for _, cmd := range []string{t.Harness, t.Build, t.Sanitize} {
		for _, w := range shellcmd.Words(cmd) {
			rel := filepath.ToSlash(filepath.Clean(w))
			if !filepath.IsLocal(rel) || !isFile(root, rel) {
				continue
			}
			dir := path.Dir(rel)
			for _, d := range []string{dir, path.Dir(dir)} { // its directory and the one above
				if d = filepath.FromSlash(d); !slices.Contains(out, d) && insideRoot(root, d) {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// insideRoot reports whether a directory of the repository resolves inside it (a link
// could lead out, and nothing outside is read).
func insideRoot(root, dir string) bool {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return false
	}
	_, under := result.Under(realRoot, real)
	return under || real == realRoot
}
