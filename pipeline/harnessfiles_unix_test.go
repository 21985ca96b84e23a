//go:build unix

package pipeline

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/kernelsrc"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// hangGuard bounds a call that would block for ever on the code as it was (an open of a
// FIFO that no one writes): it fails the test instead of hanging it.
const hangGuard = 30 * time.Second

// liveRun runs the pipeline live on the fake toolchain, in dir (a temporary one when ""),
// its harness's check mode ending with the shell script after (the pull request's code: it
// knows where its artifacts go from KG_OUT).
func liveRun(t *testing.T, o Options, after string, env ...string) (result.Result, error) {
	t.Helper()
	return liveRunConfig(t, loadConfig(t), o, after, env...)
}

// liveRunConfig is liveRun with a config of the test's (o.Tools.Nvdisasm is kept, and so is
// o.Tools.NCU when set).
func liveRunConfig(t *testing.T, cfg config.Config, o Options, after string, env ...string) (result.Result, error) {
	t.Helper()
	tools, err := filepath.Abs(filepath.Join(root, "testdata", "fakegpu"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Dir == "" {
		o.Dir, o.NoBase = t.TempDir(), true
	}
	o.Tool = "kernel-gate test"
	o.Tools = Tools{NVCC: filepath.Join(tools, "nvcc"), Cuobjdump: filepath.Join(tools, "cuobjdump"), Sanitizer: filepath.Join(tools, "compute-sanitizer"),
		NCU: cmp.Or(o.Tools.NCU, filepath.Join(tools, "ncu")), NvidiaSMI: filepath.Join(tools, "nvidia-smi"), Nvdisasm: o.Tools.Nvdisasm}
	o.Environ = append(append(os.Environ(), "FAKE_HARNESS_CHECK_AFTER="+after), env...)
	type ran struct {
		res result.Result
		err error
	}
	r := hangtest.Within(t, hangGuard, "the run", func() ran {
		res, err := Run(context.Background(), cfg, o)
		return ran{res, err}
	})
	return r.res, r.err
}

// A harness that leaves a FIFO (or a directory) at KG_OUT fails the correctness check at
// once, naming the file and what it is; the open waited for a writer for ever, and only
// SIGTERM's last-resort timer ended the run.
func TestHarnessFileNotARegularFileFailsTheCheck(t *testing.T) {
	for _, tc := range []struct{ name, after, want string }{
		{"fifo", `rm -f "$KG_OUT" && mkfifo "$KG_OUT"`, "a FIFO (named pipe), not a regular file"},
		{"directory", `rm -f "$KG_OUT" && mkdir "$KG_OUT"`, "a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := liveRun(t, Options{Artifacts: filepath.Join(t.TempDir(), "art"), Targets: []string{"gemm"}, Gates: []string{"correctness"}}, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			g := gate(t, res, "correctness")
			msg := findings(g)
			if g.Verdict != result.Fail || !strings.Contains(msg, "gemm/check.json cannot be read") || !strings.Contains(msg, tc.want) {
				t.Errorf("verdict %s, findings:\n%s", g.Verdict, msg)
			}
		})
	}
}

// A link out of the artifacts that the harness left where a later gate's directory goes
// (its check run knows the artifacts from KG_OUT) is refused (exit 2) before that gate
// writes a file; the gate wrote its logs into the link's target.
func TestGateDirectoryALinkOutOfTheArtifacts(t *testing.T) {
	outside := t.TempDir()
	art := filepath.Join(t.TempDir(), "art")
	_, err := liveRun(t, Options{Artifacts: art, Targets: []string{"attention"}, Gates: []string{"correctness", "ncu"}},
		`d=$(dirname "$KG_OUT"); [ -L "$d/ncu" ] || ln -s "$OUTSIDE" "$d/ncu"`, "OUTSIDE="+outside)
	if exitcode.Of(err) != exitcode.Usage || err == nil || !strings.Contains(err.Error(), filepath.Join("attention", "ncu")) ||
		!strings.Contains(err.Error(), "refusing to write there") {
		t.Errorf("got %v (exit %d), want the link refused", err, exitcode.Of(err))
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("written outside the artifacts: %v", entries)
	}
}

// The A/B runner's record is written in the artifacts only: a link of its name that the
// harness left (to a file outside) is refused, its target untouched.
func TestRunnerRecordNeverThroughALink(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(t.TempDir(), "art")
	_, err := liveRun(t, Options{Dir: gitRepo(t), BaseRef: "main", All: true, Artifacts: art, Targets: []string{"gemm"}, Gates: []string{"correctness", "speedup"}},
		`d=$(dirname "$KG_OUT")/bench; mkdir -p "$d" && { [ -L "$d/runner.json" ] || ln -s "$VICTIM" "$d/runner.json"; }`, "VICTIM="+victim)
	if err == nil || !strings.Contains(err.Error(), "runner.json") {
		t.Errorf("got %v, want the link refused", err)
	}
	if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
		t.Errorf("the link's target was written: %q", raw[:min(len(raw), 80)])
	}
}

