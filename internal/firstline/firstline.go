// Package firstline keeps a message to its first line, for the places that have room for
// one: a progress line, a log line of the Action, a summary. An error from git or a tool
// can run to pages; its first line says what went wrong.
package firstline

import "strings"

// Of is s up to its first line break ("\n"), all of s when it has none.
func Of(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
