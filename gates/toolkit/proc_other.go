//go:build !unix

package toolkit

import "os/exec"

// killGroup leaves exec.CommandContext's default (kill the process on cancel); WaitDelay
// bounds the wait for any children that keep its output open.
func killGroup(cmd *exec.Cmd) {}
