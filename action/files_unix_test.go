//go:build unix

package action

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The event file and a result to report that are FIFOs (an earlier step of the job put
// them there) are refused at once, naming them, exit 2: opening one would block beyond
// any signal.
func TestEventAndResultFIFOsAreRefused(t *testing.T) {
	fifo := hangtest.FIFO(t, filepath.Join(t.TempDir(), "event.json"))
	getenv := func(k string) string {
		return map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": fifo}[k]
	}
	err := hangtest.Within(t, 10*time.Second, "ReadEvent of a FIFO", func() error { _, err := ReadEvent(getenv); return err })
	if !errors.Is(err, input.ErrNotRegular) || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), fifo) {
		t.Errorf("ReadEvent of a FIFO: %v (exit %d)", err, exitcode.Of(err))
	}
	err = hangtest.Within(t, 10*time.Second, "ReadUntrusted of a FIFO", func() error { _, _, err := ReadUntrusted(fifo); return err })
	if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), fifo) {
		t.Errorf("ReadUntrusted of a FIFO: %v (exit %d)", err, exitcode.Of(err))
	}
}

// The result file and the summary beside it are written in the workspace, which the pull
// request fills: a link it committed in their place, to a file outside (~/.bashrc) or not,
// is refused and its target left as it was; a stale regular file is replaced.
func TestResultAndSummaryNeverWrittenThroughALink(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	victim := filepath.Join(home, ".bashrc")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	res := result.New("kernel-gate test")
	for _, name := range []string{"kernel-gate-result.json", "kernel-gate-result-summary.md"} {
		p := filepath.Join(ws, name)
		os.Remove(filepath.Join(ws, "kernel-gate-result.json"))
		os.Remove(filepath.Join(ws, "kernel-gate-result-summary.md"))
		if err := os.Symlink(victim, p); err != nil {
			t.Fatal(err)
		}
		resultFile := filepath.Join(ws, "kernel-gate-result.json")
		var log bytes.Buffer
		r := &run{in: Inputs{ResultsFile: resultFile}, o: Options{Log: &log}}
		if name == "kernel-gate-result.json" {
			if err := writeResult(resultFile, res); err == nil || !strings.Contains(err.Error(), resultFile) {
				t.Errorf("writeResult through a link: %v", err)
			}
		} else if got := writeSummary(r, "# summary\n"); got != "" || !strings.Contains(log.String(), p) {
			t.Errorf("writeSummary through a link: %q, log %q", got, log.String())
		}
		if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
			t.Fatalf("%s: written through the link: %q", name, raw)
		}
	}
	// Stale regular files are replaced.
	for _, p := range []string{"kernel-gate-result.json", "kernel-gate-result-summary.md"} {
		os.Remove(filepath.Join(ws, p))
		os.WriteFile(filepath.Join(ws, p), []byte("stale"), 0o644)
	}
	resultFile := filepath.Join(ws, "kernel-gate-result.json")
	if err := writeResult(resultFile, res); err != nil {
		t.Fatal(err)
	}
	r := &run{in: Inputs{ResultsFile: resultFile}, o: Options{Log: &bytes.Buffer{}}}
	if got := writeSummary(r, "# summary\n"); got == "" {
		t.Error("writeSummary over a stale file failed")
	}
	if raw, _ := os.ReadFile(resultFile); !bytes.Contains(raw, []byte("kernel-gate test")) {
		t.Errorf("result: %q", raw)
	}
}
