//go:build unix

package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A step's log keeps the first LogCap bytes, then a line that says it was cut there, and
// the journal says why the log is not whole.
func TestStepLogCutAtTheCap(t *testing.T) {
	dir := t.TempDir()
	l, err := newLive(dir, nil, "t", timeZero(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.run(context.Background(), proc{id: "build/head/x", argv: []string{"sh", "-c", `i=0; while [ $i -lt 100 ]; do echo "[ $i%] Building CUDA object x.cu.o"; i=$((i+1)); done; echo "ptxas info    : Used 255 registers"`},
		timeout: time.Minute, log: "head/x/build.log"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Why != "" || !strings.Contains(s.LogCut, "it printed more than the 1000 bytes a step's log keeps") {
		t.Errorf("why %q, cut %q", s.Why, s.LogCut)
	}
	if got := l.logCut("head/x/build.log"); got != s.LogCut {
		t.Errorf("logCut = %q", got)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "head/x/build.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "Used 255 registers") || !strings.Contains(string(raw), "\n[kernel-gate: output cut here at the 1000 bytes log cap") || len(raw) > 1200 {
		t.Errorf("log of %d bytes ends %q", len(raw), raw[max(len(raw)-200, 0):])
	}
	// A step within the cap keeps all of it and says nothing.
	s, err = l.run(context.Background(), proc{id: "short", argv: []string{"sh", "-c", "echo ok"}, timeout: time.Minute, log: "short.log"})
	if err != nil || s.LogCut != "" || l.logCut("short.log") != "" {
		t.Errorf("short: %v, %q", err, s.LogCut)
	}
}

// The logs of one share (a binary's cubins' nvdisasm outputs) keep one step's cap
// together: cubins of 800 bytes each, under a cap of 1000, cannot write 1000 bytes each.
// The second is cut where the share ran out, saying so; the third keeps nothing; a step of
// another share, or of none, has its own cap.
func TestLogShareCutsTheGroup(t *testing.T) {
	dir := t.TempDir()
	l, err := newLive(dir, nil, "t", timeZero(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	print800 := []string{"sh", "-c", `i=0; while [ $i -lt 20 ]; do echo "        /*0010*/ MOV R1, c[0x0][0x28] ;"; i=$((i+1)); done`}
	run := func(id, share string) step {
		t.Helper()
		s, err := l.run(context.Background(), proc{id: id, argv: print800, timeout: time.Minute, log: id + ".txt", logShare: share})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := run("sass/head/x/1", "sass/head/x"); s.LogCut != "" {
		t.Errorf("the first cubin, within the share: cut %q", s.LogCut)
	}
	s := run("sass/head/x/2", "sass/head/x")
	if !strings.Contains(s.LogCut, "it and the other cubins of its binary printed more than the 1000 bytes their logs keep together") {
		t.Errorf("the second cubin: cut %q", s.LogCut)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "sass/head/x/2.txt"))
	if !strings.Contains(string(raw), "log cap of its binary's cubins' logs together: the rest is not kept") || len(raw) > 400 {
		t.Errorf("the second cubin's log (%d bytes) ends %q", len(raw), raw[max(len(raw)-200, 0):])
	}
	if s := run("sass/head/x/3", "sass/head/x"); !strings.Contains(s.LogCut, "their logs keep together: the 800 bytes after them were cut") {
		t.Errorf("the third cubin: cut %q", s.LogCut)
	}
	for _, id := range []string{"sass/base/x/1", "alone"} {
		share := ""
		if strings.HasPrefix(id, "sass/") {
			share = "sass/base/x"
		}
		if s := run(id, share); s.LogCut != "" {
			t.Errorf("%s, of another share: cut %q", id, s.LogCut)
		}
	}
}

// A build whose ptxas report comes after the log cap (70 MB of output first, here a cap of
// 64 KiB and 100 KiB) fails the ptxas gate naming the cap: the spill report behind it was
// never read. It passed, on the records before the cut, with no spill finding.
func TestBuildLogCutAtTheCapFailsThePtxasGate(t *testing.T) {
	tools, err := filepath.Abs(filepath.Join(root, "testdata", "fakegpu"))
	if err != nil {
		t.Fatal(err)
	}
	// The clean recording's compiles of its sources, one after the other (the fake nvcc
	// prints the whole of it for each compile), and the spill recording's of flash_fwd.cu.
	var clean []byte
	for _, log := range []string{"2.log", "3.log", "4.log", "5.log"} {
		raw, err := os.ReadFile(filepath.Join(root, "testdata/replay/clean/head/attention/compile", log))
		if err != nil {
			t.Fatal(err)
		}
		clean = append(clean, raw...)
	}
	spill, err := os.ReadFile(filepath.Join(root, "testdata/replay/spill/head/attention/compile/3.log"))
	if err != nil {
		t.Fatal(err)
	}
	filler := strings.Repeat("[ 42%] Building CUDA object CMakeFiles/harness.dir/kernels/flash_fwd.cu.o (a long, chatty build)\n", 100<<10/96)
	run := func(t *testing.T, buildLog string, logCap int) result.Result {
		t.Helper()
		dir := t.TempDir()
		logFile := filepath.Join(dir, "build-output.txt")
		if err := os.WriteFile(logFile, []byte(buildLog), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), loadConfig(t), Options{Dir: dir, NoBase: true, Artifacts: filepath.Join(dir, "art"), Tool: "kernel-gate test",
			Gates: []string{"ptxas"}, LogCap: logCap, Environ: append(os.Environ(), "FAKE_BUILD_LOG="+logFile),
			Tools: Tools{NVCC: filepath.Join(tools, "nvcc"), Cuobjdump: filepath.Join(tools, "cuobjdump"), NvidiaSMI: filepath.Join(tools, "nvidia-smi")}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Without a cut, the spill fails the gate: the build is one the gate must fail.
	if g := gate(t, run(t, string(clean)+filler+string(spill), 1<<20), "ptxas"); g.Verdict != result.Fail || !strings.Contains(findings(g), "spill") {
		t.Fatalf("uncut: %s\n%s", g.Verdict, findings(g))
	}
	// Cut before the spill report: still a failure, naming the cap.
	g := gate(t, run(t, string(clean)+filler+string(spill), 64<<10), "ptxas")
	if g.Verdict != result.Fail || !strings.Contains(findings(g), "is cut: it printed more than the 64 KiB a step's log keeps") {
		t.Errorf("cut: %s\n%s", g.Verdict, findings(g))
	}
	// A clean build within the cap passes.
	if g := gate(t, run(t, string(clean), 64<<10), "ptxas"); g.Verdict != result.Pass {
		t.Errorf("clean: %s\n%s", g.Verdict, findings(g))
	}
}

func findings(g result.Gate) string {
	var b strings.Builder
	for _, f := range g.Findings {
		b.WriteString(string(f.Severity) + ": " + f.Message + "\n")
	}
	return b.String()
}

// A replay reads what the journal says of a cut: the spill recording's log of its
// flash_fwd.cu compile cut before its spill report passes the ptxas gate when nothing says
// it was cut, and fails it, naming the cap, when the journal does (the live run recorded
// it). A cubin's cut SASS (nvdisasm's log) fails the sass gate, and so does a whole
// cuobjdump --dump-sass dump cut in a recording made before the dumps by cubins
// (testdata/replay-old's clean).
func TestReplayOfACutLogFailsItsGate(t *testing.T) {
	cutAt := func(t *testing.T, dir, rel string, lines int) {
		t.Helper()
		p := filepath.Join(dir, rel)
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		kept := strings.SplitAfterN(string(raw), "\n", lines+1)[:lines]
		if err := os.WriteFile(p, []byte(strings.Join(kept, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const why = "it printed more than the 64 MiB a step's log keeps: the 6291456 bytes after them were cut"
	for _, tc := range []struct {
		name    string
		rcase   string // the recording
		cut     string // the step recorded as cut ("" none)
		gate    string
		verdict result.Verdict
		says    string
	}{
		{"not recorded as cut", "spill", "", "ptxas", result.Pass, ""},
		{"compile log recorded as cut", "spill", "compile/head/attention/3", "ptxas", result.Fail, "log head/attention/compile/3.log is cut: " + why},
		{"base's compile log recorded as cut", "spill", "compile/base/attention/3", "ptxas", result.Fail, "base's log base/attention/compile/3.log is cut: " + why},
		{"a cubin's SASS recorded as cut", "spill", "sass/head/attention/6", "sass", result.Fail,
			`attention: nvdisasm of its cubin "flash_fwd.sm_90a.cubin" (head/attention/sass/6.txt): ` + why + ", so the functions it printed after them were never read"},
		{"whole SASS dump recorded as cut", "../replay-old/clean-cuobjdump", "sass/head/attention", "sass", result.Fail, "head/attention/sass.txt is cut: " + why},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := recording(t, tc.rcase)
			if tc.rcase == "spill" {
				cutAt(t, dir, "head/attention/compile/3.log", 13) // before the flash kernels of sm_90a, which spill
			}
			if tc.cut != "" {
				editJournal(t, dir, func(j *journal) { stepOf(t, j, tc.cut).LogCut = why })
			}
			res, err := Run(context.Background(), loadConfig(t), Options{Replay: dir, Tool: "kernel-gate test", Gates: []string{"ptxas", "sass"}})
			if err != nil {
				t.Fatal(err)
			}
			g := gate(t, res, tc.gate)
			if g.Verdict != tc.verdict || !strings.Contains(findings(g), tc.says) {
				t.Errorf("%s: %s, want %s saying %q:\n%s", tc.gate, g.Verdict, tc.verdict, tc.says, findings(g))
			}
		})
	}
}

// A head build that failed fails the ptxas gate, naming the step, even when its log says
// nothing the parser reads as a failure (a compiler killed without a word, a crash printed
// where a kernel's name could end): it passed on the records printed before, while the
// target's GPU steps were skipped as "head did not build".
func TestFailedBuildWithASilentLogFailsThePtxasGate(t *testing.T) {
	tools, err := filepath.Abs(filepath.Join(root, "testdata", "fakegpu"))
	if err != nil {
		t.Fatal(err)
	}
	// What the fake nvcc prints for every compile: the H200's records of the whole harness.
	clean, err := filepath.Abs(filepath.Join(root, "testdata/replay-old/clean-cuobjdump/head/attention/build.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// gemm is built on its own (another source), by an nvcc that prints the records and is
	// killed (the OOM killer) before it says anything: nothing is left to say it failed.
	nvcc := filepath.Join(dir, "nvcc")
	script := "#!/bin/sh\ncase \" $* \" in *gemm.cu*) cat '" + clean + "' >&2; kill -9 $$ ;; esac\nexec '" + filepath.Join(tools, "nvcc") + "' \"$@\"\n"
	if err := os.WriteFile(nvcc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	sources := "    - name: gemm\n      sources: [kernels/harness.cpp, kernels/harness_cases.cpp, kernels/harness_device.cu, kernels/flash_fwd.cu, kernels/gemm_wmma.cu, kernels/softmax.cu]"
	if !strings.Contains(string(raw), sources) {
		t.Fatalf("kernel-gate.yml has no %q", sources)
	}
	yml := strings.Replace(string(raw), sources, "    - name: gemm\n      sources: [kernels/gemm.cu]", 1)
	cfgFile := filepath.Join(dir, "kernel-gate.yml")
	if err := os.WriteFile(cfgFile, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), cfg, Options{Dir: dir, NoBase: true, Artifacts: filepath.Join(dir, "art"), Tool: "kernel-gate test", Gates: []string{"ptxas", "sass"},
		Tools: Tools{NVCC: nvcc, Cuobjdump: filepath.Join(tools, "cuobjdump"), NvidiaSMI: filepath.Join(tools, "nvidia-smi")}})
	if err != nil {
		t.Fatal(err)
	}
	g := gate(t, res, "ptxas")
	if g.Verdict != result.Fail || !strings.Contains(findings(g), "gemm: the head build failed: `"+nvcc) || !strings.Contains(findings(g), "was killed by signal: killed") {
		t.Errorf("ptxas %s:\n%s", g.Verdict, findings(g))
	}
	if res.Verdict != result.Fail {
		t.Errorf("verdict %s", res.Verdict)
	}
}

// failAfter is a writer that takes n bytes, then fails.
type failAfter struct {
	strings.Builder
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.Len()+len(p) > f.n {
		k := f.n - f.Len()
		f.Builder.Write(p[:k])
		return k, errors.New("no space left on device")
	}
	return f.Builder.Write(p)
}

// No log of a share gets past it: a log cut by the share keeps nothing it printed later,
// though its own cap has room (no cut-then-resume); a write that failed counts against the
// share and leaves the log not whole; logs written at once keep the share together, and
// every one that lost bytes says so.
func TestLogShareHasNoWayAround(t *testing.T) {
	t.Run("no resume", func(t *testing.T) {
		var b strings.Builder
		l := &stepLog{w: &b, max: 1000, left: 1000, share: &logShare{left: 100}}
		for _, s := range []string{strings.Repeat("x", 60), strings.Repeat("y", 60), "zzz", "\n"} {
			l.Write([]byte(s))
		}
		got, _, _ := strings.Cut(b.String(), "\n")
		if got != strings.Repeat("x", 60)+strings.Repeat("y", 40) || strings.Contains(b.String(), "z") || !strings.Contains(l.why(), "their logs keep together") {
			t.Errorf("log %q, why %q", b.String(), l.why())
		}
	})
	t.Run("write error", func(t *testing.T) {
		share := &logShare{left: 100}
		w := &failAfter{n: 30}
		l := &stepLog{w: w, max: 1000, left: 1000, share: share}
		l.Write([]byte(strings.Repeat("x", 50)))
		l.Write([]byte(strings.Repeat("y", 10)))
		if !strings.Contains(l.why(), "could not be written whole") || strings.Contains(w.String(), "y") {
			t.Errorf("log %q, why %q", w.String(), l.why())
		}
		var b strings.Builder
		next := &stepLog{w: &b, max: 1000, left: 1000, share: share}
		next.Write([]byte(strings.Repeat("z", 51)))
		if !strings.HasPrefix(b.String(), strings.Repeat("z", 50)+"\n") || next.why() == "" {
			t.Errorf("the next log of the share %q, why %q", b.String(), next.why())
		}
	})
	t.Run("at once", func(t *testing.T) {
		share := &logShare{left: 5000}
		logs := make([]*stepLog, 8)
		bufs := make([]*strings.Builder, 8)
		var wg sync.WaitGroup
		for i := range logs {
			bufs[i] = &strings.Builder{}
			logs[i] = &stepLog{w: bufs[i], max: 1000, left: 1000, share: share}
			wg.Go(func() {
				for range 100 {
					logs[i].Write([]byte("0123456789"))
				}
			})
		}
		wg.Wait()
		kept := 0
		for i, l := range logs {
			k := 1000 - l.left
			kept += k
			if (k < 1000) != (l.why() != "") {
				t.Errorf("log %d kept %d bytes, why %q", i, k, l.why())
			}
		}
		if kept != 5000 || share.left != 0 {
			t.Errorf("the logs kept %d bytes together, the share has %d left", kept, share.left)
		}
	})
}
