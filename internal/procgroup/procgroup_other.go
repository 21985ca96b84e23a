//go:build !unix

package procgroup

import "os/exec"

// KillOnCancel keeps the default: the process alone is killed on cancel.
func KillOnCancel(cmd *exec.Cmd) {}

// KillRest does nothing where there are no process groups.
func KillRest(cmd *exec.Cmd) {}
