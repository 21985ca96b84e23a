package baseline

// The file format both stores share, and the rules that keep a history bounded and an
// update idempotent.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// keyFile is the content of one key's file: its history, oldest entry first.
type keyFile struct {
	Schema  string  `json:"schema"`
	Key     Key     `json:"key"`
	Entries []Entry `json:"entries"`
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
	b.WriteString(`,"entries":[`)
	for i, e := range f.Entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		if err := enc.Encode(e); err != nil {
			return nil, fmt.Errorf("baseline: encoding the entry of %s: %w", e.Describe(), err)
		}
		trimNewline(&b)
	}
	b.WriteString("\n]}\n")
	return b.Bytes(), nil
}

func trimNewline(b *bytes.Buffer) { b.Truncate(b.Len() - 1) }

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
	var f keyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("baseline file %s: %w", name, err)
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
