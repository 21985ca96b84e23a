//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/demo"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/pipeline"
)

// fakeRepo makes a git repository whose main branch holds kernel-gate.yml and a kernels/
// folder, and a head commit on a branch that changes a kernel source (the fake nvcc does
// not read it: what the gates see comes from the recorded H200 files the fakes print).
func fakeRepo(t *testing.T) string {
	t.Helper()
	cfg, err := os.ReadFile("kernel-gate.yml")
	if err != nil {
		t.Fatal(err)
	}
	return gittest.PullRequest(t, map[string]string{"kernel-gate.yml": string(cfg), "kernels/harness.cpp": "// base\n"},
		map[string]string{"kernels/harness.cpp": "// head\n"}).Dir
}

// fakeGPU returns the flags that point kernel-gate run at the fake toolchain.
func fakeGPU(t *testing.T) []string {
	t.Helper()
	f, err := filepath.Abs(filepath.Join("testdata", "fakegpu"))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"--nvcc", filepath.Join(f, "nvcc"), "--cuobjdump", filepath.Join(f, "cuobjdump"),
		"--sanitizer", filepath.Join(f, "compute-sanitizer"), "--nvidia-smi", filepath.Join(f, "nvidia-smi"), "--ncu", filepath.Join(f, "ncu")}
}

func gateOf(t *testing.T, r result.Result, name string) result.Gate {
	t.Helper()
	i := slices.IndexFunc(r.Gates, func(g result.Gate) bool { return g.Name == name })
	if i < 0 {
		t.Fatalf("no %s gate in %v", name, r.Gates)
	}
	return r.Gates[i]
}

func messages(g result.Gate, sev result.Severity) string {
	var b strings.Builder
	for _, f := range g.Findings {
		if f.Severity == sev {
			b.WriteString(f.Message + "\n")
		}
	}
	return b.String()
}

