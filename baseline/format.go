package baseline

// The file format both stores share, and the rules that keep a history bounded and an
// update idempotent.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/input"
)

// Schema names the format of a baseline file. Within v1 fields are only added, and a
// reader ignores those it does not know; anything else is a new version.
const Schema = "kernel-gate/baseline/v1"

// schemaFamily prefixes every version of the format.
const schemaFamily = "kernel-gate/baseline/"

// DefaultKeep is how many entries per key a store keeps when told nothing else: enough
// for a trend over months of daily updates, small enough to rewrite on each.
const DefaultKeep = 200

// ErrSchema marks a baseline file of a format this kernel-gate does not read; the error
// names the file and its schema. Such a file is never overwritten.
var ErrSchema = errors.New("unsupported baseline format")

// MaxFileBytes is the most a key's file may hold, on either store: DefaultKeep entries of
// a repository with dozens of targets, their timings' quantiles included, are a few MiB.
// A bigger file is refused before it is read (its size from a Stat, or the branch's tree),
// since decoding and rewriting it would take many times its size in memory; an update that
// would make one is refused too, naming `baseline prune`.
const MaxFileBytes = 32 << 20

// fileLimit is MaxFileBytes as internal/input takes it.
var fileLimit = input.Limit{Bytes: MaxFileBytes, What: "a baseline store file"}

// keyFile is the content of one key's file: its history, oldest entry first.
//
// A newer kernel-gate may have written fields this one does not know (Schema: within v1
// fields are only added), in the file and in each entry at any depth. An update or prune
// rewrites the file, so they are kept: the file's unknown fields as read (extra), and each
// entry as read (kept) for as long as what this kernel-gate knows of it is unchanged.
type keyFile struct {
	Schema  string  `json:"schema"`
	Key     Key     `json:"key"`
	Entries []Entry `json:"entries"`

	extra map[string]json.RawMessage // the file's fields other than schema, key and entries
	kept  map[entryID][]keptEntry    // the entries as read whose text holds more than known
}

// entryID is what makes an entry itself (add replaces an entry of the same commit and time).
type entryID struct {
	commit string
	time   int64
}

func idOf(e Entry) entryID { return entryID{e.Commit, e.Time.UnixNano()} }

// keptEntry is an entry as the file held it (compacted) and as this kernel-gate encodes
// what it read of it.
type keptEntry struct {
	raw, known []byte
}

// encode writes the file with one entry per line: small enough to diff on the branch,
// and the header first, so that Keys reads a key without decoding its history.
func (f *keyFile) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // kernel names are full of '<' and '>'
	b.WriteString(`{"schema":`)
	if err := enc.Encode(Schema); err != nil {
		return nil, err
	}
	trimNewline(&b)
	b.WriteString(`,"key":`)
	if err := enc.Encode(f.Key); err != nil {
		return nil, err
	}
	trimNewline(&b)
	for _, name := range slices.Sorted(maps.Keys(f.extra)) {
		b.WriteByte(',')
		if err := enc.Encode(name); err != nil {
			return nil, err
		}
		trimNewline(&b)
		b.WriteByte(':')
		b.Write(f.extra[name])
	}
	b.WriteString(`,"entries":[`)
	for i, e := range f.Entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		start := b.Len()
		if err := enc.Encode(e); err != nil {
			return nil, fmt.Errorf("baseline: encoding the entry of %s: %w", e.Describe(), err)
		}
		trimNewline(&b)
		if raw := f.asRead(e, b.Bytes()[start:]); raw != nil {
			b.Truncate(start)
			b.Write(raw)
		}
	}
	b.WriteString("\n]}\n")
	if b.Len() > MaxFileBytes {
		return nil, fmt.Errorf("baseline: the file of %s would hold %d bytes, more than the %d MiB a store file may: "+
			"keep fewer entries (kernel-gate baseline prune --keep N, or baseline.keep in the config)", f.Key, b.Len(), MaxFileBytes>>20)
	}
	return b.Bytes(), nil
}

// asRead returns the text e was read from when it holds fields this kernel-gate does not
// know and what it knows of e is as read (known, encoded as encode does); else nil.
func (f *keyFile) asRead(e Entry, known []byte) []byte {
	for _, k := range f.kept[idOf(e)] {
		if bytes.Equal(k.known, known) {
			return k.raw
		}
	}
	return nil
}

// encodeEntry encodes e as encode writes it.
func encodeEntry(e Entry) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func trimNewline(b *bytes.Buffer) { b.Truncate(b.Len() - 1) }

// compact is a JSON value without its insignificant spaces: one entry per line.
func compact(v json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// checkSchema refuses a file of another format, naming it: an older or newer version, a
// file with no schema, something that is not JSON.
func checkSchema(raw []byte, name string) error {
	var probe struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return fmt.Errorf("baseline file %s is not a kernel-gate baseline (not JSON: %v)", name, err)
	}
	switch {
	case probe.Schema == nil || *probe.Schema == "":
		return fmt.Errorf("%w: baseline file %s has no schema: it is not a kernel-gate baseline file", ErrSchema, name)
	case *probe.Schema == Schema:
		return nil
	case strings.HasPrefix(*probe.Schema, schemaFamily):
		return fmt.Errorf("%w: baseline file %s is %s, which this kernel-gate cannot read (it reads %s only): "+
			"use the kernel-gate version that wrote it, or another branch or directory", ErrSchema, name, *probe.Schema, Schema)
	default:
		return fmt.Errorf("%w: baseline file %s has schema %q: it is not a kernel-gate baseline file", ErrSchema, name, *probe.Schema)
	}
}

