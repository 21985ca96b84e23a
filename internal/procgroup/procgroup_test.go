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

// A shell that starts a long sleep and hangs: cancelling must kill the sleep too.
func TestKillOnCancelKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 60 & echo $! > "+pidFile+"; wait")
	KillOnCancel(cmd)
	cmd.WaitDelay = time.Second
	start := time.Now()
	if err := cmd.Run(); err == nil {
		t.Fatal("a killed command must report an error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s to return", d)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the child %d outlived its group's cancel", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestKillRestKillsLeftovers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cmd := exec.CommandContext(context.Background(), "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $! > "+pidFile)
	KillOnCancel(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	KillRest(cmd)
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("leftover %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
