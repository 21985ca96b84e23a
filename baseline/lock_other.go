//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package baseline

// Where Go's syscall package has no flock, the directory store locks with a directory.

import "context"

// lockFile takes path's lock directory: Go's syscall package has no flock here (Windows,
// Solaris, AIX, ...).
func lockFile(ctx context.Context, path string) (unlock func() error, err error) {
	return lockDir(ctx, path)
}
