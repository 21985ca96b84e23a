package msgtext

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFirstLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"one line", "one line"},
		{"fatal: not a git repository\nhint: run git init", "fatal: not a git repository"},
		{"\nafter a blank first line", ""},
		{"ends with a break\n", "ends with a break"},
		{"carriage return\r\nnext", "carriage return\r"},
	} {
		if got := FirstLine(tt.in); got != tt.want {
			t.Errorf("FirstLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ExampleFirstLine() {
	fmt.Println(FirstLine("exit status 128\nfatal: bad revision 'main...HEAD'"))
	// Output: exit status 128
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 80, "short"},
		{"exactly", 7, "exactly"},
		{"a longer line", 8, "a longer…"},
		{"", 0, ""},
		// A character that would not fit whole is left out: "×" is 2 bytes, "µ" 2, "…" 3,
		// "𝛼" 4; the cut is at or before n bytes, never inside one.
		{"kernel × shape", 8, "kernel …"},
		{"kernel × shape", 9, "kernel ×…"},
		{"38 µs", 4, "38 …"},
		{"a…b", 2, "a…"},
		{"a…b", 3, "a…"},
		{"a…b", 4, "a……"},
		{"𝛼𝛽", 5, "𝛼…"},
		{"𝛼𝛽", 7, "𝛼…"},
		{"𝛼", 0, "…"},
		// Bytes that are no UTF-8 are cut where they are, as before.
		{"ab\x80\x80\x80\x80\x80", 4, "ab\x80\x80…"},
		{"abc", -1, "…"},
	} {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if got := Clip(tt.in, tt.n); utf8.ValidString(tt.in) && !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q cuts a character", tt.in, tt.n, got)
		}
	}
}

func FuzzClip(f *testing.F) {
	f.Add("kernel × shape", 8)
	f.Add("𝛼𝛽", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Clip(s, n)
		if len(s) <= n {
			if got != s {
				t.Fatalf("Clip(%q, %d) = %q, want it whole", s, n, got)
			}
			return
		}
		kept, ok := strings.CutSuffix(got, "…")
		if !ok || len(kept) > max(n, 0) || !strings.HasPrefix(s, kept) || len(kept) < max(n, 0)-(utf8.UTFMax-1) {
			t.Fatalf("Clip(%q, %d) = %q", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(kept) {
			t.Fatalf("Clip(%q, %d) = %q cuts a character", s, n, got)
		}
	})
}
