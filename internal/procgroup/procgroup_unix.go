//go:build unix

// Package procgroup runs external tools (FindTool finds one and the directory for its
// output) so that a timeout or a cancel kills everything they started: the command leads a
// new process group and the whole group gets SIGKILL. A wrapper's children (a shell's
// sleep, compute-sanitizer's launcher and the target under it) hold pipes and GPUs;
// killing only the leader would leave them running.
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
