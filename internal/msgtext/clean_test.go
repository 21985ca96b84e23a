package msgtext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		max       int
		multiline bool
		want      string
	}{
		{"plain", "nvcc: error", 80, false, "nvcc: error"},
		{"colour escapes removed whole", "\x1b[1;31merror\x1b[0m: x", 80, false, "error: x"},
		{"an 8-bit CSI", "a\u009b2Jb", 80, false, "ab"},
		{"an OSC title to BEL", "a\x1b]0;pwned\x07b", 80, false, "ab"},
		{"an OSC to ST", "a\x1b]8;;http://x\x1b\\b", 80, false, "ab"},
		{"newlines become spaces", "one\ntwo\r\tthree", 80, false, "one two  three"},
		{"newlines kept when multiline", "one\ntwo\tthree\r", 80, true, "one\ntwo\tthree "},
		{"bidi and zero-width removed", "a\u202eb\u200bc\u2028d", 80, false, "abcd"},
		{"invalid UTF-8 replaced", "a\xffb", 80, false, "a\uFFFDb"},
		{"cut at a character", "ééé", 3, false, "é…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in, tc.max, tc.multiline); got != tc.want {
				t.Errorf("Clean(%q, %d, %v) = %q, want %q", tc.in, tc.max, tc.multiline, got, tc.want)
			}
		})
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "\x1b[31mred", "a\nb", "é\u202e\x00", "\x1b]0;t\x07"} {
		f.Add(s, 8, false)
	}
	f.Fuzz(func(t *testing.T, s string, max int, multiline bool) {
		max = max & 0xff
		got := Clean(s, max, multiline)
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q, not UTF-8", s, got)
		}
		if body := strings.TrimSuffix(got, "…"); len(body) > max {
			t.Fatalf("Clean(%q, %d) = %q, longer than %d bytes", s, max, got, max)
		}
		for _, r := range got {
			if r == 0x1b || (unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t'))) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("Clean(%q) = %q keeps %U", s, got, r)
			}
		}
	})
}
