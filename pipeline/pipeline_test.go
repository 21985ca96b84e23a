package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/registry"
)

// root is the repository root, where the recordings and the example config are.
const root = ".."

func loadConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.Load(filepath.Join(root, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func gate(t *testing.T, r result.Result, name string) result.Gate {
	t.Helper()
	for _, g := range r.Gates {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no %s gate in %+v", name, r.Gates)
	return result.Gate{}
}

// The step table's rules on a recorded run: the race fails the sanitizer for the attention
// target, which then stops (its correctness, speedup and ncu parts are skipped saying why),
// while the other targets, whose SASS is base's, run the correctness check only.
func TestReplayStepRules(t *testing.T) {
	res, err := Run(context.Background(), loadConfig(t), Options{Replay: filepath.Join(root, "testdata/replay/race"), Tool: "kernel-gate test"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Replay, "replay of ") {
		t.Errorf("a replay says so: %q", res.Replay)
	}
	if g := gate(t, res, "sanitizer"); g.Verdict != result.Fail {
		t.Errorf("sanitizer %s", g.Verdict)
	}
	var d struct {
		Targets []TargetData `json:"targets"`
	}
	for _, name := range []string{"correctness", "speedup"} {
		g := gate(t, res, name)
		if err := json.Unmarshal(g.Data, &d); err != nil {
			t.Fatal(err)
		}
		for _, td := range d.Targets {
			switch {
			case td.Target == "attention" && (td.Verdict != result.Skip || td.Skipped != "the sanitizer failed"):
				t.Errorf("%s of attention: %s %q, want skipped after the sanitizer failed", name, td.Verdict, td.Skipped)
			case td.Target != "attention" && name == "speedup" && !strings.HasPrefix(td.Skipped, "unchanged SASS"):
				t.Errorf("speedup of %s: %q, want skipped as unchanged", td.Target, td.Skipped)
			case td.Target != "attention" && name == "correctness" && td.Verdict != result.Pass:
				t.Errorf("correctness of %s runs on unchanged SASS: %s", td.Target, td.Verdict)
			}
		}
	}
}

// A recording that lacks a step the pipeline asks for is unreadable input (exit 2), named.
func TestReplayOfIncompleteRecordingIsBadInput(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(root, "testdata/replay/clean", journalFile))
	if err != nil {
		t.Fatal(err)
	}
	var j journal
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	j.Steps = j.Steps[:1] // the GPU query alone
	raw, _ = json.Marshal(j)
	os.WriteFile(filepath.Join(dir, journalFile), raw, 0o644)
	os.WriteFile(filepath.Join(dir, gpuFile), []byte("NVIDIA H200, 9.0, 580.159.04\n"), 0o644)
	_, err = Run(context.Background(), loadConfig(t), Options{Replay: dir})
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), `has no step "nvcc-version"`) {
		t.Errorf("err %v (exit %d)", err, exitcode.Of(err))
	}
}

// commands.sh runs the builds side by side and everything else in order.
func TestScript(t *testing.T) {
	steps := []step{
		{ID: "gpu", Argv: []string{"nvidia-smi", "-q"}, Log: "gpu.csv"},
		{ID: "build/base/a", Argv: []string{"nvcc", "a b.cu"}, Dir: "/base", Log: "base/a/build.log"},
		{ID: "build/head/a", Argv: []string{"nvcc", "a.cu"}, Env: []string{"X=1 2"}, Log: "head/a/build.log"},
		{ID: "sanitize/a", Script: []string{"env KG_MODE=sanitize compute-sanitizer ./h"}},
	}
	got := script(steps, func(rel string) string { return "/art/" + rel })
	want := "#!/bin/sh\n# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).\n" +
		"(nvidia-smi -q >/art/gpu.csv.plain 2>&1)\n" +
		"(cd /base && nvcc 'a b.cu' >/art/base/a/build.log.plain 2>&1) &\n" +
		"(env 'X=1 2' nvcc a.cu >/art/head/a/build.log.plain 2>&1) &\n" +
		"wait\n" +
		"env KG_MODE=sanitize compute-sanitizer ./h\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// Every finding about a kernel lands on a source line of the repository: the sanitizer's at
// the line it names, made relative to the tree head was built in (the recording's absolute
// /tmp path); ptxas's and the correctness check's, which name no source line, at the
// kernel's __global__ line (a harness label through its target's functions).
func TestFindingsLocatedInSources(t *testing.T) {
	// The replay reads the sources in Dir as they are now: this repository's kernels.
	cfg := loadConfig(t)
	want := map[string]map[string]string{
		"race":         {"sanitizer": "kernels/flash_fwd.cu:190"},
		"spill":        {"ptxas": "kernels/flash_fwd.cu:40"},
		"wrong-result": {"correctness": "kernels/flash_fwd.cu:40"},
	}
	for c, gates := range want {
		res, err := Run(context.Background(), cfg, Options{Replay: filepath.Join(root, "testdata/replay", c), Dir: root})
		if err != nil {
			t.Fatal(err)
		}
		for name, where := range gates {
			n := 0
			for _, f := range gate(t, res, name).Findings {
				if f.Severity != result.Error || f.Kernel == "" {
					continue
				}
				n++
				if got := f.File + ":" + strconv.Itoa(f.Line); got != where {
					t.Errorf("%s %s finding on %s at %s, want %s", c, name, f.Kernel, got, where)
				}
			}
			if n == 0 {
				t.Errorf("%s: no %s error about a kernel", c, name)
			}
		}
	}
}

// Options.Gates runs and reports only the gates it names; each stage is announced; the
// result names the GPU the recording ran on.
func TestGatesSubsetStagesAndDevice(t *testing.T) {
	var stages []string
	res, err := Run(context.Background(), loadConfig(t), Options{Replay: filepath.Join(root, "testdata/replay/clean"),
		Gates: []string{"ptxas", "correctness"}, OnStage: func(s string) { stages = append(stages, s) }})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range res.Gates {
		names = append(names, g.Name)
	}
	if strings.Join(names, ",") != "ptxas,correctness" {
		t.Errorf("gates %q", names)
	}
	if g := gate(t, res, "correctness"); g.Verdict != result.Pass {
		t.Errorf("correctness %s", g.Verdict)
	}
	// The recording's checks ran for the three targets at once (its journal's chained steps),
	// as its progress.txt says, before each target's own steps.
	if got := strings.Join(stages, "|"); got != "GPU|base|build|ptxas and sass gates|the targets' sanitizers and checks|target attention|target gemm|target softmax" {
		t.Errorf("stages %q", got)
	}
	if res.Device == nil || res.Device.Name != "NVIDIA H200" || res.Device.Arch != "sm_90" {
		t.Errorf("device %+v", res.Device)
	}
}

// A journal that says a key twice (a step's "exit" given as 1, then as 0) is refused, not
// read as its last value.
func TestReplayRefusesDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	raw := `{"schema": "kernel-gate/run-journal/v1", "arch": ["sm_90"], "targets": [], "steps": [` +
		`{"id": "gpu", "log": "gpu.csv", "exit": 1, "why": "exited with status 1", "exit": 0}]}`
	os.WriteFile(filepath.Join(dir, journalFile), []byte(raw), 0o644)
	_, err := Run(context.Background(), loadConfig(t), Options{Replay: dir})
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "exit") {
		t.Errorf("err %v (exit %d)", err, exitcode.Of(err))
	}
}

// The GPU steps are the registry's target gates, in its order.
func TestGPUStepsAreTheRegistrys(t *testing.T) {
	var got, want []string
	for _, s := range (&pipeline{}).gpuSteps() {
		got = append(got, s.gate)
	}
	for _, g := range registry.Builtin().Step(registry.StepTarget) {
		want = append(want, g.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("GPU steps %q, registry's target gates %q", got, want)
	}
}
