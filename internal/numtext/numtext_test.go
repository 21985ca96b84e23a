package numtext

import (
	"fmt"
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

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n         int
		one, many string
		want      string
	}{
		{1, "error", "", "1 error"},
		{0, "error", "", "0 errors"},
		{2, "warning", "", "2 warnings"},
		{-1, "error", "", "-1 errors"},
		{1, "baseline entry", "baseline entries", "1 baseline entry"},
		{3, "baseline entry", "baseline entries", "3 baseline entries"},
		{0, "kernel × shape", "kernels × shapes", "0 kernels × shapes"},
	} {
		got := Count(tt.n, tt.one)
		if tt.many != "" {
			got = CountForms(tt.n, tt.one, tt.many)
		}
		if got != tt.want {
			t.Errorf("count of %d %q = %q, want %q", tt.n, tt.one, got, tt.want)
		}
	}
}

func ExampleCount() {
	fmt.Println(Count(1, "error") + ", " + Count(3, "warning"))
	fmt.Println(CountForms(2, "baseline entry", "baseline entries"))
	// Output:
	// 1 error, 3 warnings
	// 2 baseline entries
}