// The live path end to end on a fake toolchain (the H200's recorded outputs): base and head
// are built from git, the unchanged SASS skips the sanitizer and the timing, the correctness
// check runs, and the journal lets --replay reach the same verdicts.
func TestRunLiveSkipsUnchangedSASSAndReplays(t *testing.T) {
	repo, art := fakeRepo(t), filepath.Join(t.TempDir(), "art")
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--base", "main", "--artifacts", art, "--format", "json"}, fakeGPU(t)...)
	code, out, stderr := kg(t, "", args...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	live := decode(t, out)
	var names []string
	for _, g := range live.Gates {
		names = append(names, g.Name+"="+string(g.Verdict))
	}
	want := []string{"ptxas=pass", "toolkit=pass", "sass=pass", "sanitizer=skip", "correctness=pass", "speedup=skip", "ncu=skip"}
	if !slices.Equal(names, want) {
		t.Fatalf("gates %q, want %q", names, want)
	}
	for _, name := range []string{"sanitizer", "speedup"} {
		if n := messages(gateOf(t, live, name), result.Notice); strings.Count(n, "unchanged SASS: skipped") != 3 {
			t.Errorf("%s: want each of the 3 targets skipped as unchanged:\n%s", name, n)
		}
	}
	for _, want := range []string{"base: ", "merge base of main", "attention: correctness check", "done in"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	var j struct { // the journal's fields this test reads (kernel-gate/run-journal/v1)
		BaseRev     string            `json:"base_rev"`
		Arch        []string          `json:"arch"`
		Steps       []json.RawMessage `json:"steps"`
		WallSeconds float64           `json:"wall_seconds"`
	}
	raw, err := os.ReadFile(filepath.Join(art, demo.JournalFile))
	if err != nil || json.Unmarshal(raw, &j) != nil {
		t.Fatalf("journal: %v", err)
	}
	if j.BaseRev == "" || len(j.Steps) < 7 || j.WallSeconds <= 0 || !slices.Equal(j.Arch, []string{"sm_89", "sm_90a"}) {
		t.Errorf("journal: %+v", j)
	}
	if _, err := os.Stat(filepath.Join(art, "head", "attention", "harness")); err != nil {
		t.Errorf("head's harness binary: %v", err)
	}
	// The replay reads the same files and reaches the same verdicts and findings.
	code, out, stderr = kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--format", "json")
	if code != exitPass {
		t.Fatalf("replay: exit %d\n%s", code, stderr)
	}
	replayed := decode(t, out)
	if replayed.Replay == "" {
		t.Error("a replay must say so")
	}
	for i, g := range live.Gates {
		if rg := replayed.Gates[i]; rg.Name != g.Name || rg.Verdict != g.Verdict || len(rg.Findings) != len(g.Findings) {
			t.Errorf("replay %s %s (%d findings), live %s %s (%d)", rg.Name, rg.Verdict, len(rg.Findings), g.Name, g.Verdict, len(g.Findings))
		}
	}
}

// --all runs every step though the SASS is unchanged: the sanitizer, and the A/B timing
// whose merged files and runner record the replay judges again.
func TestRunAllTimesUnchangedTargets(t *testing.T) {
	repo, art := fakeRepo(t), filepath.Join(t.TempDir(), "art")
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--base", "main", "--all", "--targets", "gemm", "--artifacts", art, "--format", "json"}, fakeGPU(t)...)
	code, out, stderr := kg(t, "", args...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	live := decode(t, out)
	sp := gateOf(t, live, "speedup")
	var d struct {
		Comparisons []struct{ Kernel, Verdict string } `json:"comparisons"`
		Targets     []pipeline.TargetData              `json:"targets"`
	}
	if err := json.Unmarshal(sp.Data, &d); err != nil || len(d.Comparisons) == 0 || len(d.Targets) != 1 || d.Targets[0].Target != "gemm" {
		t.Fatalf("speedup data: %v %s", err, sp.Data)
	}
	if gateOf(t, live, "sanitizer").Verdict != result.Pass {
		t.Errorf("sanitizer: %+v", gateOf(t, live, "sanitizer"))
	}
	code, out, _ = kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--format", "json")
	if code != exitPass {
		t.Fatalf("replay exit %d", code)
	}
	rsp := gateOf(t, decode(t, out), "speedup")
	if rsp.Verdict != sp.Verdict || len(rsp.Findings) != len(sp.Findings) {
		t.Errorf("replayed speedup %s with %d findings, live %s with %d", rsp.Verdict, len(rsp.Findings), sp.Verdict, len(sp.Findings))
	}
	// Nothing was slower: no profile ran for an explanation, and none was built.
	if _, err := os.Stat(filepath.Join(art, "gemm", "explain-profile")); !os.IsNotExist(err) {
		t.Errorf("a profile ran with no kernel slower: %v", err)
	}
	for _, g := range live.Gates {
		for _, f := range g.Findings {
			if f.Explain != nil {
				t.Errorf("%s: an explanation where no gate failed: %+v", g.Name, f)
			}
		}
	}
}

// runGPUError runs --all on a fake repository whose harness's check runs of the kernels
// named (1: every one) die of a GPU error, after which nvidia-smi no longer answers; the run
// must fail.
func runGPUError(t *testing.T, kernels string) (repo, art string, r result.Result, stderr string) {
	t.Helper()
	repo, art = fakeRepo(t), filepath.Join(t.TempDir(), "art")
	t.Setenv("FAKE_HARNESS_GPU_ERROR", kernels)
	t.Setenv("FAKE_SMI_DEAD_AFTER", filepath.Join(t.TempDir(), "dead"))
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--base", "main", "--all", "--artifacts", art, "--format", "json"}, fakeGPU(t)...)
	code, out, stderr := kg(t, "", args...)
	if code != exitFail {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	return repo, art, decode(t, out), stderr
}

// A GPU error in a check run fails the correctness gate naming it, skips the target's
// timing, and, when nvidia-smi no longer answers afterwards, every later target's GPU steps.
// Here the targets run in turn: the GPU has the memory for one sanitizer tool at a time.
func TestRunGPUErrorStopsTheRest(t *testing.T) {
	t.Setenv("FAKE_SMI_FREE_MIB", "12000")
	repo, art, r, stderr := runGPUError(t, "1")
	if !strings.Contains(stderr, "the targets' sanitizers and checks one target at a time: the GPU has 12000 MiB free") {
		t.Errorf("the progress does not say the targets ran in turn:\n%s", stderr)
	}
	c := gateOf(t, r, "correctness")
	if c.Verdict != result.Fail || !strings.Contains(messages(c, result.Error), "attention: a GPU error (unspecified launch failure) in the check run") {
		t.Errorf("correctness: %s", messages(c, result.Error))
	}
	sp := gateOf(t, r, "speedup")
	notes := messages(sp, result.Notice)
	if !strings.Contains(notes, "attention: the correctness check failed") || !strings.Contains(notes, "gemm: after a GPU error nvidia-smi no longer answers") {
		t.Errorf("speedup notices:\n%s", notes)
	}
	replayAgrees(t, repo, art, r, exitFail)
}

// The targets' sanitizers and checks at once (issue 22): a GPU error in attention's check
// fails it; gemm's and softmax's checks, which ran beside it, stand; nvidia-smi is asked
// once they have all ended and, as it no longer answers, no target is timed or profiled.
// The replay, which reads the same steps one target after another, agrees.
func TestRunGPUErrorWithTargetsAtOnce(t *testing.T) {
	repo, art, r, stderr := runGPUError(t, "flash_fwd,flash_fwd_causal")
	if !strings.Contains(stderr, "the sanitizers and checks of 3 targets at once") {
		t.Errorf("the progress does not say the targets ran at once:\n%s", stderr)
	}
	c := gateOf(t, r, "correctness")
	errs := messages(c, result.Error)
	if c.Verdict != result.Fail || !strings.Contains(errs, "attention: a GPU error (unspecified launch failure) in the check run") || strings.Contains(errs, "gemm") || strings.Contains(errs, "softmax") {
		t.Errorf("correctness: %s", errs)
	}
	if s := gateOf(t, r, "sanitizer"); s.Verdict != result.Pass {
		t.Errorf("sanitizer: %s %s", s.Verdict, messages(s, result.Error))
	}
	notes := messages(gateOf(t, r, "speedup"), result.Notice)
	for _, want := range []string{"attention: the correctness check failed", "gemm: after a GPU error nvidia-smi no longer answers", "softmax: after a GPU error nvidia-smi no longer answers"} {
		if !strings.Contains(notes, want) {
			t.Errorf("speedup notices lack %q:\n%s", want, notes)
		}
	}
	var alive, chained []string
	for _, s := range readJournal(t, art).Steps {
		if strings.HasPrefix(s.ID, "gpu-after-error/") {
			alive = append(alive, s.ID)
		}
		if s.Chain != "" {
			chained = append(chained, s.Chain+" "+s.ID)
		}
	}
	if !slices.Equal(alive, []string{"gpu-after-error/1"}) {
		t.Errorf("nvidia-smi checks after the error: %q, want one", alive)
	}
	want := []string{"attention sanitize/attention", "attention check/attention", "gemm sanitize/gemm", "gemm check/gemm", "softmax sanitize/softmax", "softmax check/softmax"}
	if !slices.Equal(chained, want) {
		t.Errorf("the journal's chains: %q, want %q", chained, want)
	}
	replayAgrees(t, repo, art, r, exitFail)
}

// GPU errors in two targets' checks, which ran at once: each fails its own correctness
// finding; nvidia-smi is asked once per failed check after the phase, in the targets' order
// (gpu-after-error/1 for attention's, /2 for gemm's, whichever check ended first), and as it
// no longer answers no target is timed; the replay, which reads the steps one target after
// another, agrees finding for finding.
func TestRunGPUErrorInTwoTargetsAtOnce(t *testing.T) {
	repo, art, r, stderr := runGPUError(t, "flash_fwd,flash_fwd_causal;gemm_wmma")
	if !strings.Contains(stderr, "the sanitizers and checks of 3 targets at once") {
		t.Errorf("the progress does not say the targets ran at once:\n%s", stderr)
	}
	errs := messages(gateOf(t, r, "correctness"), result.Error)
	for _, target := range []string{"attention", "gemm"} {
		if !strings.Contains(errs, target+": a GPU error (unspecified launch failure) in the check run") {
			t.Errorf("correctness does not name %s's GPU error:\n%s", target, errs)
		}
	}
	if strings.Contains(errs, "softmax") {
		t.Errorf("correctness blames softmax:\n%s", errs)
	}
	if notes := messages(gateOf(t, r, "speedup"), result.Notice); !strings.Contains(notes, "softmax: after a GPU error nvidia-smi no longer answers") {
		t.Errorf("softmax was timed after the GPU stopped answering:\n%s", notes)
	}
	var alive []string
	for _, s := range readJournal(t, art).Steps {
		if strings.HasPrefix(s.ID, "gpu-after-error/") {
			alive = append(alive, s.ID)
		}
	}
	if !slices.Equal(alive, []string{"gpu-after-error/1", "gpu-after-error/2"}) {
		t.Errorf("nvidia-smi checks after the errors: %q, want one per failed check", alive)
	}
	replayAgrees(t, repo, art, r, exitFail)
}

// A head that does not build fails the ptxas gate with nvcc's error and file:line, the
// SASS gate for want of a dump, and runs nothing on the GPU.
func TestRunBuildFailure(t *testing.T) {
	repo, art := fakeRepo(t), filepath.Join(t.TempDir(), "art")
	t.Setenv("FAKE_NVCC_FAIL", "1")
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--no-base", "--artifacts", art, "--format", "json"}, fakeGPU(t)...)
	code, out, stderr := kg(t, "", args...)
	if code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	r := decode(t, out)
	pt := gateOf(t, r, "ptxas")
	if pt.Verdict != result.Fail || !strings.Contains(messages(pt, result.Error), `identifier "oops" is undefined`) {
		t.Errorf("ptxas: %s %s", pt.Verdict, messages(pt, result.Error))
	}
	if gateOf(t, r, "sass").Verdict != result.Fail {
		t.Error("no SASS to read must fail the sass gate")
	}
	if n := messages(gateOf(t, r, "correctness"), result.Notice); !strings.Contains(n, "head did not build") {
		t.Errorf("correctness: %s", n)
	}
}

// No GPU: the static gates run, the GPU gates fail (never pass) and say why.
func TestRunWithoutGPUFailsTheGPUGates(t *testing.T) {
	repo, art := fakeRepo(t), filepath.Join(t.TempDir(), "art")
	t.Setenv("FAKE_SMI_DEAD", "1")
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--no-base", "--artifacts", art, "--format", "json"}, fakeGPU(t)...)
	code, out, _ := kg(t, "", args...)
	if code != exitFail {
		t.Fatalf("exit %d", code)
	}
	r := decode(t, out)
	for _, name := range []string{"sanitizer", "correctness", "speedup"} {
		g := gateOf(t, r, name)
		if g.Verdict != result.Fail || !strings.Contains(messages(g, result.Error), "no GPU to run on") {
			t.Errorf("%s: %s %s", name, g.Verdict, messages(g, result.Error))
		}
	}
	if gateOf(t, r, "ptxas").Verdict != result.Pass {
		t.Error("the static gates need no GPU")
	}
}

func TestRunUsageErrors(t *testing.T) {
	repo := fakeRepo(t)
	cfg := filepath.Join(repo, "kernel-gate.yml")
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"someone's directory", []string{"--artifacts", full}, "is not empty and holds no earlier run"},
		{"no recording", []string{"--replay", t.TempDir()}, "journal.json"},
		{"unknown target", []string{"--targets", "nope"}, `no target "nope"`},
		{"arguments", []string{"extra"}, "run takes no arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"run", "-C", repo, "--config", cfg}, fakeGPU(t)...), tc.args...)
			code, _, stderr := kg(t, "", args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q, want %q", code, stderr, tc.want)
			}
		})
	}
	if _, err := os.ReadFile(filepath.Join(full, "notes.txt")); err != nil {
		t.Error("a directory that is not an earlier run's must be left alone")
	}
}

// kernel-gate's own work in a run — parsing every log, dump, XML and timing file and judging
// them — is what a replay does, without the processes: this benchmark is its cost for the
// recorded clean run on the H200 (docs/overhead.md compares it with that run's wall time).
func BenchmarkRunReplayClean(b *testing.B) {
	var out, errb strings.Builder
	for b.Loop() {
		out.Reset()
		code := run(b.Context(), []string{"run", "--replay", "testdata/replay/clean", "--format", "json"}, env{
			stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" },
		})
		if code != exitPass {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
}

// Under GitHub Actions the progress is folded into groups, one per stage and target; a
// target name cannot break out of its group line (go-githubactions escapes it).
func TestRunFoldsProgressUnderActions(t *testing.T) {
	repo, art := fakeRepo(t), filepath.Join(t.TempDir(), "art")
	vars := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": filepath.Join(t.TempDir(), "out")}
	var out, errb strings.Builder
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--no-base", "--targets", "softmax", "--artifacts", art}, fakeGPU(t)...)
	code := run(t.Context(), args, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }})
	if code != exitPass {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	for _, want := range []string{"::group::GPU\n", "::group::build\n", "::group::target softmax\n", "::endgroup::\n"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if strings.Count(errb.String(), "::group::") != strings.Count(errb.String(), "::endgroup::") {
		t.Error("every group must be closed")
	}
}

// A base worktree kernel-gate cannot make (here: no temporary directory to make it in) is
// kernel-gate's own failure, exit 3, not bad usage.
func TestRunBaseCheckoutFailureExitsInternal(t *testing.T) {
	repo := fakeRepo(t)
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--base", "main", "--artifacts", filepath.Join(t.TempDir(), "art")}, fakeGPU(t)...)
	code, _, stderr := kg(t, "", args...)
	if code != exitInternal || !strings.Contains(stderr, "checking out the base") {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitInternal, stderr)
	}
}
