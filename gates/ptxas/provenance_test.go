package ptxas

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A finding on a cuobjdump record says so, and a spill figure counted in the SASS says how
// it was counted; a ptxas record's finding says neither.
func TestFindingsSayWhereTheirFigureCameFrom(t *testing.T) {
	log := parseBytes(t, readTestdata(t, "shared-h200-cuda13.0/cuobjdump_res.txt"))
	for i := range log.Kernels {
		if log.Kernels[i].Source != SourceCuobjdump {
			t.Fatalf("record %+v is not cuobjdump's", log.Kernels[i])
		}
		if strings.Contains(log.Kernels[i].Name, "wmma_tile") {
			log.Kernels[i].SpillStores, log.Kernels[i].SpillLoads, log.Kernels[i].SpillsFrom = i64(16), i64(0), SpillsFromSASS
		}
	}
	g, err := Evaluate(log, Config{Limits: Limits{MaxRegisters: i64(11)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var spill, regs string
	for _, f := range g.Findings {
		if f.Severity != result.Error {
			continue
		}
		switch {
		case f.Metric == MetricSpillStores && strings.HasPrefix(f.Kernel, "wmma_tile"):
			spill = f.Message
		case f.Metric == MetricRegisters && strings.HasPrefix(f.Kernel, "wmma_tile"):
			regs = f.Message
		}
	}
	if !strings.Contains(spill, "spill stores (bytes) 16 > 0") || !strings.Contains(spill, "bytes of its STL/LDL instructions in the SASS") {
		t.Errorf("spill finding: %q", spill)
	}
	if !strings.Contains(regs, "from cuobjdump --dump-resource-usage of ") || strings.Contains(regs, "STL/LDL") {
		t.Errorf("registers finding: %q", regs)
	}
	// Only the records without a figure are left unchecked.
	unchecked := fmt.Sprintf("max_spill_stores is set but %d record(s) do not report spill stores", len(log.Kernels)-1)
	found := false
	for _, f := range g.Findings {
		found = found || f.Severity == result.Warning && strings.HasPrefix(f.Message, unchecked)
	}
	if !found {
		t.Errorf("no warning %q", unchecked)
	}
	ptx := evaluateFile(t, "shared-h200-cuda13.0/ptxas_sm90_spill.txt", Config{}, nil)
	for _, f := range ptx.Findings {
		if strings.Contains(f.Message, "cuobjdump") || strings.Contains(f.Message, "SASS") {
			t.Errorf("a ptxas finding: %q", f.Message)
		}
	}
}

// The module line of cuobjdump's listing may hold the module's constant banks beside GLOBAL
// (a PyTorch extension's "GLOBAL:28 CONSTANT[4]:224"): GLOBAL is every kernel's gmem, a
// count that does not parse is an error, an unknown field a notice.
func TestCuobjdumpModuleLine(t *testing.T) {
	listing := func(common string) string {
		return "Fatbin elf code:\n================\narch = sm_90a\n\nResource usage:\n Common:\n  " + common +
			"\n Function k:\n  REG:8 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:352 TEXTURE:0 SURFACE:0 SAMPLER:0\n"
	}
	for _, tc := range []struct {
		common, gmem, diag string
	}{
		{"GLOBAL:28 CONSTANT[4]:224", "28", ""},
		{"GLOBAL:0", "0", ""},
		{"GLOBAL:28 CONSTANT[4]:2x4", "28", "error bad-number"},
		{"GLOBAL:28 CONSTANT[4]", "28", "error incomplete-record"},
		{"GLOBAL:28 TEXTURES:3", "28", "notice unknown-item"},
	} {
		l := parseBytes(t, []byte(listing(tc.common)))
		if len(l.Kernels) != 1 || l.Kernels[0].Gmem == nil || fmt.Sprint(*l.Kernels[0].Gmem) != tc.gmem {
			t.Errorf("%q: records %+v", tc.common, l.Kernels)
		}
		var diags []string
		for _, d := range l.Diagnostics {
			diags = append(diags, d.Severity+" "+d.Kind)
		}
		if got := strings.Join(diags, ", "); got != tc.diag {
			t.Errorf("%q: diagnostics %q, want %q", tc.common, got, tc.diag)
		}
	}
}
