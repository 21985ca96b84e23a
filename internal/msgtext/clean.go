package msgtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean makes text from a process, a recording or a cache entry safe to show: valid UTF-8,
// no control or format characters (terminal escapes removed whole; newlines and tabs kept
// only when multiline, else each a space), at most max bytes (Clip). Workflow commands are
// the caller's to neutralize (workflowcmd.Neutralize), where the text reaches a runner.
func Clean(s string, max int, multiline bool) string {
	s = stripEscapes(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	for _, r := range s {
		switch {
		case multiline && (r == '\n' || r == '\t'):
		case r == '\n' || r == '\t' || r == '\r':
			r = ' '
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r):
			continue
		}
		b.WriteRune(r)
	}
	return Clip(b.String(), max)
}

// stripEscapes removes terminal escape sequences whole (CSI "ESC [ ... m", OSC
// "ESC ] ... BEL", two-character ones), so that none of their parameters is left as text.
func stripEscapes(s string) string {
	if !strings.ContainsRune(s, 0x1b) && !strings.ContainsRune(s, 0x9b) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x9b || r == 0x1b && i+1 < len(s) && s[i+1] == '[': // CSI: to a final byte @..~
			if r == 0x1b {
				size = 2
			}
			j := i + size
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) && s[j] != '\n' {
				j++
			}
			i = min(j+1, len(s))
		case r == 0x1b && i+1 < len(s) && strings.IndexByte("]PX^_", s[i+1]) >= 0: // OSC and the like: to BEL or ST
			j := i + 2
			for j < len(s) && s[j] != 0x07 && s[j] != '\n' && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			switch {
			case j < len(s) && s[j] == 0x07:
				j++
			case j < len(s) && s[j] == 0x1b:
				j += 2
			}
			i = j
		case r == 0x1b: // ESC and one character
			i += min(2, len(s)-i)
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}
