package baseline

// The interface the CLI programs against, whichever store the config names.

import (
	"context"
	"fmt"
)

// Store keeps each key's baseline history. Every method is safe to call from many
// processes (and goroutines) at once on the same directory or branch: an update is never
// lost to a concurrent one, and a reader sees a key's history as one writer left it,
// never half-written.
type Store interface {
	Reader
	// Update adds e to its key's history (replacing an entry of the same commit and time,
	// so that retrying an update is harmless) and drops the oldest beyond the store's
	// keep.
	Update(ctx context.Context, e Entry) error
	// Prune keeps the newest keep entries of every key (keep >= 1).
	Prune(ctx context.Context, keep int) error
}

// Reader is the part of a Store that only reads: what a pull request is given, so that
// nothing it runs can write a baseline.
type Reader interface {
	// Latest returns the key's newest entry; false when the key has none.
	Latest(ctx context.Context, k Key) (Entry, bool, error)
	// History returns up to n of the key's entries, newest first (all for n <= 0).
	History(ctx context.Context, k Key, n int) ([]Entry, error)
	// Keys lists the keys that have a history, sorted by file name.
	Keys(ctx context.Context) ([]Key, error)
}

func checkKeep(keep int) error {
	if keep < 1 {
		return fmt.Errorf("baseline: cannot keep %d entries per key: keep at least 1", keep)
	}
	return nil
}

func keepOrDefault(keep int) int {
	if keep <= 0 {
		return DefaultKeep
	}
	return keep
}

// latest is Latest over History.
func latest(ctx context.Context, s Store, k Key) (Entry, bool, error) {
	es, err := s.History(ctx, k, 1)
	if err != nil || len(es) == 0 {
		return Entry{}, false, err
	}
	return es[0], true, nil
}
