//go:build unix

package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// verdicts are each gate's verdict and findings, to compare a live run with its replay.
func verdicts(res result.Result) map[string]string {
	out := map[string]string{}
	for _, g := range res.Gates {
		out[g.Name] = string(g.Verdict) + "\n" + findings(g)
	}
	return out
}

// The example config's targets share one build of five sources: each side compiles each
// source with nvcc -c (its own step, its own log, a part of the side's link), then links the
// objects; the SASS dumps of both sides run at once; the ptxas and sass gates read every
// log and dump as of one command, commands.sh runs each side's compiles at once and then
// its link, and the recording replays to the same verdicts. The host-only harness.cpp is
// compiled as the others, with no --threads, and its log, empty as nvcc leaves it, is read
// with the others.
func TestSourcesCompiledApartThenLinked(t *testing.T) {
	art := filepath.Join(t.TempDir(), "art")
	res, err := liveRun(t, Options{Dir: gitRepo(t), BaseRef: "main", Artifacts: art, Gates: []string{"ptxas", "sass"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ptxas", "sass"} {
		if g := gate(t, res, name); g.Verdict != result.Pass {
			t.Errorf("%s %s:\n%s", name, g.Verdict, findings(g))
		}
	}
	cfg := loadConfig(t)
	sources := cfg.Run.Targets[0].Sources
	if len(sources) < 2 {
		t.Fatalf("the example config's first target has sources %q: this test wants several", sources)
	}
	host := 0
	j := readJournal(t, art)
	steps := map[string]step{}
	for _, s := range j.Steps {
		steps[s.ID] = s
	}
	for _, side := range []string{"base", "head"} {
		link, ok := steps["build/"+side+"/attention"]
		if !ok {
			t.Fatalf("no link step of %s: %v", side, j.Steps)
		}
		for i, src := range sources {
			c, ok := steps[compileID(map[string]int{"base": sideBase, "head": sideHead}[side], &build{name: "attention"}, i)]
			if !ok {
				t.Fatalf("no compile of %s on %s", src, side)
			}
			obj := filepath.Join(art, side, "attention", "compile", strconv.Itoa(i)+".o")
			if c.Argv[len(c.Argv)-1] != src || !slices.Contains(c.Argv, "-c") || !slices.Contains(c.Argv, obj) || c.PartOf != link.ID || !c.Parallel {
				t.Errorf("compile %d on %s: %q, part of %q, parallel %v", i, side, c.Argv, c.PartOf, c.Parallel)
			}
			if !slices.Contains(link.Argv, obj) {
				t.Errorf("the %s link does not link %s: %q", side, obj, link.Argv)
			}
			if _, err := os.Stat(obj); !os.IsNotExist(err) {
				t.Errorf("%s is left in the artifacts once linked (%v)", obj, err)
			}
			info, err := os.Stat(filepath.Join(art, c.Log))
			if err != nil {
				t.Errorf("compile log: %v", err)
			} else if hostOnly(src, cfg.Run.Flags) {
				host++
				if info.Size() != 0 || slices.Contains(c.Argv, "--threads") {
					t.Errorf("the host-only %s on %s: a log of %d bytes, %q", src, side, info.Size(), c.Argv)
				}
			}
		}
		if slices.ContainsFunc(link.Argv, func(a string) bool { return strings.HasSuffix(a, ".cu") || strings.HasSuffix(a, ".cpp") }) || slices.Contains(link.Argv, "-c") {
			t.Errorf("the %s link compiles: %q", side, link.Argv)
		}
		if link.Start < steps["compile/"+side+"/attention/0"].Start {
			t.Errorf("the %s link began before its compiles", side)
		}
		if d := steps["sass/"+side+"/attention"]; !d.Parallel {
			t.Errorf("the %s SASS dump did not run beside the other side's", side)
		}
	}
	if host != 4 {
		t.Errorf("%d host-only compiles, want the example config's harness.cpp and harness_cases.cpp on each side", host)
	}
	raw, err := os.ReadFile(filepath.Join(art, scriptFile))
	if err != nil {
		t.Fatal(err)
	}
	sh := string(raw)
	for _, side := range []string{"base", "head"} {
		group := "(\n(cd "
		i := strings.Index(sh, filepath.Join(art, side, "attention", "compile", "0.log"))
		link := strings.Index(sh, filepath.Join(art, side, "attention", "build.log"))
		if i < 0 || link < i || !strings.Contains(sh[i:link], "wait\n") || !strings.Contains(sh[:i], group) || !strings.Contains(sh[link:], "2>&1\n) &\n") {
			t.Errorf("commands.sh does not run %s's compiles at once, then its link, beside the other side:\n%s", side, sh)
		}
	}
	replayed, err := Run(context.Background(), cfg, Options{Replay: art, Tool: "kernel-gate test", Gates: []string{"ptxas", "sass"}})
	if err != nil {
		t.Fatal(err)
	}
	live, again := verdicts(res), verdicts(replayed)
	for name, v := range live {
		if again[name] != v {
			t.Errorf("%s live:\n%s\nreplayed:\n%s", name, v, again[name])
		}
	}
}

// A source that does not compile fails the ptxas gate with its own compile's error (nvcc's
// for a .cu, the host compiler's for the host-only .cpp), the other sources still compile
// (their logs are read), nothing is linked and no object is left; the replay agrees.
func TestOneSourceFailsToCompile(t *testing.T) {
	for _, tc := range []struct{ source, want string }{
		{"kernels/softmax.cu", `kernels/softmax.cu(7): error: identifier "oops" is undefined`},
		{"kernels/harness.cpp", "kernels/harness.cpp:7:3: error: ‘oops’ was not declared in this scope"},
	} {
		t.Run(filepath.Base(tc.source), func(t *testing.T) {
			art := filepath.Join(t.TempDir(), "art")
			res, err := liveRun(t, Options{Dir: gitRepo(t), BaseRef: "main", Artifacts: art, Gates: []string{"ptxas", "sass"}}, "", "FAKE_NVCC_FAIL_SOURCE="+tc.source)
			if err != nil {
				t.Fatal(err)
			}
			g := gate(t, res, "ptxas")
			if msg := findings(g); g.Verdict != result.Fail || !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.source) {
				t.Errorf("ptxas %s:\n%s", g.Verdict, msg)
			}
			j := readJournal(t, art)
			for _, s := range j.Steps {
				if strings.HasPrefix(s.ID, "build/") {
					t.Errorf("linked after a failed compile: %s %q", s.ID, s.Argv)
				}
			}
			n, sources := 0, len(loadConfig(t).Run.Targets[0].Sources)
			for _, s := range j.Steps {
				if strings.HasPrefix(s.ID, "compile/head/") {
					n++
				}
			}
			if n != sources {
				t.Errorf("%d of head's %d sources compiled", n, sources)
			}
			if objs, _ := filepath.Glob(filepath.Join(art, "*", "attention", "compile", "*.o")); len(objs) > 0 {
				t.Errorf("objects left with no link: %q", objs)
			}
			raw, err := os.ReadFile(filepath.Join(art, scriptFile))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Count(string(raw), " -c ") != 2*sources || strings.Contains(string(raw), "build.log") {
				t.Errorf("commands.sh, with no link, runs the %d compiles alone:\n%s", 2*sources, raw)
			}
			replayed, err := Run(context.Background(), loadConfig(t), Options{Replay: art, Tool: "kernel-gate test", Gates: []string{"ptxas", "sass"}})
			if err != nil {
				t.Fatal(err)
			}
			if again := gate(t, replayed, "ptxas"); findings(again) != findings(g) {
				t.Errorf("replayed:\n%s\nlive:\n%s", findings(again), findings(g))
			}
		})
	}
}

// --threads is asked of an nvcc that takes it (CUDA 11.2 and newer, as nvcc --version
// said), one per arch, within the cores given; never for one arch or one core.
func TestNVCCThreads(t *testing.T) {
	for _, tc := range []struct {
		release string
		arch    []string
		jobs    int
		want    int
	}{
		{"13.0", []string{"sm_89", "sm_90a"}, 8, 2},
		{"13.0", []string{"sm_80", "sm_89", "sm_90a"}, 2, 2},
		{"13.0", []string{"sm_89", "sm_90a"}, 1, 0},
		{"13.0", []string{"sm_90a"}, 8, 0},
		{"11.2", []string{"sm_89", "sm_90a"}, 8, 2},
		{"11.1", []string{"sm_89", "sm_90a"}, 8, 0},
		{"", []string{"sm_89", "sm_90a"}, 8, 0}, // no version said
	} {
		dir := t.TempDir()
		banner := ""
		if tc.release != "" {
			banner = "Cuda compilation tools, release " + tc.release + ", V" + tc.release + ".100\n"
		}
		if err := os.WriteFile(filepath.Join(dir, nvccVersionFile), []byte(banner), 0o644); err != nil {
			t.Fatal(err)
		}
		p := &pipeline{x: &replayer{dir: dir}}
		p.set.Arch = tc.arch
		if got := p.nvccThreads(tc.jobs); got != tc.want {
			t.Errorf("CUDA %q, %v, %d jobs: --threads %d, want %d", tc.release, tc.arch, tc.jobs, got, tc.want)
		}
	}
}

// commands.sh runs a step's parts at once inside its own group, then the step; a part
// whose step never ran stands alone; steps that ran at once wait for the kind before them
// (the SASS dumps for the builds).
func TestScriptRunsPartsBeforeTheirStep(t *testing.T) {
	steps := []step{
		{ID: "compile/base/a/0", Argv: []string{"nvcc", "-c", "x.cu"}, Log: "base/a/compile/0.log", Parallel: true, PartOf: "build/base/a"},
		{ID: "compile/base/a/1", Argv: []string{"nvcc", "-c", "y.cu"}, Log: "base/a/compile/1.log", Parallel: true, PartOf: "build/base/a"},
		{ID: "build/base/a", Argv: []string{"nvcc", "-o", "h", "0.o", "1.o"}, Log: "base/a/build.log", Parallel: true},
		{ID: "compile/head/a/0", Argv: []string{"nvcc", "-c", "x.cu"}, Log: "head/a/compile/0.log", Parallel: true, PartOf: "build/head/a"},
		{ID: "sass/base/a", Argv: []string{"cuobjdump", "h"}, Log: "base/a/sass.txt", Parallel: true},
		{ID: "sass/head/a", Argv: []string{"cuobjdump", "h2"}, Log: "head/a/sass.txt", Parallel: true},
		{ID: "check/a", Argv: []string{"./h2"}, Log: "a/check.log"},
	}
	got := script(steps, func(rel string) string { return "/art/" + rel })
	want := "#!/bin/sh\n# The processes of one `kernel-gate run`, as a plain script (written by kernel-gate run).\n" +
		"(\n(nvcc -c x.cu >/art/base/a/compile/0.log.plain 2>&1) &\n(nvcc -c y.cu >/art/base/a/compile/1.log.plain 2>&1) &\nwait\n" +
		"nvcc -o h 0.o 1.o >/art/base/a/build.log.plain 2>&1\n) &\n" +
		"(nvcc -c x.cu >/art/head/a/compile/0.log.plain 2>&1) &\n" +
		"wait\n" +
		"(cuobjdump h >/art/base/a/sass.txt.plain 2>&1) &\n" +
		"(cuobjdump h2 >/art/head/a/sass.txt.plain 2>&1) &\n" +
		"wait\n" +
		"(./h2 >/art/a/check.log.plain 2>&1)\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
