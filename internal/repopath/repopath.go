// Package repopath decides whether a path that came with a result (a tool's log, a fork's
// artifact: untrusted) may be posted where GitHub shows it as a file of the repository: a
// SARIF location, a check-run annotation, a workflow-command annotation. One helper, so
// that every place that posts a path refuses the same ones.
package repopath

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rel returns p as a clean, '/'-separated path inside the repository, and false for
// anything else: an empty path, an absolute one ("/etc/passwd", "\\server\share", "C:\x",
// "C:x"), one that climbs out ("../../etc/passwd"), one whose first segment reads as a URI
// scheme ("file:///etc/passwd", "https://evil.example/x"), one with a backslash (a Windows
// separator to some readers, a name character to others), and one with a character a
// reader cannot see as it is: a control character, invalid UTF-8, a line or paragraph
// separator, or a format character (the bidirectional controls U+202A–U+202E,
// U+2066–U+2069, U+200E, U+200F and U+061C among them, which can make one file's name
// display as another's).
// Why: docs/threat-model.md, threat-model T14.
func Rel(p string) (string, bool) {
	if p == "" || strings.ContainsRune(p, '\\') || strings.HasPrefix(p, "/") || hasScheme(p) || !Visible(p) {
		return "", false
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// hasScheme reports whether p starts as a URI with a scheme does (RFC 3986: a letter, then
// letters, digits, '+', '-' or '.', then ':'), which a drive letter ("C:") also matches.
func hasScheme(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == ':':
			return i > 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}

// Visible reports whether s is valid UTF-8 without control characters, line or paragraph
// separators or format characters (Unicode category Cf, which holds every bidirectional
// control).
func Visible(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) {
			return false
		}
		i += size
	}
	return true
}

// Disguised reports whether s holds a format character (Unicode category Cf: the
// bidirectional controls, zero-width characters), which can make a name display as
// another's.
func Disguised(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Cf, r) })
}

// IsBidi reports the Unicode bidirectional formatting characters ("Trojan Source"):
// U+061C, U+200E, U+200F, U+202A–U+202E and U+2066–U+2069.
func IsBidi(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Quote is p made visible for a message that names a path it would not post: on one line,
// each character Visible refuses written as an escape (\xHH for a byte of invalid UTF-8 or
// a C0 control, \uHHHH otherwise), so that nothing in it can reorder or hide the text
// around it.
func Quote(p string) string {
	if Visible(p) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, p[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	return b.String()
}
