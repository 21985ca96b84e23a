package baseline

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

// DiffChoice says which two entries of a store `kernel-gate baseline diff` compares.
type DiffChoice struct {
	// Key is the GPU as a user wrote it (ParseKey); empty: the store's only one. Unused
	// when Newer is set: the newer entry's key is the key.
	Key string
	// From and To are commit prefixes of the older and the newer entry; empty From is the
	// entry before To (or, with Newer, the newest comparable one), empty To the newest.
	From, To string
	// Newer, when set, is the newer entry (a result made into one); To must then be empty.
	Newer *Entry
}

// PickDiff chooses the two entries c names and compares them. An entry chosen by hand that
// the constraints would not compare is compared, and the diff says so; one chosen for a
// result (c.Newer) must be comparable. A choice the store cannot meet is exitcode.BadInput,
// saying what it holds.
func PickDiff(ctx context.Context, store Reader, cons Constraints, c DiffChoice) (Diff, error) {
	k, err := pickKey(ctx, store, c)
	if err != nil {
		return Diff{}, err
	}
	history, err := store.History(ctx, k, 0)
	if err != nil {
		return Diff{}, exitcode.BadInput(err)
	}
	if len(history) == 0 {
		return Diff{}, exitcode.BadInputf("the store holds no entry of %s", k)
	}
	newer := c.Newer
	if newer == nil {
		i, err := findEntry(history, c.To, 0)
		if err != nil {
			return Diff{}, err
		}
		newer = &history[i]
		if c.From == "" {
			if i+1 >= len(history) {
				return Diff{}, exitcode.BadInputf("%s has no entry before %s to compare it with", k, newer.Describe())
			}
			return withComparability(DiffEntries(history[i+1], *newer), history[i+1], cons), nil
		}
	}
	if c.From != "" {
		i, err := findEntry(history, c.From, -1)
		if err != nil {
			return Diff{}, err
		}
		return withComparability(DiffEntries(history[i], *newer), history[i], cons), nil
	}
	return diffNewestComparable(ctx, k, history, *newer, cons)
}

// pickKey is the key of c's newer entry, else the key c.Key names, else the store's only one.
func pickKey(ctx context.Context, store Reader, c DiffChoice) (Key, error) {
	if c.Newer == nil {
		return FindKey(ctx, store, c.Key)
	}
	if c.To != "" {
		return Key{}, exitcode.BadInputf("--to and a RESULT.json both name the newer entry: give one")
	}
	return c.Newer.Key(), nil
}

// diffNewestComparable compares newer with the newest entry of history the constraints
// allow, noting the ones passed over.
func diffNewestComparable(ctx context.Context, k Key, history []Entry, newer Entry, cons Constraints) (Diff, error) {
	ch, err := NewestComparable(ctx, staticHistory{k, history}, k, cons)
	if err != nil {
		return Diff{}, exitcode.BadInput(err)
	}
	if ch.Entry == nil {
		return Diff{}, exitcode.BadInputf("none of the %d entries of %s is comparable with the result; the newest: %s (--from SHA compares with one anyway)",
			ch.Entries, k, ch.Passed[0].Why)
	}
	d := DiffEntries(*ch.Entry, newer)
	for _, p := range ch.Passed {
		d.Notes = append(d.Notes, "passed over as not comparable: "+p.Why)
	}
	return d, nil
}

// withComparability notes in d when the older entry, chosen by hand or by order, is one
// the constraints would not compare with.
func withComparability(d Diff, older Entry, cons Constraints) Diff {
	if ok, why := Comparable(older, cons); !ok {
		d.Notes = append(d.Notes, "the older entry is not comparable under the config: "+why)
	}
	return d
}

// staticHistory is a Reader of one key's history already read.
type staticHistory struct {
	k  Key
	es []Entry
}

func (s staticHistory) Latest(ctx context.Context, k Key) (Entry, bool, error) {
	if len(s.es) == 0 {
		return Entry{}, false, nil
	}
	return s.es[0], true, nil
}

func (s staticHistory) History(ctx context.Context, k Key, n int) ([]Entry, error) {
	if n > 0 && n < len(s.es) {
		return s.es[:n], nil
	}
	return s.es, nil
}

func (s staticHistory) Keys(ctx context.Context) ([]Key, error) {
	return []Key{s.k}, nil
}

// FindKey is the key of store that flag names (ParseKey, matched by file name), or, when
// flag is empty, the store's only key. What the store holds is named when it is not one.
func FindKey(ctx context.Context, store Reader, flag string) (Key, error) {
	keys, err := store.Keys(ctx)
	if err != nil {
		return Key{}, exitcode.BadInput(err)
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = fmt.Sprintf("%q", k.String())
	}
	if flag == "" {
		switch len(keys) {
		case 0:
			return Key{}, exitcode.BadInputf("the store holds no baseline yet")
		case 1:
			return keys[0], nil
		}
		return Key{}, exitcode.BadInputf("the store holds %d GPUs: pick one with --key (%s)", len(keys), strings.Join(names, ", "))
	}
	want, err := ParseKey(flag)
	if err != nil {
		return Key{}, exitcode.BadInputf("--key %q: %v", flag, err)
	}
	for _, k := range keys {
		if k.same(want) {
			return k, nil
		}
	}
	return Key{}, exitcode.BadInputf("--key %q: the store holds no entry of %s (it holds %s)", flag, want, cmp.Or(strings.Join(names, ", "), "none"))
}

// findEntry returns the index in history (newest first) of the newest entry whose commit
// starts with sha; an empty sha is the entry at def (-1: none, an error). A prefix of two
// commits is ambiguous.
func findEntry(history []Entry, sha string, def int) (int, error) {
	sha = strings.ToLower(strings.TrimSpace(sha))
	if sha == "" {
		if def < 0 {
			return 0, exitcode.BadInputf("no entry named")
		}
		return def, nil
	}
	found, commit := -1, ""
	for i, e := range history {
		if !strings.HasPrefix(strings.ToLower(e.Commit), sha) {
			continue
		}
		switch {
		case found < 0:
			found, commit = i, e.Commit
		case e.Commit != commit:
			return 0, exitcode.BadInputf("%q names two entries, of %s and %s: give more of the commit", sha, commit, e.Commit)
		}
	}
	if found < 0 {
		return 0, exitcode.BadInputf("no entry of commit %q among the %d of %s", sha, len(history), history[0].Key())
	}
	return found, nil
}
