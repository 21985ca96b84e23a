// Package basecache keeps what the base side of a `kernel-gate run` produced (its build
// outputs, JIT caches, SASS dumps, ptxas logs, first-run results) between runs, so that a
// pull request whose merge base an earlier run already built builds only head.
//
// An entry is a directory of the cache named by its key's hash (Key.Sum), holding
// manifest.json (kernel-gate/base-cache/v1: the key's fields, the caller's metadata, and
// every file with its size, SHA-256, mode and modification time) and the files, under
// files/<root>/. A root is one directory of the caller's (base's artifacts, its tree, its
// cache directory) named in Source and Restore's dests.
//
// Restore trusts nothing it has not checked: an entry whose manifest does not parse
// strictly (a key twice, a field the schema lacks), is of another schema, names another
// key, lists a path out of its root or twice, more files or bytes than a save keeps, or
// whose files are missing, not regular, of another size or hash, is refused whole before
// anything is written (an error the caller reports as a notice, then builds cold), and a
// file that is there already, whose folder is a link (even one inside its root), or that
// changes while it is copied undoes what was written: a restore only adds files.
//
// Save reads the outputs through an os.Root of each root, never following a link out of it
// (a link is kept, as a link, only where it stays inside its root; any other, and a file of
// more than one hard link, makes the entry unsaved), writes the entry in a temporary
// directory of the cache and renames it into place, so that no reader sees half an entry
// and two runs saving one key leave one whole entry.
//
// The hashes give integrity, not provenance: whoever can write the cache directory can
// write an entry that verifies. Which runs may write the cache is the workflow's decision.
// Why: docs/threat-model.md, threat-model T19.
package basecache

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// Schema is the manifest's schema; an entry of another one is not read.
const Schema = "kernel-gate/base-cache/v1"

// manifestFile is the entry's manifest, filesDir the folder of its files.
const (
	manifestFile = "manifest.json"
	filesDir     = "files"
	tmpPrefix    = ".tmp-"
)

// ErrMiss is the error of Restore when the cache holds no entry for the key: a plain miss,
// not a refused entry.
var ErrMiss = errors.New("no entry for this key")

// Key is what base's outputs depend on besides the moment: two runs with equal keys would
// build the same outputs.
type Key struct {
	// Tree is the merge base's tree id (git rev-parse REV^{tree}): its files, not its history.
	Tree string `json:"tree"`
	// Toolkit is nvcc --version's output.
	Toolkit string `json:"toolkit"`
	// Driver and GPU are nvidia-smi's driver version and GPU name.
	Driver string `json:"driver"`
	GPU    string `json:"gpu"`
	// Config is the SHA-256 of the config file's bytes (its build commands, flags, targets).
	Config string `json:"config"`
	// Tool is kernel-gate's version (and build revision, where the binary knows it).
	Tool string `json:"tool"`
	// Arch are the architectures built; Targets the targets built, in order.
	Arch    []string `json:"arch"`
	Targets []string `json:"targets"`
	// Env are the inherited variables that change what a build makes (NAME=value).
	Env []string `json:"env"`
	// SASS is how base's SASS was dumped ("nvdisasm", "cuobjdump --dump-sass"): the two
	// print a function differently, so its digest compares only with one dumped the same way.
	SASS string `json:"sass,omitempty"`
}

// Sum is the key's hash: the entry's directory name.
func (k Key) Sum() string {
	raw, _ := json.Marshal(k) // strings and lists of them: it cannot fail
	h := sha256.Sum256(append([]byte(Schema+"\n"), raw...))
	return hex.EncodeToString(h[:])
}

// Short is a sum cut to 12 digits, for messages.
func Short(sum string) string { return sum[:min(12, len(sum))] }

