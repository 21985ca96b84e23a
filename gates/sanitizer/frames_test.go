package sanitizer

import (
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// TestNamesKeptWhole: host frame and kernel names are cut only at their parameter list,
// never at a space or parenthesis inside a C++ name, and a location without an offset
// keeps its file and line.
func TestNamesKeptWhole(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		// "at cp_async_bulk_cp_mask in cp_async_bulk.h:236": no +0x offset.
		{"public/cccl-8288-memcheck.txt", "  out-of-bounds error x1 cp_async_bulk.h:236 (128,0,0)/(0,0,0) cp_async_bulk_cp_mask | __shared__ read of size 16 bytes"},
		// "Host Frame:main in src/catch2/internal/catch_main.cpp:36 [0x11e0]".
		{"public/cucollections-539-frames.txt", "  leak error x1 - - - | 1024 bytes allocated at main+0x11e0"},
	} {
		runs, err := parseCapture(t, tc.file, ToolMemcheck, readCapture(t, tc.file))
		if err != nil || len(runs) != 1 {
			t.Fatalf("%s: %v, %d runs", tc.file, err, len(runs))
		}
		if err := matchLines(render(runs[0])[1:], []string{tc.want}); err != nil {
			t.Errorf("%s: %v", tc.file, err)
		}
	}
	// A lambda's call operator as the host compiler demangles it (c++filt prints the same
	// for _ZZ4mainENKUliE_clEi): a kernel or frame of that name is not "const".
	lambda := kernelname.Parse("_ZZ4mainENKUliE_clEi").Demangled
	if lambda != "main::{lambda(int)#1}::operator()(int) const" {
		t.Fatalf("demangled %q", lambda)
	}
	for _, tc := range []struct{ got, want string }{
		{displayName(lambda), "main::{lambda(int)#1}::operator()"},
		{frameName(lambda), "main::{lambda(int)#1}::operator()"},
		{displayName("void k<main::{unnamed type#1}>(float *)"), "k<main::{unnamed type#1}>"},
		{displayName("void kg::k<(int)64>(float *) const &"), "kg::k<(int)64>"},
		{bareName(lambda), "operator()"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	k, f, l := parseLoc(lambda + "+0xf7c2 in k.cu:5")
	if k != lambda || f != "k.cu" || l != "5" {
		t.Errorf("parseLoc: %q %q %q", k, f, l)
	}
}

// TestWrappedSummary: a summary line that a terminal wrapped onto two lines (the rest on
// a "=========" line of its own, as compute-sanitizer's wrapped records show, or pasted
// bare, cut at a blank or inside a word) reads with its count: the real captures parse as
// they do unwrapped.
func TestWrappedSummary(t *testing.T) {
	for _, tc := range []struct{ file, line string }{
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "========= RACECHECK SUMMARY: "},
		{"sanitizer-kernels-h200/cs_memcheck_oob.txt", "========= ERROR SUMMARY: "},
		{"sanitizer-kernels-h200/cs_memcheck_oob.txt", "========= LEAK SUMMARY: "},
	} {
		data := string(readCapture(t, tc.file))
		want, err := parseCapture(t, tc.file, "", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		start := strings.Index(data, tc.line)
		end := start + strings.IndexByte(data[start:], '\n')
		line := data[start:end]
		for _, cut := range []int{strings.LastIndexByte(line, ' '), strings.LastIndexByte(line, ' ') + 3, len(tc.line) + 1} {
			for _, cont := range []string{"\n=========   ", "\n"} {
				wrapped := data[:start] + line[:cut] + cont + strings.TrimLeft(line[cut:], " ") + data[end:]
				got, err := parseCapture(t, tc.file, "", []byte(wrapped))
				if err != nil {
					t.Fatal(err)
				}
				if err := matchLines(renderAll(got), renderAll(want)); err != nil {
					t.Errorf("%s wrapped as %q + %q: %v", tc.file, line[:cut], strings.TrimLeft(line[cut:], " "), err)
				}
			}
		}
	}
	// Not the rest of it: still a summary kernel-gate cannot read.
	runs, err := ParseText(strings.NewReader("========= ERROR SUMMARY: 3\nprogram output\n"), "cut.log")
	if err != nil || len(runs) != 1 || !strings.Contains(strings.Join(runs[0].Problems, "; "), `a summary line kernel-gate cannot read: "ERROR SUMMARY: 3" (line 1)`) {
		t.Errorf("%v %+v", err, runs)
	}
}

// TestLibraryHandleLeak: memory that cublasCreate allocated and no cublasDestroy freed
// (llama.cpp #5576) names cuBLAS, the call that created it and the program's frame that
// called it, and says what frees it; the frames inside libcublas.so are not the site.
func TestLibraryHandleLeak(t *testing.T) {
	const file = "public/llama.cpp-5576-cublas-leak.txt"
	runs, err := parseCapture(t, file, ToolMemcheck, readCapture(t, file))
	if err != nil || len(runs) != 1 {
		t.Fatalf("%v, %d runs", err, len(runs))
	}
	if err := matchLines(render(runs[0])[1:], []string{"  leak error x1 - - - | 8388608 bytes allocated by cuBLAS (cublasCreate_v2) at ggml_init_cublas.part.0+0x199ee2"}); err != nil {
		t.Error(err)
	}
	if l := runs[0].Records[0].Library; l != "cuBLAS" {
		t.Errorf("library %q", l)
	}
	g, err := Evaluate(runs, map[string]int{"*": 1}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	const want = "memcheck: leak: 8388608 bytes allocated by cuBLAS (cublasCreate_v2) at ggml_init_cublas.part.0+0x199ee2, never freed (cuBLAS's memory for a handle or plan the program created: call cublasDestroy on it before the process ends); once"
	if len(g.Findings) != 1 || g.Findings[0].Message != want {
		t.Errorf("findings %+v, want one: %s", g.Findings, want)
	}
	for _, tc := range []struct{ fn, module, want string }{
		{"cudnnCreate", "", "cudnnDestroy"},
		{"", "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9", "cudnnDestroy"},
		{"cufftPlan1d", "", "cufftDestroy"},
		{"", "/usr/local/cuda/lib64/libcufft.so.11", "cufftDestroy"},
		{"", "/usr/local/cuda/lib64/libcublasLt.so.12", "cublasLtDestroy"},
	} {
		if l := libraryOf(tc.fn, tc.module); l == nil || l.Free != tc.want {
			t.Errorf("%q %q: %+v, want %s", tc.fn, tc.module, l, tc.want)
		}
	}
	if l := libraryOf("cudaMalloc", "/usr/local/cuda/lib64/libcudart.so.13"); l != nil {
		t.Errorf("the runtime is %+v", l)
	}
}
