//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package signalstop

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// stopBound is how long the child may take to end after its signal: far more than a
// healthy machine needs, so that a loaded CI machine passes.
const stopBound = 20 * time.Second

// envSignalChild makes TestSignalChild the process TestStopOnSignal signals.
const envSignalChild = "KG_TEST_SIGNAL_CHILD"

// TestSignalChild is not a test: TestStopOnSignal runs the test binary with it, as a
// command that, after Stop, ignores its context for ever (as a system call no
// context reaches would), with a grace of an hour ("stuck") or 300 ms ("stuck-short"), or
// ends once it is cancelled with exit 1 ("ends"). It says "ready" once it waits and
// "cancelled" once its context is.
func TestSignalChild(t *testing.T) {
	mode := os.Getenv(envSignalChild)
	if mode == "" {
		t.Skip("run by TestStopOnSignal")
	}
	grace := time.Hour
	if mode == "stuck-short" {
		grace = 300 * time.Millisecond
	}
	ctx, exit := Stop(os.Stderr, grace)
	os.Stdout.WriteString("ready\n")
	<-ctx.Done()
	os.Stdout.WriteString("cancelled\n")
	if mode != "ends" {
		select {}
	}
	os.Exit(exit(exitcode.Fail))
}

// main's last resort: a command stuck where its context does not reach still ends, exit 2,
// at a second signal or when the grace runs out; one that ends after the signal exits 2
// whatever code it ended with.
func TestStopOnSignal(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		signals int
		want    string
	}{
		{"stuck", 2, GraceMessage + ": a second signal (terminated)"},
		{"stuck-short", 1, GraceMessage + ": it still runs 300ms after terminated"},
		{"ends", 1, "kernel-gate: stopped (terminated received): exit 2"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSignalChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envSignalChild+"="+tc.mode)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		say := func(want string) {
			t.Helper()
			line := make([]byte, len(want))
			if _, err := io.ReadFull(stdout, line); err != nil || string(line) != want {
				cmd.Process.Kill()
				t.Fatalf("%s: the child did not say %q: %q %v", tc.mode, want, line, err)
			}
		}
		say("ready\n")
		for i := range tc.signals {
			cmd.Process.Signal(syscall.SIGTERM)
			if i == 0 {
				say("cancelled\n") // one at a time: a signal sent while another is pending is lost
			}
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if code := hangtest.ExitCode(t, err); code != exitcode.Usage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%s, %d signal(s): exit %d, stderr %q; want %d saying %q", tc.mode, tc.signals, code, stderr.String(), exitcode.Usage, tc.want)
			}
		case <-time.After(stopBound):
			cmd.Process.Kill()
			t.Fatalf("%s, %d signal(s): still running after %s", tc.mode, tc.signals, stopBound)
		}
	}
}
