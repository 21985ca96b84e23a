package procgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
)

// A run's artifact directory is written only through these two, so that nothing outside it
// is written, whatever it holds: a symbolic link left in it (or planted by a harness) is
// refused, never followed. The directory itself is the caller's, taken as given.

// ErrUnsafeArtifact is wrapped by the error that refuses an artifact's name because
// something other than a regular file has it (a symbolic link, a directory, a FIFO).
var ErrUnsafeArtifact = errors.New("not a regular file: refusing to write through it")

// CreateArtifact creates rel (slash-separated, inside dir) for writing, with its
// directories. The path is resolved through an os.Root of dir (a link out of dir is an
// error); a stale regular file of that name is removed first, anything else of that name is
// refused (exitcode.BadInput, ErrUnsafeArtifact), and the file is made with
// O_EXCL|O_NOFOLLOW, so that nothing can take its place in between.
func CreateArtifact(dir, rel string, perm fs.FileMode) (*os.File, error) {
	root, err := openArtifactDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return CreateArtifactIn(root, rel, perm)
}

// CreateArtifactIn is CreateArtifact in a directory the caller holds open: one that
// commands it runs could rename or replace by a link while it runs (a harness knows where
// its run's artifacts go) keeps every later file where the first one went.
func CreateArtifactIn(root *os.Root, rel string, perm fs.FileMode) (*os.File, error) {
	dir := root.Name()
	name := filepath.FromSlash(path.Clean(rel))
	if d := filepath.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return nil, exitcode.CouldNotRunf("artifact directory %s: %w", filepath.Join(dir, d), err)
		}
	}
	if err := clearName(root, dir, name); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, perm)
	if err != nil {
		return nil, exitcode.CouldNotRunf("creating %s: %w", filepath.Join(dir, name), err)
	}
	return f, nil
}

// AppendArtifact opens rel (inside dir) for appending, as CreateArtifact would make it when
// it is not there: for a file another program wrote (compute-sanitizer's --log-file) that
// kernel-gate adds a line to. A link of its name is refused, never followed.
func AppendArtifact(dir, rel string) (*os.File, error) {
	root, err := openArtifactDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	name := filepath.FromSlash(path.Clean(rel))
	st, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return CreateArtifact(dir, rel, 0o644)
	case err != nil:
		return nil, exitcode.CouldNotRunf("artifact %s: %w", filepath.Join(dir, name), err)
	case !st.Mode().IsRegular():
		return nil, exitcode.BadInput(fmt.Errorf("artifact %s is %s, %w", filepath.Join(dir, name), input.KindOf(st.Mode()), ErrUnsafeArtifact))
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_APPEND|noFollow, 0)
	if err != nil {
		return nil, exitcode.CouldNotRunf("appending to %s: %w", filepath.Join(dir, name), err)
	}
	return f, nil
}

// WriteArtifact writes data to rel inside dir as CreateArtifact makes it.
func WriteArtifact(dir, rel string, data []byte, perm fs.FileMode) error {
	f, err := CreateArtifact(dir, rel, perm)
	if err != nil {
		return err
	}
	return writeClose(f, data)
}

// WriteArtifactIn writes data to rel inside root as CreateArtifactIn makes it.
func WriteArtifactIn(root *os.Root, rel string, data []byte, perm fs.FileMode) error {
	f, err := CreateArtifactIn(root, rel, perm)
	if err != nil {
		return err
	}
	return writeClose(f, data)
}

// openArtifactDir opens the artifact directory as a root that every name is resolved in,
// so that no link in it leads a file out; one that cannot be opened means the step cannot
// run (exitcode.CouldNotRun).
func openArtifactDir(dir string) (*os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, exitcode.CouldNotRunf("artifact directory: %w", err)
	}
	return root, nil
}

func writeClose(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return exitcode.CouldNotRunf("writing %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return exitcode.CouldNotRunf("writing %s: %w", f.Name(), err)
	}
	return nil
}

// MkdirArtifact makes the directory rel inside dir, with its parents, for a run (or a
// command's cache) that writes its files there: a path through a link out of dir (planted
// by an earlier command of the run) is refused (exitcode.BadInput), so that the files
// written there later stay inside dir.
func MkdirArtifact(dir, rel string) error {
	root, err := openArtifactDir(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.FromSlash(path.Clean(rel))
	if err := root.MkdirAll(name, 0o755); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return exitcode.CouldNotRunf("directory %s: %w", filepath.Join(dir, name), err)
		}
		return exitcode.BadInput(fmt.Errorf("directory %s: %w: a link out of %s, or a file, is in its path: refusing to write there", filepath.Join(dir, name), err, dir))
	}
	return nil
}

// ClearArtifact readies rel (inside dir) for a file another program writes there
// (compute-sanitizer's XML, a harness's KG_OUT): a stale regular file is removed, so that it
// cannot speak for this run; anything else of that name is refused (exitcode.BadInput,
// ErrUnsafeArtifact), since the program would write through it.
func ClearArtifact(dir, rel string) error {
	root, err := openArtifactDir(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return clearName(root, dir, filepath.FromSlash(path.Clean(rel)))
}

func clearName(root *os.Root, dir, name string) error {
	st, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return exitcode.CouldNotRunf("artifact %s: %w", filepath.Join(dir, name), err)
	case !st.Mode().IsRegular():
		return exitcode.BadInput(fmt.Errorf("artifact %s is %s, %w: clear the directory or choose another", filepath.Join(dir, name), input.KindOf(st.Mode()), ErrUnsafeArtifact))
	}
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exitcode.CouldNotRunf("removing the stale %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}
