// Package numtext writes a number the way every kernel-gate message does: the shortest form
// that reads back as the same float64, with NaN, +Inf and -Inf spelt out.
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
