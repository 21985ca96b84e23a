// Package strictjson finds what encoding/json lets through silently in the JSON files
// kernel-gate reads: an object that holds the same key twice. encoding/json keeps the last
// value, so {"max_err": 0.9, "max_err": 0.0003} reads as 0.0003 and a file could say two
// things and be judged on the one the reader happened to keep. Because encoding/json also
// matches keys to struct fields without regard to case, "max_err" and "Max_Err" are the
// same key where the object decodes into a struct; Check compares keys that way, except
// inside the values named in Options.Exact (maps such as a harness's "extra", where "a"
// and "A" are two keys).
//
// Every reader of a JSON input calls Check (benchfile.Read, result.Read) before trusting
// what it decoded.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DuplicateKeyError reports a key that appears twice in one object.
type DuplicateKeyError struct {
	// Path locates the key: "results[3].max_err"; a top-level key is its name alone.
	Path string
	// Key is the second occurrence as written; First the first one, which differs from
	// Key only in case.
	Key, First string
	// Offset and FirstOffset are the byte offsets of the two keys' opening quotes from the
	// start of the input.
	Offset, FirstOffset int64
}

func (e *DuplicateKeyError) Error() string {
	same := ""
	if e.First != e.Key {
		same = fmt.Sprintf(" (the same field as %q: keys are matched without regard to case)", e.First)
	}
	return fmt.Sprintf("duplicate key %q at %s, byte offset %d%s; first at byte offset %d: a JSON object must not say two things, and only one of them would be read",
		e.Key, e.Path, e.Offset, same, e.FirstOffset)
}

// MaxDepth bounds the nesting of arrays and objects, as encoding/json does.
const MaxDepth = 10000

// Options tune Check.
type Options struct {
	// Exact names keys whose values are maps: inside them keys are compared exactly, not
	// without regard to case ("extra" in a harness file, "data" in a result).
	Exact []string
}

// Check walks the JSON value in data (white space may surround it) and returns a
// *DuplicateKeyError for the first key that appears twice in one object, or a
// *SyntaxError where the structure breaks (an unclosed string or bracket, a missing
// colon, nesting past MaxDepth). It reads keys, strings and nesting only: a reader
// decodes the same bytes with encoding/json, which validates the rest.
func Check(data []byte, o Options) error {
	return CheckAt(data, "", 0, o)
}

