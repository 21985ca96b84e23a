package sanitizer

import (
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// hgemmRace is the live capture (H100, compute-sanitizer 2025.3, CUDA 13.0) of
// Bruce-Lee-LY/cuda_hgemm's mmaAsyncStage3Kernel with a planted missing __syncthreads():
// racecheck printed 16 analysis reports, all a read at mma_async_stage3.cu:519, each
// naming one store line (:509 or :510) 16 times, once per store instruction.
const hgemmRace = "external/Bruce-Lee-LY-cuda_hgemm/recorded/hgemm-race/hgemm-cmake/sanitize/racecheck"

// TestRaceReportsFolded: one finding per (hazard kind, kernel, read location), the other
// side's lines each once with their hazards summed (16 reports × 8,064 = 129,024 hazards,
// half against each store line).
func TestRaceReportsFolded(t *testing.T) {
	const want = "  race-war error x16 h129024 %s - %s | Read access at mma_async_stage3.cu:519 and Write access at mma_async_stage3.cu:509 [64512 hazards], :510 [64512 hazards]"
	var runs [2]Run
	for i, ext := range []string{".log", ".xml"} {
		got, err := parseCapture(t, hgemmRace+ext, ToolRacecheck, readCapture(t, hgemmRace+ext))
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %v, %d runs", ext, err, len(got))
		}
		runs[i] = got[0]
		if err := consistent(got[0]); err != nil {
			t.Error(err)
		}
	}
	if err := matchLines(render(runs[0])[1:], []string{strings.Replace(strings.Replace(want, "%s", "mma_async_stage3.cu:519", 1), "%s", "_Z20mmaAsyncStage3KernelPK6__halfS1_PS_mmm", 1)}); err != nil {
		t.Errorf("text: %v", err)
	}
	if err := matchLines(render(runs[1])[1:], []string{strings.Replace(strings.Replace(want, "%s", "/tmp/tmp.BrYwm8WBgz/Bruce-Lee-LY-cuda_hgemm/src/src/mma/mma_async_stage3.cu:519", 1), "%s", "mmaAsyncStage3Kernel", 1)}); err != nil {
		t.Errorf("XML: %v", err)
	}
	g, err := Evaluate([]Run{Combine(runs[1], runs[0])}, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var errs []result.Finding
	for _, f := range g.Findings {
		if f.Severity == result.Error {
			errs = append(errs, f)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("%d error findings, want 1: %v", len(errs), errs)
	}
	f := errs[0]
	if f.Line != 519 || f.Kernel != "mmaAsyncStage3Kernel" || *f.Value != 16 ||
		!strings.Contains(f.Message, "race-war between Read access at mma_async_stage3.cu:519 and Write access at mma_async_stage3.cu:509 [64512 hazards], :510 [64512 hazards] in mmaAsyncStage3Kernel(") ||
		!strings.HasSuffix(f.Message, "; 129024 hazards in 16 reports") {
		t.Errorf("finding %s:%d %q value %v: %s", f.File, f.Line, f.Kernel, *f.Value, f.Message)
	}
}
