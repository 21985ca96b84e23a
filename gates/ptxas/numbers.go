package ptxas

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
)

// maxCount bounds every count the parser accepts: 2^53, the largest integer that a JSON
// number (a float64) still holds exactly. No resource count of a kernel comes near it; a
// larger one is garbage, not a measurement.
const maxCount = 1 << 53

// errNotCount is the class of every number the parser refuses.
var errNotCount = errors.New("not a resource count")

// parseCount reads a count as NVIDIA's tools print it: ASCII decimal digits and nothing
// else. A sign, a thousands separator, a fraction, a unit glued to the number, an empty
// field and a value past maxCount are refused, each with its own reason: a cut line
// ("REG:" with no digits), a log that went through a locale ("1,676"), a garbled one.
func parseCount(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: no digits", errNotCount)
	}
	var v int64
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v*10 + int64(c-'0')
			if v > maxCount {
				return 0, fmt.Errorf("%w: %q is out of range", errNotCount, msgtext.Clip(string(b), 40))
			}
		case c == '-' && i == 0:
			return 0, fmt.Errorf("%w: %q is negative", errNotCount, msgtext.Clip(string(b), 40))
		case c == ',' && i > 0:
			return 0, fmt.Errorf("%w: %q has a thousands separator", errNotCount, msgtext.Clip(string(b), 40))
		default:
			return 0, fmt.Errorf("%w: %q is not a decimal count", errNotCount, msgtext.Clip(string(b), 40))
		}
	}
	return v, nil
}

// parseSum reads "512" or the old "8+16" (user + system) form.
func parseSum(b []byte) (int64, error) {
	whole := b
	var total int64
	for {
		part, rest, more := bytes.Cut(b, []byte("+"))
		v, err := parseCount(part)
		if err != nil {
			if len(part) != len(whole) {
				return 0, fmt.Errorf("%w (in %q)", err, msgtext.Clip(string(whole), 40))
			}
			return 0, err
		}
		if total += v; total > maxCount {
			return 0, fmt.Errorf("%w: %q is out of range", errNotCount, msgtext.Clip(string(whole), 40))
		}
		if !more {
			return total, nil
		}
		b = rest
	}
}

// lineNumber reads a line or column number that a regular expression already found to be
// digits; one too large to be a line is 0 (unknown), never a wrapped or clamped value.
func lineNumber(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<31-1 {
		return 0
	}
	return n
}