// Unmarshal is Check, then encoding/json's Unmarshal of the same bytes into v: for readers
// that want nothing between the two.
func Unmarshal(data []byte, v any, o Options) error {
	if err := Check(data, o); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// UnmarshalKnown is Unmarshal for readers that trust nothing they do not know: besides
// what Check refuses (a key twice, more than one value), a key v has no field for is an
// error.
func UnmarshalKnown(data []byte, v any, o Options) error {
	if err := Check(data, o); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// CheckAt is Check for a value found at path and byte offset base of a larger input: base
// is added to every offset and path is prefixed to every path.
func CheckAt(data []byte, path string, base int64, o Options) error {
	var c Checker
	return c.CheckAt(data, path, base, o)
}

// Checker is CheckAt for a reader that checks many values, one after another: it keeps
// its buffers between calls. The zero Checker is ready; it is not safe for concurrent use.
type Checker struct {
	c checker
}

// CheckAt is the function CheckAt.
func (k *Checker) CheckAt(data []byte, path string, base int64, o Options) error {
	c := &k.c
	c.data, c.base, c.path, c.o, c.stack = data, base, path, o, c.stack[:0]
	defer func() { c.data = nil }()
	i, err := c.value(c.space(0), 0, false)
	if err != nil {
		return err
	}
	if i = c.space(i); i < len(data) {
		return c.syntax(i, "more than one JSON value")
	}
	return nil
}

// SyntaxError is a break in the structure of the JSON that Check walks.
type SyntaxError struct {
	Offset int64
	msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte offset %d", e.msg, e.Offset) }

type checker struct {
	data  []byte
	base  int64
	path  string
	o     Options
	stack []step      // the path to the value being walked
	free  [][]keySeen // key lists of objects that ended, for the next ones
}

// step is one element of a path: an object key or an array index.
type step struct {
	key   string
	index int // -1 for a key
}

func (c *checker) syntax(i int, format string, args ...any) error {
	return &SyntaxError{Offset: c.base + int64(i), msg: "strictjson: " + fmt.Sprintf(format, args...)}
}

func (c *checker) space(i int) int {
	for i < len(c.data) {
		switch c.data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// value walks the value at i and returns the index past it; exact compares the keys of
// its objects exactly.
func (c *checker) value(i, depth int, exact bool) (int, error) {
	if i >= len(c.data) {
		return i, c.syntax(i, "unexpected end of input")
	}
	switch c.data[i] {
	case '{':
		return c.object(i, depth+1, exact)
	case '[':
		if depth+1 > MaxDepth {
			return i, c.syntax(i, "nested deeper than %d", MaxDepth)
		}
		c.stack = append(c.stack, step{index: 0})
		defer func() { c.stack = c.stack[:len(c.stack)-1] }()
		i = c.space(i + 1)
		if i < len(c.data) && c.data[i] == ']' {
			return i + 1, nil
		}
		for n := 0; ; n++ {
			c.stack[len(c.stack)-1].index = n
			var err error
			if i, err = c.value(i, depth+1, exact); err != nil {
				return i, err
			}
			i = c.space(i)
			switch {
			case i >= len(c.data):
				return i, c.syntax(i, "unexpected end of input in an array")
			case c.data[i] == ',':
				i = c.space(i + 1)
			case c.data[i] == ']':
				return i + 1, nil
			default:
				return i, c.syntax(i, "want , or ] in an array")
			}
		}
	case '"':
		_, end, err := c.str(i)
		return end, err
	}
	// A number or literal: up to the next delimiter (encoding/json checks it).
	start := i
	for i < len(c.data) {
		switch c.data[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n', ':', '"', '{', '[':
			if i == start {
				return i, c.syntax(i, "want a value, found %q", c.data[i])
			}
			return i, nil
		}
		i++
	}
	return i, nil
}

// object walks the object at i.
func (c *checker) object(i, depth int, exact bool) (int, error) {
	if depth > MaxDepth {
		return i, c.syntax(i, "nested deeper than %d", MaxDepth)
	}
	open := i
	keys := Keys{exact: exact}
	if n := len(c.free); n > 0 {
		keys.few, c.free = c.free[n-1][:0], c.free[:n-1]
	}
	c.stack = append(c.stack, step{index: -1})
	defer func() {
		c.stack = c.stack[:len(c.stack)-1]
		if keys.few != nil {
			c.free = append(c.free, keys.few)
		}
	}()
	i = c.space(i + 1)
	if i < len(c.data) && c.data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(c.data) || c.data[i] != '"' {
			if i >= len(c.data) {
				return i, c.syntax(open, "an object that does not end")
			}
			return i, c.syntax(i, "want a key (a string) in an object")
		}
		key, end, err := c.str(i)
		if err != nil {
			return end, err
		}
		c.stack[len(c.stack)-1].key = key
		if err := keys.add(key, c.base+int64(i), c.pathTo); err != nil {
			return i, err
		}
		i = c.space(end)
		if i >= len(c.data) || c.data[i] != ':' {
			return i, c.syntax(i, "want : after a key")
		}
		inner := exact || c.exactKey(key)
		if i, err = c.value(c.space(i+1), depth, inner); err != nil {
			return i, err
		}
		i = c.space(i)
		switch {
		case i >= len(c.data):
			return i, c.syntax(open, "an object that does not end")
		case c.data[i] == ',':
			i = c.space(i + 1)
		case c.data[i] == '}':
			return i + 1, nil
		default:
			return i, c.syntax(i, "want , or } in an object")
		}
	}
}

func (c *checker) exactKey(k string) bool {
	for _, e := range c.o.Exact {
		if strings.EqualFold(e, k) {
			return true
		}
	}
	return false
}

// str reads the string at i and returns it decoded, as encoding/json decodes it (escapes,
// invalid UTF-8 replaced), and the index past it.
func (c *checker) str(i int) (string, int, error) {
	plain := true
	for j := i + 1; j < len(c.data); j++ {
		switch b := c.data[j]; {
		case b == '\\':
			plain = false
			j++
		case b == '"':
			raw := c.data[i : j+1]
			if plain {
				return string(raw[1 : len(raw)-1]), j + 1, nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", j + 1, c.syntax(i, "a string that does not decode: %v", err)
			}
			return s, j + 1, nil
		case b >= utf8.RuneSelf || b < ' ':
			plain = false
		}
	}
	return "", len(c.data), c.syntax(i, "a string that does not end")
}

// pathTo renders the path of key in the object being walked.
func (c *checker) pathTo(key string) string {
	var b strings.Builder
	b.WriteString(c.path)
	for _, s := range c.stack[:len(c.stack)-1] {
		if s.index >= 0 {
			fmt.Fprintf(&b, "[%d]", s.index)
		} else {
			writeKey(&b, s.key)
		}
	}
	writeKey(&b, key)
	return b.String()
}

type keySeen struct {
	key    string // as written
	offset int64
}

// fold is encoding/json's case folding of keys: two keys fold alike when bytes.EqualFold
// says they are equal, which is when encoding/json may give both to one struct field.
func fold(k string) string {
	ascii := true
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= utf8.RuneSelf || 'a' <= c && c <= 'z' {
			ascii = false
			break
		}
	}
	if ascii {
		return k
	}
	b := make([]byte, 0, len(k))
	for _, r := range k {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b = append(b, byte(r))
			continue
		}
		b = utf8.AppendRune(b, unicode.ToUpper(unicode.ToLower(r)))
	}
	return string(b)
}

// writeKey appends .key, or ["key"] when the key is not a plain name.
func writeKey(b *strings.Builder, k string) {
	plain := k != ""
	for _, r := range k {
		if !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			plain = false
			break
		}
	}
	if plain {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
		return
	}
	b.WriteString("[" + strconv.Quote(k) + "]")
}

// IsDuplicate reports whether err is or wraps a *DuplicateKeyError.
func IsDuplicate(err error) bool {
	var d *DuplicateKeyError
	return errors.As(err, &d)
}

// Keys holds the keys of one object that a streaming reader reads piece by piece, with
// Check's rules: Add reports a key that is already there.
type Keys struct {
	exact bool
	few   []keySeen          // the first keys, searched in order
	many  map[string]keySeen // past a few, by name
}

// NewKeys returns an empty set; exact compares keys exactly (a map) instead of without
// regard to case (a struct).
func NewKeys(exact bool) *Keys { return &Keys{exact: exact} }

// Add records key, read at byte offset off; path is the object's path ("" at the top).
// It returns a *DuplicateKeyError when the object already has the key.
func (k *Keys) Add(path, key string, off int64) error {
	return k.add(key, off, func(key string) string {
		var b strings.Builder
		b.WriteString(path)
		writeKey(&b, key)
		return b.String()
	})
}

func (k *Keys) add(key string, off int64, pathTo func(string) string) error {
	name := key // folded once the keys are many; a few are compared with EqualFold
	first, dup := keySeen{}, false
	if k.many != nil {
		if !k.exact {
			name = fold(key)
		}
		first, dup = k.many[name]
	} else {
		for _, s := range k.few {
			if s.key == key || !k.exact && strings.EqualFold(s.key, key) {
				first, dup = s, true
				break
			}
		}
	}
	if dup {
		return &DuplicateKeyError{Path: pathTo(key), Key: key, First: first.key, Offset: off, FirstOffset: first.offset}
	}
	seen := keySeen{key, off}
	switch {
	case k.many != nil:
		k.many[name] = seen
	case len(k.few) < 16:
		k.few = append(k.few, seen)
	default:
		k.many = make(map[string]keySeen, 2*len(k.few))
		for _, s := range append(k.few, seen) {
			n := s.key
			if !k.exact {
				n = fold(n)
			}
			k.many[n] = s
		}
		k.few = nil
	}
	return nil
}

// SameKey reports whether two keys name the same struct field (encoding/json's matching,
// which is bytes.EqualFold's).
func SameKey(a, b string) bool { return strings.EqualFold(a, b) }

// LineCol returns the 1-based line and column (in bytes) of byte offset off in data, for
// messages that point into a file.
func LineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
