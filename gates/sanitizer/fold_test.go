package sanitizer

import (
	"fmt"
	"slices"
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

// TestFaultThenBrokenContext: the KG_DEFECT_OOB capture (H200, CUDA 13.0): flash_fwd's
// out-of-bounds write ends its launch, then cudaDeviceSynchronize, 4 cudaFree and
// cudaPeekAtLastError fail with cudaErrorLaunchFailure and the 4 buffers leak. The fault
// is the error; the 6 API errors and 4 leaks are one line under it. Read from the text
// alone and from the XML with its text, the same.
func TestFaultThenBrokenContext(t *testing.T) {
	text := "sanitizer-kernels-h200/cs_memcheck_oob.txt"
	tr, err := parseCapture(t, text, ToolMemcheck, readCapture(t, text))
	if err != nil || len(tr) != 1 {
		t.Fatalf("%v, %d runs", err, len(tr))
	}
	xmlText, xmlFile := "sanitizer-kernels-h200/xmlrun_memcheck_oob.txt", "sanitizer-kernels-h200/xml_memcheck_oob.xml"
	xt, err1 := parseCapture(t, xmlText, ToolMemcheck, readCapture(t, xmlText))
	xr, err2 := parseCapture(t, xmlFile, ToolMemcheck, readCapture(t, xmlFile))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for name, run := range map[string]Run{"text": tr[0], "xml": Combine(xr[0], xt[0])} {
		g, err := Evaluate([]Run{run}, map[string]int{"*": 1}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range g.Findings {
			if f.Metric == "memcheck/run" {
				continue // the target's exit 1, a problem of its own
			}
			got = append(got, fmt.Sprintf("%s %s %v", f.Severity, f.Metric, *f.Value))
		}
		want := []string{"error memcheck/out-of-bounds 2", "error memcheck/after-fault 10"}
		if !slices.Equal(got, want) {
			t.Errorf("%s: findings %q, want %q", name, got, want)
		}
		for _, f := range g.Findings {
			if f.Metric == "memcheck/after-fault" && !strings.Contains(f.Message, ": and 6 API errors and 4 leaks after it: the CUDA context was broken") {
				t.Errorf("%s: %s", name, f.Message)
			}
		}
		sites := 0
		for _, row := range g.Table.Rows {
			if row.Cells[1] != "problem" {
				sites++
			}
		}
		if sites != len(run.Records) {
			t.Errorf("%s: %d table rows, want one per site (%d)", name, sites, len(run.Records))
		}
	}
}
