// Package ctxsleep waits for a duration unless a context ends first.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done, whichever comes first; it returns ctx.Err() in the
// second case and nil in the first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
