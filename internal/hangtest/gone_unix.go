//go:build unix

package hangtest

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Alive reports whether pid is a live process; a zombie (killed, not yet reaped) is not.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) // no /proc: trust kill(0)
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// WaitGone waits up to 3 s for each process whose pid a test's fake wrote to file (the
// fake and the children it started) to end, as a killed process group does; one that
// outlives the wait is an error, and is killed so that it does not outlive the test.
func WaitGone(t testing.TB, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the fake never ran: %v", err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			t.Fatalf("pid file %q", b)
		}
		deadline := time.Now().Add(3 * time.Second)
		for Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if Alive(pid) {
			t.Errorf("process %d still running", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
