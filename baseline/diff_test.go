package baseline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/explain"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/internal/goldentest"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// recordedEntry is a recorded run's entry with the head's own times of every target the
// recording timed.
func recordedEntry(t *testing.T, name, commit string, at time.Time) Entry {
	t.Helper()
	e, err := EntryFromResult(replayResult(t, name), commit, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"attention", "gemm", "softmax"} {
		path := filepath.Join("..", "testdata", "replay", name, target, "bench", "head.json")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if err := e.AddBench(target, readBench(t, path)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", "diff", name), got, *update)
}

// Diffs between recorded runs of the same kernels, in text and JSON: the planted 5%
// slowdown is slower beyond both intervals, the spill's registers, spills and SASS changed,
// the race's racecheck went from clean to errors.
func TestDiffGolden(t *testing.T) {
	clean := recordedEntry(t, "clean", "c1ea2c1ea2c1ea2c1ea2c1ea2c1ea2c1ea2c1ea2", when)
	for _, c := range []struct {
		to   string
		want []string
	}{
		{"slow5", []string{"attention flash_fwd mission: ", "slower (the intervals do not overlap)"}},
		{"spill", []string{"registers 153 → 32 (-121)", "spill_stores", "SASS changed ("}},
		{"race", []string{"attention racecheck: clean → errors (2 errors)"}},
		{"wrong-result", []string{"(pass → fail)"}},
	} {
		t.Run(c.to, func(t *testing.T) {
			to := recordedEntry(t, c.to, strings.Repeat("5", 40), when.Add(24*time.Hour))
			d := DiffEntries(clean, to)
			var text, js bytes.Buffer
			if err := d.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := d.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("the diff lacks %q:\n%s", w, text.String())
				}
			}
			var back Diff
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Schema != DiffSchema {
				t.Errorf("JSON: %v %q", err, back.Schema)
			}
			golden(t, "clean-"+c.to+".txt.golden", text.Bytes())
			golden(t, "clean-"+c.to+".json.golden", js.Bytes())
		})
	}
}

// An entry against itself changes nothing; against the same entry with one digest
// changed, that kernel's SASS changed even with the same instruction count.
func TestDiffSASSDigests(t *testing.T) {
	e := recordedEntry(t, "clean", "c", when)
	for i := range e.Kernels {
		e.Kernels[i].SASS.Digest = strings.Repeat("a", 64)
	}
	d := DiffEntries(e, e)
	if d.UnchangedKernels != len(e.Kernels) || len(d.Notes) != 0 {
		t.Errorf("itself: %d unchanged of %d, notes %q", d.UnchangedKernels, len(e.Kernels), d.Notes)
	}
	for _, tm := range d.Timings {
		if tm.Change != ChangeUnchanged || tm.Timing != TimingOverlap {
			t.Errorf("itself: timing %+v", tm)
		}
	}
	to := e
	to.Kernels = append([]Kernel(nil), e.Kernels...)
	s := *to.Kernels[3].SASS
	s.Digest = strings.Repeat("b", 64)
	to.Kernels[3].SASS = &s
	d = DiffEntries(e, to)
	if d.UnchangedKernels != len(e.Kernels)-1 || d.Kernels[3].SASS != SASSChanged || d.Kernels[3].Instructions != nil || d.Kernels[3].Change != ChangeChanged {
		t.Errorf("one digest changed: %+v", d.Kernels[3])
	}
	// Without digests on one side, equal counts cannot show the code unchanged.
	from := e
	from.Kernels = append([]Kernel(nil), e.Kernels...)
	s = *from.Kernels[0].SASS
	s.Digest = ""
	from.Kernels[0].SASS = &s
	d = DiffEntries(from, e)
	if d.Kernels[0].SASS != SASSUnknown || d.Kernels[0].Change != ChangeUnchanged || len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "no digest") {
		t.Errorf("no digest: %+v %q", d.Kernels[0], d.Notes)
	}
}

