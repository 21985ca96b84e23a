// Package shell is the guard's shell front end and the command analyzer every front end
// hands its scripts to.
//
// A front end reads its language, builds a source.Text for each script in it (its bytes
// mapped back to the file) and runs it in a Frame of an Analyzer. The analyzer then goes
// through these steps:
//
//  1. Parse the text with mvdan.cc/sh (RunShell), once the nesting bounds (depth.go)
//     say the parser's recursion is safe.
//  2. Collect what the script defines: variables with literal values, functions,
//     aliases (Env). It is flow-insensitive: every definition in the file counts.
//  3. Walk the statements; expand each command's words into Fields, with their values as
//     far as they are literal and their offsets in the file.
//  4. Resolve the command (wrappers.go): aliases and functions are expanded; wrappers
//     that simply run their arguments (sudo, nohup, timeout: rules.Wrapper) are skipped
//     over; those that run a script (bash -c, ssh, su -c, eval, screen, tmux, privileged
//     containers, here-documents fed to a shell) have the script read in a child Frame;
//     `python -c` and Python on standard input go to the Python reader the File was
//     given (NewFile), as package shell does not import package python.
//  5. Match what finally runs against the File's rules.Set (commands by program name,
//     writes to files such as /proc/sysrq-trigger, HTTP requests by URL) and Report each
//     match as a Hit on the File.
//
// File.Finish then applies the file's `# kernel-gate: allow` comments and turns the hits
// into findings. The bounds on work, depth and nesting (MaxDepth, MaxShellNesting, ...)
// make a hostile file cost a bounded time; beyond one, the file is unjudged.
package shell
