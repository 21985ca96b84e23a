package trend

import (
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
)

// FormatValue writes v in the metric's unit: "153", "45056 B", "38.51 µs", "0.000435";
// non-finite values are spelt out ("NaN", "+Inf").
func FormatValue(unit string, v float64) string {
	if !finite(v) {
		return numtext.Short(v)
	}
	switch unit {
	case UnitBytes:
		return formatNum(v, 4) + " B"
	case UnitMicros:
		return formatNum(v, 4) + " µs"
	case UnitError:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return formatNum(v, 4)
}

// formatNum writes a whole number whole and another with sig significant digits.
func formatNum(v float64, sig int) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', sig, 64)
}

// formatValue writes a Value, with its interval when it has one: "38.51 µs (38.45–38.58)".
func formatValue(unit string, v Value) string {
	if !v.Set {
		return ""
	}
	s := FormatValue(unit, v.V)
	if v.Band {
		s += " (" + strings.TrimSuffix(FormatValue(unit, v.Low), " "+unit) + "–" + strings.TrimSuffix(FormatValue(unit, v.High), " "+unit) + ")"
	}
	return s
}

// plain makes untrusted text one line of valid UTF-8 with nothing that drives a terminal
// or reorders what a reader sees: control, C1 and bidirectional formatting characters and
// invalid bytes become U+FFFD.
func plain(s string) string {
	if !needsPlain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsPlain(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return true
		}
		i += size
	}
	return false
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// esc makes untrusted text safe as HTML text or a quoted attribute value: plain, then
// &, <, >, ' and " as entities.
func esc(s string) string { return html.EscapeString(plain(s)) }
