//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The target form of issue 14, end to end on the fake toolchain: a target that the
// repository's own build command (or its harness, on first use) builds, run by its own
// harness command, read from its binaries with cuobjdump.

// commandRepo makes a git repository whose main branch holds the config and kernels/, and a
// head commit on a branch that changes a kernel. broken ("base" or "head") names the side
// whose tree holds kernels/BROKEN, which fails the fake build.
func commandRepo(t *testing.T, cfg string, broken ...string) string {
	t.Helper()
	repo := gittest.New(t)
	repo.Write(map[string]string{"kernel-gate.yml": cfg, "kernels/flash_fwd.cu": "// base\n"})
	brokenFile := filepath.Join(repo.Dir, "kernels", "BROKEN")
	if slices.Contains(broken, "base") {
		repo.Write(map[string]string{"kernels/BROKEN": "x\n"})
	}
	repo.Commit("base")
	repo.Git("checkout", "-qb", "pr")
	repo.Write(map[string]string{"kernels/flash_fwd.cu": "// head\n"})
	os.Remove(brokenFile)
	if slices.Contains(broken, "head") {
		repo.Write(map[string]string{"kernels/BROKEN": "x\n"})
	}
	repo.Commit("head")
	return repo.Dir
}

// fakeDir is the fake toolchain's directory.
func fakeDir(t *testing.T) string {
	t.Helper()
	f, err := filepath.Abs(filepath.Join("testdata", "fakegpu"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// jitConfig is a target whose harness builds its extension on first use, as a PyTorch
// load() harness does; extra is appended to the target.
func jitConfig(t *testing.T, extra string) string {
	return `run:
  targets:
    - name: attention-jit
      build: ""
      env: {KG_TORCH_FORM: load}
      harness: "sh ` + fakeDir(t) + `/jit-harness.sh"
      binaries: ["$KG_CACHE_DIR/torch_extensions/**/*.so"]
      kernels: [flash_fwd, flash_fwd_causal]
      functions: ["flash_fwd<*>"]
      shapes: {check: [small], sanitize: [small], bench: [mission]}
` + extra + `sass:
  kernels:
    - match: "flash_fwd<*>"
      require: ["HMMA"]
`
}

// runArgs are kernel-gate run's flags for a repository and an artifacts directory.
func runArgs(t *testing.T, repo, art string, more ...string) []string {
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--artifacts", art, "--format", "json"}, fakeGPU(t)...)
	return append(args, more...)
}

// envLines reads what the fake build and harness saw, one line per run.
func envLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(raw)), "\n")
}

func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// ptxasRecords are the ptxas gate's kernel records.
func ptxasRecords(t *testing.T, g result.Gate) []ptxas.Kernel {
	t.Helper()
	var d struct {
		Kernels []ptxas.Kernel `json:"kernels"`
	}
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.Kernels
}

// replayAgrees replays art and checks every gate's verdict and findings against live.
func replayAgrees(t *testing.T, repo, art string, live result.Result, wantCode int) {
	t.Helper()
	code, out, stderr := kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--format", "json")
	if code != wantCode {
		t.Fatalf("replay: exit %d, want %d\n%s", code, wantCode, stderr)
	}
	replayed := decode(t, out)
	if len(replayed.Gates) != len(live.Gates) {
		t.Fatalf("replay has %d gates, live %d", len(replayed.Gates), len(live.Gates))
	}
	for i, g := range live.Gates {
		rg := replayed.Gates[i]
		if rg.Name != g.Name || rg.Verdict != g.Verdict || len(rg.Findings) != len(g.Findings) {
			t.Errorf("replay %s %s (%d findings), live %s %s (%d)", rg.Name, rg.Verdict, len(rg.Findings), g.Name, g.Verdict, len(g.Findings))
			continue
		}
		for j, f := range g.Findings {
			if rf := rg.Findings[j]; rf.Severity != f.Severity || rf.Message != f.Message {
				t.Errorf("replay's %s finding %d: %s %q\nlive's: %s %q", g.Name, j, rf.Severity, rf.Message, f.Severity, f.Message)
			}
		}
	}
}

