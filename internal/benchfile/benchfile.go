// Package benchfile reads kernel-gate/bench/v1, the file a kernel harness writes for
// kernel-gate: per kernel × shape, launch timings (bench mode) and error against a
// reference (check mode). A harness is any command; kernel-gate runs it with
//
//	KG_MODE=bench|check|sanitize  KG_SHAPES=small,mission  KG_ROUNDS=N  KG_SAMPLES=N  KG_OUT=FILE
//
// and reads FILE. docs/harness-protocol.md is the full description for harness authors.
package benchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/occupancy"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// Schema names this version of the protocol.
const Schema = "kernel-gate/bench/v1"

// Modes a harness runs in.
const (
	ModeBench    = "bench"
	ModeCheck    = "check"
	ModeSanitize = "sanitize"
)

// File is one harness run.
type File struct {
	Schema string `json:"schema"`
	Device Device `json:"device"`
	// Request echoes what the harness was asked (KG_MODE, KG_SHAPES, KG_ROUNDS, KG_SAMPLES),
	// so a file judged later still says how many runs were expected.
	Request *Request `json:"request,omitempty"`
	Results []Result `json:"results"`
}

// Device is the GPU and software the harness ran on.
type Device struct {
	Name       string `json:"name"`
	ComputeCap string `json:"compute_cap"`
	Driver     string `json:"driver"`
	CUDA       string `json:"cuda"`
}

// Request is what the harness was asked to do.
type Request struct {
	Mode    string   `json:"mode"`
	Shapes  []string `json:"shapes,omitempty"`
	Rounds  int      `json:"rounds,omitempty"`
	Samples int      `json:"samples,omitempty"`
}

// Result is one kernel × shape. Timing fields come from bench mode, error fields from check
// mode; a field the harness did not measure is nil.
type Result struct {
	Kernel string `json:"kernel"`
	Shape  string `json:"shape"`

	// RoundsUs holds per-launch timings in microseconds, grouped by round.
	RoundsUs [][]Float `json:"rounds_us,omitempty"`
	// SamplesUs is a flat list of per-launch timings (one round).
	SamplesUs []Float `json:"samples_us,omitempty"`
	// Summary-only timings from scripts that keep no samples.
	P50Us  *Float `json:"p50_us,omitempty"`
	MeanUs *Float `json:"mean_us,omitempty"`
	MinUs  *Float `json:"min_us,omitempty"`
	// Reference is another implementation timed in the same run (e.g. PyTorch SDPA).
	Reference *Reference `json:"reference,omitempty"`

	// MaxErr and MeanErr are the largest and mean absolute error against the reference;
	// RefMaxAbs is the largest absolute reference value (for relative tolerances).
	MaxErr    *Float `json:"max_err,omitempty"`
	MeanErr   *Float `json:"mean_err,omitempty"`
	RefMaxAbs *Float `json:"ref_max_abs,omitempty"`
	// BadFraction is the fraction of output elements outside the harness's own tolerance.
	BadFraction *Float `json:"bad_fraction,omitempty"`
	// NaNCount and InfCount count non-finite output elements over every check.
	NaNCount *int64 `json:"nan_count,omitempty"`
	InfCount *int64 `json:"inf_count,omitempty"`
	// Checks is how many independent checks ran, each on fresh random inputs.
	Checks *int `json:"checks,omitempty"`
	// RepeatLaunches launched the kernel again on the same inputs; RepeatMaxDiff is the
	// largest difference between any launch's output and the first's.
	RepeatLaunches *int   `json:"repeat_launches,omitempty"`
	RepeatMaxDiff  *Float `json:"repeat_max_diff,omitempty"`
	// Launches counts kernel launches in sanitize mode.
	Launches *int `json:"launches,omitempty"`
	// BlockSize is the launch's threads per block and DynamicSmem its dynamic shared
	// memory in bytes, as the harness launched the kernel: what the theoretical
	// occupancy of an explanation is computed for (optional, any mode).
	BlockSize   *int `json:"block_size,omitempty"`
	DynamicSmem *int `json:"dynamic_smem,omitempty"`
	// Error is the harness's own failure for this kernel × shape (a CUDA error, a crash it
	// caught); any non-empty Error fails the gates that read the result.
	Error string `json:"error,omitempty"`
	// Extra holds anything else a harness wants to keep; kernel-gate does not read it.
	// Unknown top-level keys are errors, so a misspelt field cannot go unnoticed.
	Extra map[string]any `json:"extra,omitempty"`
}

