// Package procgroup runs external tools so that a timeout or a cancel kills everything they
// started: on unix the command leads a new process group and the whole group gets SIGKILL.
// A wrapper's children (a shell's sleep, compute-sanitizer's launcher and the target under
// it) hold pipes and GPUs; killing only the leader would leave them running. Where there are
// no process groups it keeps exec.CommandContext's default (kill the process on cancel);
// callers set WaitDelay so output pipes cannot block forever.
//
// A tool is run in these steps:
//
//  1. FindTool looks the tool up on PATH first, so that a missing tool is reported as
//     such (wrapping the gate's own "not found" error), and readies the directory its run
//     writes in; Tool.Create and Tool.Clear make and remove its files there.
//  2. Run runs one command (Spec) to its end, with a timeout: at the timeout, or when the
//     context is done, the whole group is killed, and whatever the command left behind is
//     killed after it exits. Start starts a long-lived one (StartSpec: a harness that
//     serves rounds) with a pipe on its standard input and another on AnswerFD; Proc.Close
//     and Proc.Kill end it and its group.
//  3. Outcome says what the command did; CapWriter keeps at most a cap of its output and
//     notes the cut once, TailBuffer its last bytes. KillOnCancel and KillRest give an
//     exec.Cmd made elsewhere the same group handling.
//
// The files a run writes (logs, artifacts, a command's --out) go through CreateArtifact,
// WriteArtifact, AppendArtifact, MkdirArtifact and OpenOutDir: inside their directory
// through an os.Root, never through a link out of it, and never into anything but a
// regular file (ErrUnsafeArtifact). ShellQuote and ShellJoin write a command as a shell
// line (the journal's commands.sh).
package procgroup
