//go:build unix

package sanitizer

import (
	"os/exec"
	"syscall"
)

// KillGroupOnCancel makes cmd the leader of a new process group and makes cancelling it
// (exec.CommandContext's context) kill the whole group with SIGKILL, so that the children
// of a wrapper (compute-sanitizer's TreeLauncherSubreaper and the target under it, a
// shell's sleep) die with it. Call it before cmd.Start. It is the same pattern as
// gates/toolkit's killGroup, exported so that the two can become one.
func KillGroupOnCancel(cmd *exec.Cmd) {
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

// KillGroup kills what is left of cmd's process group after cmd.Wait (a target the
// sanitizer left running); it does nothing unless KillGroupOnCancel made the group.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH: nothing left
}
