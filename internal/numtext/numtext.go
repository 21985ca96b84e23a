// Package numtext writes a number the way every kernel-gate message does: a measurement in
// the shortest form that reads back as the same float64, with NaN, +Inf and -Inf spelt out
// (Short), a count with its noun in the number it takes ("1 error", "2 errors": Count), and
// a size in bytes ("64 MiB": Bytes).
package numtext

import (
	"math"
	"strconv"
)

// Short is v in its shortest form ("0.06", "1e-07"), or "NaN", "+Inf", "-Inf".
func Short(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Count is n with its noun, the noun's plural made with an "s" for any n but 1: "1 error",
// "0 errors", "3 warnings". CountForms is for a noun whose plural is not.
func Count(n int, noun string) string {
	return CountForms(n, noun, noun+"s")
}

// CountForms is n with the noun's singular one for 1 and its plural many otherwise: "1
// baseline entry", "2 baseline entries".
func CountForms(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Bytes is a size of n bytes in GiB, MiB or KiB when it is a whole number of them (the
// limits kernel-gate names are), else in bytes: "256 MiB", "64 KiB", "1000 bytes".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
