// Package msgtext fits text into a message that has room for a little of it: a progress
// line, a log line of the Action, a summary, a finding. An error from git or a tool can
// run to pages, and a line of a captured log to megabytes; its first line, or its first
// bytes, say what a reader needs.
package msgtext

import "strings"

// FirstLine is s up to its first line break ("\n"), all of s when it has none.
func FirstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// Clip is s cut to its first n bytes, with "…" marking the cut; s itself when it is no
// longer.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