// MaxErrorMessage bounds a harness error that ErrorMessage quotes: a harness may put a
// whole stack trace or a crashed program's output in Error, and a finding must stay
// readable.
const MaxErrorMessage = 2000

// ErrorMessage renders a Result's Error for a finding's message: trimmed, cut on a rune
// boundary past MaxErrorMessage bytes (ending "…"), and valid UTF-8, since the report
// quotes it into JSON and markdown. An Error of white space alone still fails the gates,
// so it is named rather than left blank.
func ErrorMessage(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(an error made of white space)"
	}
	if len(s) > MaxErrorMessage {
		cut := MaxErrorMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Reference is a reference implementation's timings from the same run.
type Reference struct {
	Name      string    `json:"name"`
	RoundsUs  [][]Float `json:"rounds_us,omitempty"`
	SamplesUs []Float   `json:"samples_us,omitempty"`
	P50Us     *Float    `json:"p50_us,omitempty"`
}

// Float is a JSON number that may also be NaN or ±Inf: harnesses write those as the
// strings "NaN", "Infinity", "-Infinity" (or "inf"), or as the bare tokens Python's json
// module emits, which Read accepts.
type Float float64

// UnmarshalJSON accepts numbers and the non-finite spellings.
func (f *Float) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return errors.New("null is not a number (leave the field out instead)")
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	switch strings.ToLower(s) {
	case "nan", "+nan", "-nan":
		*f = Float(math.NaN())
		return nil
	case "inf", "+inf", "infinity", "+infinity":
		*f = Float(math.Inf(1))
		return nil
	case "-inf", "-infinity":
		*f = Float(math.Inf(-1))
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	*f = Float(v)
	return nil
}

// MarshalJSON writes non-finite values as strings, so the output is valid JSON.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// Finite reports whether f is neither NaN nor infinite.
func (f Float) Finite() bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// ErrNotBenchFile reports input that is not a kernel-gate/bench/v1 file.
var ErrNotBenchFile = errors.New("not a kernel-gate/bench/v1 file")

// maxSize bounds a harness file: timings of every launch of a long benchmark fit easily.
var maxSize int64 = 256 << 20

// maxValue bounds one result, or any other top-level value, of a harness file.
var maxValue = 64 << 20

// Read decodes and validates a harness file. It streams: each result is read, checked and
// decoded on its own, so memory grows with the results kept, not with the file (which may
// be up to 256 MiB). Every error says where: "line 12, column 5", or the result and the
// line it starts on. A key that appears twice in one object (package strictjson) is an
// error, as a key kernel-gate does not know is.
func Read(r io.Reader) (*File, error) {
	d := &decoder{s: scanner{r: r, line: 1}}
	f, err := d.file()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotBenchFile, err)
	}
	return f, nil
}

// decoder reads a harness file: the top-level object key by key, "results" element by
// element, every other value whole.
type decoder struct {
	s    scanner
	buf  []byte            // the value being read, as written
	seen map[[2]string]int // kernel × shape → the line of its result
	// chunks hold the results read so far, so that a long file's results are copied
	// once into File.Results, not at each growth of one slice.
	chunks [][]Result
	strict strictjson.Checker
	// dec decodes the results one after another from feed, so that its buffers serve
	// every result.
	dec  *json.Decoder
	feed feed
}

// feed is the reader under decoder.dec: the result being decoded.
type feed struct{ b []byte }

