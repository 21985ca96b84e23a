//go:build !unix

// Package procgroup runs external tools (FindTool finds one and the directory for its
// output) so that a timeout or a cancel kills everything they started. Where there are no
// process groups it keeps exec.CommandContext's default (kill the process on cancel);
// callers set WaitDelay so output pipes cannot block forever.
package procgroup

import "os/exec"

// KillOnCancel keeps the default: the process alone is killed on cancel.
func KillOnCancel(cmd *exec.Cmd) {}

// KillRest does nothing where there are no process groups.
func KillRest(cmd *exec.Cmd) {}
