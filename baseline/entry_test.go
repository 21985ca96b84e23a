package baseline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

var when = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// replayResult is the recorded run of a case under testdata/replay, with the device the
// live pipeline records (the recordings of 2026-11-27 have it; older ones predate
// result.Device).
func replayResult(t *testing.T, name string) result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "replay", name, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	res.Device = &result.Device{Name: "NVIDIA H200", Arch: "sm_90", Driver: "580.159.04"}
	return res
}

func readBench(t *testing.T, path string) *benchfile.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := benchfile.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEntryFromRecordedRun(t *testing.T) {
	res := replayResult(t, "clean")
	res.Trigger = &result.Trigger{Event: "workflow_dispatch", Ref: "refs/heads/main", SHA: "abc", Reason: "new runner image"}
	e, err := EntryFromResult(res, "0123456789abcdef0123456789abcdef01234567", when.Add(123*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	fp := e.Fingerprint
	if fp.GPU != "NVIDIA H200" || fp.Arch != "sm_90" || fp.Driver != "580.159.04" || fp.CUDA != "13.0.88" || fp.CUDAFrom != "toolkit" {
		t.Errorf("fingerprint %+v", fp)
	}
	if !e.Time.Equal(when) || e.Tool != "kernel-gate v0.1.0-dev" || e.Trigger.Reason != "new runner image" || e.Verdict != result.Pass {
		t.Errorf("entry %v %q %+v %s", e.Time, e.Tool, e.Trigger, e.Verdict)
	}
	if len(e.Missing) != 0 {
		t.Errorf("missing %v", e.Missing)
	}
	// Every ptxas record joined with its SASS, without the runner's paths.
	if len(e.Kernels) != 28 {
		t.Fatalf("%d kernels", len(e.Kernels))
	}
	for _, k := range e.Kernels {
		if k.Ptxas == nil || k.SASS == nil || k.SASS.Instructions == 0 || k.Ptxas.Input != "" || k.Ptxas.Registers == nil {
			t.Fatalf("kernel %+v (ptxas %+v, sass %+v)", k, k.Ptxas, k.SASS)
		}
	}
	// Timings per target × kernel × shape, compared with base.
	var flash *Timing
	for i, tm := range e.Timings {
		if tm.VsBase == nil || tm.VsBase.Ratio == nil || tm.VsBase.Rounds < 16 {
			t.Errorf("timing %+v", tm)
		}
		if tm.Target == "attention" && tm.Kernel == "flash_fwd" && tm.Shape == "mission" {
			flash = &e.Timings[i]
		}
	}
	if flash == nil || flash.VsReference == nil || flash.VsReference.Name != "torch.sdpa.flash" || flash.MedianUs != nil {
		t.Fatalf("flash_fwd mission: %+v", flash)
	}
	// Correctness per target × kernel × shape, sanitizer per target × tool.
	if len(e.Correctness) == 0 || e.Correctness[0].Target != "attention" || e.Correctness[0].MaxErr == nil {
		t.Errorf("correctness %+v", e.Correctness)
	}
	if len(e.Sanitizer) != 12 {
		t.Errorf("%d sanitizer runs", len(e.Sanitizer))
	}
	for _, s := range e.Sanitizer {
		if s.Status != SanitizerClean || s.Target == "" {
			t.Errorf("sanitizer %+v", s)
		}
	}

	// The head's own times from the A/B runner's file.
	if err := e.AddBench("attention", readBench(t, filepath.Join("..", "testdata", "replay", "clean", "attention", "bench", "head.json"))); err != nil {
		t.Fatal(err)
	}
	if flash.MedianUs == nil || flash.LowUs == nil || flash.HighUs == nil || flash.Rounds != 16 || flash.Samples != 16*30 ||
		len(flash.QuantilesUs) != 101 || len(flash.RoundMediansUs) != 16 {
		t.Fatalf("flash_fwd mission after AddBench: %+v", flash)
	}
	if !(*flash.LowUs <= *flash.MedianUs && *flash.MedianUs <= *flash.HighUs) ||
		flash.QuantilesUs[0] > *flash.MedianUs || flash.QuantilesUs[100] < *flash.MedianUs || *flash.MedianUs < 20 || *flash.MedianUs > 60 {
		t.Errorf("median %v in [%v, %v], range [%v, %v]", *flash.MedianUs, *flash.LowUs, *flash.HighUs, flash.QuantilesUs[0], flash.QuantilesUs[100])
	}
	l4 := &benchfile.File{Schema: benchfile.Schema, Device: benchfile.Device{Name: "NVIDIA L4", ComputeCap: "8.9"}}
	if err := e.AddBench("attention", l4); err == nil || !strings.Contains(err.Error(), "NVIDIA L4 (sm_89)") {
		t.Errorf("timings from another GPU: %v", err)
	}
}

// A result that predates result.Device (as the recording is made to here): the harness's
// own device report stands in.
func TestFingerprintFromTheHarness(t *testing.T) {
	res := replayResult(t, "clean")
	res.Device = nil
	fp, err := FingerprintOf(res)
	if err != nil || fp.GPU != "NVIDIA H200" || fp.Arch != "sm_90" || fp.Driver != "580.159.04" || fp.CUDA != "13.0.88" {
		t.Fatalf("%+v %v", fp, err)
	}
	// Without the toolkit gate, the CUDA the harness reported.
	var gates []result.Gate
	for _, g := range res.Gates {
		if g.Name != "toolkit" {
			gates = append(gates, g)
		}
	}
	res.Gates = gates
	if fp, _ := FingerprintOf(res); fp.CUDA != "13.0" || fp.CUDAFrom != "harness" {
		t.Errorf("without a toolkit gate: %+v", fp)
	}
	// A result that never ran on a GPU belongs to no key.
	ptx := result.New("kernel-gate test", result.Gate{Name: "ptxas", Verdict: result.Pass, Data: json.RawMessage(`{"kernels":[]}`)})
	if _, err := EntryFromResult(ptx, "abc", when); err == nil || !strings.Contains(err.Error(), "GPU") {
		t.Errorf("no GPU: %v", err)
	}
	if _, err := EntryFromResult(res, " ", when); err == nil {
		t.Error("no commit")
	}
	if _, err := EntryFromResult(res, "abc", time.Time{}); err == nil {
		t.Error("no time")
	}
}

func TestEntryOfFailingRuns(t *testing.T) {
	e, err := EntryFromResult(replayResult(t, "race"), "r", when)
	if err != nil {
		t.Fatal(err)
	}
	var racecheck *SanitizerRun
	for i, s := range e.Sanitizer {
		if s.Tool == "racecheck" {
			racecheck = &e.Sanitizer[i]
		}
	}
	if racecheck == nil || racecheck.Status != SanitizerErrors || racecheck.Errors != 2 || racecheck.Target != "attention" || e.Verdict != result.Fail {
		t.Errorf("race: %+v %s", racecheck, e.Verdict)
	}
	// No base was timed: the entry says so.
	if !strings.Contains(strings.Join(e.Missing, ","), "timings") {
		t.Errorf("missing %v", e.Missing)
	}

	e, err = EntryFromResult(replayResult(t, "wrong-result"), "w", when)
	if err != nil {
		t.Fatal(err)
	}
	var bad int
	for _, c := range e.Correctness {
		if c.Verdict == result.Fail && c.MaxErr != nil && *c.MaxErr > 4 {
			bad++
		}
	}
	if bad == 0 {
		t.Errorf("wrong-result: %+v", e.Correctness)
	}
	// A NaN error survives the file, as the string GitHub and people can read.
	nan := benchfile.Float(math.NaN())
	e.Correctness[0].MaxErr = &nan
	raw, err := (&keyFile{Key: e.Key(), Entries: []Entry{e}}).encode()
	if err != nil || !bytes.Contains(raw, []byte(`"max_err":"NaN"`)) {
		t.Fatalf("encode: %v", err)
	}
	f, err := decodeKeyFile(raw, "x", nil)
	if err != nil || !math.IsNaN(float64(*f.Entries[0].Correctness[0].MaxErr)) {
		t.Fatalf("decode: %v", err)
	}
}

// Stored PTXAS records stand in for a base build: the spill case's head build judged
// against the clean run's entry shows the deltas and the register increase.
func TestPtxasBaselineFromEntry(t *testing.T) {
	e, err := EntryFromResult(replayResult(t, "clean"), "c", when)
	if err != nil {
		t.Fatal(err)
	}
	base := e.PtxasBaseline()
	if base == nil || !strings.Contains(base.Name, "NVIDIA H200 (sm_90) at c, 2026-03-04T05:06:07Z") {
		t.Fatalf("baseline %+v", base)
	}
	// The spill case's compile of flash_fwd.cu, the source it changes.
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "replay", "spill", "head", "attention", "compile", "3.log"))
	if err != nil {
		t.Fatal(err)
	}
	var l ptxas.Log
	if err := l.Parse(bytes.NewReader(raw), "3.log", nil); err != nil {
		t.Fatal(err)
	}
	limit := int64(0)
	g, err := ptxas.Evaluate(&l, ptxas.Config{Limits: ptxas.Limits{MaxRegisterIncrease: &limit}}, base)
	if err != nil {
		t.Fatal(err)
	}
	withBaseline := 0
	for _, f := range g.Findings {
		if f.Baseline != nil {
			withBaseline++
		}
	}
	if withBaseline == 0 || g.Verdict != result.Fail {
		t.Fatalf("no finding against the stored baseline: %s %+v", g.Verdict, g.Findings)
	}
	if (Entry{}).PtxasBaseline() != nil {
		t.Error("an entry without PTXAS records is no baseline")
	}
}

