package procgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// OpenOutDir opens the directory of file, a path a workflow's input names (the action's
// results-file, the summary and SARIF log beside it, a single command's --out), to write
// the file in it; base is the file's name there. file is relative to the working
// directory, or absolute.
//
// A file in the workspace ws (GITHUB_WORKSPACE: the pull request's checkout, which may have
// committed a link anywhere on the path, `out` -> ~/.ssh) is written through an os.Root of
// the workspace: a directory on its path that leads out of the workspace through a link is
// refused, never made or written in, and so is a link or a FIFO of the file's own name. A
// relative path that climbs out of the workspace is refused: an input the workflow wrote
// as relative means a file of the workspace. An absolute path outside it
// (${{ runner.temp }}/kg.json) is the workflow's own, taken as it is, only its final name
// kept from a link. Every refusal is exitcode.BadInput, naming the file.
// Why: docs/threat-model.md, threat-model T15.
func OpenOutDir(ws, file string) (dir *os.Root, base string, err error) {
	rel, inside, err := inWorkspace(ws, file)
	if err != nil {
		return nil, "", err
	}
	if !inside {
		if !filepath.IsAbs(file) {
			return nil, "", exitcode.BadInputf("%s: a relative path names a file of the workspace (%s), and this one leads out of it: give an absolute path for a file elsewhere (such as under ${{ runner.temp }})", file, ws)
		}
		d := filepath.Dir(file)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, "", exitcode.CouldNotRun(err)
		}
		if dir, err = os.OpenRoot(d); err != nil {
			return nil, "", exitcode.CouldNotRun(err)
		}
		return dir, filepath.Base(file), nil
	}
	root, err := os.OpenRoot(rel.ws)
	if err != nil {
		return nil, "", exitcode.CouldNotRunf("the workspace: %w", err)
	}
	defer root.Close()
	d, base := filepath.Split(rel.name)
	if d = filepath.Clean(d); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil, "", exitcode.CouldNotRunf("%s: %w", file, err)
			}
			return nil, "", exitcode.BadInputf("%s: its directory %s leads out of the workspace through a link, or is not a directory (%v): refusing to write there", file, d, err)
		}
	}
	if dir, err = root.OpenRoot(d); err != nil {
		return nil, "", exitcode.BadInputf("%s: its directory %s leads out of the workspace through a link (%v): refusing to write there", file, d, err)
	}
	return dir, base, nil
}

// wsPath is a file's path inside a workspace: the workspace's own path in the form the
// file's path starts with, and the file relative to it.
type wsPath struct{ ws, name string }

// inWorkspace says whether file lies in the workspace ws, lexically, once a relative file is
// joined to the working directory. The workspace and the working directory are the
// runner's (not the pull request's) and are compared as given and resolved, so that a link
// in the runner's own path to them does not move a file out.
func inWorkspace(ws, file string) (wsPath, bool, error) {
	if ws == "" {
		ws = "."
	}
	wsAbs, err := filepath.Abs(ws)
	if err != nil {
		return wsPath{}, false, exitcode.CouldNotRunf("the workspace %s: %w", ws, err)
	}
	cands := []string{wsAbs}
	if real, err := filepath.EvalSymlinks(wsAbs); err == nil && real != wsAbs {
		cands = append(cands, real)
	}
	paths := []string{filepath.Clean(file)}
	if !filepath.IsAbs(file) {
		cwd, err := os.Getwd()
		if err != nil {
			return wsPath{}, false, exitcode.CouldNotRunf("the working directory: %w", err)
		}
		paths = []string{filepath.Join(cwd, file)}
		if real, err := filepath.EvalSymlinks(cwd); err == nil && real != cwd {
			paths = append(paths, filepath.Join(real, file))
		}
	}
	for _, p := range paths {
		for _, w := range cands {
			if rel, ok := result.Under(w, p); ok {
				return wsPath{ws: w, name: filepath.FromSlash(rel)}, true, nil
			}
		}
	}
	return wsPath{}, false, nil
}
