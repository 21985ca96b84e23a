package sanitizer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// TestPythonHarnessCaptures judges compute-sanitizer's real runs of a PyTorch harness
// (testdata/forms-h200, kernels/forms/capture.sh on an H200): flash_fwd bound as a torch
// extension, clean and with KG_DEFECT_OOB (a write one row past O), with PyTorch's caching
// allocator on and off (PYTORCH_NO_CUDA_MEMORY_CACHING=1), with --log-file and without (a
// harness whose last line has no newline glues the summary behind it), and a Triton
// kernel. A clean harness passes with the blocks PyTorch's allocator still held at exit
// reported, not judged; the out-of-bounds write fails at its source line.
func TestPythonHarnessCaptures(t *testing.T) {
	dir := "forms-h200/"
	tests := []struct {
		name       string
		logs, xmls []string
		harness    string
		status     result.Verdict
		// want are substrings of the findings, one per line: "severity file:line message".
		want []string
	}{
		{name: "memcheck clean, caching allocator", logs: []string{"san-memcheck-clean-cache.log"}, harness: "san-memcheck-clean-cache.json",
			status: result.Pass, want: []string{"notice", "2097152 bytes allocated at c10::cuda::CUDACachingAllocator", "held by PyTorch's allocator"}},
		{name: "memcheck clean, no caching", logs: []string{"san-memcheck-clean-nocache.log"}, harness: "san-memcheck-clean-nocache.json",
			status: result.Pass, want: []string{"notice", "524288 bytes allocated at c10::cuda::CUDACachingAllocator", "held by PyTorch's allocator"}},
		{name: "memcheck clean, no caching, XML", logs: []string{"san-memcheck-clean-nocache-xml.txt"}, xmls: []string{"san-memcheck-clean-nocache-xml.xml"},
			harness: "san-memcheck-clean-nocache-xml.json", status: result.Pass, want: []string{"held by PyTorch's allocator"}},
		{name: "memcheck oob, no caching", logs: []string{"san-memcheck-oob-nocache.log"},
			status: result.Fail, want: []string{"error", "flash_fwd.cu:213", "out-of-bounds"}},
		{name: "memcheck oob, no caching, XML", logs: []string{"san-memcheck-oob-nocache-logxml.log"}, xmls: []string{"san-memcheck-oob-nocache-logxml.xml"},
			status: result.Fail, want: []string{"error", "flash_fwd.cu:213", "out-of-bounds"}},
		{name: "memcheck oob, caching allocator", logs: []string{"san-memcheck-oob-cache.log"},
			status: result.Fail, want: []string{"error", "flash_fwd.cu:213", "out-of-bounds"}},
		{name: "racecheck glued", logs: []string{"glued-racecheck.txt"}, harness: "glued-racecheck.json", status: result.Pass},
		{name: "synccheck glued", logs: []string{"glued-synccheck.txt"}, harness: "glued-synccheck.json", status: result.Pass},
		{name: "initcheck glued", logs: []string{"glued-initcheck.txt"}, harness: "glued-initcheck.json", status: result.Pass},
		{name: "memcheck glued", logs: []string{"glued-memcheck.txt"}, harness: "glued-memcheck.json", status: result.Pass, want: []string{"held by PyTorch's allocator"}},
		{name: "memcheck with --log-file, glued harness", logs: []string{"glued-memcheck-logfile.log"}, harness: "glued-memcheck-logfile.json", status: result.Pass},
		{name: "triton memcheck clean", logs: []string{"san-triton-memcheck-clean.log"}, harness: "san-triton-memcheck-clean.json",
			status: result.Pass, want: []string{"3198976 bytes allocated at c10::cuda::CUDACachingAllocator", "held by PyTorch's allocator"}},
		{name: "triton memcheck oob", logs: []string{"san-triton-memcheck-oob.log"},
			status: result.Fail, want: []string{"error", "out-of-bounds", "row_softmax_triton"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs, xmls, harness []string
			for _, l := range tt.logs {
				logs = append(logs, capturePath(dir+l))
			}
			for _, x := range tt.xmls {
				xmls = append(xmls, capturePath(dir+x))
			}
			if tt.harness != "" {
				harness = append(harness, capturePath(dir+tt.harness))
			}
			g, err := ReadGate(logs, xmls, harness, nil, Config{})
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, f := range g.Findings {
				lines = append(lines, fmt.Sprintf("%s %s:%d %s", f.Severity, f.File, f.Line, f.Message))
			}
			all := strings.Join(lines, "\n")
			if g.Verdict != tt.status {
				t.Errorf("status %s, want %s; findings:\n%s", g.Verdict, tt.status, all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("no finding says %q; findings:\n%s", w, all)
				}
			}
			if tt.status == result.Pass {
				for _, f := range g.Findings {
					if f.Severity == result.Error {
						t.Errorf("a passing run with an error finding: %s", f.Message)
					}
				}
			}
		})
	}
}
