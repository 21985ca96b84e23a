// Package outfile is the file a command's --out names: Check refuses, before anything is
// read or written, an --out that would overwrite the command's own input, write through a
// link out of its directory, or name a directory, FIFO or socket; Write writes it through an
// os.Root of its directory without blocking on a reader.
package outfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// Reads are what a command reads, so that its --out cannot overwrite them: files, and
// directories it reads whole (a recording).
type Reads struct {
	Files, Dirs []string
}

// Check refuses (exit 2) an --out that names a directory, something a report cannot be
// written to (a FIFO, a socket), a symbolic link that leads out of its directory (a
// workspace file the pull request made a link to ~/.bashrc), one of the files the command
// reads (by any name: a link or a hard link to it is the same file), or a path inside a
// directory it reads. It runs before anything is read, so a refused --out has written
// nothing.
func Check(out string, r Reads) error {
	if out == "" {
		return nil
	}
	st, err := os.Stat(out) // what writing would open, through any link
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return exitcode.BadInputf("--out %s: %w", out, err)
	case st.IsDir():
		return exitcode.BadInputf("--out %s is a directory: name the report's file", out)
	case !st.Mode().IsRegular() && st.Mode()&fs.ModeCharDevice == 0:
		return exitcode.BadInputf("--out %s is %s: name a file (or leave --out out for standard output)", out, input.KindOf(st.Mode()))
	}
	if err == nil && st.Mode().IsRegular() {
		for _, f := range r.Files {
			if f == "" || f == "-" {
				continue
			}
			if fst, ferr := os.Stat(f); ferr == nil && os.SameFile(st, fst) {
				return exitcode.BadInputf("--out %s is %s, which this command reads: the report would overwrite its own input", out, f)
			}
		}
	}
	for _, d := range r.Dirs {
		if d != "" && Within(out, d) {
			return exitcode.BadInputf("--out %s is inside %s, which this command reads: write the report elsewhere", out, d)
		}
	}
	return linkOut(out)
}

// linkOut refuses (exit 2) an --out that is a symbolic link leading out of its directory,
// dangling or not: writing would create or overwrite its target, wherever that is. As
// os.Root, which Write opens it through, a link that names its target by an absolute
// path is taken to lead out.
func linkOut(out string) error {
	st, err := os.Lstat(out)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	dir, name := splitOut(out)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return exitcode.BadInputf("--out %s: %w", out, err)
	}
	defer root.Close()
	if _, err := root.Stat(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exitcode.BadInputf("--out %s is a symbolic link that leads out of its directory, or names its target by an absolute path: refusing to write through it (name the file itself)", out)
	}
	return nil
}

// splitOut is an --out path's directory ("." for a bare name) and file name.
func splitOut(out string) (dir, name string) {
	dir, name = filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	return dir, name
}

// Within reports whether path, its links resolved as far as they exist, lies inside dir.
func Within(path, dir string) bool {
	d, err := resolved(dir)
	if err != nil {
		return false
	}
	p, err := resolved(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolved is path made absolute with the links of its longest existing prefix resolved.
func resolved(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// Write writes the report to path, opened through an os.Root of its directory (a link
// that leads out of it is refused, even one that appeared since Check) and without
// blocking (a FIFO nobody reads is an error, not a hang); a write that waits on its reader
// ends when ctx does.
func Write(ctx context.Context, ws, path string, data []byte) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var root *os.Root
	var name string
	var err error
	if ws != "" {
		// Inside GitHub Actions the workspace is the pull request's checkout: no directory
		// on the path may lead out of it through a link it committed.
		if root, name, err = procgroup.OpenOutDir(ws, path); err != nil {
			return err
		}
	} else {
		var dir string
		dir, name = splitOut(path)
		if root, err = os.OpenRoot(dir); err != nil {
			return exitcode.CouldNotRunf("writing the report: %w", err)
		}
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|input.NonBlock, 0o644)
	if err != nil {
		if lerr := linkOut(path); lerr != nil {
			return lerr
		}
		return exitcode.CouldNotRunf("writing the report: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Now()) })
	_, err = f.Write(data)
	stop()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("writing the report to %s: %w", path, cerr)
	}
	if err != nil {
		return exitcode.CouldNotRunf("writing the report: %w", err)
	}
	return nil
}
