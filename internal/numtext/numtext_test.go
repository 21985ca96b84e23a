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

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1000: "1000 bytes", 1 << 10: "1 KiB", 64 << 10: "64 KiB", 1<<20 + 1<<10: "1025 KiB",
		64 << 20: "64 MiB", 256 << 20: "256 MiB", 1 << 30: "1 GiB", 3 << 30: "3 GiB", 1<<30 + 1<<20: "1025 MiB",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
