package report

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/repopath"
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
func isBidi(r rune) bool { return repopath.IsBidi(r) }

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
// '@' is followed by a zero-width space so that it cannot mention anybody (nor make an
// e-mail address a link); and what GitHub would link by itself is broken (see unlink).
func md(s string) string {
	s = unlink(clean(s))
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

// zwsp is the zero-width space: GitHub renders it as nothing, and no autolink spans it.
const zwsp = "\u200b"

// unlink breaks, with a zero-width space, what GitHub's markdown (GFM's autolink
// extension) would turn into a link by itself though nobody wrote one: a scheme's "://"
// (https://evil.example/x, ftp://, any other), "www." and the "mailto:" and "xmpp:" of an
// address; and what GitHub turns into a reference to an issue or pull request, "#12",
// "owner/repo#12" and "GH-12", which in a pull-request comment also puts a "mentioned
// this" event, by kernel-gate's identity, on that issue of any public repository. The
// text reads the same; it is no link.
func unlink(s string) string {
	if !strings.ContainsAny(s, ":.#-") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ':' && (strings.HasPrefix(s[i:], "://") || hasSuffixFold(s[:i], "mailto") || hasSuffixFold(s[:i], "xmpp")) ||
			c == '.' && hasSuffixFold(s[:i], "www") {
			b.WriteString(zwsp) // "https" zwsp "://"
		}
		b.WriteByte(c)
		if (c == '#' || c == '-' && hasSuffixFold(s[:i], "gh")) && i+1 < len(s) && '0' <= s[i+1] && s[i+1] <= '9' {
			b.WriteString(zwsp) // "#" zwsp "12"
		}
	}
	return b.String()
}

// hasSuffixFold is strings.HasSuffix with ASCII letters compared without case.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}
