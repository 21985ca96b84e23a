// Package rules is the guard's table of dangerous commands and how a command's words are
// matched against it. It knows nothing of the languages the commands are written in: the
// front ends hand it words, file paths, HTTP requests and Python call names.
//
// The parts:
//
//   - DefaultRules (rules.go) is the one table: each Rule is one pattern (a program and its
//     verb path, flags, words; a file written to; a Python call; an HTTP request) with its
//     rule ID, what it does and why it is refused. One ID may have many patterns.
//   - Rule.MatchCommand, MatchWrite and MatchRequest say whether a command, a write or a
//     request matches a pattern; Rule.MatchPossibly whether a lifecycle CLI's command
//     would, were its unresolved verb the rule's (vm-verb-unresolved).
//   - Wrapper (wrappers.go) is the option grammar of the wrappers that simply run their
//     arguments (sudo, nohup, timeout, xargs, ...), so that the command after them is the
//     one matched.
//   - Set (set.go) is a config's active rules sorted for the front ends: by program name,
//     writes, calls, and the lifecycle families.
//
// # Adding a rule
//
// A pattern of an existing ID is one more Rule literal in defaultRules. A new rule ID is
// that, plus its line in the list of rule IDs in package guard's doc comment and a case
// in the tests (gates/guard/scan_test.go and the front ends' tables) that it finds, and one
// that it does not (a help request, a harmless neighbour). A pattern that needs more than
// words, flags, paths, calls and URLs can say is a new field of Rule, read by the
// Match method of its kind. A new wrapper that just runs its arguments is one case in
// Wrapper; one that runs a script is read by package shell (wrappers.go).
package rules