// File is one file of an entry.
type File struct {
	// Root names the caller's directory it belongs to; Path is slash-separated inside it.
	Root string `json:"root"`
	Path string `json:"path"`
	// Link, when set, makes it a symbolic link with this (relative, inside its root)
	// target; Size, SHA256 and Exec are then zero.
	Link   string `json:"link,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
	Exec   bool   `json:"exec,omitempty"`
	// MTime is its modification time (Unix nanoseconds), restored with it: make and ninja
	// compare outputs' times with their inputs'.
	MTime int64 `json:"mtime_ns"`
}

// Manifest is an entry's manifest.json.
type Manifest struct {
	Schema string `json:"schema"`
	Sum    string `json:"sum"`
	Key    Key    `json:"key"`
	// Saved is when it was written (UTC, RFC 3339).
	Saved string `json:"saved"`
	// Meta is the caller's own record (the pipeline keeps base's steps there).
	Meta  json.RawMessage `json:"meta"`
	Files []File          `json:"files"`
}

// Bytes is the size of the entry's files together.
func (m Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Source is one root of what Save keeps: Dir on this machine and, inside it, Paths
// (slash-separated files or folders, each taken whole).
type Source struct {
	Root  string
	Dir   string
	Paths []string
}

// Limits bound an entry and the cache.
type Limits struct {
	// MaxBytes and MaxFiles bound one entry (0: DefaultMaxBytes, DefaultMaxFiles): a build
	// that leaves more is not cached.
	MaxBytes int64
	MaxFiles int
	// Keep is how many entries the cache keeps, the newest (0: DefaultKeep).
	Keep int
}

// Defaults of Limits.
const (
	DefaultMaxBytes = 4 << 30
	DefaultMaxFiles = 50_000
	DefaultKeep     = 8
)

// staleTmp is how old a temporary directory of a save must be before another save removes
// it as abandoned (a run killed while it saved).
const staleTmp = time.Hour

// Save copies sources into a new entry for key in dir (made when missing) and returns its
// manifest. When an entry of the key that verifies is there already (another run saved it
// first), that one is kept and its manifest returned; one that does not verify is replaced.
// Then the oldest entries beyond lim.Keep are removed.
func Save(ctx context.Context, dir string, key Key, meta json.RawMessage, sources []Source, lim Limits) (Manifest, error) {
	lim.MaxBytes, lim.MaxFiles, lim.Keep = cmp.Or(lim.MaxBytes, DefaultMaxBytes), cmp.Or(lim.MaxFiles, DefaultMaxFiles), cmp.Or(lim.Keep, DefaultKeep)
	sum := key.Sum()
	m := Manifest{Schema: Schema, Sum: sum, Key: key, Saved: time.Now().UTC().Format(time.RFC3339), Meta: meta, Files: []File{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return m, fmt.Errorf("the base cache %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(dir, tmpPrefix)
	if err != nil {
		return m, fmt.Errorf("the base cache %s: %w", dir, err)
	}
	keepTmp := false
	defer func() {
		if !keepTmp {
			_ = os.RemoveAll(tmp)
		}
	}()
	out, err := os.OpenRoot(tmp)
	if err != nil {
		return m, err
	}
	defer out.Close()
	var total int64
	for _, src := range sources {
		if err := checkRootName(src.Root); err != nil {
			return m, err
		}
		files, err := copyRoot(ctx, src, out, lim, &total, len(m.Files))
		if err != nil {
			return m, err
		}
		m.Files = append(m.Files, files...)
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	if err := procgroup.WriteArtifactIn(out, manifestFile, append(raw, '\n'), 0o644); err != nil {
		return m, err
	}
	final := filepath.Join(dir, sum)
	if err := os.Rename(tmp, final); err != nil {
		// Taken: another run saved this key first. Keep its entry when it verifies;
		// move one that does not aside and try once more.
		if existing, verr := verifyEntry(ctx, dir, key); verr == nil {
			return existing, nil
		}
		aside, err := os.MkdirTemp(dir, tmpPrefix)
		if err != nil {
			return m, err
		}
		defer os.RemoveAll(aside)
		if err := os.Rename(final, filepath.Join(aside, "bad")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("replacing the unreadable entry %s: %w", Short(sum), err)
		}
		if err := os.Rename(tmp, final); err != nil {
			if existing, verr := verifyEntry(ctx, dir, key); verr == nil {
				return existing, nil
			}
			return m, fmt.Errorf("saving the entry %s: %w", Short(sum), err)
		}
	}
	keepTmp = true
	prune(dir, sum, lim.Keep)
	return m, nil
}

// checkRootName refuses a root name that is not one plain path segment.
func checkRootName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("base cache: root name %q is not one plain name", name)
	}
	return nil
}

// copyRoot copies one source's paths into out's files/<root>/, without following a link.
func copyRoot(ctx context.Context, src Source, out *os.Root, lim Limits, total *int64, count int) ([]File, error) {
	in, err := os.OpenRoot(src.Dir)
	if err != nil {
		return nil, fmt.Errorf("base's %s: %w", src.Root, err)
	}
	defer in.Close()
	var files []File
	seen := map[string]bool{}
	for _, p := range src.Paths {
		p = path.Clean(filepath.ToSlash(p))
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			return nil, fmt.Errorf("base's %s: %q is not a path inside it", src.Root, p)
		}
		keep := func(name string) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if seen[name] {
				return nil
			}
			seen[name] = true
			if count+len(files) >= lim.MaxFiles {
				return fmt.Errorf("more than %d files: not cached", lim.MaxFiles)
			}
			f, err := copyOne(in, out, src.Root, name)
			if err != nil {
				return err
			}
			*total += f.Size
			if *total > lim.MaxBytes {
				return fmt.Errorf("more than %d bytes: not cached", lim.MaxBytes)
			}
			files = append(files, f)
			return nil
		}
		// A path named is looked at itself first: WalkDir would follow it, were it a link.
		st, err := in.Lstat(filepath.FromSlash(p))
		if err == nil && !st.IsDir() {
			err = keep(p)
		} else if err == nil {
			err = fs.WalkDir(in.FS(), p, func(name string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				return keep(name)
			})
		}
		if err != nil {
			return nil, fmt.Errorf("base's %s: %w", src.Root, err)
		}
	}
	return files, nil
}

// copyOne keeps one file or link of a root.
func copyOne(in, out *os.Root, root, name string) (File, error) {
	f := File{Root: root, Path: name}
	native := filepath.FromSlash(name)
	st, err := in.Lstat(native)
	if err != nil {
		return f, err
	}
	f.MTime = st.ModTime().UnixNano()
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := in.Readlink(native)
		if err != nil {
			return f, err
		}
		if !linkInside(name, target) {
			return f, fmt.Errorf("%s is a symbolic link out of its directory: not followed, and the entry is not saved", name)
		}
		f.Link = target
		return f, nil
	case !st.Mode().IsRegular():
		return f, fmt.Errorf("%s is %s: an entry holds regular files and links", name, input.KindOf(st.Mode()))
	}
	r, err := input.OpenIn(in, native) // a link put in its place since is followed inside in only
	if err != nil {
		return f, err
	}
	defer r.Close()
	opened, err := r.Stat()
	if err != nil {
		return f, err
	}
	if n := hardLinks(opened); n > 1 {
		// Another name of the same file may be anywhere on its file system (a build's
		// `ln ~/.ssh/id_ed25519 out.so`): the copy would carry it into the entry, which
		// actions/cache uploads, as a link out would. Why: threat-model T19.
		return f, fmt.Errorf("%s has %d hard links, so it may be a file out of its directory: not read, and the entry is not saved", name, n)
	}
	f.Exec = opened.Mode()&0o111 != 0
	w, err := procgroup.CreateArtifactIn(out, filesDir+"/"+root+"/"+name, perm(f.Exec))
	if err != nil {
		return f, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), r)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return f, fmt.Errorf("%s: %w", name, err)
	}
	f.Size, f.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	return f, nil
}

// linkInside reports whether a link at name (slash-separated, inside its root) with this
// target resolves inside the root, by its text alone.
func linkInside(name, target string) bool {
	if target == "" || filepath.IsAbs(target) || strings.Contains(target, `\`) {
		return false
	}
	return filepath.IsLocal(filepath.Join(filepath.Dir(filepath.FromSlash(name)), filepath.FromSlash(target)))
}

func perm(exec bool) fs.FileMode {
	if exec {
		return 0o755
	}
	return 0o644
}

// Restore checks the entry of key in dir and copies its files into dests (root name →
// directory). accept, when not nil, judges the verified manifest (its Meta) before anything
// is written. ErrMiss means there is none; any other error names why the entry was refused,
// and nothing of it is left in dests.
func Restore(ctx context.Context, dir string, key Key, dests map[string]string, accept func(Manifest) error) (Manifest, error) {
	m, err := verifyEntry(ctx, dir, key)
	if err != nil {
		return m, err
	}
	if accept != nil {
		if err := accept(m); err != nil {
			return m, fmt.Errorf("entry %s: %w", Short(m.Sum), err)
		}
	}
	for _, f := range m.Files {
		if _, ok := dests[f.Root]; !ok {
			return m, fmt.Errorf("entry %s holds files of %q, which this run has no place for", Short(m.Sum), f.Root)
		}
	}
	cache, err := os.OpenRoot(dir)
	if err != nil {
		return m, err
	}
	defer cache.Close()
	roots := map[string]*os.Root{}
	defer func() {
		for _, r := range roots {
			r.Close()
		}
	}()
	dirs := map[string]map[string]bool{} // of each root: its folders found plain (newName)
	var written []func()
	undo := func() {
		for _, u := range slices.Backward(written) {
			u()
		}
	}
	for _, f := range m.Files {
		r, ok := roots[f.Root]
		if !ok {
			if err := os.MkdirAll(dests[f.Root], 0o755); err != nil {
				undo()
				return m, err
			}
			if r, err = os.OpenRoot(dests[f.Root]); err != nil {
				undo()
				return m, err
			}
			roots[f.Root], dirs[f.Root] = r, map[string]bool{}
		}
		if err := restoreOne(ctx, cache, r, dirs[f.Root], m.Sum, f); err != nil {
			undo()
			return m, fmt.Errorf("entry %s: %w", Short(m.Sum), err)
		}
		name := filepath.FromSlash(f.Path)
		written = append(written, func() { _ = r.Remove(name) })
	}
	return m, nil
}

// restoreOne copies one file of the entry into its root, hashing it again as it goes: a
// file changed since it was verified is removed and refused.
func restoreOne(ctx context.Context, cache, r *os.Root, dirs map[string]bool, sum string, f File) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name := filepath.FromSlash(f.Path)
	if err := newName(r, dirs, name); err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	if d := filepath.Dir(name); d != "." {
		if err := r.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("%s: %w (a link or a file is in its path)", f.Path, err)
		}
	}
	mtime := time.Unix(0, f.MTime)
	if f.Link != "" {
		if err := r.Symlink(f.Link, name); err != nil {
			return err
		}
		return nil
	}
	src, err := input.OpenIn(cache, entryPath(sum, f))
	if err != nil {
		return err
	}
	defer src.Close()
	w, err := procgroup.CreateArtifactIn(r, f.Path, perm(f.Exec))
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(src, f.Size+1))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil && (n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256) {
		err = fmt.Errorf("%s changed while it was restored", f.Path)
	}
	if err != nil {
		_ = r.Remove(name)
		return err
	}
	return r.Chtimes(name, mtime, mtime)
}

// newName refuses a name that is there already, or whose folders are anything but plain
// folders: a restore adds files and never replaces one (base's tracked files are its
// tree's, and a save keeps only the files a build added), and a save never keeps a file
// under a link (it walks without following one), so a name through a link (the tree's own
// link to a folder of it, or one the entry restored just before) is an entry no save
// wrote. os.Root keeps a link from leading out of the root; this keeps one from leading to
// another place inside it. Why: docs/threat-model.md, threat-model T19.
//
// dirs are the folders of r already found plain (or made by this restore), not looked at
// again.
func newName(r *os.Root, dirs map[string]bool, name string) error {
	parts := strings.Split(name, string(filepath.Separator))
	for i := range parts {
		at := filepath.Join(parts[:i+1]...)
		if i < len(parts)-1 && dirs[at] {
			continue
		}
		st, err := r.Lstat(at)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // nor anything under it
		case err != nil:
			return err
		case i == len(parts)-1:
			return fmt.Errorf("%s is there already: a restore only adds files", input.KindOf(st.Mode()))
		case !st.IsDir():
			return fmt.Errorf("its folder %s is %s, not a folder: nothing is restored through it", filepath.ToSlash(at), input.KindOf(st.Mode()))
		}
		dirs[at] = true
	}
	return nil
}

func entryPath(sum string, f File) string {
	return filepath.Join(sum, filesDir, f.Root, filepath.FromSlash(f.Path))
}

// Read returns the manifest of key's entry in dir once every file of it verifies.
func Read(ctx context.Context, dir string, key Key) (Manifest, error) {
	return verifyEntry(ctx, dir, key)
}

// verifyEntry reads key's entry in dir and checks its manifest and every file's size and
// hash.
func verifyEntry(ctx context.Context, dir string, key Key) (Manifest, error) {
	sum := key.Sum()
	var m Manifest
	cache, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return m, ErrMiss
	}
	if err != nil {
		return m, err
	}
	defer cache.Close()
	st, err := cache.Lstat(sum)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return m, ErrMiss
	case err != nil:
		return m, err
	case !st.IsDir():
		return m, fmt.Errorf("entry %s is %s, not a directory", Short(sum), input.KindOf(st.Mode()))
	}
	raw, err := input.ReadFileIn(ctx, cache, filepath.Join(sum, manifestFile), input.JSON)
	if err != nil {
		return m, fmt.Errorf("entry %s: its manifest: %w", Short(sum), err)
	}
	if err := decodeManifest(raw, &m); err != nil {
		return m, fmt.Errorf("entry %s: its manifest: %w", Short(sum), err)
	}
	if err := m.check(sum, key); err != nil {
		return m, fmt.Errorf("entry %s: %w", Short(sum), err)
	}
	for _, f := range m.Files {
		if f.Link != "" {
			continue
		}
		if err := verifyFile(ctx, cache, sum, f); err != nil {
			return m, fmt.Errorf("entry %s: %w", Short(sum), err)
		}
	}
	return m, nil
}

// decodeManifest reads a manifest strictly: no key twice (strictjson), no field this
// schema does not have (the caller's Meta is the caller's to read).
func decodeManifest(raw []byte, m *Manifest) error {
	return strictjson.UnmarshalKnown(raw, m, strictjson.Options{Exact: []string{"meta"}})
}

// check refuses a manifest of another schema or key, and any file it lists that could
// land out of its root, twice, or that says nothing checkable.
func (m Manifest) check(sum string, key Key) error {
	switch {
	case m.Schema != Schema:
		return fmt.Errorf("schema %q, want %q (another kernel-gate version wrote it)", clip(m.Schema), Schema)
	case m.Sum != sum:
		return fmt.Errorf("its manifest names key %s", clip(m.Sum))
	}
	want, _ := json.Marshal(key)
	got, _ := json.Marshal(m.Key)
	if !bytes.Equal(want, got) {
		return fmt.Errorf("its manifest's key fields are not this run's (%s)", keyDiff(m.Key, key))
	}
	// The limits of a save bound what a restore reads and writes: an entry no save could
	// have made is refused before any of its files is read (and sizes past them, summed,
	// could wrap around).
	if len(m.Files) > DefaultMaxFiles {
		return fmt.Errorf("it lists %d files, more than a save keeps (%d)", len(m.Files), DefaultMaxFiles)
	}
	var total int64
	for _, f := range m.Files {
		if f.Size > DefaultMaxBytes || total+f.Size > DefaultMaxBytes {
			return fmt.Errorf("its files hold more than a save keeps (%d bytes)", DefaultMaxBytes)
		}
		total += max(f.Size, 0)
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		id := f.Root + "\x00" + f.Path
		native := filepath.FromSlash(f.Path)
		switch {
		case checkRootName(f.Root) != nil:
			return fmt.Errorf("a file of root %q", clip(f.Root))
		case f.Path == "" || strings.Contains(f.Path, `\`) || path.Clean(f.Path) != f.Path || !filepath.IsLocal(native):
			return fmt.Errorf("file %q is not a plain path inside its root", clip(f.Path))
		case seen[id]:
			return fmt.Errorf("file %q is listed twice", clip(f.Path))
		case f.Link != "" && (!linkInside(f.Path, f.Link) || f.Size != 0 || f.SHA256 != ""):
			return fmt.Errorf("link %q leads out of its root", clip(f.Path))
		case f.Link == "" && (f.Size < 0 || len(f.SHA256) != sha256.Size*2):
			return fmt.Errorf("file %q has no size or SHA-256", clip(f.Path))
		}
		seen[id] = true
	}
	return nil
}

// keyDiff names the key fields that differ.
func keyDiff(got, want Key) string {
	fields := []struct {
		name string
		a, b any
	}{{"tree", got.Tree, want.Tree}, {"toolkit", got.Toolkit, want.Toolkit}, {"driver", got.Driver, want.Driver},
		{"gpu", got.GPU, want.GPU}, {"config", got.Config, want.Config}, {"tool", got.Tool, want.Tool},
		{"arch", got.Arch, want.Arch}, {"targets", got.Targets, want.Targets}, {"env", got.Env, want.Env}}
	var diff []string
	for _, f := range fields {
		if fmt.Sprintf("%q", f.a) != fmt.Sprintf("%q", f.b) {
			diff = append(diff, f.name)
		}
	}
	return "differ: " + strings.Join(diff, ", ")
}

// verifyFile hashes one file of the entry.
func verifyFile(ctx context.Context, cache *os.Root, sum string, f File) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := input.OpenIn(cache, entryPath(sum, f))
	if err != nil {
		return fmt.Errorf("file %s: %w", f.Path, err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, f.Size+1))
	switch {
	case err != nil:
		return fmt.Errorf("file %s: %w", f.Path, err)
	case n != f.Size:
		return fmt.Errorf("file %s has %d bytes, its manifest says %d", f.Path, n, f.Size)
	case hex.EncodeToString(h.Sum(nil)) != f.SHA256:
		return fmt.Errorf("file %s does not have the SHA-256 its manifest says", f.Path)
	}
	return nil
}

// prune removes the entries beyond the keep newest (by their directories' times; just is
// never removed) and temporary directories of saves abandoned long ago. What cannot be
// removed stays: pruning is housekeeping, never a failure.
func prune(dir, just string, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type entry struct {
		name string
		t    time.Time
	}
	var all []entry
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.IsDir() { // a link is no entry and is left alone
			continue
		}
		switch {
		case strings.HasPrefix(e.Name(), tmpPrefix):
			if time.Since(info.ModTime()) > staleTmp {
				_ = os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		case isSum(e.Name()) && e.Name() != just:
			all = append(all, entry{e.Name(), info.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b entry) int { return b.t.Compare(a.t) })
	for i, e := range all {
		if i >= keep-1 {
			_ = os.RemoveAll(filepath.Join(dir, e.name))
		}
	}
}

func isSum(name string) bool {
	if len(name) != sha256.Size*2 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil && strings.ToLower(name) == name
}

// clip cuts text read from an entry for a message.
func clip(s string) string { return msgtext.Clean(s, 80, false) }
