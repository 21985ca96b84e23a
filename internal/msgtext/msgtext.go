// Package msgtext fits text into a message that has room for a little of it: a progress
// line, a log line of the Action, a summary, a finding. An error from git or a tool can
// run to pages, and a line of a captured log to megabytes; its first line, or its first
// bytes, say what a reader needs.
package msgtext

import (
	"strings"
	"unicode/utf8"
)

// FirstLine is s up to its first line break ("\n"), all of s when it has none.
func FirstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// Clip is s cut to at most its first n bytes, with "…" marking the cut; s itself when it
// is no longer. The cut never splits a UTF-8 character: one that would not fit is left out
// whole (bytes that are no UTF-8 are cut where they are).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	// The character the cut falls in starts at most UTFMax-1 bytes before it.
	start := n
	for start > 0 && n-start < utf8.UTFMax-1 && !utf8.RuneStart(s[start]) {
		start--
	}
	if _, size := utf8.DecodeRuneInString(s[start:]); size > 1 && start+size > n {
		n = start
	}
	return s[:n] + "…"
}