func (f *feed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

// element decodes one result. An object decodes with the decoder kept for them all (it
// reads an object's last byte without asking for more); anything else, and any error,
// goes through position.decode, which says where.
func (d *decoder) element(at position, raw []byte, path string, r *Result) error {
	if len(raw) == 0 || raw[0] != '{' {
		return at.decode(raw, path, r, &d.strict)
	}
	var ins []insertion
	quoted := quoteNonFiniteAt(raw, &ins)
	if d.dec == nil {
		d.dec = json.NewDecoder(&d.feed)
		d.dec.DisallowUnknownFields()
	}
	d.feed.b = quoted
	err := d.dec.Decode(r)
	if err != nil || len(d.feed.b) != 0 || d.dec.More() {
		d.dec, d.feed.b = nil, nil // its state is spent: say where from scratch
		*r = Result{}
		return at.decode(raw, path, r, &d.strict)
	}
	return at.strict(raw, quoted, ins, path, &d.strict)
}

// fileKeys are the top-level keys, as File spells them.
var fileKeys = []string{"schema", "device", "request", "results"}

func (d *decoder) file() (*File, error) {
	s := &d.s
	c, ok := s.skipSpace()
	if !ok {
		if s.err != nil {
			return nil, s.err
		}
		return nil, errors.New("the file is empty (did the harness crash before writing it?)")
	}
	if c != '{' {
		return nil, s.errorf("want a JSON object ({), found %s", quoteByte(c))
	}
	s.next()
	var f File
	keys := strictjson.NewKeys(false)
	for first := true; ; first = false {
		c, ok := s.skipSpace()
		if !ok {
			return nil, s.eof()
		}
		if c == '}' && first {
			s.next()
			break
		}
		at := s.here()
		key, err := d.key()
		if err != nil {
			return nil, err
		}
		if err := keys.Add("", key, at.off); err != nil {
			return nil, fmt.Errorf("line %d, column %d: %w", at.line, at.col, err)
		}
		field := ""
		for _, k := range fileKeys {
			if strictjson.SameKey(k, key) {
				field = k
			}
		}
		switch field {
		case "":
			return nil, fmt.Errorf("line %d, column %d: json: unknown field %q", at.line, at.col, key)
		case "results":
			err = d.results(&f)
		case "schema":
			err = d.value(key, &f.Schema)
		case "device":
			err = d.value(key, &f.Device)
		case "request":
			err = d.value(key, &f.Request)
		}
		if err != nil {
			return nil, err
		}
		c, ok = s.skipSpace()
		switch {
		case !ok:
			return nil, s.eof()
		case c == ',':
			s.next()
			continue
		case c == '}':
			s.next()
		default:
			return nil, s.errorf("want , or } after the value of %q, found %s", key, quoteByte(c))
		}
		break
	}
	if c, ok := s.skipSpace(); ok {
		return nil, s.errorf("more than one JSON value (%s after the closing })", quoteByte(c))
	} else if s.err != nil {
		return nil, s.err
	}
	if f.Schema != Schema {
		return nil, fmt.Errorf("schema is %q, want %q", f.Schema, Schema)
	}
	if len(f.Results) == 0 {
		return nil, errors.New("no results")
	}
	return &f, nil
}

// key reads an object key and the colon after it.
func (d *decoder) key() (string, error) {
	s := &d.s
	if c, _ := s.peek(); c != '"' {
		if s.err != nil {
			return "", s.err
		}
		return "", s.errorf("want a key (a string), found %s", quoteByte(c))
	}
	at := s.here()
	raw, err := d.capture()
	if err != nil {
		return "", err
	}
	var key string
	if err := json.Unmarshal(raw, &key); err != nil {
		return "", at.errorf(raw, 0, err)
	}
	c, ok := s.skipSpace()
	if !ok {
		return "", s.eof()
	}
	if c != ':' {
		return "", s.errorf("want : after the key %q, found %s", key, quoteByte(c))
	}
	s.next()
	if _, ok := s.skipSpace(); !ok {
		return "", s.eof()
	}
	return key, nil
}

// value reads one whole value into v; path names it in errors.
func (d *decoder) value(path string, v any) error {
	at := d.s.here()
	raw, err := d.capture()
	if err != nil {
		return err
	}
	return at.decode(raw, path, v, &d.strict)
}

// results reads the results array element by element.
func (d *decoder) results(f *File) error {
	s := &d.s
	if c, _ := s.peek(); c != '[' {
		return d.value("results", &f.Results) // null, or not an array: decoding says so
	}
	s.next()
	if d.seen == nil {
		d.seen = map[[2]string]int{}
	}
	for i := 0; ; i++ {
		c, ok := s.skipSpace()
		if !ok {
			return s.eof()
		}
		if c == ']' && i == 0 {
			s.next()
			f.Results = []Result{}
			return nil
		}
		at := s.here()
		raw, err := d.capture()
		if err != nil {
			return err
		}
		path := fmt.Sprintf("results[%d]", i)
		var r Result
		if err := d.element(at, raw, path, &r); err != nil {
			return err
		}
		if err := d.check(&r, at.line); err != nil {
			return fmt.Errorf("%s (line %d): %v", path, at.line, err)
		}
		if n := len(d.chunks); n == 0 || len(d.chunks[n-1]) == cap(d.chunks[n-1]) {
			size := 4096 // 16, 32, ... 4096 results a chunk
			if n < 8 {
				size = 16 << n
			}
			d.chunks = append(d.chunks, make([]Result, 0, size))
		}
		d.chunks[len(d.chunks)-1] = append(d.chunks[len(d.chunks)-1], r)
		c, ok = s.skipSpace()
		switch {
		case !ok:
			return s.eof()
		case c == ',':
			s.next()
		case c == ']':
			s.next()
			f.Results = d.gather()
			return nil
		default:
			return s.errorf("want , or ] after results[%d], found %s", i, quoteByte(c))
		}
	}
}

// gather returns the results read in one slice of their length.
func (d *decoder) gather() []Result {
	n := 0
	for _, c := range d.chunks {
		n += len(c)
	}
	out := make([]Result, 0, n)
	for i, c := range d.chunks {
		out = append(out, c...)
		d.chunks[i] = nil
	}
	d.chunks = nil
	return out
}

// check validates one result; line is where it starts.
func (d *decoder) check(r *Result, line int) error {
	if r.Kernel == "" || r.Shape == "" {
		return errors.New("kernel and shape are required")
	}
	key := [2]string{r.Kernel, r.Shape}
	if first, dup := d.seen[key]; dup {
		return fmt.Errorf("%s × %s appears twice (first at line %d)", r.Kernel, r.Shape, first)
	}
	d.seen[key] = line
	for _, c := range []*int{r.Checks, r.RepeatLaunches, r.Launches} {
		if c != nil && *c < 0 {
			return fmt.Errorf("%s × %s: a count is negative", r.Kernel, r.Shape)
		}
	}
	for _, c := range []*int64{r.NaNCount, r.InfCount} {
		if c != nil && *c < 0 {
			return fmt.Errorf("%s × %s: a count is negative", r.Kernel, r.Shape)
		}
	}
	if r.BlockSize != nil && (*r.BlockSize < 1 || *r.BlockSize > occupancy.MaxBlockSize) {
		return fmt.Errorf("%s × %s: block_size %d is not a block a kernel can launch (1 to %d threads)", r.Kernel, r.Shape, *r.BlockSize, occupancy.MaxBlockSize)
	}
	if r.DynamicSmem != nil && *r.DynamicSmem < 0 {
		return fmt.Errorf("%s × %s: dynamic_smem is negative", r.Kernel, r.Shape)
	}
	return nil
}

// capture reads one JSON value as written into d.buf (reused) and returns it: a string,
// an object or array (strings and nesting followed, nothing else checked: decoding does
// that), or a bare token up to the next delimiter. A value is at most maxValue bytes.
func (d *decoder) capture() ([]byte, error) {
	s := &d.s
	d.buf = d.buf[:0]
	depth := 0
	inString, escaped, bare := false, false, false
	start := s.here()
	for {
		c, ok := s.peek()
		if !ok {
			if s.err != nil {
				return nil, s.err
			}
			if depth > 0 || inString || len(d.buf) == 0 {
				return nil, s.eof()
			}
			return d.buf, nil // a bare token that ends the input
		}
		if len(d.buf) >= maxValue {
			return nil, fmt.Errorf("line %d, column %d: a value larger than %s", start.line, start.col, numtext.Bytes(int64(maxValue)))
		}
		if bare {
			switch c {
			case ',', '}', ']', ':', ' ', '\t', '\r', '\n', '"', '{', '[':
				return d.buf, nil
			}
		}
		s.next()
		d.buf = append(d.buf, c)
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 0 {
					return d.buf, nil
				}
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > strictjson.MaxDepth {
				return nil, s.errorf("nested deeper than %d", strictjson.MaxDepth)
			}
		case c == '}' || c == ']':
			depth--
			if depth <= 0 {
				return d.buf, nil
			}
		case depth == 0:
			bare = true
		}
	}
}

