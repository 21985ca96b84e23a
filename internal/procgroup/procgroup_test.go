//go:build unix

package procgroup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A shell that starts a long sleep and hangs: cancelling must kill the sleep too. The
// cancel comes once the shell has said its child's pid, however long a loaded machine
// takes to start them (a timer could fire before the child was there to kill).
func TestKillOnCancelKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 60 & echo $! > "+pidFile+"; wait")
	KillOnCancel(cmd)
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, pidFile)
	start := time.Now()
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("a killed command must report an error")
	}
	// Returned long before the child's 60 s: it was not waited for.
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %s to return", d)
	}
	waitDead(t, pid, "the child %d outlived its group's cancel")
}

func TestKillRestKillsLeftovers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cmd := exec.CommandContext(context.Background(), "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $! > "+pidFile)
	KillOnCancel(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, pidFile)
	KillRest(cmd)
	waitDead(t, pid, "leftover %d still runs")
}

// readPid waits (up to a minute) for file to hold a pid, and returns it.
func readPid(t *testing.T, file string) int {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		raw, _ := os.ReadFile(file)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 0 {
			return pid
		}
		if time.Now().After(end) {
			t.Fatalf("no pid in %s: %q", file, raw)
		}
	}
}

// waitDead waits for pid to be dead: gone, or a zombie (a killed child whose parent died
// too waits for init to reap it, which on a loaded machine can take seconds). SIGKILL is
// sent, not waited for, so it polls, for up to 30 s; failing, it reports msg (with pid).
func waitDead(t *testing.T, pid int, msg string) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil && !zombie(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf(msg, pid)
		}
	}
}

// zombie reports whether pid is a zombie (from /proc; false where there is none).
func zombie(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis: "123 (sh) Z ...".
	i := strings.LastIndexByte(string(raw), ')')
	return i >= 0 && i+2 < len(raw) && raw[i+2] == 'Z'
}
