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

// Where the runner stopped timing the reference (ReferenceLastRound 4 of 9 rounds), the
// plain script asks it for rounds up to 4 only: served, one set's processes (rounds 1-4,
// each after its warm-up); not served, the warm-up and rounds 1-4.
func TestBenchScriptReferenceStopped(t *testing.T) {
	for _, serving := range []bool{true, false} {
		dir := t.TempDir()
		harness := filepath.Join(dir, "harness.sh")
		os.WriteFile(harness, []byte("#!/bin/sh\nif [ \"$KG_MODE\" = bench ]; then echo run >>\"$0.runs\"; exit 0; fi\nwhile read -r l; do echo \"$l\" >&3; done\n"), 0o755)
		var g result.Gate
		if err := g.SetData(abrun.Data{Runner: abrun.RunnerData{RoundsRun: 9, ReferenceLastRound: 4, Serve: &abrun.ServeData{Serving: true, RestartEvery: 2, Servers: 2,
			Sides: []abrun.SideServe{{Side: abrun.Base, Serving: true}, {Side: abrun.Head, Serving: true}, {Side: abrun.Reference, Serving: serving}}}}}); err != nil {
			t.Fatal(err)
		}
		ref := filepath.Join(dir, "ref.sh")
		os.WriteFile(ref, []byte("#!/bin/sh\nexec \""+harness+"\"\n"), 0o755)
		cmd := abrun.Command{Argv: []string{harness}, Dir: dir}
		o := abrun.Options{Base: cmd, Head: cmd, Reference: abrun.Command{Argv: []string{ref}, Dir: dir}, NvidiaSMI: "true", Settings: abrun.Settings{Samples: 30}}
		lines := benchScript(g, o, dir)
		sh := filepath.Join(dir, "commands.sh")
		os.WriteFile(sh, []byte(strings.Join(lines, "\n")+"\n"), 0o755)
		if out, err := exec.Command("sh", sh).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, strings.Join(lines, "\n"))
		}
		answers, _ := os.ReadFile(filepath.Join(dir, "reference-answers.plain"))
		runs, _ := os.ReadFile(harness + ".runs")
		rounds := strings.Count(string(answers), `"round": `)
		if serving && (rounds != 2+4 || strings.Contains(string(answers), `"round": 5`) || len(runs) != 0) {
			t.Errorf("served: the reference answered %d requests (want 2 warm-ups and rounds 1-4), ran %d times\n%s", rounds, strings.Count(string(runs), "run"), answers)
		}
		if !serving && (rounds != 0 || strings.Count(string(runs), "run") != 5) {
			t.Errorf("not served: the reference ran %d times, want 5 (the warm-up and rounds 1-4)\n%s", strings.Count(string(runs), "run"), strings.Join(lines, "\n"))
		}
	}
}
