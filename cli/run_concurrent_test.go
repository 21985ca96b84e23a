//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
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

	raw, err := os.ReadFile(filepath.Join(art, "journal.json"))
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Steps []struct {
			ID       string `json:"id"`
			Parallel bool   `json:"parallel"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(j.Steps, func(s struct {
		ID       string `json:"id"`
		Parallel bool   `json:"parallel"`
	}) bool {
		return s.ID == "check/base/attention-jit"
	})
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
