//go:build unix

package hangtest

import (
	"os/exec"
	"strings"
	"sync"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"exit 2", 2}} {
		if got := ExitCode(t, exec.Command("sh", "-c", tt.script).Run()); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.script, got, tt.want)
		}
	}
}

// Goroutines write at once; every line arrives whole (go test -race checks the rest).
func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Write([]byte("line\n"))
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 || len(b.String()) != 800*5 {
		t.Errorf("%d lines, %d bytes", got, len(b.String()))
	}
}
