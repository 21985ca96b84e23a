//go:build unix

package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// ncuKernels are the kernels each target's ncu part judged (their short names).
func ncuKernels(t *testing.T, res result.Result) map[string][]string {
	t.Helper()
	g := gate(t, res, ncu.Name)
	var d struct {
		Targets []struct {
			Target string `json:"target"`
			Data   struct {
				Kernels []struct {
					Short string `json:"short"`
				} `json:"kernels"`
			} `json:"data"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, tg := range d.Targets {
		for _, k := range tg.Data.Kernels {
			out[tg.Target] = append(out[tg.Target], k.Short)
		}
	}
	return out
}

// The targets built into one harness, profiled on the same shape, share one Nsight Compute
// run: attention's and softmax's (gemm has no ncu rule) are one step, the harness told both
// targets' kernels and ncu both rules' metrics; each target is judged on its own kernels'
// launches alone, and the recording replays to the same gate. With ncu.launches 1 the joint
// run reaches its limit (2; the fake prints every captured launch), so it is not used: each
// target is profiled alone, live and replayed.
func TestTargetsShareOneProfile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		launches int
		steps    []string
	}{
		{"together", 0, []string{"ncu/attention+softmax"}},
		{"limit reached", 1, []string{"ncu/attention+softmax", "ncu/attention", "ncu/softmax"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loadConfig(t)
			if tc.launches > 0 {
				cfg.NCU.Launches = &tc.launches
				if err := cfg.NCU.Resolve(cfg.NCU.FileName()); err != nil {
					t.Fatal(err)
				}
			}
			art := filepath.Join(t.TempDir(), "art")
			var progress strings.Builder
			res, err := liveRunConfig(t, cfg, Options{Artifacts: art, Gates: []string{"correctness", "ncu"}, Progress: &progress}, "")
			if err != nil {
				t.Fatal(err)
			}
			var ncuSteps []string
			for _, st := range readJournal(t, art).Steps {
				if strings.HasPrefix(st.ID, "ncu/") {
					ncuSteps = append(ncuSteps, st.ID)
				}
			}
			if !slices.Equal(ncuSteps, tc.steps) {
				t.Fatalf("ncu steps %q, want %q\n%s", ncuSteps, tc.steps, progress.String())
			}
			kernels := ncuKernels(t, res)
			if tc.launches == 0 { // apart, each judges what the fake printed: every kernel
				for target, want := range map[string]string{"attention": "flash_fwd", "softmax": "row_softmax"} {
					if len(kernels[target]) == 0 || slices.ContainsFunc(kernels[target], func(c string) bool { return !strings.HasPrefix(c, want+"<") }) {
						t.Errorf("%s's ncu part judged %q: want %s's launches only", target, kernels[target], want)
					}
				}
			}
			if g := gate(t, res, ncu.Name); g.Verdict != result.Pass {
				t.Errorf("ncu %s: %s", g.Verdict, findings(g))
			}
			if tc.launches == 0 {
				if _, err := os.Stat(filepath.Join(art, "attention", "ncu-together", ncu.LogFile)); err != nil || !strings.Contains(progress.String(), "one run for attention, softmax") {
					t.Errorf("the joint run's log: %v\n%s", err, progress.String())
				}
				script, _ := os.ReadFile(filepath.Join(art, "commands.sh"))
				if !strings.Contains(string(script), "KG_KERNELS=flash_fwd,flash_fwd_causal,row_softmax") || !strings.Contains(string(script), "regex:flash_fwd|row_softmax") || !strings.Contains(string(script), "-c 64") {
					t.Errorf("commands.sh does not run the joint profile:\n%s", script)
				}
			} else if !strings.Contains(progress.String(), "the joint Nsight Compute run is not used (it reached its launch limit, 2)") {
				t.Errorf("progress:\n%s", progress.String())
			}
			again, err := Run(context.Background(), cfg, Options{Replay: art, Gates: []string{"correctness", "ncu"}})
			if err != nil {
				t.Fatal(err)
			}
			// A replay's parts lack what only the live run knew (ncu's exit status, its log's
			// absolute path), as a target profiled alone always did.
			if a, l := gate(t, again, ncu.Name), gate(t, res, ncu.Name); a.Verdict != l.Verdict || a.Summary != l.Summary || fmt.Sprint(ncuKernels(t, again)) != fmt.Sprint(kernels) {
				t.Errorf("replayed: %s %q %v\nlive: %s %q %v", a.Verdict, a.Summary, ncuKernels(t, again), l.Verdict, l.Summary, kernels)
			}
		})
	}
}

// Without ncu, the joint run and then each target's run alone fail to start, and the ncu
// gate fails saying so; the recording, which holds no ncu log, replays to the same gate
// (each run's directory keeps ncu-missing.txt): it was an unreadable recording, exit 2.
func TestNoNCUReplaysAsRecorded(t *testing.T) {
	art := filepath.Join(t.TempDir(), "art")
	o := Options{Artifacts: art, Gates: []string{"correctness", "ncu"}}
	o.Tools.NCU = filepath.Join(t.TempDir(), "no-ncu")
	res, err := liveRunConfig(t, loadConfig(t), o, "")
	if err != nil {
		t.Fatal(err)
	}
	live := gate(t, res, ncu.Name)
	if live.Verdict != result.Fail || strings.Count(findings(live), "ncu (Nsight Compute CLI) not found") != 2 {
		t.Fatalf("ncu %s:\n%s", live.Verdict, findings(live))
	}
	for _, rel := range []string{"attention/ncu-together", "attention/ncu", "softmax/ncu"} {
		if _, err := os.Stat(filepath.Join(art, rel, ncuMissingFile)); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	again, err := Run(context.Background(), loadConfig(t), Options{Replay: art, Gates: []string{"correctness", "ncu"}})
	if err != nil {
		t.Fatal(err)
	}
	if g := gate(t, again, ncu.Name); g.Verdict != live.Verdict || findings(g) != findings(live) {
		t.Errorf("replayed %s:\n%s\nlive:\n%s", g.Verdict, findings(g), findings(live))
	}
}
