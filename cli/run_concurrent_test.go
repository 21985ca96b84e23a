//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/gittest"
)

// Base and head at once (issue 22): a JIT harness target's first runs (which build) run
// side by side, each told half the cores; the journal keeps them in one order, base's
// first, both marked parallel, whichever ended first, and commands.sh runs them together;
// the replay agrees with the live run.
func TestRunFirstRunsAtOnce(t *testing.T) {
	repo, art := commandRepo(t, jitConfig(t, "")), filepath.Join(t.TempDir(), "art")
	envLog := filepath.Join(t.TempDir(), "env.log")
	meet := t.TempDir()
	t.Setenv("FAKE_ENV_LOG", envLog)
	t.Setenv("FAKE_RENDEZVOUS", meet)
	t.Setenv("MAX_JOBS", "") // the test's own environment must not set it
	os.Unsetenv("MAX_JOBS")
	t.Setenv("TMPDIR", t.TempDir())
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--all")...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	lines := envLines(t, envLog)
	if met := slices.Index(lines, "first run met"); met < 0 || slices.Contains(lines, "first run alone") {
		t.Errorf("base's and head's first runs did not run at once:\n%s", strings.Join(lines, "\n"))
	}
	want := strconv.Itoa(max(1, runtime.NumCPU()/2))
	for _, l := range lines {
		if strings.HasPrefix(l, "check ") && field(l, "jobs") != want {
			t.Errorf("a first run's MAX_JOBS is %q, want half the %d cores (%s): %s", field(l, "jobs"), runtime.NumCPU(), want, l)
		}
	}
	if !strings.Contains(stderr, "first harness runs at once") {
		t.Errorf("the progress does not say the first runs ran at once:\n%s", stderr)
	}

	j := readJournal(t, art)
	i := slices.IndexFunc(j.Steps, func(s testJournalStep) bool { return s.ID == "check/base/attention-jit" })
	if i < 0 || i+1 >= len(j.Steps) || j.Steps[i+1].ID != "check/attention-jit" || !j.Steps[i].Parallel || !j.Steps[i+1].Parallel {
		t.Errorf("the journal does not keep base's first run, then head's, both parallel: %+v", j.Steps)
	}
	script, err := os.ReadFile(filepath.Join(art, "commands.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var first []string
	for _, l := range strings.Split(string(script), "\n") {
		if strings.Contains(l, "KG_MODE=check") {
			first = append(first, l)
		}
	}
	if len(first) < 2 || !strings.HasSuffix(first[0], ") &") || !strings.HasSuffix(first[1], ") &") {
		t.Errorf("commands.sh does not run both first runs in the background:\n%s", strings.Join(first, "\n"))
	}
	if !strings.Contains(stderr, "attention-jit: 4 of the sanitizer's 4 tools at once (the GPU has 143156 MiB free, 8 GiB each)") {
		t.Errorf("the progress does not say the sanitizer's tools ran at once:\n%s", stderr)
	}

	// Where the time went: every step and the sanitizer's tools, with the critical path.
	live := decode(t, out)
	ids := map[string]bool{}
	for _, st := range live.Stages {
		ids[st.ID] = true
	}
	for _, id := range []string{"gpu", "check/base/attention-jit", "check/attention-jit", "static gates", "sanitize/attention-jit",
		"sanitize/attention-jit/memcheck", "sanitize/attention-jit/racecheck", "bench/attention-jit"} {
		if !ids[id] {
			t.Errorf("no stage %s in %+v", id, live.Stages)
		}
	}
	if n := len(live.CriticalPath); n == 0 || live.CriticalPath[n-1] != live.Stages[len(live.Stages)-1].ID && !ids[live.CriticalPath[n-1]] {
		t.Errorf("critical path %q", live.CriticalPath)
	}
	replayAgrees(t, repo, art, live, exitPass)
	code, replayed, _ := kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--format", "json")
	if r := decode(t, replayed); code != exitPass || r.Stages != nil || r.CriticalPath != nil {
		t.Errorf("a replay has stages: %+v %q", r.Stages, r.CriticalPath)
	}
}

// On a GPU with too little free memory for two tools, the sanitizer's tools run one at a
// time, and the progress says why.
func TestRunSanitizerToolsOneAtATime(t *testing.T) {
	repo, art := commandRepo(t, jitConfig(t, "")), filepath.Join(t.TempDir(), "art")
	t.Setenv("FAKE_SMI_FREE_MIB", "12000")
	t.Setenv("TMPDIR", t.TempDir())
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--no-base")...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "attention-jit: the sanitizer's tools one at a time: the GPU has 12000 MiB free, and each tool that runs beside another is given 8 GiB") {
		t.Errorf("the progress does not say the tools ran one at a time:\n%s", stderr)
	}
}

// The targets' sanitizers and checks at once (issue 22): with the GPU's memory for them, the
// three targets' checks run at the same time (they meet), each sanitizer tool's progress
// line names its target, the journal keeps each target's sanitizer and check as one chain
// in the targets' order, commands.sh runs each chain in the background and waits for them
// before the timing, and the replay agrees with the live run.
func TestRunTargetsAtOnce(t *testing.T) {
	cfg, err := os.ReadFile("kernel-gate.yml")
	if err != nil {
		t.Fatal(err)
	}
	// Without the SDPA reference, which the fake repository has no PyTorch script for.
	noRef := regexp.MustCompile(`(?m)^\s*reference: .*$`).ReplaceAllString(string(cfg), "")
	repo := gittest.PullRequest(t, map[string]string{"kernel-gate.yml": noRef, "kernels/harness.cu": "// base\n"},
		map[string]string{"kernels/harness.cu": "// head\n"}).Dir
	art := filepath.Join(t.TempDir(), "art")
	envLog := filepath.Join(t.TempDir(), "env.log")
	t.Setenv("FAKE_ENV_LOG", envLog)
	t.Setenv("FAKE_CHECK_RENDEZVOUS", t.TempDir())
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--all")...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	// (Nsight Compute's runs, in check mode too, come later and find the three there.)
	if lines := envLines(t, envLog); len(lines) < 3 || !slices.Equal(lines[:3], []string{"check met", "check met", "check met"}) {
		t.Errorf("the three checks did not run at once: %q", lines)
	}
	for _, want := range []string{
		"the sanitizers and checks of 3 targets at once",
		"up to 15 of their processes at once: the GPU has 143156 MiB free, 8 GiB each",
		"kernel-gate sanitize: gemm: racecheck ",
		"kernel-gate sanitize: softmax: memcheck done in ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the progress lacks %q:\n%s", want, stderr)
		}
	}
	// The timing starts after every target's sanitizer and check ended.
	if a, b := strings.Index(stderr, "target attention"), strings.LastIndex(stderr, "correctness check ("); a < 0 || b < 0 || a < b {
		t.Errorf("a target's timing group starts before the last check:\n%s", stderr)
	}
	var chained []string
	for _, s := range readJournal(t, art).Steps {
		if s.Chain != "" {
			chained = append(chained, s.Chain+" "+s.ID)
			if !s.Parallel {
				t.Errorf("step %s of chain %s is not marked parallel", s.ID, s.Chain)
			}
		}
	}
	want := []string{"attention sanitize/attention", "attention check/attention", "gemm sanitize/gemm", "gemm check/gemm", "softmax sanitize/softmax", "softmax check/softmax"}
	if !slices.Equal(chained, want) {
		t.Errorf("the journal's chains: %q, want %q", chained, want)
	}
	script, err := os.ReadFile(filepath.Join(art, "commands.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// Each chain: "(", its sanitizer's tools, its check, ") &"; then one wait before the
	// first timing.
	sc := string(script)
	firstTool, firstBench := strings.Index(sc, "--tool memcheck"), strings.Index(sc, "KG_MODE=bench")
	if firstTool < 0 || firstBench < firstTool {
		t.Fatalf("commands.sh: no sanitizer before the timing:\n%s", sc)
	}
	chains := sc[strings.LastIndex(sc[:firstTool], "\n(\n"):firstBench]
	if n := strings.Count(chains, "\n) &\n"); n != 3 || !strings.Contains(chains, "\n) &\nwait\n") {
		t.Errorf("commands.sh does not run three chains at once, then wait, before the timing (%d chains):\n%s", n, chains)
	}
	for _, target := range []string{"attention", "gemm", "softmax"} {
		check := strings.Index(sc, "KG_OUT="+filepath.Join(art, target, "check.json"))
		racecheck := strings.Index(sc, filepath.Join(art, target, "sanitize", "racecheck.xml.plain"))
		if check < 0 || racecheck < 0 || racecheck > check || strings.Contains(sc[racecheck:check], "\n) &\n") {
			t.Errorf("commands.sh: %s's check is not in the chain after its sanitizer", target)
		}
	}
	replayAgrees(t, repo, art, decode(t, out), exitPass)
}
