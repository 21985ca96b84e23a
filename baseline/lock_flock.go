//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package baseline

// flock for the directory store where Go's syscall package has it.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/kernel-gate/kernel-gate/internal/input"
)

// lockFile takes the exclusive flock of path (created if need be), polling so that ctx can
// stop the wait. The kernel drops a flock when its holder dies, so a crashed writer never
// leaves a key locked. On a file system without flock (some network ones) it falls back
// to lockDir.
//
// The lock file is never opened through a symbolic link (O_CREATE would create or open its
// target, anywhere) nor waited on when it is a FIFO: anything but a regular file there is
// refused, named.
func lockFile(ctx context.Context, path string) (unlock func() error, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|input.NonBlock, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("the lock %s is a symbolic link: refusing to open it (remove it; kernel-gate makes a regular file)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the lock: %w", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("opening the lock: %w", err)
		}
		return nil, fmt.Errorf("the lock %s is %s, not a regular file: refusing to use it (remove it; kernel-gate makes a regular file)", path, input.KindOf(st.Mode()))
	}
	fd := int(f.Fd())
	for attempt := 0; ; attempt++ {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() error {
				return errors.Join(syscall.Flock(fd, syscall.LOCK_UN), f.Close())
			}, nil
		case errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.ENOSYS):
			f.Close()
			return lockDir(ctx, path)
		default:
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if err := waitLock(ctx, attempt); err != nil {
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, err)
		}
	}
}
