package ptxas

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

func i64(v int64) *int64 { return &v }

func evaluateFile(t *testing.T, file string, cfg Config, base *Baseline) result.Gate {
	t.Helper()
	g, err := Evaluate(parseBytes(t, readTestdata(t, file)), cfg, base)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// finding renders what a test asserts about a finding.
func finding(f result.Finding) string {
	s := fmt.Sprintf("%s %s %s %s", f.Severity, f.Kernel, f.Arch, f.Metric)
	if f.Value != nil && f.Limit != nil {
		s += fmt.Sprintf(" %g>%g", *f.Value, *f.Limit)
	}
	if f.Delta != nil {
		s += fmt.Sprintf(" Δ%+g", *f.Delta)
	}
	return s
}

func findings(g result.Gate, min result.Severity) []string {
	var out []string
	for _, f := range g.Findings {
		if f.Severity.Rank() <= min.Rank() {
			out = append(out, finding(f))
		}
	}
	return out
}

func TestEvaluateDefaults(t *testing.T) {
	tests := []struct {
		file    string
		verdict result.Verdict
		errors  []string
	}{
		{"cuda13-h200/ptxas_kernels_sm90a.txt", result.Pass, nil},
		{"shared-h200-cuda13.0/ptxas_multi.txt", result.Pass, nil},
		{"cuda13-h200/build_cmake_ninja.txt", result.Pass, nil},
		// The spilling tile config: spills and a stack frame, both default 0.
		{"cuda13-h200/ptxas_flash_spill_sm90a.txt", result.Fail, []string{
			"error kg::flash_fwd<64, 64, false> sm_90a spill_stores 1676>0",
			"error kg::flash_fwd<64, 64, false> sm_90a spill_loads 1684>0",
			"error kg::flash_fwd<64, 64, false> sm_90a stack_frame 1152>0",
			"error kg::flash_fwd<64, 64, true> sm_90a spill_stores 1704>0",
			"error kg::flash_fwd<64, 64, true> sm_90a spill_loads 1744>0",
			"error kg::flash_fwd<64, 64, true> sm_90a stack_frame 1184>0",
		}},
		// A local array is a stack frame without spills.
		{"shared-h200-cuda13.0/ptxas_sm90_spill.txt", result.Fail, []string{"error spilly<512> sm_90 stack_frame 2048>0"}},
		// Failed compiles name the message.
		{"shared-h200-cuda13.0/ptxas_warnspills.txt", result.Fail, []string{
			"error wmma_tile  ptxas-fatal", "error   ptxas-fatal"}},
		{"cuda13-h200/nvcc_syntax_error.txt", result.Fail, []string{"error   compile-error", "error   compile-error"}},
		// -G debug builds spill inside WMMA helper device functions.
		{"shared-h200-cuda13.0/ptxas_debug.txt", result.Fail, []string{
			"error wmma_tile sm_90 stack_frame 152>0",
			"error nvcuda::wmma::fill_fragment<float, 8, 8> sm_90 spill_stores 36>0",
			"error nvcuda::wmma::fill_fragment<float, 8, 8> sm_90 spill_loads 36>0",
			"error nvcuda::wmma::fill_fragment<float, 8, 8> sm_90 stack_frame 40>0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			g := evaluateFile(t, tt.file, Config{}, nil)
			if g.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s; findings %q", g.Verdict, tt.verdict, findings(g, result.Notice))
			}
			if got := findings(g, result.Error); !slices.Equal(got, tt.errors) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.errors)
			}
		})
	}
}

