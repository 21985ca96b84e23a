package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/demo"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The tests run from the repository root, where the demo's recordings and kernel-gate.yml are.
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// kg runs the command in-process and returns its exit code, stdout and stderr.
func kg(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, env{
		stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(string) string { return "" },
	})
	return code, out.String(), errb.String()
}

func decode(t *testing.T, s string) result.Result {
	t.Helper()
	r, err := result.Read(strings.NewReader(s))
	if err != nil {
		t.Fatalf("output is not a result: %v\n%s", err, s)
	}
	return r
}

func TestExitCodes(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.log")
	os.WriteFile(empty, nil, 0o644)
	forbidLDL := filepath.Join(t.TempDir(), "forbid.yml")
	os.WriteFile(forbidLDL, []byte("sass:\n  kernels:\n    - match: \"flash_fwd<*>\"\n      forbid: [\"LDL|STL\"]\n"), 0o644)
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string // a part of what stderr must say
	}{
		{"no command", "", nil, exitUsage, "Usage"},
		{"unknown command", "", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{"help", "", []string{"help"}, exitPass, ""},
		// The recordings' compile of each source (compile/N.log; 0.log and 1.log are the
		// host-only harness.cpp and harness_cases.cpp, which print nothing), as kernel-gate
		// run reads them.
		{"clean build passes", "", []string{"ptxas", "--config", "kernel-gate.yml", "testdata/replay/clean/nvcc-version.txt", "testdata/replay/clean/head/attention/compile/2.log",
			"testdata/replay/clean/head/attention/compile/3.log", "testdata/replay/clean/head/attention/compile/4.log", "testdata/replay/clean/head/attention/compile/5.log"}, exitPass, ""},
		{"spilling build fails", "", []string{"ptxas", "--config", "kernel-gate.yml", "testdata/replay/spill/nvcc-version.txt", "testdata/replay/spill/head/attention/compile/3.log"}, exitFail, ""},
		{"missing config file", "", []string{"ptxas", "--config", "testdata/none.yml", "testdata/shared-h200-cuda13.0/ptxas_warnspills.txt"}, exitUsage, "testdata/none.yml"},
		{"ptxas fatal, default config", "", []string{"ptxas", "testdata/shared-h200-cuda13.0/ptxas_warnspills.txt"}, exitFail, ""},
		{"compile error is a failed gate", "", []string{"ptxas", "testdata/cuda13-h200/nvcc_syntax_error.txt"}, exitFail, ""},
		{"nvcc not found is unreadable input", "", []string{"ptxas", "testdata/seed-l4-cuda12.8/ptxas_0953f67.txt"}, exitUsage, "nvcc: command not found"},
		{"empty file", "", []string{"ptxas", empty}, exitUsage, "the input is empty"},
		{"empty stdin", "", []string{"ptxas"}, exitUsage, "the input is empty"},
		{"missing file", "", []string{"ptxas", "nope.log"}, exitUsage, "nope.log"},
		{"log on stdin", "ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\nptxas info    : Function properties for _Z1kv\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 300 registers, used 0 barriers\n",
			[]string{"ptxas", "-"}, exitFail, ""},
		{"bad format", "", []string{"ptxas", "--format", "xml", "testdata/replay/clean/head/attention/compile/2.log"}, exitUsage, "text, json, markdown"},
		{"sass clean (gzip)", "", []string{"sass", "--sass", "testdata/replay/clean/head/attention/sass.txt.gz"}, exitPass, ""},
		{"sass spill forbids LDL", "", []string{"sass", "--config", forbidLDL, "--sass", "testdata/replay/spill/head/attention/sass.txt.gz"}, exitFail, ""},
		{"sass uncompressed", "", []string{"sass", "--sass", "testdata/cuda13-h200/cuobjdump_sass_gemm_multi.txt"}, exitFail, ""},
		{"sanitize read race", "", []string{"sanitize", "--log", "testdata/replay/race/attention/sanitize/racecheck.log", "--xml", "testdata/replay/race/attention/sanitize/racecheck.xml"}, exitFail, ""},
		{"sanitize read clean", "", []string{"sanitize", "--tools", "memcheck", "--log", "testdata/replay/clean/attention/sanitize/memcheck.log", "--harness", "testdata/replay/clean/attention/sanitize/harness-memcheck.json"}, exitPass, ""},
		{"sanitize read: a configured tool without a log fails", "", []string{"sanitize", "--log", "testdata/replay/clean/attention/sanitize/memcheck.log"}, exitFail, ""},
		{"sanitize read and run", "", []string{"sanitize", "--log", "x.log", "--", "./harness"}, exitUsage, "not both"},
		{"sanitize nothing", "", []string{"sanitize"}, exitUsage, "nothing to sanitize"},
		{"sanitize without compute-sanitizer fails the gate", "", []string{"sanitize", "--sanitizer", "/nonexistent/compute-sanitizer", "--", "true"}, exitFail, ""},
		{"sanitize of a ptxas log", "", []string{"sanitize", "--log", "testdata/replay/clean/head/attention/compile/2.log"}, exitUsage, "compile/2.log"},
		{"check clean", "", []string{"check", "testdata/replay/clean/attention/check.json"}, exitPass, ""},
		{"check wrong result", "", []string{"check", "testdata/replay/wrong-result/attention/check.json"}, exitFail, ""},
		{"check of a log", "", []string{"check", "testdata/replay/clean/head/attention/compile/2.log"}, exitUsage, "not a kernel-gate/bench/v1 file"},
		{"check nothing", "", []string{"check"}, exitUsage, "no harness result"},
		{"guard the repository", "", []string{"guard"}, exitPass, ""},
		{"guard the dangerous corpus", "", []string{"guard", "--config", "testdata/none.yml", "testdata/guard/dangerous/001-gcp-stop-after-build"}, exitUsage, "none.yml"},
		{"guard a dangerous case", "", []string{"guard", "testdata/guard/dangerous/001-gcp-stop-after-build"}, exitFail, ""},
		{"guard a safe case", "", []string{"guard", "testdata/guard/safe"}, exitPass, ""},
		{"guard a missing path", "", []string{"guard", "nope/"}, exitUsage, "nope"},
		{"guard bad diff", "", []string{"guard", "--diff", "..HEAD"}, exitUsage, "no base commit"},
		{"speedup compare A/A, too few rounds: warnings, not a failure", "", []string{"speedup", "compare", "testdata/sanitizer-kernels-h200/harness_bench_clean.json", "testdata/sanitizer-kernels-h200/harness_bench_clean.json"}, exitPass, ""},
		{"speedup compare needs two files", "", []string{"speedup", "compare", "testdata/sanitizer-kernels-h200/harness_bench_clean.json"}, exitUsage, "want BASE.json and HEAD.json"},
		{"bench compare (speedup compare's old name) of files without timings fails", "", []string{"bench", "compare", "testdata/replay/clean/attention/check.json", "testdata/replay/clean/attention/check.json"}, exitFail, ""},
		{"speedup without compare", "", []string{"speedup"}, exitUsage, "speedup compare"},
		{"bench, speedup's old name, without compare", "", []string{"bench"}, exitUsage, "speedup compare"},
		{"speedup compare bad margin", "", []string{"speedup", "compare", "--max-slowdown", "2", "a", "b"}, exitUsage, "fraction"},
		{"sass without input", "", []string{"sass"}, exitUsage, "--sass FILE"},
		{"sass of a ptxas log", "", []string{"sass", "--sass", "testdata/replay/clean/head/attention/compile/2.log"}, exitUsage, "no SASS functions"},
		{"demo", "", []string{"demo"}, exitPass, ""},
		{"demo spill", "", []string{"demo", "--case", "spill"}, exitFail, ""},
		{"demo unknown case", "", []string{"demo", "--case", "nope"}, exitUsage, "recorded: clean, cmake-clean, cmake-ptx-only, cmake-uninit, divergent-barrier, occupancy, oob, race, setup-clean, setup-wrong-result, slow5, spill, torch-clean, torch-oob, torch-spill, triton-clean, triton-wrong-result, uninit, wrong-result"},
		{"version", "", []string{"version"}, exitPass, ""},
		{"report needs a file", "", []string{"report"}, exitUsage, "exactly one"},
		{"report of a log", "", []string{"report", "testdata/replay/clean/head/attention/compile/2.log"}, exitUsage, "not a kernel-gate result"},
		{"flags after files", "", []string{"ptxas", "testdata/replay/spill/head/attention/compile/2.log", "--format", "json"}, exitFail, ""},
		{"a report that cannot be written (a full disk) is kernel-gate's own failure", "", []string{"ptxas", "--out", "/dev/full", "testdata/replay/clean/nvcc-version.txt", "testdata/replay/clean/head/attention/compile/2.log"}, exitInternal, "writing the report"},
		{"a bad flag", "", []string{"ptxas", "--no-such-flag"}, exitUsage, "no-such-flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := kg(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q should mention %q", stderr, tt.stderr)
			}
		})
	}
}