// exactKeys are the maps of a harness file, whose keys are compared exactly.
var exactKeys = []string{"extra"}

// position is where a captured value starts.
type position struct {
	off       int64
	line, col int
}

// decode decodes a captured value into v, unknown keys refused, then refuses a key that
// appears twice in any of its objects; errors say the line and column.
func (at position) decode(raw []byte, path string, v any, check *strictjson.Checker) error {
	var ins []insertion
	quoted := quoteNonFiniteAt(raw, &ins)
	dec := json.NewDecoder(bytes.NewReader(quoted))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		off := int64(-1)
		switch {
		case errors.As(err, &se):
			off = se.Offset - 1 // Offset counts the bytes read, the bad one included
		case errors.As(err, &te):
			off = te.Offset
		}
		if off < 0 || off >= int64(len(quoted)) {
			if i := unknownKey(raw, err); i >= 0 {
				return at.errorf(raw, i, err)
			}
			return fmt.Errorf("%s (line %d, column %d): %w", path, at.line, at.col, err)
		}
		return at.errorf(raw, rawIndex(ins, off), err)
	}
	return at.strict(raw, quoted, ins, path, check)
}

// strict refuses a key that appears twice in any object of a decoded value.
func (at position) strict(raw, quoted []byte, ins []insertion, path string, check *strictjson.Checker) error {
	if err := check.CheckAt(quoted, path, 0, strictjson.Options{Exact: exactKeys}); err != nil {
		var dup *strictjson.DuplicateKeyError
		if errors.As(err, &dup) {
			o, first := rawIndex(ins, dup.Offset), rawIndex(ins, dup.FirstOffset)
			dup.Offset, dup.FirstOffset = at.off+int64(o), at.off+int64(first)
			return at.errorf(raw, o, dup)
		}
		return fmt.Errorf("%s (line %d, column %d): %w", path, at.line, at.col, err)
	}
	return nil
}

