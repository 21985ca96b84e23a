package numtext

import (
	"math"
	"testing"
)

func TestShort(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{0.06, "0.06"}, {1e-7, "1e-07"}, {15, "15"}, {-0.5, "-0.5"}, {2.0149999999999997, "2.0149999999999997"},
		{math.NaN(), "NaN"}, {math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"},
	} {
		if got := Short(tt.v); got != tt.want {
			t.Errorf("Short(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