func TestKeys(t *testing.T) {
	for _, c := range []struct{ gpu, arch, file string }{
		{"NVIDIA H200", "sm_90", "nvidia-h200.sm_90.json"},
		{"  NVIDIA   H100 80GB HBM3 ", "9.0", "nvidia-h100-80gb-hbm3.sm_90.json"},
		{"NVIDIA H100-80GB-HBM3", "90", "nvidia-h100-80gb-hbm3.sm_90.json"},
		{"NVIDIA L4", "compute_89", "nvidia-l4.sm_89.json"},
		{"NVIDIA GB200", "SM_100a", "nvidia-gb200.sm_100a.json"},
	} {
		k, err := NewKey(c.gpu, c.arch)
		if err != nil || k.File() != c.file {
			t.Errorf("NewKey(%q, %q) = %v (%s), %v; want %s", c.gpu, c.arch, k, k.File(), err, c.file)
		}
	}
	for _, c := range [][2]string{{"", "sm_90"}, {"NVIDIA H200", ""}, {"---", "sm_90"}, {"NVIDIA H200", "sm_9x"}, {"NVIDIA H200", "../x"}} {
		if k, err := NewKey(c[0], c[1]); err == nil {
			t.Errorf("NewKey(%q, %q) = %v, want an error", c[0], c[1], k)
		}
	}
}