// unknownKey finds the key that DisallowUnknownFields refused ("json: unknown field
// \"x\"", which says no offset) in the value as written: the first "x" followed by a
// colon. -1 when err is another error or the key is not found as written (escaped).
func unknownKey(raw []byte, err error) int {
	key, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return -1
	}
	from := 0
	for {
		i := bytes.Index(raw[from:], []byte(key))
		if i < 0 {
			return -1
		}
		i += from
		if rest := bytes.TrimLeft(raw[i+len(key):], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			return i
		}
		from = i + 1
	}
}

// errorf says where byte i of the value that starts at at is.
func (at position) errorf(raw []byte, i int, err error) error {
	i = min(max(i, 0), len(raw))
	line, col := at.line, at.col+i
	if n := bytes.Count(raw[:i], []byte("\n")); n > 0 {
		line += n
		col = i - bytes.LastIndexByte(raw[:i], '\n')
	}
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// scanner reads the file a buffer at a time, counting lines and columns, up to maxSize
// bytes.
type scanner struct {
	r         io.Reader
	buf       []byte
	pos       int   // of the next byte in buf
	off       int64 // offset of the next byte in the file
	line      int   // its line, 1-based
	lineStart int64 // offset of the line's first byte
	err       error // a read error, or the size cap
	ended     bool
}

func (s *scanner) col() int { return int(s.off-s.lineStart) + 1 }

func (s *scanner) here() position { return position{s.off, s.line, s.col()} }

// peek returns the next byte without consuming it; false at the end of the input or on
// an error (s.err).
func (s *scanner) peek() (byte, bool) {
	if s.pos < len(s.buf) {
		return s.buf[s.pos], true
	}
	return s.fill()
}

func (s *scanner) fill() (byte, bool) {
	if s.err != nil || s.ended {
		return 0, false
	}
	if s.buf == nil {
		s.buf = make([]byte, 0, 64<<10)
	}
	for {
		n, err := s.r.Read(s.buf[:cap(s.buf)])
		s.buf, s.pos = s.buf[:n], 0
		if n > 0 {
			if s.off >= maxSize {
				s.err = fmt.Errorf("larger than %s", numtext.Bytes(maxSize))
				return 0, false
			}
			return s.buf[0], true
		}
		if err == io.EOF {
			s.ended = true
			return 0, false
		}
		if err != nil {
			s.err = err
			return 0, false
		}
	}
}

// next consumes the byte peek returned.
func (s *scanner) next() {
	c := s.buf[s.pos]
	s.pos++
	s.off++
	if c == '\n' {
		s.line++
		s.lineStart = s.off
	}
}

// skipSpace skips white space and returns the next byte without consuming it.
func (s *scanner) skipSpace() (byte, bool) {
	for {
		c, ok := s.peek()
		if !ok || c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c, ok
		}
		s.next()
	}
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d, column %d: %s", s.line, s.col(), fmt.Sprintf(format, args...))
}