// decodeKeyFile reads a key's file; want, when set, is the key the file must hold.
func decodeKeyFile(raw []byte, name string, want *Key) (*keyFile, error) {
	if err := checkSchema(raw, name); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("baseline file %s: %w", name, err)
	}
	var f keyFile
	var entries []json.RawMessage
	seen := map[string]string{}
	for _, field := range slices.Sorted(maps.Keys(fields)) {
		value := fields[field]
		// The fields this kernel-gate knows, matched as encoding/json matches a struct's
		// (case aside), and only once: "entries" and "Entries" would leave which history
		// is the file's to the order of a map.
		known := strings.ToLower(field)
		if known == "schema" || known == "key" || known == "entries" {
			if other, ok := seen[known]; ok {
				return nil, fmt.Errorf("baseline file %s: %q and %q are one field given twice", name, other, field)
			}
			seen[known] = field
		}
		var err error
		switch known {
		case "schema":
			err = json.Unmarshal(value, &f.Schema)
		case "key":
			err = json.Unmarshal(value, &f.Key)
		case "entries":
			err = json.Unmarshal(value, &entries)
		default:
			if f.extra == nil {
				f.extra = map[string]json.RawMessage{}
			}
			f.extra[field], err = compact(value)
		}
		if err != nil {
			return nil, fmt.Errorf("baseline file %s: %s: %w", name, field, err)
		}
	}
	for i, value := range entries {
		var e Entry
		if err := json.Unmarshal(value, &e); err != nil {
			return nil, fmt.Errorf("baseline file %s: entry %d: %w", name, i+1, err)
		}
		f.Entries = append(f.Entries, e)
		known, err := encodeEntry(e)
		if err != nil {
			return nil, fmt.Errorf("baseline file %s: entry %d: %w", name, i+1, err)
		}
		cv, err := compact(value)
		if err != nil {
			return nil, fmt.Errorf("baseline file %s: entry %d: %w", name, i+1, err)
		}
		if !bytes.Equal(cv, known) {
			if f.kept == nil {
				f.kept = map[entryID][]keptEntry{}
			}
			f.kept[idOf(e)] = append(f.kept[idOf(e)], keptEntry{raw: cv, known: known})
		}
	}
	if want != nil && !f.Key.same(*want) {
		return nil, fmt.Errorf("baseline file %s holds the baseline of %s, not of %s", name, f.Key, *want)
	}
	return &f, nil
}

// readKey reads only a file's schema and key: its first two fields as encode writes
// them, else (a file written by hand) the whole file.
func readKey(raw []byte, name string) (Key, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var schema string
	var key *Key
	if t, err := dec.Token(); err == nil && t == json.Delim('{') {
	fields:
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				break
			}
			switch t {
			case "schema":
				if dec.Decode(&schema) != nil {
					break fields
				}
			case "key":
				var k Key
				if dec.Decode(&k) == nil {
					key = &k
				}
				break fields
			default:
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break fields
				}
			}
		}
	}
	if schema != Schema || key == nil {
		f, err := decodeKeyFile(raw, name, nil)
		if err != nil {
			return Key{}, err
		}
		key = &f.Key
	}
	k, err := NewKey(key.GPU, key.Arch)
	if err != nil {
		return Key{}, fmt.Errorf("baseline file %s: %w", name, err)
	}
	return k, nil
}

// add puts e into the history, replacing an entry of the same commit and time (a retried
// update), and keeps the newest keep. It reports whether the file changed, so that an
// update already made is not written again.
func (f *keyFile) add(e Entry, keep int) (bool, error) {
	before, err := json.Marshal(f.Entries)
	if err != nil {
		return false, err
	}
	f.Entries = slices.DeleteFunc(f.Entries, func(old Entry) bool {
		return old.Commit == e.Commit && old.Time.Equal(e.Time)
	})
	f.Entries = append(f.Entries, e)
	f.prune(keep)
	after, err := json.Marshal(f.Entries)
	if err != nil {
		return false, err
	}
	return !bytes.Equal(before, after), nil
}

// prune orders the history oldest first and drops all but the newest keep entries. It
// reports whether any was dropped.
func (f *keyFile) prune(keep int) bool {
	slices.SortStableFunc(f.Entries, func(a, b Entry) int { return a.Time.Compare(b.Time) })
	if keep <= 0 || len(f.Entries) <= keep {
		return false
	}
	f.Entries = slices.Delete(f.Entries, 0, len(f.Entries)-keep)
	return true
}

// newest returns up to n entries, newest first (all for n <= 0).
func (f *keyFile) newest(n int) []Entry {
	out := slices.Clone(f.Entries)
	// Entries of the same second (times are kept to the second) stay newest-added first.
	slices.Reverse(out)
	slices.SortStableFunc(out, func(a, b Entry) int { return b.Time.Compare(a.Time) })
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
