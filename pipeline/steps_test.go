//go:build unix

package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A served A/B run's plain script starts each side's servers processes once per servers ×
// restart_every rounds and feeds each its warm-up request and its rounds'; run with a
// stand-in harness that echoes each request to descriptor 3, every round from 1 to the last
// is asked of each side once, by 2 × 3 processes (sets of rounds 1-4, 5-8, 9), each asked
// for its warm-up first. The reference, which did not serve, runs once per round.
func TestBenchScriptServed(t *testing.T) {
	dir := t.TempDir()
	harness := filepath.Join(dir, "harness.sh")
	os.WriteFile(harness, []byte("#!/bin/sh\necho start >>\"$0.starts\"\nwhile read -r l; do echo \"$KG_MODE $l\" >&3; done\n"), 0o755)
	ref := filepath.Join(dir, "ref.sh")
	os.WriteFile(ref, []byte("#!/bin/sh\necho \"$KG_MODE\" >>\"$0.runs\"\n"), 0o755)
	var g result.Gate
	if err := g.SetData(abrun.Data{Runner: abrun.RunnerData{RoundsRun: 9, Serve: &abrun.ServeData{Serving: true, RestartEvery: 2, Servers: 2,
		Sides: []abrun.SideServe{{Side: abrun.Base, Serving: true}, {Side: abrun.Head, Serving: true}, {Side: abrun.Reference}}}}}); err != nil {
		t.Fatal(err)
	}
	o := abrun.Options{Base: abrun.Command{Argv: []string{harness}, Dir: dir}, Head: abrun.Command{Argv: []string{harness}, Dir: dir},
		Reference: abrun.Command{Argv: []string{ref}, Dir: dir}, NvidiaSMI: "true",
		Settings: abrun.Settings{Samples: 30, Shapes: []string{"mission"}, Env: []string{"KG_KERNELS=flash_fwd"}}}
	lines := benchScript(g, o, dir)
	sh := filepath.Join(dir, "commands.sh")
	os.WriteFile(sh, []byte(strings.Join(lines, "\n")+"\n"), 0o755)
	if out, err := exec.Command("sh", sh).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, strings.Join(lines, "\n"))
	}
	for _, side := range []string{"base", "head"} {
		raw, err := os.ReadFile(filepath.Join(dir, side+"-answers.plain"))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSpace(string(raw)), "\n")
		// Per process: its warm-up, then every other round of its set.
		want := []string{"0 1 3", "0 2 4", "0 5 7", "0 6 8", "0 9", "0"}
		var asked []string
		for _, l := range got {
			n := strings.TrimSuffix(strings.TrimPrefix(l, `serve {"round": `), `, "samples": 30, "shapes": ["mission"]}`)
			if n == l {
				t.Fatalf("%s asked %q", side, l)
			}
			if n == "0" {
				asked = append(asked, n)
			} else {
				asked[len(asked)-1] += " " + n
			}
		}
		if strings.Join(asked, "|") != strings.Join(want, "|") {
			t.Errorf("%s's processes asked for %q, want %q", side, asked, want)
		}
	}
	starts, _ := os.ReadFile(harness + ".starts")
	runs, _ := os.ReadFile(ref + ".runs")
	if n := strings.Count(string(starts), "start"); n != 2*6 {
		t.Errorf("%d serving processes, want 6 per side", n)
	}
	if n := strings.Count(string(runs), "bench"); n != 10 {
		t.Errorf("the reference ran %d times, want once per round (10)\n%s", n, strings.Join(lines, "\n"))
	}
}