func TestEvaluateMessagesNameLimitSource(t *testing.T) {
	cfg := Config{Kernels: []KernelRule{{Match: "flash_fwd<*>", Limits: Limits{MaxRegisters: i64(128)}, Item: configpos.Item{Line: 7}}}}
	cfg.File = "kernel-gate.yml"
	g := evaluateFile(t, "cuda13-h200/ptxas_kernels_sm90a.txt", cfg, nil)
	var msgs []string
	for _, f := range g.Findings {
		msgs = append(msgs, f.Message)
	}
	want := []string{
		"kg::flash_fwd<64, 64, false> (sm_90a) registers 153 > 128 (limit from kernel-gate.yml:7 (flash_fwd<*>))",
		"kg::flash_fwd<64, 64, true> (sm_90a) registers 154 > 128 (limit from kernel-gate.yml:7 (flash_fwd<*>))",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("messages:\n got %q\nwant %q", msgs, want)
	}
	if g.Findings[0].File != "flash_fwd.cu" {
		t.Errorf("file = %q, want the translation unit flash_fwd.cu", g.Findings[0].File)
	}
}

func TestEvaluateOverridePrecedence(t *testing.T) {
	// Real numbers (ptxas_flash_multi.txt): flash_fwd uses 127/129 registers on sm_80 and
	// sm_89 and 153/154 on sm_90a.
	cfg := Config{
		Limits: Limits{MaxRegisters: i64(64)},
		Arch:   map[string]Limits{"sm_90": {MaxRegisters: i64(100)}}, // covers sm_90a
		Kernels: []KernelRule{
			{Match: "flash_*", Limits: Limits{MaxRegisters: i64(128)}, Item: configpos.Item{Line: 3},
				Arch: map[string]Limits{"sm_90a": {MaxRegisters: i64(168)}}},
			{Match: "*<64, 64, true>", Limits: Limits{MaxRegisters: i64(129)}, Item: configpos.Item{Line: 9}},
		},
	}
	cfg.File = "k.yml"
	g := evaluateFile(t, "cuda13-h200/ptxas_flash_multi.txt", cfg, nil)
	got := findings(g, result.Error)
	// flash<false>: sm_80/89 limit 128 (rule 1) → 127 passes; sm_90a: rule 1's arch 168 → passes.
	// flash<true>: rule 2 (later) sets 129 for every arch → 129 passes on sm_80/89, 154 > 129 fails on sm_90a.
	exp := []string{"error kg::flash_fwd<64, 64, true> sm_90a registers 154>129"}
	if !slices.Equal(got, exp) {
		t.Errorf("errors:\n got %q\nwant %q", got, exp)
	}
}

