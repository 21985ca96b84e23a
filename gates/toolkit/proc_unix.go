//go:build unix

package toolkit

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in its own process group and makes cancelling it kill the whole
// group, so that a wrapper script's children (which hold its output pipe) die with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// The group's id is the leader's pid; fall back to the process alone.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}
