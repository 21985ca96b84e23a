package repopath

import (
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The paths an untrusted result can carry to make a posted location leave the repository
// or display as another file's name.
func TestRel(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"kernels/a.cu", "kernels/a.cu", true},
		{"./kernels/../kernels/a.cu", "kernels/a.cu", true},
		{".github/workflows/ci.yml", ".github/workflows/ci.yml", true},
		{"dir with space/a%b#c?.cu", "dir with space/a%b#c?.cu", true},
		{"kernels/a:b.cu", "kernels/a:b.cu", true},
		{"1:x/a.cu", "1:x/a.cu", true}, // a digit cannot start a scheme
		{"ünïcode/ß.cu", "ünïcode/ß.cu", true},
		{"", "", false},
		{".", "", false},
		{"..", "", false},
		{"../../etc/passwd", "", false},
		{"kernels/../../etc/passwd", "", false},
		{"/etc/passwd", "", false},
		{"//server/share/x", "", false},
		{"file:///etc/passwd", "", false},
		{"https://evil.example/x", "", false},
		{"HTTPS://evil.example/x", "", false},
		{"javascript:alert(1)", "", false},
		{"C:\\x", "", false},
		{"C:x", "", false},
		{"c:d/a.cu", "", false},
		{"\\\\server\\share\\x", "", false},
		{"kernels\\a.cu", "", false},
		{"a\x00b.cu", "", false},
		{"a\nb.cu", "", false},
		{"a\x1b[31mb.cu", "", false},
		{"a\u0085b.cu", "", false},
		{"a\u2028b.cu", "", false},
		{"a\xffb.cu", "", false},
		{"txt.\u202eexe.cu", "", false},
		{"a\u202ab", "", false},
		{"a\u202bb", "", false},
		{"a\u202cb", "", false},
		{"a\u202db", "", false},
		{"a\u2066b", "", false},
		{"a\u2067b", "", false},
		{"a\u2068b", "", false},
		{"a\u2069b", "", false},
		{"a\u200eb", "", false},
		{"a\u200fb", "", false},
		{"a\u061cb", "", false},
		{"a\u200bb", "", false}, // zero-width space: one name that displays as another
		{"a\ufeffb", "", false},
	} {
		got, ok := Rel(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Rel(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"a/b.cu":              "a/b.cu",
		"txt.\u202eexe.cu":    `txt.\u202eexe.cu`,
		"a\nb\x00c\xff":       `a\x0ab\x00c\xff`,
		"\u2066x\u2069\u061c": `\u2066x\u2069\u061c`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDisguised(t *testing.T) {
	for s, want := range map[string]bool{"a/b.cu": false, "a\nb": false, "txt\u202eexe": true, "a\u200bb": true, "a\u2069": true, "\u061c": true} {
		if got := Disguised(s); got != want {
			t.Errorf("Disguised(%q) = %v", s, got)
		}
	}
}

func TestIsBidi(t *testing.T) {
	var bidi []rune
	for r := rune(0); r < 0x30000; r++ {
		if IsBidi(r) {
			bidi = append(bidi, r)
			if Visible(string(r)) || !Disguised(string(r)) {
				t.Errorf("U+%04X is bidirectional but Visible", r)
			}
		}
	}
	if want := "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"; string(bidi) != want {
		t.Errorf("IsBidi holds %+q, want %+q", string(bidi), want)
	}
}

// FuzzRel: whatever the input, a path Rel accepts stays inside the repository, is clean,
// and holds nothing a reader cannot see; Quote's output is always Visible.
func FuzzRel(f *testing.F) {
	for _, s := range []string{"kernels/a.cu", "../../etc/passwd", "file:///etc/passwd", "C:\\x", "txt.\u202eexe.cu",
		"a/./b/../../..", "https://evil.example/x", "\xff\xfe", "x:/y", "a\u2069"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if q := Quote(s); !Visible(q) || !utf8.ValidString(q) || Visible(s) && q != s {
			t.Fatalf("Quote(%q) = %q", s, q)
		}
		p, ok := Rel(s)
		if !ok {
			if p != "" {
				t.Fatalf("Rel(%q) refused but returned %q", s, p)
			}
			return
		}
		if p == "" || p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") ||
			strings.ContainsRune(p, '\\') || path.Clean(p) != p || hasScheme(p) || !Visible(p) {
			t.Fatalf("Rel(%q) = %q", s, p)
		}
		for _, r := range p {
			if IsBidi(r) || unicode.IsControl(r) {
				t.Fatalf("Rel(%q) = %q holds %U", s, p, r)
			}
		}
		if q, ok := Rel(p); !ok || q != p {
			t.Fatalf("Rel(Rel(%q)) = %q, %v", s, q, ok)
		}
	})
}
