//go:build !unix

package sanitizer

import "os/exec"

// KillGroupOnCancel leaves exec.CommandContext's default (kill the process on cancel);
// cmd.WaitDelay bounds the wait for its children.
func KillGroupOnCancel(cmd *exec.Cmd) {}

// KillGroup does nothing where there are no process groups.
func KillGroup(cmd *exec.Cmd) {}