func TestEvaluateBaseline(t *testing.T) {
	// The baseline is the clean build; head is the spilling build of the same kernels.
	clean := parseBytes(t, readTestdata(t, "cuda13-h200/ptxas_kernels_sm90a.txt"))
	base := NewBaseline("base.json", clean.Kernels)
	cfg := Config{Limits: Limits{MaxRegisterIncrease: i64(4), MaxSpillStores: i64(4096), MaxSpillLoads: i64(4096), MaxStackFrame: i64(4096)}}

	g := evaluateFile(t, "cuda13-h200/ptxas_flash_spill_sm90a.txt", cfg, base)
	if g.Verdict != result.Pass {
		t.Errorf("registers fell (153 → 32) with generous spill limits: want pass, got %q", findings(g, result.Notice))
	}
	if got := g.Table.Rows[0].Cells[2]; got != "32 (-122)" && got != "32 (-121)" {
		t.Errorf("register cell %q should carry the delta against the baseline", got)
	}

	// Head = clean, baseline = a build with fewer registers: the increase is judged.
	fewer := parseBytes(t, readTestdata(t, "cuda13-h200/ptxas_kernels_sm90a.txt"))
	for i := range fewer.Kernels {
		*fewer.Kernels[i].Registers -= 10
	}
	g = evaluateFile(t, "cuda13-h200/ptxas_kernels_sm90a.txt", cfg, NewBaseline("old.json", fewer.Kernels))
	got := findings(g, result.Error)
	want := []string{
		"error kg::flash_fwd<64, 64, false> sm_90a register_increase 10>4 Δ+10",
		"error kg::flash_fwd<64, 64, true> sm_90a register_increase 10>4 Δ+10",
		"error kg::gemm_wmma<64, 64, 32> sm_90a register_increase 10>4 Δ+10",
		"error kg::row_softmax<256> sm_90a register_increase 10>4 Δ+10",
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	for _, f := range g.Findings {
		if f.Baseline == nil || !strings.Contains(f.Message, "→") {
			t.Errorf("finding without baseline: %+v", f)
		}
	}
}

func TestEvaluateBaselineStackFrameAllowance(t *testing.T) {
	// spilly<512> has a 2048-byte stack frame. Without a baseline it fails the default 0;
	// with a baseline that already had it, the baseline's frame is the limit.
	log := parseBytes(t, readTestdata(t, "shared-h200-cuda13.0/ptxas_sm90_spill.txt"))
	g, _ := Evaluate(log, Config{}, NewBaseline("b", log.Kernels))
	if g.Verdict != result.Pass {
		t.Errorf("want pass against a baseline with the same frame, got %q", findings(g, result.Notice))
	}
	grown := parseBytes(t, readTestdata(t, "shared-h200-cuda13.0/ptxas_sm90_spill.txt"))
	*grown.Kernels[0].StackFrame = 4096
	g, _ = Evaluate(grown, Config{}, NewBaseline("b", log.Kernels))
	if got := findings(g, result.Error); !slices.Equal(got, []string{"error spilly<512> sm_90 stack_frame 4096>2048 Δ+2048"}) {
		t.Errorf("errors = %q", got)
	}
}

func TestEvaluateCuobjdumpHasNoSpills(t *testing.T) {
	g := evaluateFile(t, "shared-h200-cuda13.0/cuobjdump_res_spill.txt", Config{}, nil)
	got := findings(g, result.Warning)
	want := []string{
		"error spilly<512> sm_90 stack_frame 2048>0",
		"warning   spill_loads",
		"warning   spill_stores",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n got %q\nwant %q", got, want)
	}
}

func TestEvaluateData(t *testing.T) {
	g := evaluateFile(t, "shared-h200-cuda13.0/ptxas_multi.txt", Config{}, nil)
	var d struct {
		Kernels []map[string]any `json:"kernels"`
	}
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Kernels) != 10 {
		t.Fatalf("%d kernels in data", len(d.Kernels))
	}
	sm89, sm90a := d.Kernels[0], d.Kernels[5]
	if sm89["cmem"].(map[string]any)["0"] != 376.0 || sm89["arch"] != "sm_89" {
		t.Errorf("sm_89 record %v", sm89)
	}
	if _, has := sm90a["cmem"]; has {
		t.Errorf("sm_90a printed no cmem; the field must be absent: %v", sm90a)
	}
	if _, has := sm90a["lmem"]; has {
		t.Errorf("ptxas printed no lmem; the field must be absent, not 0: %v", sm90a)
	}
	if sm90a["registers"] != 22.0 || sm90a["barriers"] != 0.0 || sm90a["demangled"] != "wmma_tile(__half const*, __half const*, float*)" {
		t.Errorf("sm_90a record %v", sm90a)
	}
}

func TestEvaluateTableWorstFirst(t *testing.T) {
	cfg := Config{Kernels: []KernelRule{{Match: "gemm_*", Limits: Limits{MaxRegisters: i64(64)}}}}
	g := evaluateFile(t, "cuda13-h200/build_make_j3.txt", cfg, nil)
	var order []string
	for _, r := range g.Table.Rows {
		order = append(order, string(r.Status)+" "+r.Cells[0]+" "+r.Cells[1]+" "+r.Cells[2])
	}
	want := []string{
		"fail kg::gemm_wmma<64, 64, 32> sm_90a 72",
		"fail kg::gemm_wmma<64, 64, 32> sm_89 70",
		"pass kg::flash_fwd<64, 64, true> sm_90a 154",
		"pass kg::flash_fwd<64, 64, false> sm_90a 153",
		"pass kg::flash_fwd<64, 64, true> sm_89 129",
		"pass kg::flash_fwd<64, 64, false> sm_89 127",
		"pass kg::row_softmax<256> sm_89 39",
		"pass kg::row_softmax<256> sm_90a 32",
	}
	if !slices.Equal(order, want) {
		t.Errorf("rows:\n got %q\nwant %q", order, want)
	}
}