// AddArtifacts finds the head's timings in a run's artifacts directory: the recorded clean
// run timed attention, gemm and softmax; the SASS build directories add nothing.
func TestAddArtifacts(t *testing.T) {
	res := replayResult(t, "clean")
	e, err := EntryFromResult(res, "c1ea0000", time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddArtifacts(context.Background(), filepath.Join("..", "testdata", "replay", "clean")); err != nil {
		t.Fatal(err)
	}
	timed := map[string]bool{}
	for _, tm := range e.Timings {
		if tm.MedianUs != nil {
			timed[tm.Target+"/"+tm.Kernel+"/"+tm.Shape] = true
		}
	}
	for _, want := range []string{"attention/flash_fwd/mission", "attention/flash_fwd_causal/long", "gemm/gemm_wmma/mission", "softmax/row_softmax/mission"} {
		if !timed[want] {
			t.Errorf("no median for %s; have %v", want, timed)
		}
	}
	if slices.Contains(e.Missing, "timings") {
		t.Errorf("missing still says timings: %v", e.Missing)
	}

	// A link out of the directory is refused, never followed.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "attention", "bench"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside, _ := filepath.Abs(filepath.Join("..", "testdata", "replay", "clean", "attention", "bench", "head.json"))
	if err := os.Symlink(outside, filepath.Join(dir, "attention", "bench", "head.json")); err != nil {
		t.Fatal(err)
	}
	if err := e.AddArtifacts(context.Background(), dir); err == nil {
		t.Error("a head.json linked from outside the artifacts was read")
	}
}

// A shard's result is never a baseline, whoever asks (baseline update, the action, diff):
// it holds only its own targets. Neither is a merged result whose merge failed (a shard
// missing). A shard 1/1 of all its targets, and a merged result of every shard, are whole.
func TestEntryFromResultRefusesPartOfARun(t *testing.T) {
	all := []string{"attention", "gemm", "softmax"}
	shardOf := func(i, n int, targets []string) result.Result {
		r := replayResult(t, "clean")
		r.Shard = &result.Shard{Index: i, Count: n, Targets: targets, AllTargets: all, Commit: "c0ffee"}
		return r
	}
	merge := func(parts ...result.Result) result.Result {
		var in []result.MergeInput
		for i, p := range parts {
			in = append(in, result.MergeInput{Name: fmt.Sprintf("shard%d.json", i+1), Result: p})
		}
		m, err := result.Merge(in, result.MergeOptions{Tool: "kg"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	s1 := shardOf(1, 2, []string{"gemm", "softmax"})
	s2 := shardOf(2, 2, []string{"attention"})
	for _, tc := range []struct {
		name string
		res  result.Result
		want string // "" for a whole run
	}{
		{"shard 2/4", shardOf(2, 4, []string{"attention"}), "it is shard 2/4 of its run, which gated 1 of its 3 target(s): merge the shards first"},
		{"shard 1/2", s1, "shard 1/2"},
		{"shard 1/1 of some targets", shardOf(1, 1, []string{"gemm"}), "shard 1/1"},
		{"a merge that lacks a shard", merge(s1), "its merge failed (shard 2/2 of H200, sm_90 is missing"},
		{"shard 1/1 of all targets", shardOf(1, 1, all), ""},
		{"a merge of every shard", merge(s1, s2), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EntryFromResult(tc.res, "0123456789abcdef0123456789abcdef01234567", when)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("a whole run is refused: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrPartRun) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("EntryFromResult: %v; want it refused saying %q", err, tc.want)
			}
		})
	}
}

// An entry keeps the sass gate's instruction mix of a real dump, and it survives the
// store's file; a result whose mix no dump could give is refused, not stored.
func TestEntryKeepsTheMix(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "cuda13-h200", "cuobjdump_sass_gemm_multi.txt"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := sass.Parse(bytes.NewReader(raw), sass.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := sass.Evaluate(d, sass.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res := result.New("kernel-gate test", g)
	res.Device = &result.Device{Name: "NVIDIA H200", Arch: "sm_90", Driver: "580.159.04"}
	e, err := EntryFromResult(res, "c", when)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := NewKey("NVIDIA H200", "sm_90")
	file, err := (&keyFile{Schema: Schema, Key: k, Entries: []Entry{e}}).encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeKeyFile(file, "f", &k)
	if err != nil {
		t.Fatal(err)
	}
	for i, fn := range d.Functions {
		got := back.Entries[0].Kernels[i].SASS
		if got == nil || !maps.Equal(got.Mix, fn.Mix()) || got.Mix[sass.TensorCore] == 0 {
			t.Errorf("%s %s: stored %+v, dump's mix %v", fn.Name.Short, fn.Arch, got, fn.Mix())
		}
	}
	bad := bytes.Replace(g.Data, []byte(`"mma":16`), []byte(`"mma":17`), 1)
	if bytes.Equal(bad, g.Data) {
		t.Fatal("no mma count to tamper with")
	}
	res.Gates[0].Data = bad
	if _, err := EntryFromResult(res, "c", when); err == nil || !strings.Contains(err.Error(), "sass data: not the sass gate's data") {
		t.Errorf("a tampered mix: %v", err)
	}
}
