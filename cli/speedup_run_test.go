package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// fakeHarness is the runner's fake harness (a shell script; its header lists its settings).
func fakeHarness(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake harness is a POSIX shell script")
	}
	p, err := filepath.Abs(filepath.Join("gates", "speedup", "abrun", "testdata", "fake-harness.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// speedupGate decodes a bench run's JSON output.
func speedupGate(t *testing.T, out string) (result.Gate, abrun.Data) {
	t.Helper()
	res := decode(t, out)
	if len(res.Gates) != 1 || res.Gates[0].Name != speedup.Name {
		t.Fatalf("want the speedup gate alone:\n%s", out)
	}
	var d abrun.Data
	if err := json.Unmarshal(res.Gates[0].Data, &d); err != nil {
		t.Fatal(err)
	}
	return res.Gates[0], d
}

func comparisonVerdicts(d abrun.Data) string {
	var parts []string
	for _, c := range d.Comparisons {
		parts = append(parts, fmt.Sprintf("%s×%s=%s", c.Kernel, c.Shape, c.Verdict))
	}
	return strings.Join(parts, " ")
}

// Two given commands, head's gemm 5% slower: the gate fails, the merged files are kept and
// `bench compare` judges them alike.
func TestBenchRunCommands(t *testing.T) {
	fake, dir := fakeHarness(t), t.TempDir()
	art := filepath.Join(dir, "art")
	code, out, stderr := kg(t, "", "speedup", "run",
		"--base-cmd", fmt.Sprintf("sh %s state=%s/base seed=1", fake, dir),
		"--head-cmd", fmt.Sprintf("sh %s state=%s/head seed=2 factor=1.05", fake, dir),
		"--samples", "12", "--shapes", "small,long", "--nvidia-smi", filepath.Join(dir, "no-nvidia-smi"),
		"--artifacts", art, "--format", "json")
	if code != exitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFail, out, stderr)
	}
	g, d := speedupGate(t, out)
	if want := "gemm×small=slower gemm×long=slower softmax×small=same softmax×long=same"; comparisonVerdicts(d) != want || g.Verdict != result.Fail {
		t.Fatalf("got %s (%s), want %s", comparisonVerdicts(d), g.Verdict, want)
	}
	if !strings.Contains(stderr, "kernel-gate A/B run: warm-up round done") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	head := filepath.Join(art, "head.json")
	fh, err := os.Open(head)
	if err != nil {
		t.Fatal(err)
	}
	f, err := benchfile.Read(fh)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	if f.Request == nil || f.Request.Samples != 12 || strings.Join(f.Request.Shapes, ",") != "small,long" || len(f.Results[0].RoundsUs[0]) != 12 {
		t.Errorf("merged head: request %+v, %d samples a round", f.Request, len(f.Results[0].RoundsUs[0]))
	}
	code, out2, _ := kg(t, "", "speedup", "compare", filepath.Join(art, "base.json"), head, "--format", "json")
	res := decode(t, out2)
	var again speedup.Data
	if err := json.Unmarshal(res.Gates[0].Data, &again); err != nil {
		t.Fatal(err)
	}
	if code != exitFail || comparisonVerdicts(abrun.Data{Data: again}) != comparisonVerdicts(d) {
		t.Errorf("bench compare of the kept files: exit %d, %s", code, comparisonVerdicts(abrun.Data{Data: again}))
	}
}

