//go:build unix

package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// recording copies a recorded case to a directory of the test's own.
func recording(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(name)) // name may be ../replay-old/CASE
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "testdata/replay", name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readJournal reads the journal of a run's artifacts (or a recording).
func readJournal(t *testing.T, dir string) journal {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, journalFile))
	if err != nil {
		t.Fatal(err)
	}
	var j journal
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// editJournal changes the recording's journal.
func editJournal(t *testing.T, dir string, edit func(*journal)) {
	t.Helper()
	path := filepath.Join(dir, journalFile)
	j := readJournal(t, dir)
	edit(&j)
	raw, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func stepOf(t *testing.T, j *journal, id string) *step {
	t.Helper()
	for i := range j.Steps {
		if j.Steps[i].ID == id {
			return &j.Steps[i]
		}
	}
	t.Fatalf("no step %q", id)
	return nil
}

const secret = "KG_TEST_SECRET=hunter2"

// A replay reads only the recording's own regular files: a link that leaves it (to a
// secret, as /proc/self/environ would be), one that leads nowhere, a FIFO or a device in
// it is refused (exit 2) before anything is read, naming the entry and never showing what
// it leads to. A link that stays inside is followed.
func TestReplayReadsOnlyTheRecordingsOwnFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "environ")
	os.WriteFile(outside, []byte(secret+"\n"), 0o600)
	for _, tc := range []struct {
		name, entry string
		plant       func(path string) error
	}{
		{"absolute link out", "gpu.csv", func(p string) error { return os.Symlink(outside, p) }},
		{"relative link out", "attention/check.json", func(p string) error {
			rel, _ := filepath.Rel(filepath.Dir(p), outside)
			return os.Symlink(rel, p)
		}},
		{"link to /proc/self/environ", "RECORDED", func(p string) error { return os.Symlink("/proc/self/environ", p) }},
		{"directory link out", "attention/sanitize", func(p string) error { return os.Symlink(filepath.Dir(outside), p) }},
		{"dangling link", "head/attention/build.log", func(p string) error { return os.Symlink("nowhere", p) }},
		{"link to a device", "nvcc-version.txt", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"fifo", "gpu.csv", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := recording(t, "clean")
			p := filepath.Join(dir, filepath.FromSlash(tc.entry))
			os.RemoveAll(p)
			if err := tc.plant(p); err != nil {
				t.Fatal(err)
			}
			_, err := Run(context.Background(), loadConfig(t), Options{Replay: dir})
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tc.entry) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("err %v (exit %d)", err, exitcode.Of(err))
			}
		})
	}
	t.Run("link inside", func(t *testing.T) {
		dir := recording(t, "clean")
		os.Rename(filepath.Join(dir, "gpu.csv"), filepath.Join(dir, "gpu-answer.csv"))
		os.Symlink("gpu-answer.csv", filepath.Join(dir, "gpu.csv"))
		res, err := Run(context.Background(), loadConfig(t), Options{Replay: dir})
		if err != nil || res.Device == nil || res.Device.Name != "NVIDIA H200" {
			t.Errorf("a link inside the recording: %v", err)
		}
	})
}

// The journal's exit status counts: a step whose status and reason disagree is refused
// (exit 2), never replayed as a pass; a failure recorded with both is replayed as one.
func TestReplayUsesTheRecordedExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *step)
		want string
	}{
		{"exit 1, no reason", func(s *step) { s.Exit = 1 }, `("check/attention"): exit 1, but no reason`},
		{"killed, no reason", func(s *step) { s.Exit = -1 }, `exit -1, but no reason`},
		{"timed out, no reason", func(s *step) { s.TimedOut = true }, `timed out, but no reason`},
		{"a reason, exit 0", func(s *step) { s.Why = "exited with status 1" }, `a reason (why) it failed, but exit 0`},
		{"no exit status", func(s *step) { s.Exit, s.Why = 1000, "exited with status 1000" }, `exit 1000 is no exit status`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := recording(t, "clean")
			editJournal(t, dir, func(j *journal) { tc.edit(stepOf(t, j, "check/attention")) })
			_, err := Run(context.Background(), loadConfig(t), Options{Replay: dir})
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v (exit %d), want %q", err, exitcode.Of(err), tc.want)
			}
		})
	}
	t.Run("a stage that failed", func(t *testing.T) {
		dir := recording(t, "clean")
		editJournal(t, dir, func(j *journal) { stepOf(t, j, "sanitize/attention").Why = "cancelled" })
		if _, err := Run(context.Background(), loadConfig(t), Options{Replay: dir}); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("err %v", err)
		}
	})
	// gemm's: a failed check/attention would stop attention's profile, which the recording
	// made together with softmax's (ncu/attention+softmax), so that softmax's alone would be
	// asked of it; the journal so edited is no run's.
	t.Run("a recorded failure fails", func(t *testing.T) {
		dir := recording(t, "clean")
		editJournal(t, dir, func(j *journal) {
			s := stepOf(t, j, "check/gemm")
			s.Exit, s.Why = 1, "exited with status 1"
		})
		res, err := Run(context.Background(), loadConfig(t), Options{Replay: dir})
		if err != nil {
			t.Fatal(err)
		}
		if g := gate(t, res, "correctness"); g.Verdict != result.Fail {
			t.Errorf("correctness %s after a failed check run", g.Verdict)
		}
	})
}

