package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A kernel the A/B rounds find slower (the fake head harness 25% slower on gemm_wmma) is
// profiled once per side with the explanation's metrics (the fake ncu answers them), kept
// in the artifacts and the journal: the speedup finding's explanation carries the profile,
// live and replayed, and the verdict is still the rounds'.
func TestRunProfilesSlowKernel(t *testing.T) {
	t.Setenv("FAKE_HEAD_FACTOR", "1.25")
	repo, art := fakeRepo(t), filepath.Join(t.TempDir(), "art")
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--base", "main", "--all", "--targets", "gemm",
		"--artifacts", art, "--format", "json"}, fakeGPU(t)...)
	code, out, stderr := kg(t, "", args...)
	if code != exitFail {
		t.Fatalf("exit %d, want 1 (slower)\n%s\n%s", code, out, stderr)
	}
	for _, run := range []string{"live", "replay"} {
		if run == "replay" {
			code, out, stderr = kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--format", "json")
			if code != exitFail {
				t.Fatalf("replay: exit %d\n%s", code, stderr)
			}
		}
		sp := gateOf(t, decode(t, out), "speedup")
		var e *result.Explanation
		for _, f := range sp.Findings {
			if f.Metric == "slowdown" && f.Severity == result.Error && f.Explain != nil {
				e = f.Explain
			}
		}
		if e == nil {
			t.Fatalf("%s: no explained slowdown:\n%s", run, out)
		}
		t.Log(e.Sentence)
		// The stall reason that rose most leads, the duration that shows the slowdown after it.
		for _, want := range []string{"long-scoreboard stalls +35% (1.20 → 1.62 warps per issued instruction); duration 243300 → 291960 ns (+20%); ",
			"occupancy unchanged (28 warps/SM, limited by registers)", "SM throughput 61.2% → 51.0%"} {
			if !strings.Contains(e.Sentence, want) {
				t.Errorf("%s: the explanation lacks %q:\n%s", run, want, e.Sentence)
			}
		}
	}
	for _, side := range []string{"base", "head"} {
		if _, err := os.Stat(filepath.Join(art, "gemm", "explain-profile", side+"-gemm_wmma", "ncu.log")); err != nil {
			t.Errorf("the %s profile's log: %v", side, err)
		}
	}
	script, err := os.ReadFile(filepath.Join(art, "commands.sh"))
	if err != nil || !strings.Contains(string(script), "--clock-control none") || !strings.Contains(string(script), "gpu__time_duration.sum") {
		t.Errorf("commands.sh says no profile (%v)", err)
	}
}
