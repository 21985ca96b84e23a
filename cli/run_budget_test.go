//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// speedup.wall_budget and speedup.run_wall_budget on the fake toolchain: the first target's
// budget runs out after its warm-up round, so nothing is judged and the gate skips it with a
// warning, never a pass; the whole run's budget is then spent, so the second target is not
// started at all. The replay, which has neither target's merged files, judges the same.
func TestRunWallBudgets(t *testing.T) {
	repo, art := fakeRepo(t), filepath.Join(t.TempDir(), "art")
	cfg := filepath.Join(repo, "kernel-gate.yml")
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(strings.Replace(string(raw), "  wall_budget: 5m ", "  wall_budget: 1ms", 1), "  run_wall_budget: 20m ", "  run_wall_budget: 2ms", 1)
	if text == string(raw) {
		t.Fatal("kernel-gate.yml has no speedup.wall_budget to change")
	}
	os.WriteFile(cfg, []byte(text), 0o644)
	args := append([]string{"run", "-C", repo, "--config", cfg, "--base", "main", "--all", "--targets", "gemm,softmax", "--artifacts", art, "--format", "json"}, fakeGPU(t)...)
	code, out, stderr := kg(t, "", args...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	sp := gateOf(t, decode(t, out), "speedup")
	var d struct {
		Targets []struct {
			Target string          `json:"target"`
			Data   json.RawMessage `json:"data"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(sp.Data, &d); err != nil || len(d.Targets) != 2 {
		t.Fatalf("speedup data: %v %s", err, sp.Data)
	}
	if sp.Verdict != result.Skip {
		t.Errorf("speedup %s, want skip\n%s", sp.Verdict, messages(sp, result.Warning))
	}
	for i, want := range []string{abrun.StopWallBudget, abrun.StopRunWall} {
		var td abrun.Data
		if err := json.Unmarshal(d.Targets[i].Data, &td); err != nil {
			t.Fatal(err)
		}
		if td.Runner.Stopped != want || td.Runner.Rounds != 0 || len(td.Comparisons) != 0 {
			t.Errorf("%s: stopped %q after %d rounds, %d comparisons; want %s", d.Targets[i].Target, td.Runner.Stopped, td.Runner.Rounds, len(td.Comparisons), want)
		}
	}
	w := messages(sp, result.Warning)
	if !strings.Contains(w, "the wall budget speedup.wall_budget (1ms) was spent after 0 round(s)") ||
		!strings.Contains(w, "not timed: the wall budget of the whole kernel-gate run (speedup.run_wall_budget 2ms") {
		t.Errorf("warnings:\n%s", w)
	}
	code, out, stderr = kg(t, "", "run", "--config", cfg, "--replay", art, "--format", "json")
	if code != exitPass {
		t.Fatalf("replay: exit %d\n%s", code, stderr)
	}
	rsp := gateOf(t, decode(t, out), "speedup")
	if rsp.Verdict != sp.Verdict || rsp.Summary != sp.Summary || messages(rsp, result.Warning) != w {
		t.Errorf("replay: %s %q\n%s\nlive: %s %q", rsp.Verdict, rsp.Summary, messages(rsp, result.Warning), sp.Verdict, sp.Summary)
	}
}