// What the journal says is shown only cut and cleaned: a recorded tail with terminal escapes,
// workflow commands and a megabyte of text, and a RECORDED line the same, reach the result
// bounded and inert.
func TestReplayNeutralisesTheJournalsText(t *testing.T) {
	dir := recording(t, "clean")
	hostile := "\x1b]0;owned\x07\x1b[31mred\n::add-mask::x\n::error file=a::forged\n" + strings.Repeat("A", 1<<20) + "\nunspecified launch failure\n"
	editJournal(t, dir, func(j *journal) {
		s := stepOf(t, j, "check/gemm") // not attention's: see TestReplayUsesTheRecordedExitStatus
		s.Exit, s.Why, s.Tail = 1, "exited with status 1\x1b[2J\n::warning::x", hostile
		s.Argv = []string{"harness\x1b[1m", strings.Repeat("x", 5000)}
	})
	os.WriteFile(filepath.Join(dir, RecordedFile), []byte("recorded \x1b[5mon a GPU "+strings.Repeat("y", 5000)+"\n::error::second line\n"), 0o644)
	res, err := Run(context.Background(), loadConfig(t), Options{Replay: dir})
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, f := range gate(t, res, "correctness").Findings {
		if strings.Contains(f.Message, "the harness in check mode") || strings.Contains(f.Message, "GPU error") {
			msg = f.Message
		}
	}
	if msg == "" {
		t.Fatalf("no finding about the failed run: %+v", gate(t, res, "correctness").Findings)
	}
	for _, text := range []string{msg, res.Replay} {
		if strings.ContainsAny(text, "\x1b\x07") || len(text) > 6000 {
			t.Errorf("not cleaned or not cut (%d bytes): %q", len(text), text[:min(len(text), 300)])
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "::") {
				t.Errorf("a line a runner would read as a workflow command: %q", line)
			}
		}
	}
	if strings.Contains(res.Replay, "second line") || !strings.Contains(res.Replay, "recorded on a GPU") {
		t.Errorf("RECORDED: %q", res.Replay)
	}
}

// A live run writes its artifacts through no link: a directory holding a journal that is a
// link, or no journal of a run, is refused, not cleared.
func TestLiveArtifactsAreNeverClearedOnAHunch(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	os.WriteFile(keep, []byte("mine"), 0o644)
	elsewhere := filepath.Join(t.TempDir(), journalFile)
	os.WriteFile(elsewhere, []byte(`{"schema": "`+journalSchema+`"}`), 0o644)
	os.Symlink(elsewhere, filepath.Join(dir, journalFile))
	if _, err := newLive(dir, nil, "t", timeZero(), 0); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("a journal that is a link: %v", err)
	}
	os.Remove(filepath.Join(dir, journalFile))
	os.WriteFile(filepath.Join(dir, journalFile), []byte(`{"schema": "something else"}`), 0o644)
	if _, err := newLive(dir, nil, "t", timeZero(), 0); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("a journal of another schema: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the directory was cleared: %v", err)
	}
	// A run's own directory is cleared and written again; a planted link is refused.
	os.WriteFile(filepath.Join(dir, journalFile), []byte(`{"schema": "`+journalSchema+`"}`), 0o644)
	l, err := newLive(dir, nil, "t", timeZero(), 0)
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious"), 0o644)
	os.Symlink(victim, filepath.Join(dir, resultFile))
	if err := l.finish(&result.Result{}, Decisions{}, 0); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("finish through a planted link: %v", err)
	}
	if raw, _ := os.ReadFile(victim); string(raw) != "precious" {
		t.Errorf("the link's target was written: %q", raw)
	}
}

func timeZero() (t time.Time) { return t }
