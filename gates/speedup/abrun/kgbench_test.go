//go:build unix

package abrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// buildKgBenchHarnesses compiles testdata/serve-harness.cpp, a harness written with
// kernels/kg_bench.h, once per spin length (side by side), with the host's C++ compiler
// against testdata/cudastub (no CUDA: its kernels spin on the host). Skipped without a C++
// compiler.
func buildKgBenchHarnesses(t *testing.T, works ...int) []string {
	t.Helper()
	cxx, err := exec.LookPath("c++")
	if err != nil {
		if cxx, err = exec.LookPath("g++"); err != nil {
			t.Skip("no C++ compiler to build a kg_bench.h harness")
		}
	}
	kernels, _ := filepath.Abs(filepath.Join("..", "..", "..", "kernels"))
	dir := t.TempDir()
	outs := make([]string, len(works))
	errs := make([]error, len(works))
	var wg sync.WaitGroup
	for i, work := range works {
		outs[i] = filepath.Join(dir, "harness-"+strconv.Itoa(work))
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-Itestdata/cudastub", "-I"+kernels,
				"-DKG_TEST_WORK="+strconv.Itoa(work), "testdata/serve-harness.cpp", "-o", outs[i])
			if raw, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%s: %v\n%s", cmd, err, raw)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return outs
}

// kernels/kg_bench.h's Serve speaks the runner's protocol: base and head built from it
// serve every round (speedup.serve true) and what they print on stdout stays in their logs;
// a head with 50% more work per launch is slower, and the same harness run once per round
// (speedup.serve false) reaches the same verdict.
func TestKgBenchHServes(t *testing.T) {
	built := buildKgBenchHarnesses(t, 20000, 30000)
	base, head := built[0], built[1]
	for _, mode := range []Serve{ServeOn, ServeOff} {
		t.Run(string(mode), func(t *testing.T) {
			art := t.TempDir()
			o := Options{Base: Command{Argv: []string{base}}, Head: Command{Argv: []string{head}},
				Settings: Settings{Samples: 10, Shapes: []string{"small", "long"}, Timeout: 20 * time.Second, Serve: mode,
					RestartEvery: 5, RoundTimeout: 10 * time.Second, WallBudget: time.Minute, Env: []string{"KG_KERNELS=spin"}},
				ArtifactDir: art, NvidiaSMI: "/nonexistent/nvidia-smi"}
			g, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			d := decodeData(t, g)
			v := verdicts(d)
			if g.Verdict != result.Fail || v["spin × small"] != speedup.Slower || v["spin × long"] != speedup.Slower || d.Runner.Serve.Serving != (mode == ServeOn) {
				t.Fatalf("want spin slower on both shapes\n%s", dump(g))
			}
			if mode == ServeOn {
				if _, ok := v["spin2 × small"]; ok {
					t.Errorf("the request's kernels (KG_KERNELS=spin) were not honoured: %v", v)
				}
				log, err := os.ReadFile(filepath.Join(art, "head-harness.log"))
				if err != nil || !strings.Contains(string(log), "serve-harness: round 3") {
					t.Errorf("head log: %v\n%.300s", err, log)
				}
			}
		})
	}
}

// kernels/kg_bench.py's serve() speaks the runner's protocol too: a Python harness that
// serves (testdata/serve-harness.py, no PyTorch) is started 2 at a time per 2 × restart_every rounds
// and its 5% slower head is found. Skipped without python3.
func TestKgBenchPyServes(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "serve-harness.py"))
	art := t.TempDir()
	o := Options{Base: Command{Argv: []string{py, script, "1", "1"}}, Head: Command{Argv: []string{py, script, "1.05", "2"}},
		Settings: Settings{Samples: 10, Shapes: []string{"small", "long"}, Timeout: 20 * time.Second, Serve: ServeOn,
			RestartEvery: 8, Servers: 2, RoundTimeout: 10 * time.Second, WallBudget: time.Minute},
		ArtifactDir: art, NvidiaSMI: "/nonexistent/nvidia-smi"}
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	v := verdicts(d)
	if g.Verdict != result.Fail || v["pyk × small"] != speedup.Slower || v["pyk × long"] != speedup.Slower || !d.Runner.Serve.Serving {
		t.Fatalf("want pyk slower, served\n%s", dump(g))
	}
	if want := lifetimes(d.Runner.RoundsRun, 2, 8); d.Runner.Serve.Sides[1].Starts != want {
		t.Errorf("head started %d times for %d rounds, want %d", d.Runner.Serve.Sides[1].Starts, d.Runner.RoundsRun, want)
	}
	log, err := os.ReadFile(filepath.Join(art, "head-harness.log"))
	if err != nil || !strings.Contains(string(log), "serve-harness.py: round 2") {
		t.Errorf("head log: %v\n%.300s", err, log)
	}
}
