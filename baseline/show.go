package baseline

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Listing is what `kernel-gate baseline show` prints: every key's latest entries.
type Listing struct {
	Schema string     `json:"schema"`
	Keys   []KeyEntry `json:"keys"`
}

// KeyEntry is one key's entries, newest first.
type KeyEntry struct {
	Key     Key     `json:"key"`
	Entries []Entry `json:"entries"`
}

// List reads the newest n entries of every key in the store.
func List(ctx context.Context, s Store, n int) (Listing, error) {
	l := Listing{Schema: Schema, Keys: []KeyEntry{}}
	keys, err := s.Keys(ctx)
	if err != nil {
		return l, err
	}
	for _, k := range keys {
		es, err := s.History(ctx, k, n)
		if err != nil {
			return l, err
		}
		l.Keys = append(l.Keys, KeyEntry{Key: k, Entries: es})
	}
	return l, nil
}

// WriteJSON writes the listing as indented JSON.
func (l Listing) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(l)
}

// WriteText writes one line per entry under its key, for a terminal.
func (l Listing) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(l.Keys) == 0 {
		b.WriteString("the store holds no baseline yet\n")
	}
	for _, k := range l.Keys {
		fmt.Fprintf(&b, "%s: %d entr%s shown\n", k.Key, len(k.Entries), map[bool]string{true: "y", false: "ies"}[len(k.Entries) == 1])
		for _, e := range k.Entries {
			c := e.Commit
			if len(c) > 12 {
				c = c[:12]
			}
			why := ""
			if e.Trigger != nil && e.Trigger.Reason != "" {
				why = fmt.Sprintf(" (%q)", e.Trigger.Reason)
			}
			fmt.Fprintf(&b, "  %s  %s  %-4s  driver %s, CUDA %s, %d kernel record(s), %d timing(s)%s\n",
				e.Time.UTC().Format("2006-01-02 15:04"), c, e.Verdict, cmp.Or(e.Fingerprint.Driver, "?"), cmp.Or(e.Fingerprint.CUDA, "?"),
				len(e.Kernels), len(e.Timings), why)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
