package explain

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

const flash = "_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if"

// recorded reads one side of a replay recording (testdata/replay/CASE/SIDE/attention): the
// kernel's ptxas record for arch and its SASS opcodes.
func recorded(t *testing.T, rcase, side, kernel, arch string) Side {
	t.Helper()
	return recordedIn(t, filepath.Join("..", "testdata", "replay", rcase, side, "attention"), kernel, arch)
}

// recordedIn reads a build directory of a recording (build.log and each source's
// compile/N.log, sass.txt.gz or bin0/sass.txt.gz): the kernel's ptxas record for arch and
// its SASS opcodes.
func recordedIn(t *testing.T, dir, kernel, arch string) Side {
	t.Helper()
	rcase, side := filepath.Base(filepath.Dir(filepath.Dir(dir))), filepath.Base(filepath.Dir(dir))
	compiles, err := filepath.Glob(filepath.Join(dir, "compile", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var l ptxas.Log
	for _, log := range append([]string{filepath.Join(dir, "build.log")}, compiles...) {
		f, err := os.Open(log)
		if err != nil {
			t.Fatal(err)
		}
		err = l.Parse(f, log, nil)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	var s Side
	for i, k := range l.Kernels {
		if k.Name == kernel && k.Arch == arch {
			s.Record = &l.Kernels[i]
		}
	}
	z, err := os.Open(filepath.Join(dir, "sass.txt.gz"))
	if os.IsNotExist(err) {
		z, err = os.Open(filepath.Join(dir, "bin0", "sass.txt.gz"))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	zr, err := gzip.NewReader(z)
	if err != nil {
		t.Fatal(err)
	}
	d, err := sass.Parse(zr, sass.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range d.Functions {
		if fn.Name.Mangled == kernel && fn.Arch == arch {
			fd := fn.Data()
			s.SASS = &fd
		}
	}
	if s.Record == nil || s.SASS == nil {
		t.Fatalf("%s %s: no record or SASS of %s on %s", rcase, side, kernel, arch)
	}
	return s
}

// The spill recording (KG_FLASH_MIN_BLOCKS=16 caps flash_fwd's registers): the explanation
// leads with the local memory traffic that appears and the register cap that caused it,
// then the spills; the occupancy that the cap bought (3 → 5 blocks, now limited by shared
// memory) goes the other way, after them.
func TestExplainSpill(t *testing.T) {
	in := Input{
		Headline: "spill stores 0 → 1676 bytes",
		Base:     recorded(t, "spill", "base", flash, "sm_90a"),
		Head:     recorded(t, "spill", "head", flash, "sm_90a"),
		GPU:      "9.0", BlockSize: 128, BlockSizeFrom: "harness",
	}
	e := Build(in)
	t.Log(e.Sentence)
	if len(e.Clauses) < 2 || e.Clauses[0].Source != "sass" || !strings.HasPrefix(e.Clauses[0].Text, "local memory traffic appears (local loads 0 → ") ||
		e.Clauses[1].Text != "registers 153 → 32" {
		t.Errorf("first clauses %+v", e.Clauses)
	}
	if last := e.Clauses[len(e.Clauses)-1]; last.Text != "occupancy 12 → 20 warps/SM (19% → 31% of the SM) at 128 threads per block, limited by shared memory (was registers)" {
		t.Errorf("the occupancy that rose is not last: %q", last.Text)
	}
	// The headline's own figure is not said again.
	want := "spill stores 0 → 1676 bytes: local memory traffic appears (local loads 0 → 315, local stores 0 → 295); registers 153 → 32; stack frame 0 → 1152 bytes; spill loads 0 → 1684 bytes; " +
		"occupancy 12 → 20 warps/SM (19% → 31% of the SM) at 128 threads per block, limited by shared memory (was registers)"
	if e.Sentence != want {
		t.Errorf("sentence\n%s\nwant\n%s", e.Sentence, want)
	}
	if e.Occupancy == nil || e.Occupancy.Base.BlocksPerSM != 3 || e.Occupancy.Head.BlocksPerSM != 5 {
		t.Errorf("occupancy %+v", e.Occupancy)
	}
}

// clauseTexts is every clause of e, in order, as one string.
func clauseTexts(e result.Explanation) string {
	var b strings.Builder
	for _, c := range e.Clauses {
		b.WriteString(c.Text + "; ")
	}
	return b.String()
}

// The slow5 recording (every warp waits KG_SLOW_CYCLES clock cycles per key/value tile):
// the occupancy is unchanged, the instruction mix shows the wait loop, and the registers
// that fell go the other way.
func TestExplainSlow5(t *testing.T) {
	e := Build(Input{
		Headline: "5.0% slower", Kind: Slower,
		Base: recorded(t, "slow5", "base", flash, "sm_90a"),
		Head: recorded(t, "slow5", "head", flash, "sm_90a"),
		GPU:  "sm_90a", BlockSize: 128, BlockSizeFrom: "ncu",
	})
	want := "5.0% slower: clock reads 0 → 2 (a timed wait or in-kernel timing: S2R/CS2R of SR_CLOCKLO); occupancy unchanged (12 warps/SM, limited by registers); registers 153 → 148"
	if e.Sentence != want || e.Clauses[0].Source != "sass" || e.Clauses[1].Source != "occupancy" {
		t.Errorf("sentence\n%s\nwant\n%s", e.Sentence, want)
	}
}

// Without a block size, or on a GPU without a table, occupancy is not computed, and the
// explanation says why instead of guessing.
func TestExplainSaysWhatItCannotCompute(t *testing.T) {
	base, head := recorded(t, "slow5", "base", flash, "sm_90a"), recorded(t, "slow5", "head", flash, "sm_90a")
	for _, tt := range []struct {
		in   Input
		want string
	}{
		{Input{Base: base, Head: head, GPU: "9.0"}, "occupancy not computed: the launch's block size is unknown"},
		{Input{Base: base, Head: head, GPU: "sm_100a", BlockSize: 128}, `occupancy not computed: no occupancy limits for "sm_100a"`},
		{Input{Base: base, Head: head, GPU: "9.0", BlockSize: 2048}, "occupancy not computed: base: a block of 2048 threads cannot launch"},
	} {
		e := Build(tt.in)
		if e.Occupancy != nil || !strings.Contains(e.Sentence, tt.want) || e.Clauses[len(e.Clauses)-1].Source != "occupancy" {
			t.Errorf("%+v: %q", tt.in.BlockSize, e.Sentence)
		}
	}
	if e := Build(Input{Headline: "3% slower"}); e.Sentence != "3% slower: nothing kernel-gate measured of the kernel changed" || len(e.Clauses) != 0 {
		t.Errorf("nothing to go on: %+v", e)
	}
}

func TestCompareMixOrder(t *testing.T) {
	got := CompareMix(sass.Mix{sass.Barrier: 4, sass.FP32: 100, sass.OtherClass: 10, sass.Integer: 50},
		sass.Mix{sass.Barrier: 8, sass.FP32: 110, sass.OtherClass: 100, sass.Integer: 50, sass.LocalLoad: 3})
	var order []sass.Class
	for _, c := range got {
		order = append(order, c.Class)
	}
	want := []sass.Class{sass.LocalLoad, sass.Barrier, sass.FP32, sass.OtherClass}
	if len(order) != len(want) {
		t.Fatalf("order %q", order)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %q, want %q", order, want)
		}
	}
}

func TestProfileClauses(t *testing.T) {
	base := []Metric{{Name: "gpu__time_duration.sum", Unit: "ns", Value: 36400}, {Name: stallPrefix + "long_scoreboard" + stallSuffix, Value: 1.0},
		{Name: "sm__throughput.avg.pct_of_peak_sustained_elapsed", Unit: "%", Value: 40}, {Name: "dram__bytes.sum", Unit: "byte", Value: 1000}}
	head := []Metric{{Name: "gpu__time_duration.sum", Unit: "ns", Value: 38220}, {Name: stallPrefix + "long_scoreboard" + stallSuffix, Value: 1.14},
		{Name: "sm__throughput.avg.pct_of_peak_sustained_elapsed", Unit: "%", Value: 41}, {Name: "dram__bytes.sum", Unit: "byte", Value: 1010}}
	e := Build(Input{Base: Side{Profile: base}, Head: Side{Profile: head}, Kind: Slower})
	want := "long-scoreboard stalls +14% (1.00 → 1.14 warps per issued instruction); duration 36400 → 38220 ns (+5%)"
	if e.Sentence != want || len(e.Profile) != 4 {
		t.Errorf("sentence %q (profile %d), want %q", e.Sentence, len(e.Profile), want)
	}
}

// A ptxas finding's headline is its metric on both records; register_increase is the
// registers; a metric the records do not hold has none.
func TestHeadline(t *testing.T) {
	b := recorded(t, "spill", "base", flash, "sm_90a").Record
	h := recorded(t, "spill", "head", flash, "sm_90a").Record
	for metric, want := range map[string]string{
		"register_increase": "registers 153 → 32",
		"registers":         "registers 153 → 32",
		"spill_stores":      "spill stores 0 → 1676 bytes",
		"stack_frame":       "stack frame 0 → 1152 bytes",
		"ptxas-warning":     "",
	} {
		if got := Headline(metric, b, h); got != want {
			t.Errorf("Headline(%s) = %q, want %q", metric, got, want)
		}
	}
	if got := Headline("registers", nil, h); got != "" {
		t.Errorf("no base: %q", got)
	}
}

// A side without an instruction mix (a result written before the sass gate kept one) says
// nothing of the mix or the clock reads: never compared with zero.
func TestNoMixOnASide(t *testing.T) {
	base := recorded(t, "slow5", "base", flash, "sm_90a")
	head := recorded(t, "slow5", "head", flash, "sm_90a")
	old := *base.SASS
	old.Mix, old.ClockReads = nil, 0
	base.SASS = &old
	e := Build(Input{Base: base, Head: head, GPU: "9.0", BlockSize: 128})
	for _, c := range e.Clauses {
		if c.Source == "sass" {
			t.Errorf("a clause from a side with no mix: %q", c.Text)
		}
	}
	if len(e.Mix) != 0 || e.Sentence != "occupancy unchanged (12 warps/SM, limited by registers); registers 153 → 148" {
		t.Errorf("mix %v, sentence %q", e.Mix, e.Sentence)
	}
}

// ReadResult reads a result's sass data as a fork's: a mix no dump could give is refused,
// naming the gate; a function without one is counted in NoMix, not read as zeros.
func TestReadResultChecksTheMix(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, fns ...sass.FunctionData) string {
		t.Helper()
		g := result.Gate{Name: sass.Name}
		if err := g.SetData(sass.Data{Functions: fns}); err != nil {
			t.Fatal(err)
		}
		g.Decide(true)
		var b bytes.Buffer
		if err := result.Write(&b, result.New("kernel-gate test", g)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fd := recorded(t, "spill", "head", flash, "sm_90a").SASS
	var s Sources
	if err := s.ReadResult(context.Background(), write("ok.json", *fd)); err != nil || len(s.SASS) != 1 || s.SASS[0].Mix[sass.LocalLoad] != 315 {
		t.Fatalf("%v: %+v", err, s.SASS)
	}
	old := *fd
	old.Mix, old.ClockReads = nil, 0
	s = Sources{}
	if err := s.ReadResult(context.Background(), write("old.json", old)); err == nil || s.NoMix != 1 || !strings.Contains(err.Error(), "neither ptxas records") {
		t.Errorf("a result with no records and no mix: %v, NoMix %d", err, s.NoMix)
	}
	for name, bad := range map[string]sass.Mix{
		"negative.json": {sass.LocalLoad: -1, sass.OtherClass: fd.Instructions + 1},
		"unknown.json":  {"LDL": fd.Instructions},
		"sum.json":      {sass.OtherClass: fd.Instructions + 1},
	} {
		f := *fd
		f.Mix = bad
		s = Sources{}
		if err := s.ReadResult(context.Background(), write(name, f)); !errors.Is(err, sass.ErrBadData) || !strings.Contains(err.Error(), "the sass gate's data") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A grep-filtered dump shows only part of each function: its functions have no mix, and
// kernel-gate explain says so rather than comparing what the filter kept.
func TestFilteredDumpHasNoMix(t *testing.T) {
	var s Sources
	if err := s.ReadSASS(context.Background(), filepath.Join("..", "testdata", "shared-h200-cuda13.0", "sass_mma.txt")); err != nil {
		t.Fatal(err)
	}
	if len(s.SASS) != 0 || s.NoMix != 5 {
		t.Fatalf("%d functions with a mix, %d without", len(s.SASS), s.NoMix)
	}
	ex := Explain(s, s, Options{})
	if len(ex.Notes) != 1 || !strings.Contains(ex.Notes[0], "10 function(s) have no instruction mix") || !strings.Contains(ex.Notes[0], "grep-filtered") {
		t.Errorf("notes %q", ex.Notes)
	}
}

// llm.c's commit 7d0891f6 (testdata/external/karpathy-llm.c): layernorm_backward_kernel8
// spilled under its (512, 3) launch bound and kernel9 does not, yet kernel9 is slower; its
// grid is 2 blocks per SM on either side, so Nsight Compute's achieved occupancy stays put
// while the theoretical one falls, and one launch at a time shows no slowdown. The
// explanation must lead with the barriers and shared memory traffic the commit added, say
// at once that the profile does not show the slowdown, say the occupancy drop is
// theoretical, and put the spills that went away after everything that went the
// slowdown's way. (The recording's whole profile, stall reasons included: the report's
// golden llmc-layernorm/explained.*.)
func TestLLMCRenamedLayerNorm(t *testing.T) {
	dir := filepath.Join("..", "testdata", "external", "karpathy-llm.c", "recorded", "llmc-layernorm")
	base := recordedIn(t, filepath.Join(dir, "base", "layernorm-backward-make"), "_Z26layernorm_backward_kernel8P13__nv_bfloat16S0_S0_PfPKS_S3_S3_S3_S3_iii", "sm_90")
	head := recordedIn(t, filepath.Join(dir, "head", "layernorm-backward-make"), "_Z26layernorm_backward_kernel9P13__nv_bfloat16S0_S0_PfPKS_S3_S3_S3_S3_iii", "sm_90")
	base.Profile = []Metric{{Name: durationMetric, Unit: "ns", Value: 48960}, {Name: achievedMetric, Unit: "%", Value: 48.37}, {Name: "dram__bytes.sum", Unit: "byte", Value: 58865792}}
	head.Profile = []Metric{{Name: durationMetric, Unit: "ns", Value: 48640}, {Name: achievedMetric, Unit: "%", Value: 48.58}, {Name: "dram__bytes.sum", Unit: "byte", Value: 40126208}}
	e := Build(Input{Headline: "5.4% slower", Kind: Slower, Base: base, Head: head, GPU: "9.0", BlockSize: 512, BlockSizeFrom: "ncu"})
	t.Log(e.Sentence)
	want := "5.4% slower: barriers +120% (15 → 33); duration 48960 → 48640 ns under Nsight Compute (-0.7%): its launches do not show the slowdown; " +
		"shared loads +846% (35 → 331); shared stores +3467% (3 → 107); global stores +1450% (4 → 62); and 11 more clauses"
	if e.Sentence != want {
		t.Errorf("sentence\n%s\nwant\n%s", e.Sentence, want)
	}
	all := clauseTexts(e)
	theory := strings.Index(all, "occupancy 48 → 32 warps/SM (75% → 50% of the SM) at 512 threads per block, limited by registers, in theory only: achieved occupancy 48.4% → 48.6% (Nsight Compute)")
	gone := strings.Index(all, "local memory traffic is gone (local loads 31 → 0, local stores 32 → 0); stack frame 104 → 0 bytes; spill stores 106 → 0 bytes; spill loads 124 → 0 bytes; ")
	registers, dram := strings.Index(all, "registers 40 → 64; "), strings.Index(all, "DRAM bytes 58.9 MB → 40.1 MB (-32%)")
	if theory < 0 || registers < theory || gone < registers || dram < gone {
		t.Errorf("want the theoretical occupancy drop, then the registers, then the spills and DRAM bytes that fell:\n%s", all)
	}
}

// Local memory that falls but stays is said as falling; achieved occupancy that moves as
// the theoretical one does qualifies nothing.
func TestLocalFallsAndAchievedMoves(t *testing.T) {
	bs := &sass.FunctionData{Mix: sass.Mix{sass.LocalLoad: 10, sass.LocalStore: 10, sass.FP32: 100}}
	hs := &sass.FunctionData{Mix: sass.Mix{sass.LocalLoad: 4, sass.LocalStore: 4, sass.FP32: 100}}
	regs := func(n int64) *ptxas.Kernel { return &ptxas.Kernel{Registers: &n} }
	e := Build(Input{Base: Side{Record: regs(40), SASS: bs, Profile: []Metric{{Name: achievedMetric, Value: 70}}},
		Head: Side{Record: regs(64), SASS: hs, Profile: []Metric{{Name: achievedMetric, Value: 48}}}, GPU: "9.0", BlockSize: 512})
	all := clauseTexts(e)
	if !strings.Contains(all, "local memory traffic falls (local loads 10 → 4, local stores 10 → 4)") || strings.HasPrefix(all, "local") {
		t.Errorf("falling local memory: %s", all)
	}
	if strings.Contains(all, "in theory only") || !strings.HasPrefix(all, "occupancy 48 → 32 warps/SM (75% → 50% of the SM) at 512 threads per block, limited by registers; registers 40 → 64; achieved occupancy 70.0% → 48.0%; ") {
		t.Errorf("an occupancy drop that the achieved occupancy shows leads, with the registers that limit it: %s", all)
	}
}

func TestBytesText(t *testing.T) {
	for v, want := range map[float64]string{0: "0 bytes", 999: "999 bytes", 1000: "1 kB", 58865792: "58.9 MB", 2.5e9: "2.5 GB", 4e15: "4e+03 TB"} {
		if got := bytesText(v); got != want {
			t.Errorf("bytesText(%g) = %q, want %q", v, got, want)
		}
	}
}

// stall is a warp-stall metric of a reason at v warps per issued instruction.
func stall(reason string, v float64) Metric {
	return Metric{Name: stallPrefix + reason + stallSuffix, Value: v}
}

// The ranking rules of docs/gates.md on made-up numbers, one rule a case: the order of the
// clauses (by their first words) and the sentence's length.
func TestRank(t *testing.T) {
	regs := func(r, smem int64) *ptxas.Kernel { return &ptxas.Kernel{Registers: &r, Smem: &smem} }
	mix := func(barriers, shared, fp32 int) *sass.FunctionData {
		return &sass.FunctionData{Mix: sass.Mix{sass.Barrier: barriers, sass.SharedLoad: shared, sass.FP32: fp32}}
	}
	for _, tt := range []struct {
		name string
		in   Input
		want []string // each clause's start, in order
	}{
		{"slower: the two stall reasons that rose most lead, not-selected never; those that fell go last",
			Input{Kind: Slower,
				Base: Side{Profile: []Metric{stall("barrier", 4), stall("not_selected", 0.5), stall("wait", 1), stall("no_instruction", 0.2), stall("math_pipe_throttle", 0.2), stall("long_scoreboard", 18)}},
				Head: Side{Profile: []Metric{stall("barrier", 6.5), stall("not_selected", 1.5), stall("wait", 1.3), stall("no_instruction", 0.6), stall("math_pipe_throttle", 0.45), stall("long_scoreboard", 9)}}},
			[]string{"barrier stalls", "no-instruction stalls", "not-selected stalls", "wait stalls", "math-pipe-throttle stalls", "long-scoreboard stalls"}},
		{"slower: a rise under 0.1 warps per issued instruction points at nothing; the duration is never first",
			Input{Kind: Slower,
				Base: Side{SASS: mix(4, 100, 100), Profile: []Metric{{Name: durationMetric, Unit: "ns", Value: 1000}, stall("lg_throttle", 0.15)}},
				Head: Side{SASS: mix(8, 100, 100), Profile: []Metric{{Name: durationMetric, Unit: "ns", Value: 1100}, stall("lg_throttle", 0.2)}}},
			[]string{"barriers +100%", "duration 1000 → 1100 ns", "lg-throttle stalls"}},
		{"slower: costly instructions before occupancy, the rest of the mix after it, resources last",
			Input{Kind: Slower, GPU: "9.0", BlockSize: 128,
				Base: Side{Record: regs(64, 0), SASS: mix(4, 100, 100)},
				Head: Side{Record: regs(64, 1024), SASS: mix(4, 150, 200)}},
			[]string{"shared loads +50%", "occupancy unchanged (32 warps/SM, limited by registers)", "FP32 math +100%", "shared memory 0 → 1024 bytes"}},
		{"heavier: the occupancy that fell leads, with the registers that limit it; the mix after",
			Input{GPU: "9.0", BlockSize: 128,
				Base: Side{Record: regs(64, 0), SASS: mix(4, 100, 100)},
				Head: Side{Record: regs(128, 0), SASS: mix(4, 150, 200)}},
			[]string{"occupancy 32 → 16 warps/SM", "registers 64 → 128", "shared loads +50%", "FP32 math +100%"}},
		{"heavier: what got better goes after what got worse, and what could not be computed last",
			Input{GPU: "9.0",
				Base: Side{Record: regs(128, 2048), SASS: mix(4, 150, 100)},
				Head: Side{Record: regs(64, 4096), SASS: mix(4, 100, 100)}},
			[]string{"shared memory 2048 → 4096 bytes", "registers 128 → 64", "shared loads -33%", "occupancy not computed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := Build(tt.in)
			if len(e.Clauses) != len(tt.want) {
				t.Fatalf("%d clauses, want %d:\n%s", len(e.Clauses), len(tt.want), clauseTexts(e))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(e.Clauses[i].Text, w) {
					t.Errorf("clause %d %q, want it to start %q:\n%s", i+1, e.Clauses[i].Text, w, clauseTexts(e))
				}
			}
			// Built again, the same order: ties keep the order clauses are made in.
			if again := Build(tt.in); clauseTexts(again) != clauseTexts(e) {
				t.Errorf("not deterministic:\n%s\n%s", clauseTexts(e), clauseTexts(again))
			}
		})
	}
}

// The sentence shows five clauses and says how many more there are; six it shows whole,
// since leaving one out would save nothing.
func TestSentenceLength(t *testing.T) {
	var cs []result.Clause
	for i := range 7 {
		cs = append(cs, result.Clause{Text: fmt.Sprintf("c%d", i+1), Source: "sass"})
	}
	for n, want := range map[int]string{
		0: "3% slower: nothing kernel-gate measured of the kernel changed",
		1: "3% slower: c1",
		6: "3% slower: c1; c2; c3; c4; c5; c6",
		7: "3% slower: c1; c2; c3; c4; c5; and 2 more clauses",
	} {
		if got := sentence("3% slower", cs[:n]); got != want {
			t.Errorf("%d clauses: %q, want %q", n, got, want)
		}
	}
}
