//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// KillOnCancel makes cmd the leader of a new process group and makes cancelling it
// (exec.CommandContext's context) kill the whole group. Call it before cmd.Start.
func KillOnCancel(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
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

// KillRest kills what is left of cmd's process group after cmd.Wait; it does nothing
// unless KillOnCancel made the group.
func KillRest(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH: nothing left
}