// A recording's runner record that is a FIFO is refused at once, named (the replay's walk
// of the recording refuses it too, before anything is read).
func TestRunnerRecordFIFORefused(t *testing.T) {
	fifo := hangtest.FIFO(t, filepath.Join(t.TempDir(), runnerRecordFile))
	err := hangtest.Within(t, hangGuard, "reading the FIFO", func() error {
		_, err := readRunnerRecord(context.Background(), fifo)
		return err
	})
	if !errors.Is(err, input.ErrNotRegular) || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), fifo) {
		t.Errorf("got %v (exit %d), want a refusal naming the FIFO", err, exitcode.Of(err))
	}
}

// A source that became a FIFO after the directory was listed leaves its kernels unlocated,
// at once; the open waited on it for ever.
func TestLocateRefusesAFIFOSource(t *testing.T) {
	dir := t.TempDir()
	hangtest.FIFO(t, filepath.Join(dir, "k.cu"))
	err := hangtest.Within(t, hangGuard, "reading the FIFO", func() error { return addSource(kernelsrc.Index{}, dir, "k.cu") })
	if !errors.Is(err, input.ErrNotRegular) {
		t.Errorf("got %v, want the FIFO refused", err)
	}
}

// gitRepo is a repository whose main branch holds the example config and a kernel source,
// and a head commit that changes the source (the fake nvcc reads neither).
func gitRepo(t *testing.T) string {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(root, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return gittest.PullRequest(t, map[string]string{"kernel-gate.yml": string(cfg), "kernels/harness.cpp": "// base\n"},
		map[string]string{"kernels/harness.cpp": "// head\n"}).Dir
}

// The artifacts directory (the action's is in the workspace, which the pull request fills)
// is never a link out of its own directory: one to a directory of the runner's, by an
// absolute path, or dangling is refused (exit 2) before anything is written; a relative
// link to a directory beside it is followed.
func TestArtifactsDirectoryALinkOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		link func(ws, outside string) string
		ok   bool
	}{
		{"to a directory outside", func(_, outside string) string { return outside }, false},
		{"by an absolute path beside it", func(ws, _ string) string { return filepath.Join(ws, "real") }, false},
		{"dangling", func(string, string) string { return "nowhere" }, false},
		{"relative, beside it", func(string, string) string { return "real" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside := t.TempDir(), t.TempDir()
			if err := os.Mkdir(filepath.Join(ws, "real"), 0o755); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(ws, DefaultArtifacts)
			if err := os.Symlink(tc.link(ws, outside), dir); err != nil {
				t.Fatal(err)
			}
			l, err := newLive(dir, nil, "t", timeZero(), 0)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if err := l.finish(&result.Result{}, Decisions{}, 0); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(ws, "real", journalFile)); err != nil {
					t.Errorf("the journal beside it: %v", err)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "symbolic link that leads out of its directory") {
				t.Errorf("got %v (exit %d), want the link refused", err, exitcode.Of(err))
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("written outside: %v", entries)
			}
		})
	}
}