// A run stopped by SIGINT or SIGTERM (its context cancelled) exits 2, not 3: kernel-gate did
// not fail, it was told to stop.
func TestCancelledRunExitsUsage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"bench", "run", "--base-cmd", "sleep 5", "--head-cmd", "sleep 5", "--nvidia-smi", "/nonexistent/nvidia-smi"}, env{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" },
	})
	if code != exitUsage || !strings.Contains(errb.String(), "stopped before it finished") {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, errb.String())
	}
}

func TestConfigErrorsNameKeyAndLine(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "k.yml")
	os.WriteFile(cfg, []byte("ptxas:\n  max_registers: 128\n  kernels:\n    - match: flash_*\n      max_register: 96\n"), 0o644)
	code, _, stderr := kg(t, "", "ptxas", "--config", cfg, "testdata/replay/clean/head/attention/compile/2.log")
	if code != exitUsage || !strings.Contains(stderr, "k.yml:5: unknown key \"max_register\" in ptxas.kernels[0]") ||
		!strings.Contains(stderr, `did you mean "max_registers"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestDemoSaysItIsAReplay(t *testing.T) {
	for _, format := range []string{"text", "markdown", "json"} {
		code, out, _ := kg(t, "", "demo", "--format", format)
		if code != exitPass {
			t.Fatalf("%s: exit %d", format, code)
		}
		if !strings.Contains(strings.ToLower(out), "replay") || !strings.Contains(out, "NVIDIA H200") {
			t.Errorf("%s output must say it replays a recorded H200 run:\n%s", format, out)
		}
	}
}

// Every recorded case and the gates it must fail: clean passes every gate, each planted
// defect fails its own and no other (a target's later GPU steps stop at its first failed
// gate, so they show as skipped).
var replayCases = map[string][]string{
	"clean":             nil,
	"spill":             {"ptxas"},
	"race":              {"sanitizer"},
	"oob":               {"sanitizer"},
	"uninit":            {"sanitizer"},
	"divergent-barrier": {"sanitizer"},
	"wrong-result":      {"correctness"},
	"slow5":             {"speedup"},
	// The target forms (README "Gating your repository"), each with its own config
	// (kernels/<form>/kernel-gate.yml, which asks for no ncu). torch-oob's write past O
	// crashes the check run at the mission shape (an illegal address: correctness), and
	// memcheck then finds it on the small one; cmake-ptx-only's binary has no SASS to read
	// resource usage from (ptxas) or to run (sass).
	"torch-clean":         nil,
	"torch-oob":           {"sanitizer", "correctness"},
	"torch-spill":         {"ptxas"},
	"setup-clean":         nil,
	"setup-wrong-result":  {"correctness"},
	"cmake-clean":         nil,
	"cmake-uninit":        {"sanitizer"},
	"cmake-ptx-only":      {"ptxas", "sass"},
	"triton-clean":        nil,
	"triton-wrong-result": {"correctness"},
}

func TestReplayEachDefectFailsItsOwnGate(t *testing.T) {
	for c, want := range replayCases {
		t.Run(c, func(t *testing.T) {
			code, out, stderr := kg(t, "", "demo", "--case", c, "--format", "json")
			r := decode(t, out)
			var failed, gates, passed []string
			for _, g := range r.Gates {
				gates = append(gates, g.Name)
				switch g.Verdict {
				case result.Fail:
					failed = append(failed, g.Name)
				case result.Pass:
					passed = append(passed, g.Name)
				}
			}
			all := []string{"ptxas", "toolkit", "sass", "sanitizer", "correctness", "speedup", "ncu", "guard"}
			if demo.CaseConfig(c) != "kernel-gate.yml" {
				all = slices.DeleteFunc(all, func(g string) bool { return g == "ncu" })
			}
			if !slices.Equal(gates, all) {
				t.Errorf("gates %q: every recorded case must run every gate", gates)
			}
			if !slices.Equal(failed, want) {
				t.Errorf("failed gates %q, want %q", failed, want)
			}
			if (c == "clean" || strings.HasSuffix(c, "-clean")) && !slices.Equal(passed, all) {
				t.Errorf("clean: passed %q, want every gate to pass (none skipped)", passed)
			}
			if wantCode := map[bool]int{true: exitPass, false: exitFail}[len(want) == 0]; code != wantCode {
				t.Errorf("exit %d, want %d: %s", code, wantCode, stderr)
			}
		})
	}
}

// Each recording is the artifacts directory of a live `kernel-gate run` on the H200, which
// also kept the result it reached (result.json). The replay, which reads the same files
// through the same code without running anything, must reach the same verdicts, findings
// and records (the guard, which the demo adds, runs live in both).
func TestReplayAgreesWithLiveRun(t *testing.T) {
	for c := range replayCases {
		t.Run(c, func(t *testing.T) {
			_, out, _ := kg(t, "", "demo", "--case", c, "--format", "json")
			agreesWithLive(t, decode(t, out), filepath.Join("testdata", "replay", c), 1)
		})
	}
}

// A recording made before issue 22 (the harness one harness.cu built by one nvcc command,
// its SASS one cuobjdump --dump-sass step, the targets' checks one after another) still
// replays the way it was made and agrees with its live result: the clean recording of
// 2026-11-23, kept in testdata/replay-old when the C++ cases were recorded again. (The
// target forms' recordings, torch-* and the others above, dump their binaries with
// cuobjdump --dump-sass too.)
func TestOldRecordingReplaysAsMade(t *testing.T) {
	dir := filepath.Join("testdata", "replay-old", "clean-cuobjdump")
	code, out, stderr := kg(t, "", "run", "--replay", dir, "--format", "json")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	agreesWithLive(t, decode(t, out), dir, 0)
}

// agreesWithLive compares a replay's result with the live result.json kept in dir: the same
// gates (and extra more in the replay: the guard the demo adds), verdicts, findings and, for
// ptxas, kernel records.
func agreesWithLive(t *testing.T, replayed result.Result, dir string, extra int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	live := decode(t, string(raw)).Gates
	if len(live)+extra != len(replayed.Gates) {
		t.Fatalf("live gates %d, replayed %d", len(live), len(replayed.Gates))
	}
	for _, lg := range live {
		i := slices.IndexFunc(replayed.Gates, func(g result.Gate) bool { return g.Name == lg.Name })
		if i < 0 {
			t.Fatalf("gate %s missing from the replay", lg.Name)
		}
		rg := replayed.Gates[i]
		if rg.Verdict != lg.Verdict {
			t.Errorf("%s: replay %s, live %s", lg.Name, rg.Verdict, lg.Verdict)
		}
		if got, want := judged(rg), judged(lg); !slices.Equal(got, want) {
			t.Errorf("%s findings:\n replay %q\n   live %q", lg.Name, got, want)
		}
		if lg.Name == "ptxas" {
			if got, want := kernels(t, rg), kernels(t, lg); !slices.Equal(got, want) {
				t.Errorf("kernel records differ:\n replay %q\n   live %q", got, want)
			}
		}
	}
}

// judged is what a finding decides, without where the input came from (a file in the
// replay, a pipe live) or how the toolkit version was found.
func judged(g result.Gate) []string {
	var out []string
	for _, f := range afterFaultFolded(g) {
		if f.Severity == result.Notice {
			continue
		}
		s := string(f.Severity) + " " + f.Kernel + " " + f.Arch + " " + f.Metric
		if g.Name == "sanitizer" { // the source line each error is pinned to
			s += " " + filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if f.Value != nil {
			b, _ := json.Marshal([]any{*f.Value, f.Limit})
			s += " " + string(b)
		}
		out = append(out, s)
	}
	return out
}

// afterFaultFolded is a sanitizer gate's findings as kernel-gate judges them since issue
// 21, for results recorded before it: the API errors and leaks a live run listed right
// after a kernel's fault (the fault broke the CUDA context) are one after-fault finding at
// the fault's kernel and line, their values summed. Other gates' findings, and results
// that already fold, are unchanged.
func afterFaultFolded(g result.Gate) []result.Finding {
	if g.Name != sanitizer.Name {
		return g.Findings
	}
	var out []result.Finding
	fault := -1 // the fault's finding in out, while the findings after it follow it
	for _, f := range g.Findings {
		tool, kind, _ := strings.Cut(f.Metric, "/")
		switch {
		case fault >= 0 && (kind == sanitizer.KindAPIError || kind == sanitizer.KindLeak) && strings.HasPrefix(out[fault].Metric, tool+"/"):
			last := &out[len(out)-1]
			if last.Metric != tool+"/"+sanitizer.MetricAfterFault {
				ff := out[fault]
				out = append(out, result.Finding{Severity: f.Severity, Kernel: ff.Kernel, File: ff.File, Line: ff.Line,
					Metric: tool + "/" + sanitizer.MetricAfterFault, Value: result.Num(0)})
				last = &out[len(out)-1]
			}
			if f.Value != nil {
				*last.Value += *f.Value
			}
			continue
		case kind == sanitizer.KindOutOfBounds || kind == sanitizer.KindMisaligned || kind == sanitizer.KindInvalidAddress ||
			kind == sanitizer.KindHardwareException || kind == sanitizer.KindDeviceAssert || kind == sanitizer.KindDeviceHeap:
			fault = len(out)
		case kind != sanitizer.MetricAfterFault:
			fault = -1
		}
		out = append(out, f)
	}
	return out
}

func kernels(t *testing.T, g result.Gate) []string {
	var d ptxas.Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range d.Kernels {
		k.Input, k.Line, k.File = "", 0, ""
		b, _ := json.Marshal(k)
		out = append(out, string(b))
	}
	return out
}

func TestReportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "r.json")
	if code, _, stderr := kg(t, "", "demo", "--case", "spill", "--format", "json", "--out", saved); code != exitFail {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"text", "markdown", "json"} {
		direct := filepath.Join(dir, "direct."+f)
		kg(t, "", "demo", "--case", "spill", "--format", f, "--out", direct)
		code, out, stderr := kg(t, "", "report", saved, "--format", f)
		if code != exitPass {
			t.Fatalf("report exit %d: %s", code, stderr)
		}
		want, _ := os.ReadFile(direct)
		if out != string(want) {
			t.Errorf("%s: report of the saved result differs from the direct render", f)
		}
	}
}

func TestBaselineDeltas(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	if code, _, stderr := kg(t, "", "ptxas", "testdata/replay/clean/nvcc-version.txt", "testdata/replay/clean/head/attention/compile/3.log", "--format", "json", "--out", base); code != exitPass {
		t.Fatalf("saving the baseline: exit %d: %s", code, stderr)
	}
	code, out, _ := kg(t, "", "ptxas", "testdata/replay/spill/head/attention/compile/3.log", "--baseline", base, "--format", "json")
	if code != exitFail {
		t.Fatalf("exit %d", code)
	}
	r := decode(t, out)
	var withDelta int
	for _, f := range r.Gates[0].Findings {
		if f.Severity == result.Error {
			if f.Delta == nil || f.Baseline == nil {
				t.Errorf("finding without a baseline delta: %+v", f)
			}
			withDelta++
		}
	}
	if withDelta != 6 {
		t.Errorf("%d error findings, want 6 (spill stores, spill loads, stack frame × 2 kernels)", withDelta)
	}
	if !strings.Contains(strings.Join(r.Gates[0].Table.Rows[0].Cells, " "), "32 (-121)") {
		t.Errorf("table row %q should show registers 32 (-121 vs baseline 153)", r.Gates[0].Table.Rows[0].Cells)
	}
	code, _, stderr := kg(t, "", "ptxas", "testdata/replay/spill/head/attention/compile/3.log", "--baseline", "testdata/replay/clean/head/attention/compile/3.log")
	if code != exitUsage || !strings.Contains(stderr, "not a kernel-gate result") {
		t.Errorf("a log as baseline: exit %d, %s", code, stderr)
	}
}

func TestGitHubOutputs(t *testing.T) {
	dir := t.TempDir()
	outputs, summary := filepath.Join(dir, "out"), filepath.Join(dir, "summary.md")
	vars := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": outputs, "GITHUB_STEP_SUMMARY": summary}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"demo", "--case", "spill"}, env{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] },
	})
	if code != exitFail {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	o, _ := os.ReadFile(outputs)
	if got := fileOutputs(string(o)); got["verdict"] != "fail" || got["failed-gates"] != "ptxas" {
		t.Errorf("GITHUB_OUTPUT = %q", o)
	}
	s, _ := os.ReadFile(summary)
	if !strings.Contains(string(s), "## kernel-gate: ❌ fail") {
		t.Errorf("job summary = %q", s)
	}
	// The report quotes tool output: on stdout it sits between ::stop-commands:: and its
	// token, so no line of it is a workflow command.
	if !strings.HasPrefix(out.String(), "::stop-commands::") {
		t.Errorf("stdout under Actions begins %.60q", out.String())
	}
}

// fileOutputs reads GITHUB_OUTPUT's name<<DELIMITER ... DELIMITER entries.
func fileOutputs(s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var value []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			value = append(value, lines[i])
		}
		out[name] = strings.Join(value, "\n")
	}
	return out
}

// Under Actions with GITHUB_OUTPUT unset (or unwritable) a command says so once and keeps
// its verdict's exit code; an error quoting an input line that looks like a workflow
// command cannot be one.
func TestActionsWithoutOutputFileOrWithHostileInput(t *testing.T) {
	for _, outputs := range []string{"", t.TempDir()} { // unset; a directory
		vars := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": outputs}
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"demo", "--case", "spill"}, env{
			stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] },
		})
		if code != exitFail || strings.Count(errb.String(), "were not written") != 1 || strings.Contains(errb.String(), "panic") {
			t.Errorf("GITHUB_OUTPUT=%q: exit %d, stderr %q", outputs, code, errb.String())
		}
	}
	vars := map[string]string{"GITHUB_ACTIONS": "true"}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"ptxas", "-"}, env{
		stdin: strings.NewReader("x\n  ::add-mask::secret\n##[error]boom\n"), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return vars[k] },
	})
	if !strings.Contains(errb.String(), "add-mask") { // the error quotes the input's lines
		t.Errorf("stderr %q", errb.String())
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "::") || strings.Contains(l, "##[") {
			t.Errorf("exit %d: a line of the error is a workflow command: %q", code, line)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	var c common
	fs := newFlagSet("x", env{stderr: &bytes.Buffer{}}, &c)
	got, err := parseInterspersed(fs, []string{"a.log", "--format", "json", "b.log", "--", "--c.log"})
	if err != nil || !slices.Equal(got, []string{"a.log", "b.log", "--c.log"}) || c.format != "json" {
		t.Errorf("got %q, %v, format %q", got, err, c.format)
	}
	// The command after "--" keeps its own flags.
	got, err = parseInterspersed(fs, []string{"--format", "text", "--", "./harness", "--fast", "-v"})
	if err != nil || !slices.Equal(got, []string{"./harness", "--fast", "-v"}) || c.format != "text" {
		t.Errorf("got %q, %v, format %q", got, err, c.format)
	}
}

// baseline update/show/prune on a directory store, from recorded results.
func TestBaselineCommands(t *testing.T) {
	store := t.TempDir()
	for _, c := range []string{"clean", "slow5"} {
		code, out, stderr := kg(t, "", "baseline", "update", "--store", store, "--commit", c+"0123456789abcdef",
			"--artifacts", filepath.Join("testdata", "replay", c), filepath.Join("testdata", "replay", c, "result.json"))
		if code != exitPass || !strings.Contains(out, "stored baseline") {
			t.Fatalf("update %s: exit %d, %s %s", c, code, out, stderr)
		}
	}
	code, out, stderr := kg(t, "", "baseline", "show", "--store", store, "--format", "json")
	var l struct {
		Keys []struct {
			Entries []struct {
				Commit  string
				Timings []struct {
					MedianUs *float64 `json:"median_us"`
				}
			} `json:"entries"`
		} `json:"keys"`
	}
	if code != exitPass || json.Unmarshal([]byte(out), &l) != nil || len(l.Keys) != 1 || len(l.Keys[0].Entries) != 2 || l.Keys[0].Entries[0].Commit != "slow50123456789abcdef" {
		t.Fatalf("show: exit %d, %s %s", code, out, stderr)
	}
	for _, en := range l.Keys[0].Entries {
		if len(en.Timings) == 0 || en.Timings[0].MedianUs == nil {
			t.Errorf("%s: --artifacts added no timings: %+v", en.Commit, en.Timings)
		}
	}
	if code, _, stderr := kg(t, "", "baseline", "prune", "--store", store, "--keep", "1"); code != exitPass {
		t.Fatalf("prune: exit %d %s", code, stderr)
	}
	code, out, _ = kg(t, "", "baseline", "show", "--store", store)
	if code != exitPass || !strings.Contains(out, "1 entry shown") || !strings.Contains(out, "slow50123456") {
		t.Errorf("show after prune: %s", out)
	}
	for _, args := range [][]string{{"baseline"}, {"baseline", "show"}, {"baseline", "update", "--store", store}, {"baseline", "prune", "--store", store}} {
		if code, _, _ := kg(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// baseline diff through the command: entries stored from replays of the recorded runs
// (whose sass data now carries digests), compared newest-two, by commit, and a result file
// against the newest comparable entry; the config's constraints decide which that is.
func TestBaselineDiffCommand(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	for _, c := range []string{"clean", "slow5", "spill"} {
		res := filepath.Join(dir, c+".json")
		if code, _, stderr := kg(t, "", "run", "--replay", filepath.Join("testdata", "replay", c), "--format", "json", "--out", res); code == exitUsage || code == exitInternal {
			t.Fatalf("replay %s: exit %d %s", c, code, stderr)
		}
		if code, _, stderr := kg(t, "", "baseline", "update", "--store", store, "--commit", c+"0123456789abcdef", res); code != exitPass {
			t.Fatalf("update %s: exit %d %s", c, code, stderr)
		}
	}
	// The newest two: slow5 → spill.
	code, out, stderr := kg(t, "", "baseline", "diff", "--store", store)
	if code != exitPass || !strings.Contains(out, "from slow50123456") || !strings.Contains(out, "to   spill0123456") ||
		!strings.Contains(out, "registers 148 → 32 (-116), spill_stores 0 → 1676 (+1676)") || strings.Contains(out, "no digest") {
		t.Errorf("newest two: exit %d %s\n%s", code, stderr, out)
	}
	// clean → slow5 by commit prefixes, as JSON: the planted slowdown's kernels changed SASS
	// by digest; gemm's did not.
	code, out, stderr = kg(t, "", "baseline", "diff", "--store", store, "--from", "clean", "--to", "slow5", "--format", "json", "--key", "nvidia-h200.sm_90")
	var d struct {
		Schema  string `json:"schema"`
		Kernels []struct {
			Kernel, Arch, Change, SASS string
		} `json:"kernels"`
	}
	if code != exitPass || json.Unmarshal([]byte(out), &d) != nil || d.Schema != "kernel-gate/baseline-diff/v1" {
		t.Fatalf("clean → slow5: exit %d %s\n%.500s", code, stderr, out)
	}
	sass := map[string]string{}
	for _, k := range d.Kernels {
		sass[k.Kernel+" "+k.Arch] = k.SASS
	}
	if sass["kg::flash_fwd<64, 64, false> sm_90a"] != "changed" || sass["kg::gemm_wmma<64, 64, 32> sm_90a"] != "unchanged" {
		t.Errorf("SASS by digest: %v", sass)
	}
	// A result against the newest comparable entry; under a constraint none meets, an error
	// that says why.
	race := filepath.Join(dir, "race.json")
	kg(t, "", "run", "--replay", filepath.Join("testdata", "replay", "race"), "--format", "json", "--out", race)
	code, out, stderr = kg(t, "", "baseline", "diff", "--store", store, race)
	if code != exitPass || !strings.Contains(out, "from spill0123456") || !strings.Contains(out, "to   race.json") || !strings.Contains(out, "attention racecheck: not recorded → errors (2 errors)") {
		t.Errorf("result: exit %d %s\n%s", code, stderr, out)
	}
	cfg := filepath.Join(dir, "kernel-gate.yml")
	os.WriteFile(cfg, []byte("baseline:\n  store: "+store+"\n  compatible_cuda: \"~12.8\"\n"), 0o644)
	code, _, stderr = kg(t, "", "baseline", "diff", "--config", cfg, race)
	if code != exitUsage || !strings.Contains(stderr, "none of the 3 entries of NVIDIA H200 (sm_90) is comparable with the result") || !strings.Contains(stderr, `outside baseline.compatible_cuda "~12.8"`) {
		t.Errorf("none comparable: exit %d %s", code, stderr)
	}
	// By hand, an incomparable entry is compared, and the diff says so.
	code, out, _ = kg(t, "", "baseline", "diff", "--config", cfg, "--from", "clean")
	if code != exitPass || !strings.Contains(out, "the older entry is not comparable under the config") {
		t.Errorf("by hand: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "nope"}, `no entry of commit "nope"`},
		{[]string{"--from", "s"}, `"s" names two entries`},
		{[]string{"--key", "NVIDIA L4 (sm_89)"}, "the store holds no entry of NVIDIA L4 (sm_89)"},
		{[]string{"--key", "L4"}, `--key "L4"`},
		{[]string{"--to", "clean"}, "has no entry before"},
		{[]string{"--format", "markdown"}, "text or json"},
		{[]string{"--to", "spill", race}, "give one"},
		{[]string{race, race}, "at most one"},
	} {
		code, _, stderr := kg(t, "", append([]string{"baseline", "diff", "--store", store}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d %s, want %q", c.args, code, stderr, c.want)
		}
	}
	// The config names the store; prune takes its keep from it.
	os.WriteFile(cfg, []byte("baseline:\n  store: "+store+"\n  keep: 2\n"), 0o644)
	if code, _, stderr := kg(t, "", "baseline", "prune", "--config", cfg); code != exitPass {
		t.Fatalf("prune with the config's keep: exit %d %s", code, stderr)
	}
	if code, out, _ := kg(t, "", "baseline", "show", "--config", cfg); code != exitPass || !strings.Contains(out, "2 entries shown") {
		t.Errorf("after prune: %s", out)
	}
}

// kernel-gate run --baseline-store: a run with no base build judges ptxas growth against
// the store's newest comparable entry, and says which.
func TestRunWithBaselineStore(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "clean")
	if err := os.CopyFS(rec, os.DirFS(filepath.Join("testdata", "replay", "clean"))); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(rec, "journal.json"))
	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	delete(j, "base_rev")
	j["no_base"] = "--base none"
	// Kept going: with growth against the store, attention's ptxas fails, which would stop
	// its GPU steps where the live run, against base, went on (its profile ran together with
	// softmax's, which the replay would then look for alone).
	j["keep_going"] = true
	raw, _ = json.Marshal(j)
	os.WriteFile(filepath.Join(rec, "journal.json"), raw, 0o644)
	store := filepath.Join(dir, "store")
	if code, _, stderr := kg(t, "", "baseline", "update", "--store", store, "--commit", "5b111", filepath.Join("testdata", "replay", "spill", "result.json")); code != exitPass {
		t.Fatalf("update: exit %d %s", code, stderr)
	}
	code, out, stderr := kg(t, "", "run", "--replay", rec, "--baseline-store", store, "--format", "json")
	if code != exitFail {
		t.Fatalf("exit %d %s", code, stderr)
	}
	res := decode(t, out)
	var msgs []string
	for _, f := range res.Gates[0].Findings {
		msgs = append(msgs, f.Metric+": "+f.Message)
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, "stored_baseline: no base build (--base none): deltas and max_register_increase are against the stored baseline NVIDIA H200 (sm_90) at 5b111") ||
		!strings.Contains(all, "register_increase: kg::flash_fwd<64, 64, false> (sm_90a) registers grew by 121") {
		t.Errorf("ptxas findings:\n%s", all)
	}
	// Without the store, the same run has nothing to judge growth against, and passes ptxas.
	if code, out, _ := kg(t, "", "run", "--replay", rec, "--format", "json"); code != exitPass || strings.Contains(out, "stored_baseline") {
		t.Errorf("without a store: exit %d", code)
	}
}