// A JIT harness target: no build command; the first harness run on each side builds the
// extension into that side's own cache (base and head never share one), with
// NVCC_APPEND_FLAGS extended, not overwritten; its binaries are read with cuobjdump, whose
// resource usage gives the ptxas records (the run printed no ptxas log) with spill figures
// counted in the SASS, and whose SASS the sass gate judges; the sanitizer runs the harness
// command in the tree with PyTorch's caching allocator off; the replay agrees; the caches
// are gone afterwards.
func TestRunJITHarnessTarget(t *testing.T) {
	ncu := `ncu:
  shape: mission
  kernels:
    - match: "flash_fwd<*>"
      any:
        - {metric: sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active, min: 50}
        - {metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}
`
	repo, art := commandRepo(t, jitConfig(t, ncu)), filepath.Join(t.TempDir(), "art")
	envLog := filepath.Join(t.TempDir(), "env.log")
	tmp := t.TempDir()
	t.Setenv("FAKE_ENV_LOG", envLog)
	t.Setenv("NVCC_APPEND_FLAGS", "-DUSER_FLAG=1")
	t.Setenv("TMPDIR", tmp)
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--all")...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	live := decode(t, out)
	var names []string
	for _, g := range live.Gates {
		names = append(names, g.Name+"="+string(g.Verdict))
	}
	if want := []string{"ptxas=pass", "sass=pass", "sanitizer=pass", "correctness=pass", "speedup=pass", "ncu=pass"}; !slices.Equal(names, want) {
		t.Fatalf("gates %q, want %q\n%s", names, want, stderr)
	}

	// The ptxas records are cuobjdump's of the extension load() built on the H200 (its two
	// kernels on sm_90a, testdata/forms-h200/torch-load-*), spills counted in its SASS.
	recs := ptxasRecords(t, gateOf(t, live, "ptxas"))
	if len(recs) != 2 {
		t.Fatalf("%d ptxas records, want the extension's 2 kernels: %+v", len(recs), recs)
	}
	for _, k := range recs {
		if k.Source != ptxas.SourceCuobjdump || k.Arch != "sm_90a" || k.Registers == nil || *k.Registers < 153 ||
			k.SpillsFrom != ptxas.SpillsFromSASS || k.SpillStores == nil || *k.SpillStores != 0 ||
			k.Input != "$KG_CACHE_DIR/torch_extensions/py312_cu130/kg_ext/kg_ext.so" {
			t.Errorf("record %s %s: source %q, spills %v from %q, input %q", k.Demangled, k.Arch, k.Source, k.SpillStores, k.SpillsFrom, k.Input)
		}
	}
	if n := messages(gateOf(t, live, "sass"), result.Error); n != "" {
		t.Errorf("sass errors:\n%s", n)
	}

	// Each side had its own cache; the appended flags extend the user's.
	var headCache, baseCache string
	sanitized := 0
	for _, l := range envLines(t, envLog) {
		if !strings.Contains(l, " append=-DUSER_FLAG=1 -lineinfo -Xptxas=-v ") {
			t.Errorf("NVCC_APPEND_FLAGS is not the user's, extended: %q", l)
		}
		cache := field(l, "cache")
		if field(l, "torch") != cache+"/torch_extensions" {
			t.Errorf("TORCH_EXTENSIONS_DIR is not under KG_CACHE_DIR: %q", l)
		}
		switch {
		case strings.HasSuffix(cache, "/head/attention-jit"):
			headCache = cache
		case strings.HasSuffix(cache, "/base/attention-jit"):
			baseCache = cache
		default:
			t.Errorf("a run with no side's cache: %q", l)
		}
		if strings.HasPrefix(l, "sanitize ") {
			sanitized++
			inTree := strings.HasSuffix(field(l, "pwd"), repo) // the tree, perhaps through a link (/private/tmp)
			if field(l, "nocaching") != "1" || !inTree {
				t.Errorf("a sanitizer run without PYTORCH_NO_CUDA_MEMORY_CACHING=1 or outside the tree: %q", l)
			}
		} else if field(l, "nocaching") != "" {
			t.Errorf("the caching allocator is off outside the sanitizer: %q", l)
		}
	}
	if headCache == "" || baseCache == "" || headCache == baseCache || filepath.Dir(filepath.Dir(headCache)) != filepath.Dir(filepath.Dir(baseCache)) {
		t.Errorf("caches: head %q, base %q", headCache, baseCache)
	}
	if sanitized == 0 {
		t.Error("the sanitizer did not run the harness command")
	}
	// Head's harness ran in check mode for its first run and under ncu, base's once.
	checks := map[string]int{}
	for _, l := range envLines(t, envLog) {
		if strings.HasPrefix(l, "check ") {
			checks[filepath.Base(filepath.Dir(field(l, "cache")))]++
		}
	}
	if checks["head"] != 2 || checks["base"] != 1 {
		t.Errorf("check-mode runs per side: %v", checks)
	}
	if _, err := os.Stat(headCache); err == nil {
		t.Errorf("the cache %s outlived the run", headCache)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}

	// The journal has the first runs and cuobjdump's three reads of the binary, per side.
	raw, err := os.ReadFile(filepath.Join(art, "journal.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"check/attention-jit", "check/base/attention-jit", "elf/head/attention-jit/0", "res/head/attention-jit/0",
		"sass/head/attention-jit/0", "elf/base/attention-jit/0", "sanitize/attention-jit", "bench/attention-jit", "ncu/attention-jit"} {
		if !strings.Contains(string(raw), `"id": "`+id+`"`) {
			t.Errorf("the journal has no step %s", id)
		}
	}
	if strings.Contains(string(raw), `"id": "build/`) {
		t.Error("a JIT target has no build step")
	}
	// A recording keeps the SASS dumps compressed (record.sh gzips every sass.txt).
	for _, side := range []string{"head", "base"} {
		dump := filepath.Join(art, side, "attention-jit", "bin0", "sass.txt")
		if out, err := exec.Command("gzip", "-9n", dump).CombinedOutput(); err != nil {
			t.Fatalf("gzip %s: %v %s", dump, err, out)
		}
	}
	replayAgrees(t, repo, art, live, exitPass)
}

// A build-command target: the build runs in each tree with the extended NVCC_APPEND_FLAGS,
// so its own log holds ptxas's records (cuobjdump's of the same kernels are not added
// again); a head whose build fails fails the ptxas gate naming the side and its log, and
// no GPU step runs on it.
func TestRunBuildCommandTarget(t *testing.T) {
	cfg := `run:
  targets:
    - name: attention-setup
      build: "sh ` + fakeDir(t) + `/build.sh"
      harness: "sh ` + fakeDir(t) + `/jit-harness.sh"
      binaries: ["build/**/*.so"]
      kernels: [flash_fwd, flash_fwd_causal]
      shapes: {check: [small], sanitize: [small], bench: [mission]}
`
	// The binary holds the kernels for sm_80, sm_89 and sm_90a (the recorded flash_multi.o);
	// the build's log describes them on sm_89 and sm_90a.
	multi := func(t *testing.T) {
		t.Setenv("FAKE_ELF", "sm_80 sm_89 sm_90a")
		t.Setenv("FAKE_RES", absPath(t, "testdata/cuda13-h200/cuobjdump_res_flash_multi.txt"))
		t.Setenv("FAKE_BIN_SASS", absPath(t, "testdata/cuda13-h200/cuobjdump_sass_flash_multi.txt"))
	}
	t.Run("builds", func(t *testing.T) {
		multi(t)
		repo, art := commandRepo(t, cfg), filepath.Join(t.TempDir(), "art")
		code, out, stderr := kg(t, "", runArgs(t, repo, art, "--no-base")...)
		if code != exitPass {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
		live := decode(t, out)
		recs := ptxasRecords(t, gateOf(t, live, "ptxas"))
		bySource := map[string]int{}
		for _, k := range recs {
			bySource[k.Source]++
		}
		// The log describes flash_fwd on sm_89 and sm_90a; the binary's sm_80 cubin only
		// cuobjdump does.
		if bySource[ptxas.SourcePtxas] == 0 || bySource[ptxas.SourceCuobjdump] != 2 {
			t.Errorf("records by source %v", bySource)
		}
		for _, k := range recs {
			if k.Source == ptxas.SourceCuobjdump && k.Arch != "sm_80" {
				t.Errorf("cuobjdump record of a kernel the log described: %s %s", k.Demangled, k.Arch)
			}
		}
		replayAgrees(t, repo, art, live, exitPass)
	})
	t.Run("head fails", func(t *testing.T) {
		repo, art := commandRepo(t, cfg, "head"), filepath.Join(t.TempDir(), "art")
		code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main")...)
		if code != exitFail {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
		live := decode(t, out)
		pt := messages(gateOf(t, live, "ptxas"), result.Error)
		for _, want := range []string{"attention-setup: the head build failed", "exited with status 1", "(log: head/attention-setup/build.log)", `identifier "oops" is undefined`} {
			if !strings.Contains(pt, want) {
				t.Errorf("ptxas errors lack %q:\n%s", want, pt)
			}
		}
		if n := messages(gateOf(t, live, "correctness"), result.Notice); !strings.Contains(n, "head did not build") {
			t.Errorf("correctness: %s", n)
		}
		replayAgrees(t, repo, art, live, exitFail)
	})
	t.Run("head fails beside a sources target", func(t *testing.T) {
		mixed := cfg + `    - name: attention
      sources: [kernels/flash_fwd.cu]
      kernels: [flash_fwd, flash_fwd_causal]
      functions: ["flash_fwd<*>"]
      shapes: {check: [small], sanitize: [small], bench: [mission]}
`
		repo, art := commandRepo(t, mixed, "head"), filepath.Join(t.TempDir(), "art")
		code, out, stderr := kg(t, "", runArgs(t, repo, art, "--no-base")...)
		if code != exitFail {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
		live := decode(t, out)
		var d struct {
			Targets []struct {
				Target, Verdict, Skipped string
			} `json:"targets"`
		}
		if err := json.Unmarshal(gateOf(t, live, "correctness").Data, &d); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, td := range d.Targets {
			got[td.Target] = td.Verdict + " " + td.Skipped
		}
		// The harness target's failed build stops it alone.
		if got["attention"] != "pass " || !strings.HasPrefix(got["attention-setup"], "skip head did not build") {
			t.Errorf("correctness per target: %q", got)
		}
		replayAgrees(t, repo, art, live, exitFail)
	})
	t.Run("base fails", func(t *testing.T) {
		repo, art := commandRepo(t, cfg, "base"), filepath.Join(t.TempDir(), "art")
		code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--all")...)
		if code != exitFail {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
		live := decode(t, out)
		if g := gateOf(t, live, "ptxas"); g.Verdict != result.Pass {
			t.Errorf("head built: ptxas %s\n%s", g.Verdict, messages(g, result.Error))
		}
		sp := messages(gateOf(t, live, "speedup"), result.Error)
		if !strings.Contains(sp, "attention-setup: head cannot be compared with base: the base build failed") || !strings.Contains(sp, "(log: base/attention-setup/build.log)") {
			t.Errorf("speedup: %s", sp)
		}
		if g := gateOf(t, live, "correctness"); g.Verdict != result.Pass {
			t.Errorf("correctness %s", g.Verdict)
		}
		replayAgrees(t, repo, art, live, exitFail)
	})
}

// A binary without SASS for the GPU's arch fails the sass gate saying its kernels would be
// JIT-compiled from PTX, and stops the target's GPU steps after its check; a binary with
// no cubin at all fails the same way.
func TestRunBinaryWithoutSASSForTheGPU(t *testing.T) {
	for _, tc := range []struct{ elf, want string }{
		{"sm_80 sm_89", "holds SASS for sm_80, sm_89 only, none that runs on this GPU (sm_90, NVIDIA H200): the driver would JIT-compile its kernels from PTX"},
		{"", "holds no SASS at all: every kernel in it would be JIT-compiled from PTX"},
	} {
		t.Run(cmpName(tc.elf), func(t *testing.T) {
			repo, art := commandRepo(t, jitConfig(t, "")), filepath.Join(t.TempDir(), "art")
			// cuobjdump's output of the recorded flash_multi.o, its sm_80 and sm_89 cubins only.
			t.Setenv("FAKE_ELF", tc.elf)
			t.Setenv("FAKE_RES", absPath(t, "testdata/cuda13-h200/cuobjdump_res_flash_multi.txt"))
			t.Setenv("FAKE_BIN_SASS", absPath(t, "testdata/cuda13-h200/cuobjdump_sass_flash_multi.txt"))
			code, out, stderr := kg(t, "", runArgs(t, repo, art, "--no-base")...)
			if code != exitFail {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			live := decode(t, out)
			sg := gateOf(t, live, "sass")
			if sg.Verdict != result.Fail || !strings.Contains(messages(sg, result.Error), "attention-jit: $KG_CACHE_DIR/torch_extensions/py312_cu130/kg_ext/kg_ext.so "+tc.want) {
				t.Errorf("sass %s:\n%s", sg.Verdict, messages(sg, result.Error))
			}
			if c := gateOf(t, live, "correctness"); c.Verdict != result.Pass {
				t.Errorf("the first run's check is reported as it ran: %s", c.Verdict)
			}
			if n := messages(gateOf(t, live, "sanitizer"), result.Notice); !strings.Contains(n, "attention-jit: the ") || !strings.Contains(n, " gate failed for its build or binaries") {
				t.Errorf("sanitizer: %s", n)
			}
			replayAgrees(t, repo, art, live, exitFail)
		})
	}
}

func absPath(t *testing.T, rel string) string {
	t.Helper()
	abs, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func cmpName(s string) string {
	if s == "" {
		return "none"
	}
	return strings.ReplaceAll(s, " ", "+")
}

// Spills of a kernel read from cuobjdump (which prints none) are counted in its SASS: the
// spilling build's STL bytes fail max_spill_stores, and the finding says how they were
// counted. The SASS is cuobjdump --dump-sass of the torch-spill recording's extension.
func TestRunSpillsCountedInTheSASS(t *testing.T) {
	repo, art := commandRepo(t, jitConfig(t, "")), filepath.Join(t.TempDir(), "art")
	t.Setenv("FAKE_BIN_SASS", absPath(t, "testdata/replay/torch-spill/head/attention-torch/bin0/sass.txt.gz"))
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--no-base")...)
	if code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	pt := messages(gateOf(t, decode(t, out), "ptxas"), result.Error)
	for _, want := range []string{"flash_fwd<64, 64, false> (sm_90a) spill stores (bytes) 1676 > 0", "bytes of its STL/LDL instructions in the SASS",
		"from cuobjdump --dump-resource-usage of $KG_CACHE_DIR/torch_extensions/py312_cu130/kg_ext/kg_ext.so"} {
		if !strings.Contains(pt, want) {
			t.Errorf("ptxas errors lack %q:\n%s", want, pt)
		}
	}
}

// An nvcc older than NVCC_APPEND_FLAGS (CUDA 11.5) builds nothing: the ptxas gate fails
// saying why, and no step runs the target.
func TestRunRefusesNVCCWithoutAppendFlags(t *testing.T) {
	repo, art := commandRepo(t, jitConfig(t, "")), filepath.Join(t.TempDir(), "art")
	t.Setenv("FAKE_NVCC_RELEASE", "11.4")
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--no-base")...)
	if code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	live := decode(t, out)
	if pt := messages(gateOf(t, live, "ptxas"), result.Error); !strings.Contains(pt, "nvcc --version says CUDA 11.4.100, and nvcc reads NVCC_APPEND_FLAGS only from CUDA 11.5 on") {
		t.Errorf("ptxas: %s", pt)
	}
	raw, _ := os.ReadFile(filepath.Join(art, "journal.json"))
	if strings.Contains(string(raw), `"check/attention-jit"`) {
		t.Error("the harness ran though nothing was built")
	}
}

// A harness target whose first (check) run crashed the GPU is not timed, but
// compute-sanitizer still runs on it: it is what says where the kernel went wrong (the
// recorded torch-oob case: an illegal address at the mission shape, memcheck on the small
// one finds the write).
func TestRunSanitizerAfterACrashedCheck(t *testing.T) {
	repo, art := commandRepo(t, jitConfig(t, "")), filepath.Join(t.TempDir(), "art")
	t.Setenv("FAKE_HARNESS_GPU_ERROR", "1")
	t.Setenv("FAKE_CASE", "oob")
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--no-base", "--all")...)
	if code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	live := decode(t, out)
	if c := gateOf(t, live, "correctness"); c.Verdict != result.Fail || !strings.Contains(messages(c, result.Error), "compute-sanitizer runs on it to find where") {
		t.Errorf("correctness %s:\n%s", c.Verdict, messages(c, result.Error))
	}
	if s := gateOf(t, live, "sanitizer"); s.Verdict != result.Fail || !strings.Contains(messages(s, result.Error), "out-of-bounds") {
		t.Errorf("the sanitizer did not run after the crash, or found nothing: %s\n%s", s.Verdict, messages(s, result.Error))
	}
	replayAgrees(t, repo, art, live, exitFail)
}

// A target's reference is a shell command (sh -c from the repository's root) like its
// harness: one with && and a pipe is timed beside head in every round, and head's
// comparisons carry the speedup over it; the replay agrees.
func TestRunReferenceIsAShellCommand(t *testing.T) {
	ref := `      reference: "test -d kernels && sh ` + fakeDir(t) + `/harness.sh 2>&1 | cat >&2"
      reference_name: fake-sdpa
`
	repo, art := commandRepo(t, jitConfig(t, ref)), filepath.Join(t.TempDir(), "art")
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--all")...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	live := decode(t, out)
	var all struct {
		Targets []struct {
			Data abrun.Data `json:"data"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(gateOf(t, live, "speedup").Data, &all); err != nil || len(all.Targets) != 1 {
		t.Fatalf("the speedup gate's data: %v", err)
	}
	d := all.Targets[0].Data
	if !strings.Contains(d.Runner.ReferenceCommand, "| cat >&2") || len(d.Comparisons) == 0 {
		t.Fatalf("reference command %q, %d comparisons\n%s", d.Runner.ReferenceCommand, len(d.Comparisons), stderr)
	}
	for _, c := range d.Comparisons {
		if c.SpeedupVsReference == nil || c.SpeedupVsReference.Name != "fake-sdpa" || c.SpeedupVsReference.Speedup == nil {
			t.Errorf("%s × %s: no speedup over the reference: %+v", c.Kernel, c.Shape, c.SpeedupVsReference)
		}
	}
	replayAgrees(t, repo, art, live, exitPass)
}
