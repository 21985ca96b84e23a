package baseline

// The directory store: safe for many processes on one disk through a lock per key and
// files replaced whole.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/input"
)

// Dir is a Store in a local directory, for a developer's machine, tests, and self-hosted
// runners that share a disk:
//
//	DIR/nvidia-h200.sm_90.json        one key's history (Schema), rewritten whole
//	DIR/nvidia-h200.sm_90.json.lock   the lock its writers take in turn; never removed
//
// A writer holds the key's lock (flock on unix; elsewhere, or on a file system without
// flock, a lock directory) while it reads, changes and writes the file, so no update is
// lost; it writes a new file beside the old and renames it over, so a reader, which
// takes no lock, sees the old history or the new one, never a torn one.
type Dir struct {
	path string
	keep int
	// lock is lockFile; tests swap in lockDir, the other platforms' lock, or none.
	lock func(ctx context.Context, path string) (unlock func() error, err error)
	// lockWait bounds the wait for a key's lock (DefaultLockWait; tests shorten it).
	lockWait time.Duration
	// afterRead, when set, runs between reading a key's file and writing it: tests widen
	// the window in which an unlocked writer would lose an update.
	afterRead func()
}

var _ Store = (*Dir)(nil)

// NewDir returns the store in path (created on the first update) that keeps the newest
// keep entries per key (DefaultKeep when keep <= 0).
func NewDir(path string, keep int) *Dir {
	return &Dir{path: path, keep: keepOrDefault(keep), lock: lockFile, lockWait: DefaultLockWait}
}

// DefaultLockWait is how long an update or prune waits for a key's lock before it gives
// up with an error naming the lock and its holder: a writer holds it for milliseconds (a
// slow disk, seconds), so one held this long belongs to a writer that hangs, and waiting
// on would hang this one too.
// Why: docs/threat-model.md, threat-model T17.
const DefaultLockWait = 2 * time.Minute

// ErrLockWait is wrapped by the error of an update or prune that gave up waiting for a
// key's lock (DefaultLockWait).
var ErrLockWait = errors.New("the lock stayed held")

// Update adds e to its key's file under the key's lock.
func (d *Dir) Update(ctx context.Context, e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	if err := os.MkdirAll(d.path, 0o755); err != nil {
		return fmt.Errorf("baseline: creating the store directory: %w", err)
	}
	k := e.Key()
	return d.edit(ctx, k, func(f *keyFile) (bool, error) { return f.add(e, d.keep) })
}

// edit changes key k's file under its lock; change reports whether it changed anything.
func (d *Dir) edit(ctx context.Context, k Key, change func(*keyFile) (bool, error)) (err error) {
	name := filepath.Join(d.path, k.File())
	lctx, cancel := context.WithTimeout(ctx, d.lockWait)
	unlock, err := d.lock(lctx, name+".lock")
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("baseline: %s: %w: gave up after %s: %w (another writer keeps it; try again once it ended)", k, ErrLockWait, d.lockWait, err)
		}
		return fmt.Errorf("baseline: %s: %w", k, err)
	}
	defer func() {
		if uerr := unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("baseline: %s: releasing the lock: %w", k, uerr)
		}
	}()
	f, err := d.read(ctx, k)
	if err != nil {
		return err
	}
	if f == nil {
		f = &keyFile{Schema: Schema, Key: k}
	}
	if d.afterRead != nil {
		d.afterRead()
	}
	changed, err := change(f)
	if err != nil || !changed {
		return err
	}
	raw, err := f.encode()
	if err != nil {
		return err
	}
	if err := writeAtomic(name, raw); err != nil {
		return fmt.Errorf("baseline: writing %s: %w", name, err)
	}
	return nil
}

// read returns key k's file, nil when it has none. The file is read inside the store's
// directory (a link out of it is refused), only when it is a regular file (a FIFO would
// block the read beyond any signal) of at most MaxFileBytes, checked before it is read.
func (d *Dir) read(ctx context.Context, k Key) (*keyFile, error) {
	root, err := os.OpenRoot(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer root.Close()
	raw, err := input.ReadFileIn(ctx, root, k.File(), fileLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	name := filepath.Join(d.path, k.File())
	if err != nil {
		return nil, fmt.Errorf("baseline: %s: %w", name, err)
	}
	f, err := decodeKeyFile(raw, name, &k)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	return f, nil
}

// Latest returns k's newest entry. It takes no lock: files are replaced whole.
func (d *Dir) Latest(ctx context.Context, k Key) (Entry, bool, error) { return latest(ctx, d, k) }

// History returns up to n of k's entries, newest first.
func (d *Dir) History(ctx context.Context, k Key, n int) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	f, err := d.read(ctx, k)
	if err != nil || f == nil {
		return nil, err
	}
	return f.newest(n), nil
}

// Keys lists the keys of the directory's files; a missing directory has none.
func (d *Dir) Keys(ctx context.Context) ([]Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	des, err := os.ReadDir(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	root, err := os.OpenRoot(d.path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer root.Close()
	var keys []Key
	for _, de := range des {
		if !isKeyFile(de.Name()) {
			continue
		}
		// Whatever is named like a key's file is read as one, or refused, named: a GPU's
		// history is never left out of a listing unsaid (a FIFO, a link out, a directory).
		name := filepath.Join(d.path, de.Name())
		raw, err := input.ReadFileIn(ctx, root, de.Name(), fileLimit)
		if err != nil {
			return nil, fmt.Errorf("baseline: %s: %w", name, err)
		}
		k, err := readKey(raw, name)
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		keys = append(keys, k)
	}
	sortKeys(keys)
	return keys, nil
}

// isKeyFile tells a key's file from the store's temporary and lock files.
func isKeyFile(name string) bool {
	return strings.HasSuffix(name, fileSuffix) && !strings.HasPrefix(name, ".")
}

func sortKeys(keys []Key) {
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.File(), b.File()) })
}

// Prune keeps the newest keep entries of every key, each under its lock.
func (d *Dir) Prune(ctx context.Context, keep int) error {
	if err := checkKeep(keep); err != nil {
		return err
	}
	keys, err := d.Keys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := d.edit(ctx, k, func(f *keyFile) (bool, error) { return f.prune(keep), nil }); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic replaces path with data: written to a temporary file in the same directory,
// synced, then renamed over path, so that a crash or a full disk leaves the old file.
func writeAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable where the platform can (not Windows, which
// cannot open a directory to sync it; its renames are journaled by NTFS).
func syncDir(dir string) {
	if dir == "" {
		dir = "."
	}
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}