// eof is the error for input that ends inside the file's object.
func (s *scanner) eof() error {
	if s.err != nil {
		return s.err
	}
	return s.errorf("unexpected EOF: the file is cut short (did the harness crash while writing it?)")
}

func quoteByte(c byte) string {
	if c >= ' ' && c < 0x7f {
		return fmt.Sprintf("%q", string(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// insertion is a bare non-finite token that quoteNonFiniteAt quoted: where it starts in
// the value as written, and its length.
type insertion struct{ at, n int }

// rawIndex maps an offset in the quoted value back to the value as written.
func rawIndex(ins []insertion, x int64) int {
	shift := 0
	for _, in := range ins {
		t := in.at + shift // where the quoted token starts
		if int(x) < t {
			break
		}
		if int(x) < t+in.n+2 {
			return in.at
		}
		shift += 2
	}
	return int(x) - shift
}

// quoteNonFinite turns the bare tokens NaN, Infinity and -Infinity (outside strings), which
// Python's json module writes, into strings that Float understands.
func quoteNonFinite(raw []byte) []byte { return quoteNonFiniteAt(raw, nil) }

// quoteNonFiniteAt is quoteNonFinite that records in ins (when not nil) what it quoted.
func quoteNonFiniteAt(raw []byte, ins *[]insertion) []byte {
	if !bytes.Contains(raw, []byte("NaN")) && !bytes.Contains(raw, []byte("Infinity")) {
		return raw
	}
	out := make([]byte, 0, len(raw)+16)
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		matched := false
		for _, tok := range [...]string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(raw[i:], []byte(tok)) {
				if ins != nil {
					*ins = append(*ins, insertion{i, len(tok)})
				}
				out = append(out, '"')
				out = append(out, tok...)
				out = append(out, '"')
				i += len(tok) - 1
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, c)
		}
	}
	return out
}

// Write encodes f as indented JSON.
func Write(w io.Writer, f *File) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}
