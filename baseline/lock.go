package baseline

// The lock that works everywhere (a directory), for where flock does not, and the wait
// between tries for any lock.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/ctxsleep"
	"github.com/kernel-gate/kernel-gate/internal/input"
)

// staleLock is how old a lock directory must be before a writer takes it to be left by a
// writer that died: an update holds a lock for milliseconds, a slow disk for seconds.
const staleLock = 10 * time.Minute

// lockDir takes the lock path+".d", a directory, which every platform and file system
// creates atomically. Unlike a flock it outlives a writer that dies holding it, so one
// older than staleLock is broken (renamed aside, then removed). Each holder leaves a token
// in it, and unlock removes only a lock that still holds its token.
func lockDir(ctx context.Context, path string) (unlock func() error, err error) {
	dir := path + ".d"
	token := newToken()
	for attempt := 0; ; attempt++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			host, _ := os.Hostname()
			owner := fmt.Sprintf("%s pid %d on %s since %s\n", token, os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
			if err := writeOwner(filepath.Join(dir, "owner"), owner); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("taking the lock %s: %w", dir, err)
			}
			return func() error { return unlockDir(dir, token) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("taking the lock %s: %w", dir, err)
		}
		if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > staleLock {
			aside := dir + ".stale-" + newToken()
			if os.Rename(dir, aside) == nil {
				os.RemoveAll(aside)
			}
			continue
		}
		if err := waitLock(ctx, attempt); err != nil {
			return nil, fmt.Errorf("waiting for the lock %s (held by %s): %w", dir, holder(dir), err)
		}
	}
}

// writeOwner creates the owner file in a lock directory just made: never through a link
// or over anything already there.
func writeOwner(path, owner string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(owner)
	return errors.Join(err, f.Close())
}

// readOwner reads a lock directory's owner file: a regular file of a line, never a FIFO
// (whose open would block) nor more than that.
func readOwner(dir string) ([]byte, error) {
	return input.ReadFile(context.Background(), filepath.Join(dir, "owner"), input.Line)
}

func unlockDir(dir, token string) error {
	raw, err := readOwner(dir)
	if err != nil || !strings.HasPrefix(string(raw), token+" ") {
		return fmt.Errorf("the lock %s was broken as stale while held: another writer may have written at the same time", dir)
	}
	return os.RemoveAll(dir)
}

// holder says who holds a lock directory, for a writer that gave up waiting.
func holder(dir string) string {
	raw, err := readOwner(dir)
	if err != nil {
		return "an unknown writer"
	}
	_, who, _ := strings.Cut(strings.TrimSpace(string(raw)), " ")
	return who
}

func newToken() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// waitLock waits before the next try for a lock: 1, 2, 4 ... up to 50 milliseconds, with
// jitter so that waiting writers do not retry in step.
func waitLock(ctx context.Context, attempt int) error {
	d := min(time.Millisecond<<min(attempt, 6), 50*time.Millisecond)
	d = d/2 + mrand.N(d/2+1)
	return ctxsleep.Sleep(ctx, d)
}