// Rows present on one side only are added or removed; kernels are matched by identity,
// so a kernel in an anonymous namespace built from another path is the same kernel.
func TestDiffAddedRemovedAndIdentity(t *testing.T) {
	n := func(x int64) *int64 { return &x }
	fp := Fingerprint{GPU: "NVIDIA L4", Arch: "sm_89", Driver: "570.1", CUDA: "12.8"}
	from := Entry{Commit: "a", Time: when, Fingerprint: fp, Kernels: []Kernel{
		{Name: "_ZN43_GLOBAL__N__75846019_10_harness_cu_5d88324917softmax_referenceEPKfPfii", Arch: "sm_89", Ptxas: &ptxas.Kernel{Registers: n(40)}},
		{Name: "old_kernel", Arch: "sm_89", Ptxas: &ptxas.Kernel{Registers: n(10)}},
	}, Sanitizer: []SanitizerRun{{Tool: "memcheck", Status: SanitizerClean}}}
	fp.Driver = "580.2"
	to := Entry{Commit: "b", Time: when.Add(time.Hour), Fingerprint: fp, Kernels: []Kernel{
		{Name: "_ZN43_GLOBAL__N__11111111_10_harness_cu_5d88324917softmax_referenceEPKfPfii", Arch: "sm_89", Ptxas: &ptxas.Kernel{Registers: n(48), Smem: n(0)}},
		{Name: "new_kernel", Arch: "sm_89", Ptxas: &ptxas.Kernel{Registers: n(10)}},
		// Two kernels only the newer entry has, one only the older: no rename, never a guess.
		{Name: "other_new_kernel", Arch: "sm_89", Ptxas: &ptxas.Kernel{Registers: n(12)}},
	}, Sanitizer: []SanitizerRun{{Tool: "racecheck", Status: SanitizerClean}}}
	d := DiffEntries(from, to)
	var got []string
	for _, k := range d.Kernels {
		got = append(got, k.Kernel+" "+k.Change)
	}
	if strings.Join(got, "; ") != "(anonymous namespace)::softmax_reference changed; new_kernel added; other_new_kernel added; old_kernel removed" {
		t.Errorf("kernels %q", got)
	}
	if m := d.Kernels[0].Metrics; len(m) != 2 || m[0].Metric != "registers" || *m[0].To != 48 || m[1].Metric != "smem" || m[1].From != nil {
		t.Errorf("metrics %+v", m)
	}
	if len(d.Fingerprint) != 1 || d.Fingerprint[0] != (ValueChange{"driver", "570.1", "580.2"}) {
		t.Errorf("fingerprint %+v", d.Fingerprint)
	}
	if len(d.Sanitizer) != 2 || d.Sanitizer[0].Change != ChangeAdded || d.Sanitizer[1].Change != ChangeRemoved {
		t.Errorf("sanitizer %+v", d.Sanitizer)
	}
	var text bytes.Buffer
	d.WriteText(&text)
	for _, w := range []string{"driver changed: 570.1 → 580.2", "registers 40 → 48 (+8), smem - → 0", "old_kernel sm_89: removed", "timings (median µs [95% interval]):\n  none recorded"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
}

// withMix gives e's kernels the instruction mix of a recorded SASS dump
// (testdata/replay/CASE/head/attention/sass.txt.gz), as the sass gate's data keeps it (the
// recordings of 2026-11-27 keep it already; older results predate it).
func withMix(t *testing.T, e Entry, rcase string) Entry {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "replay", rcase, "head", "attention", "sass.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	d, err := sass.Parse(zr, sass.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Kernels = slices.Clone(e.Kernels)
	n := 0
	for i, k := range e.Kernels {
		for _, f := range d.Functions {
			if f.Name.Mangled == k.Name && f.Arch == k.Arch && k.SASS != nil {
				fd := f.Data()
				s := *k.SASS
				s.Mix, s.ClockReads = fd.Mix, fd.ClockReads
				e.Kernels[i].SASS = &s
				n++
			}
		}
	}
	if n == 0 {
		t.Fatalf("no kernel of the entry is in %s's dump", rcase)
	}
	return e
}

// withoutMix is e as an entry written before the sass gate's data kept the instruction mix
// and clock reads.
func withoutMix(e Entry) Entry {
	e.Kernels = slices.Clone(e.Kernels)
	for i, k := range e.Kernels {
		if k.SASS != nil {
			s := *k.SASS
			s.Mix, s.ClockReads = nil, 0
			e.Kernels[i].SASS = &s
		}
	}
	return e
}

// baseline diff explains the instruction mix where both entries keep it (the spill's local
// memory traffic), and says nothing of it where one was written before the mix was kept.
func TestDiffExplainsTheMix(t *testing.T) {
	clean := recordedEntry(t, "clean", "c1ea2c1ea2c1ea2c1ea2c1ea2c1ea2c1ea2c1ea2", when)
	spill := withMix(t, recordedEntry(t, "spill", strings.Repeat("5", 40), when.Add(24*time.Hour)), "spill")
	why := func(d Diff) string {
		for _, k := range d.Kernels {
			if k.Kernel == "kg::flash_fwd<64, 64, false>" && k.Arch == "sm_90a" && k.Explain != nil {
				return k.Explain.Sentence
			}
		}
		t.Fatalf("no explanation of flash_fwd on sm_90a: %+v", d.Kernels)
		return ""
	}
	got := why(DiffEntries(withMix(t, clean, "clean"), spill))
	if want := "local memory traffic appears (local loads 0 → 315, local stores 0 → 295); registers 153 → 32; "; !strings.HasPrefix(got, want) {
		t.Errorf("both with a mix:\n%s\nwant it to start\n%s", got, want)
	}
	got = why(DiffEntries(withoutMix(clean), spill))
	if strings.Contains(got, "local") || !strings.HasPrefix(got, "registers 153 → 32; ") {
		t.Errorf("an entry without a mix: %s", got)
	}
}

// A store whose entry holds a mix no dump could give is refused when read, naming it.
func TestStoredMixIsChecked(t *testing.T) {
	k, _ := NewKey("NVIDIA H200", "sm_90")
	e := entry("NVIDIA H200", "sm_90", "c", 10)
	e.Kernels[0].SASS.Mix = sass.Mix{sass.TensorCore: 4, sass.OtherClass: 6}
	raw, err := (&keyFile{Schema: Schema, Key: k, Entries: []Entry{e}}).encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeKeyFile(raw, "f", &k); err != nil {
		t.Fatalf("a valid mix: %v", err)
	}
	for _, bad := range []string{`"mma":-4`, `"hmma":4`} {
		tampered := bytes.Replace(raw, []byte(`"mma":4`), []byte(bad), 1)
		if _, err := decodeKeyFile(tampered, "f", &k); err == nil || !strings.Contains(err.Error(), "entry 1: sass: mix") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// llmcEntry is an entry of one side of llm.c's recording (testdata/external/karpathy-llm.c):
// the kernels of its build log and SASS dump, as a result's ptxas and sass data give them.
func llmcEntry(t *testing.T, side, commit string, at time.Time) Entry {
	t.Helper()
	dir := filepath.Join("..", "testdata", "external", "karpathy-llm.c", "recorded", "llmc-layernorm", side, "layernorm-backward-make")
	var s explain.Sources
	if err := s.ReadLog(context.Background(), filepath.Join(dir, "build.log")); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadSASS(context.Background(), filepath.Join(dir, "bin0", "sass.txt.gz")); err != nil {
		t.Fatal(err)
	}
	e := Entry{Commit: commit, Time: at, Fingerprint: Fingerprint{GPU: "NVIDIA H100 80GB HBM3", Arch: "sm_90", Driver: "580.1", CUDA: "12.8"}}
	for _, k := range s.Records {
		rec := k
		e.kernel(k.Name, k.Demangled, k.Arch).Ptxas = &rec
	}
	for _, f := range s.SASS {
		e.kernel(f.Name, f.Demangled, f.Arch).SASS = &SASS{Instructions: f.Instructions, Digest: f.Digest, Mix: f.Mix, ClockReads: f.ClockReads}
	}
	return e
}

// baseline diff of llm.c's two builds pairs layernorm_backward_kernel9 with the older
// entry's layernorm_backward_kernel8, taken as renamed (explain.Pair, as kernel-gate
// run and kernel-gate explain pair it), and explains it, instead of one kernel removed and
// one added.
func TestDiffRenamedKernel(t *testing.T) {
	d := DiffEntries(llmcEntry(t, "base", strings.Repeat("b", 40), when), llmcEntry(t, "head", strings.Repeat("7", 40), when.Add(time.Hour)))
	var changed []KernelDiff
	for _, k := range d.Kernels {
		if k.Change != ChangeUnchanged {
			changed = append(changed, k)
		}
	}
	if len(changed) != 1 || changed[0].Kernel != "layernorm_backward_kernel9" || changed[0].Change != ChangeChanged ||
		kernelname.Parse(changed[0].RenamedFrom).Short != "layernorm_backward_kernel8" {
		t.Fatalf("changed kernels %+v, want layernorm_backward_kernel9 renamed from layernorm_backward_kernel8", changed)
	}
	var text bytes.Buffer
	if err := d.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"layernorm_backward_kernel9 sm_90: registers 40 → 64 (+24)",
		"why: base's layernorm_backward_kernel8, taken as renamed (the only one of its arch gone, this the only one new): registers 40 → 64; barriers +120% (15 → 33); ",
	} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
	if strings.Contains(text.String(), ": removed") || strings.Contains(text.String(), ": added") {
		t.Errorf("the renamed kernel is removed and added:\n%s", text.String())
	}
}