// A harness that crashes fails the gate with a finding naming the side and the round.
func TestBenchRunCrashFails(t *testing.T) {
	fake, dir := fakeHarness(t), t.TempDir()
	code, out, _ := kg(t, "", "speedup", "run",
		"--base-cmd", fmt.Sprintf("sh %s state=%s/base fail_on=3", fake, dir),
		"--head-cmd", fmt.Sprintf("sh %s state=%s/head", fake, dir),
		"--nvidia-smi", filepath.Join(dir, "no-nvidia-smi"), "--format", "json")
	g, _ := speedupGate(t, out)
	if code != exitFail || g.Verdict != result.Fail || !strings.Contains(g.Findings[0].Message, "the base harness, round 2 failed: the harness exited with status 1") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// The git path: base built from the merge base of --base and HEAD in a temporary worktree,
// head from the working tree, each by the build command, which writes the fake harness.
func TestBenchRunWorktree(t *testing.T) {
	fake := fakeHarness(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo, state := gittest.New(t), t.TempDir()
	repo.Write(map[string]string{"factor": "1\n", ".gitignore": "out/\n"})
	baseRev := repo.Commit("base")
	repo.Git("branch", "trunk")
	repo.Git("checkout", "-q", "-b", "change")
	repo.Write(map[string]string{"factor": "1.10\n"})
	repo.Commit("head: 10% slower gemm")
	build := fmt.Sprintf(`mkdir -p out && side=$(basename "$PWD") && printf '#!/bin/sh\nexec sh %s state=%s/%%s.count factor=%%s "$@"\n' "$side" "$(cat factor)" >out/harness && chmod +x out/harness`, fake, state)

	t.Chdir(repo.Dir)
	code, out, stderr := kg(t, "", "speedup", "run", "--base", "trunk", "--build", build, "--harness", "./out/harness seed=4",
		"--nvidia-smi", filepath.Join(state, "no-nvidia-smi"), "--timeout", "30s", "--format", "json")
	if code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	g, d := speedupGate(t, out)
	if want := "gemm×small=slower softmax×small=same"; comparisonVerdicts(d) != want || g.Verdict != result.Fail {
		t.Fatalf("got %s, want %s", comparisonVerdicts(d), want)
	}
	if d.Runner.Mode != "worktree" || d.Runner.BaseRev != baseRev || d.Runner.BaseRef != "trunk" {
		t.Errorf("runner %+v", d.Runner)
	}
	if list := repo.Git("worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("the base worktree was not removed:\n%s", list)
	}
}

func TestSpeedupRunUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"speedup"}, "usage: kernel-gate speedup run"},
		{[]string{"speedup", "frobnicate"}, "usage: kernel-gate speedup run"},
		// bench is speedup's old name.
		{[]string{"bench"}, "usage: kernel-gate speedup run"},
		{[]string{"bench", "run", "--base-cmd", "./a"}, "--base-cmd and --head-cmd go together"},
		{[]string{"speedup", "run", "--base-cmd", "./a", "--head-cmd", "./b && "}, "--head-cmd:"},
		{[]string{"speedup", "run", "--harness", " "}, "--harness: an empty command"},
		{[]string{"speedup", "run", "--base-cmd", "./a"}, "--base-cmd and --head-cmd go together"},
		{[]string{"speedup", "run", "--base-cmd", "./a", "--head-cmd", "./b", "--harness", "./h"}, "not both"},
		{[]string{"speedup", "run", "--base-cmd", "'./a", "--head-cmd", "./b"}, "--base-cmd:"},
		{[]string{"speedup", "run", "--base-cmd", "./a", "--head-cmd", "./b", "--timeout", "soon"}, "--timeout"},
		{[]string{"speedup", "run", "--base-cmd", "./a", "--head-cmd", "./b", "--samples", "-3"}, "--samples"},
		{[]string{"speedup", "run", "--base-cmd", "./a", "--head-cmd", "./b", "extra.json"}, "takes no file arguments"},
		{[]string{"speedup", "run", "--config", "testdata/nope.yml", "--harness", "./h"}, "nope.yml"},
	} {
		code, _, stderr := kg(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
	// The repository's own config has no speedup.harness: nothing to run is a usage error.
	if code, _, stderr := kg(t, "", "speedup", "run", "--config", "kernel-gate.yml"); code != exitUsage || !strings.Contains(stderr, "nothing to run") {
		t.Errorf("no harness: exit %d, %q", code, stderr)
	}
}

// The files kernels/kg_bench.py writes (committed by kernels/kg_bench_test.py) read with
// kernel-gate's reader, NaN and infinities included.
func TestPythonHelperFilesRead(t *testing.T) {
	read := func(name string) *benchfile.File {
		t.Helper()
		fh, err := os.Open(filepath.Join("testdata", "harness-python", name))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		f, err := benchfile.Read(fh)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return f
	}
	b := read("bench.json")
	if b.Device.Name != "NVIDIA H200" || b.Request.Mode != "bench" || b.Request.Samples != 4 || len(b.Results) != 3 {
		t.Fatalf("bench.json: %+v %+v, %d results", b.Device, b.Request, len(b.Results))
	}
	fa := b.Results[0]
	if len(fa.RoundsUs) != 2 || !math.IsNaN(float64(fa.RoundsUs[1][2])) || fa.Reference == nil ||
		fa.Reference.Name != "torch.sdpa.flash" || !math.IsInf(float64(fa.Reference.RoundsUs[1][3]), 1) {
		t.Errorf("flash_fwd × small: %+v", fa)
	}
	if b.Results[2].Error == "" {
		t.Error("the harness error was lost")
	}
	c := read("check.json")
	g := c.Results[1]
	if g.MaxErr == nil || !math.IsNaN(float64(*g.MaxErr)) || g.MeanErr == nil || !math.IsInf(float64(*g.MeanErr), 1) ||
		g.NaNCount == nil || *g.NaNCount != 12 || g.Extra["note"] != "planted NaN" {
		t.Errorf("gemm_wmma × small: %+v", g)
	}
	// The correctness gate fails the NaN and passes the clean result.
	code, out, _ := kg(t, "", "check", "--config", "kernel-gate.yml", "--format", "json", filepath.Join("testdata", "harness-python", "check.json"))
	res := decode(t, out)
	if code != exitFail || res.Gates[0].Verdict != result.Fail {
		t.Errorf("check of the Python helper's check.json: exit %d", code)
	}
}

// kernels/kg_bench_test.py itself, where there is a python3 (it needs no torch).
func TestPythonHelperTests(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("kernels", "kg_bench_test.py"))
	cmd.Env = append(os.Environ(), "KG_BENCH_REGEN=", "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3 kernels/kg_bench_test.py: %v\n%s", err, out)
	}
}

// A config with the old bench: section loads, and the command says, once, on standard
// error, that bench: is deprecated, naming its line; the result is the same as with the keys
// under speedup:.
func TestBenchSectionNotice(t *testing.T) {
	dir := t.TempDir()
	clean := "testdata/sanitizer-kernels-h200/harness_bench_clean.json"
	var outs []string
	for i, cfg := range []string{"speedup:\n  max_slowdown: 0.05\nbench:\n  samples: 30\n", "speedup:\n  max_slowdown: 0.05\n  samples: 30\n"} {
		path := filepath.Join(dir, fmt.Sprintf("k%d.yml", i))
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := kg(t, "", "speedup", "compare", "--config", path, "--format", "json", clean, clean)
		notice := "kernel-gate: notice: " + path + ":3: bench: is deprecated, move its keys under speedup:"
		if code != exitPass || strings.Contains(stderr, notice) != (i == 0) || strings.Count(stderr, "deprecated") > 1 {
			t.Errorf("%q: exit %d, stderr %q", cfg, code, stderr)
		}
		outs = append(outs, strings.ReplaceAll(out, path, "k.yml"))
	}
	if outs[0] != outs[1] {
		t.Errorf("bench: and speedup: give different results:\n%s\n%s", outs[0], outs[1])
	}
}
