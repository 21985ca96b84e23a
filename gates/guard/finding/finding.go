// Package finding holds what the guard reports: a Finding is one dangerous command, a
// Warning something it could not check. Every front end records them through shell.File;
// the gate (package guard) returns them and Evaluate judges them.
package finding

// Finding is one dangerous command.
type Finding struct {
	Path string `json:"path"`
	// Line and Column (1-based; the column counts bytes) are where the offending command
	// starts: inside a nested script (bash -c '...', a here-document), the command in it;
	// for a call of a function that its arguments make dangerous, the call. EndLine is the
	// line it ends on.
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	EndLine int    `json:"end_line"`
	Rule    string `json:"rule"`
	// Command is the whole command as written, on one line: for a nested script the outer
	// command that runs it (`ssh host 'sudo shutdown -h now'`); a here-document's command
	// is added after " … ".
	Command string `json:"command"`
	// Via is how the command was reached: "sudo → bash -c → shutdown", "function stop_vm → gcloud".
	Via         string `json:"via,omitempty"`
	What        string `json:"what"`
	Why         string `json:"why"`
	Allowed     bool   `json:"allowed"`
	AllowReason string `json:"allow_reason,omitempty"`
	// Severity is what Evaluate made of it: "error" (refused), "warning" (a rule that
	// warns, see Config.Warn) or "notice" (allowed).
	Severity string `json:"severity,omitempty"`
}

// Warning is something the guard could not check: a script that does not parse, an allow
// comment without a reason, or (Unjudged) a file or part of one the guard could not judge
// at all: too large, binary, nested too deep, a link out of the repository, a step in a
// shell it does not read. Line is 0 when it is about the whole file.
//
// An unjudged warning fails the gate (Evaluate makes it an error) unless the config says
// `guard.unjudged: warn` or the path matches `guard.skip`: a file the guard could not judge
// must not pass as if it had been judged safe.
type Warning struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Message  string `json:"message"`
	Unjudged bool   `json:"unjudged,omitempty"`
	// Skipped is an unjudged file that the config's guard.skip lets pass with a warning.
	Skipped bool `json:"skipped,omitempty"`
}
