package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// clean makes untrusted text safe to print on one line: tab, CR and LF become spaces; other
// C0 controls, DEL and invalid UTF-8 bytes become visible \xHH escapes; C1 controls and
// bidirectional-text controls (which can reorder what a reader sees) become \uHHHH escapes.
func clean(s string) string {
	if !needsClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isC1(r) || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsClean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || isC1(r) || isBidi(r) {
			return true
		}
		i += size
	}
	return false
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// isBidi reports the Unicode bidirectional formatting characters ("Trojan Source").
func isBidi(r rune) bool {
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

// width is the display width of cleaned text, one column per rune.
func width(s string) int { return utf8.RuneCountInString(s) }

// truncMiddle shortens s to at most n runes by replacing its middle with '…', so that both
// the start and the end of a kernel name stay visible.
func truncMiddle(s string, n int) string {
	w := width(s)
	if w <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	if n == 1 {
		return "…"
	}
	rs := []rune(s)
	head := n / 2
	tail := n - 1 - head
	return string(rs[:head]) + "…" + string(rs[len(rs)-tail:])
}

// md escapes untrusted text for inline markdown on one line (paragraphs, headings and
// table cells): HTML-significant characters and backticks become entities, so no HTML tag
// or code span can open; markdown punctuation is backslash-escaped, so no link, image,
// emphasis, strikethrough or math can form; '|' is escaped so it cannot end a table cell;
// and '@' is followed by a zero-width space so that it cannot mention anybody.
func md(s string) string {
	s = clean(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '`':
			b.WriteString("&#96;")
		case '\\', '|', '*', '_', '~', '[', ']', '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '@':
			b.WriteString("@\u200b")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdParagraph escapes untrusted text that starts a markdown line, where '#', '-', '+', '='
// and "1." would otherwise start a heading, list or rule.
func mdParagraph(s string) string {
	e := md(strings.TrimSpace(clean(s)))
	if e == "" {
		return e
	}
	switch e[0] {
	case '#', '-', '+', '=':
		return `\` + e
	}
	digits := 0
	for digits < len(e) && e[digits] >= '0' && e[digits] <= '9' {
		digits++
	}
	if digits > 0 && digits < len(e) && (e[digits] == '.' || e[digits] == ')') {
		return e[:digits] + `\` + e[digits:]
	}
	return e
}
