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
const maxSize = 256 << 20

// Read decodes and validates a harness file.
func Read(r io.Reader) (*File, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxSize+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxSize {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrNotBenchFile, maxSize>>20)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty (did the harness crash before writing it?)", ErrNotBenchFile)
	}
	dec := json.NewDecoder(bytes.NewReader(quoteNonFinite(raw)))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotBenchFile, describe(raw, err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrNotBenchFile)
	}
	if f.Schema != Schema {
		return nil, fmt.Errorf("%w: schema is %q, want %q", ErrNotBenchFile, f.Schema, Schema)
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotBenchFile, err)
	}
	return &f, nil
}

func (f *File) validate() error {
	if len(f.Results) == 0 {
		return errors.New("no results")
	}
	seen := map[string]bool{}
	for i, r := range f.Results {
		if r.Kernel == "" || r.Shape == "" {
			return fmt.Errorf("results[%d]: kernel and shape are required", i)
		}
		key := r.Kernel + "\x00" + r.Shape
		if seen[key] {
			return fmt.Errorf("results[%d]: %s × %s appears twice", i, r.Kernel, r.Shape)
		}
		seen[key] = true
		for _, c := range []*int{r.Checks, r.RepeatLaunches, r.Launches} {
			if c != nil && *c < 0 {
				return fmt.Errorf("results[%d] (%s × %s): a count is negative", i, r.Kernel, r.Shape)
			}
		}
		for _, c := range []*int64{r.NaNCount, r.InfCount} {
			if c != nil && *c < 0 {
				return fmt.Errorf("results[%d] (%s × %s): a count is negative", i, r.Kernel, r.Shape)
			}
		}
	}
	return nil
}

// describe adds the line and column to a JSON syntax error.
func describe(raw []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = se.Offset - 1 // Offset counts the bytes read, the bad one included
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off >= int64(len(raw)) {
		return err.Error()
	}
	line := 1 + bytes.Count(raw[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(raw[:off], '\n'))
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// quoteNonFinite turns the bare tokens NaN, Infinity and -Infinity (outside strings), which
// Python's json module writes, into strings that Float understands.
func quoteNonFinite(raw []byte) []byte {
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
