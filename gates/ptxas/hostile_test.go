package ptxas

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// errorsAt returns "kind@line" of every error diagnostic.
func errorsAt(l *Log) []string {
	var out []string
	for _, d := range l.Diagnostics {
		if d.Severity == "error" {
			out = append(out, fmt.Sprintf("%s@%d", d.Kind, d.InputLn))
		}
	}
	return out
}

// lineOf is the 1-based line of the first occurrence of sub in b.
func lineOf(t *testing.T, b []byte, sub string) int {
	t.Helper()
	i := bytes.Index(b, []byte(sub))
	if i < 0 {
		t.Fatalf("%q not in the capture", sub)
	}
	return bytes.Count(b[:i], []byte("\n")) + 1
}

// A real log cut at any byte, in every dialect: either the parse reports an error, or
// every record it keeps is one of the whole log's, field for field. No cut may leave a
// record with a value the tool did not print (REG:12 of REG:127, 45056 bytes smem cut to
// 4505 or dropped with the rest of its line). One capture per dialect and toolkit keeps
// the test to a few thousand parses.
func TestParseCutAnywhere(t *testing.T) {
	for _, file := range []string{
		"shared-h200-cuda13.0/ptxas_sm90.txt",          // ptxas -v, CUDA 13, no cmem
		"cuda13-h200/ptxas_kernels_sm89.txt",           // cmem banks
		"cuda13-h200/ptxas_dialects_sm80.txt",          // device functions, warnings
		"cuda13-h200/ptxas_flash_spill_sm90a.txt",      // spills
		"shared-h200-cuda13.0/resource_usage_flag.txt", // --resource-usage, cumulative stack
		"seed-l4-cuda12.8/ptxas_f6c41c9.txt",           // CUDA 12.8
		"cuda13-h200/nvlink_rdc.txt",                   // nvlink
		"shared-h200-cuda13.0/cuobjdump_res.txt",       // cuobjdump of a fatbin
		"shared-h200-cuda13.0/cuobjdump_res_spill.txt", // cuobjdump, LOCAL and STACK
		"cuda13-h200/cuobjdump_res_cubin.txt",          // cuobjdump of a cubin
	} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			full := readTestdata(t, file)
			want := records(parseBytes(t, full))
			for cut := range len(full) {
				l := parseBytes(t, full[:cut])
				if len(errorsAt(l)) > 0 {
					continue
				}
				for _, r := range records(l) {
					if !slices.Contains(want, r) {
						t.Fatalf("cut after byte %d (%q...) passes with a record the log does not have:\n %s",
							cut, full[max(0, cut-40):cut], r)
					}
				}
			}
		})
	}
}

// The adversary's cuts: the last line of each dialect cut mid-number or mid-unit, and a
// partial last record, are incomplete-record errors that name the line.
func TestParseCutLastRecord(t *testing.T) {
	tests := []struct {
		name, file, cutAfter string
	}{
		{"cuobjdump REG cut mid-number", "cuda13-h200/cuobjdump_res_flash_multi.txt", "REG:12"},
		{"cuobjdump REG cut before SAMPLER", "shared-h200-cuda13.0/cuobjdump_res.txt", "REG:8 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:540 TEXTURE:0 SURFACE:0"},
		{"cuobjdump REG cut after its key", "shared-h200-cuda13.0/cuobjdump_res.txt", "REG:8 STACK:0 SHARED:"},
		{"cuobjdump Function without REG", "shared-h200-cuda13.0/cuobjdump_res.txt", " Function _Z9oob_writePfi:\n"},
		{"ptxas Used cut mid-number", "shared-h200-cuda13.0/ptxas_sm90.txt", "ptxas info    : Used 12"},
		{"ptxas Used cut mid-unit", "shared-h200-cuda13.0/ptxas_sm90.txt", "ptxas info    : Used 12 registers, used 1 barriers, 512 bytes sm"},
		{"ptxas Used cut after bytes", "shared-h200-cuda13.0/ptxas_sm90.txt", "ptxas info    : Used 12 registers, used 1 barriers, 512 bytes"},
		{"ptxas Used cut at an item boundary", "shared-h200-cuda13.0/ptxas_sm90.txt", "ptxas info    : Used 12 registers, used 1 barriers"},
		{"ptxas Used cut after a comma", "shared-h200-cuda13.0/ptxas_sm90.txt", "ptxas info    : Used 12 registers, used 1 barriers,"},
		{"ptxas stack frame line cut", "shared-h200-cuda13.0/ptxas_sm90_spill.txt", "    2048 bytes stack frame, 0 bytes spill stores, 0 bytes spill"},
		{"ptxas stack frame line cut mid-item", "shared-h200-cuda13.0/ptxas_sm90_spill.txt", "    2048 bytes stack frame, 0 bytes spill stores, 0"},
		{"ptxas device function without its stack frame", "cuda13-h200/ptxas_dialects_sm80.txt", "ptxas info    : Function properties for _Z3fibi\n"},
		{"--resource-usage Used cut", "shared-h200-cuda13.0/resource_usage_flag.txt", "Used 32 registers, used 0 barriers, 2048 bytes cumul"},
		{"nvlink used cut mid-unit", "cuda13-h200/nvlink_rdc.txt", "used 24 registers, used 0 barriers, 0 stack, 0 bytes smem, 536 bytes cmem[0"},
		{"nvlink used cut at an item boundary", "cuda13-h200/nvlink_rdc.txt", "used 24 registers, used 0 barriers, 0 stack, 0 bytes smem"},
		{"nvlink properties without used", "cuda13-h200/nvlink_rdc.txt", "Function properties for '_Z10rdc_kernelPf':\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := readTestdata(t, tt.file)
			i := bytes.Index(full, []byte(tt.cutAfter))
			if i < 0 {
				t.Fatalf("%q not in %s", tt.cutAfter, tt.file)
			}
			in := full[:i+len(tt.cutAfter)]
			l := parseBytes(t, in)
			errs := errorsAt(l)
			ln := bytes.Count(in, []byte("\n")) + 1 // the cut line
			if in[len(in)-1] == '\n' {
				ln-- // cut after a whole line: the record that line opened is the partial one
			}
			if !slices.ContainsFunc(errs, func(e string) bool {
				return strings.HasPrefix(e, "incomplete-record@") || strings.HasPrefix(e, "bad-number@")
			}) {
				t.Fatalf("no incomplete-record error: %q\nrecords %q", errs, records(l))
			}
			g, err := Evaluate(l, Config{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != result.Fail {
				t.Errorf("verdict %s", g.Verdict)
			}
			if !slices.ContainsFunc(g.Findings, func(f result.Finding) bool {
				return f.Severity == result.Error && (strings.Contains(f.Message, fmt.Sprintf("(x:%d)", ln)) || strings.Contains(f.Message, fmt.Sprintf("line %d", ln)))
			}) {
				t.Errorf("no finding names line %d:\n%s", ln, findingMessages(g))
			}
		})
	}
}

func findingMessages(g result.Gate) string {
	var ms []string
	for _, f := range g.Findings {
		ms = append(ms, string(f.Severity)+": "+f.Message)
	}
	return strings.Join(ms, "\n")
}

// Counts that overflow, are negative, carry a thousands separator or are not numbers, in
// every place each dialect prints a count: an error on that line, and no record holds a
// value read from the bad text (1,676 is not 676).
func TestParseBadNumbers(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		forbidden            string // a value no record may hold, in compact form ("" for none)
	}{
		{"ptxas registers overflow", "shared-h200-cuda13.0/ptxas_sm90.txt", "Used 22 registers", "Used 99999999999999999999 registers", ""},
		{"ptxas registers past 2^53", "shared-h200-cuda13.0/ptxas_sm90.txt", "Used 22 registers", "Used 9007199254740993 registers", ""},
		{"ptxas registers negative", "shared-h200-cuda13.0/ptxas_sm90.txt", "Used 22 registers", "Used -22 registers", ""},
		{"ptxas registers separator", "shared-h200-cuda13.0/ptxas_sm90.txt", "Used 22 registers", "Used 1,022 registers", " 22 "},
		{"ptxas registers plus sign", "shared-h200-cuda13.0/ptxas_sm90.txt", "Used 22 registers", "Used +22 registers", ""},
		{"ptxas smem separator", "shared-h200-cuda13.0/ptxas_sm90.txt", "512 bytes smem", "1,512 bytes smem", " 512 "},
		{"ptxas smem sum overflow", "shared-h200-cuda13.0/ptxas_sm90.txt", "512 bytes smem", "9007199254740992+9 bytes smem", ""},
		{"ptxas smem sum half", "shared-h200-cuda13.0/ptxas_sm90.txt", "512 bytes smem", "512+ bytes smem", ""},
		{"ptxas barriers garbage", "shared-h200-cuda13.0/ptxas_sm90.txt", "used 1 barriers", "used 1x barriers", ""},
		{"ptxas stack frame separator", "shared-h200-cuda13.0/ptxas_sm90_spill.txt", "2048 bytes stack frame", "1,676 bytes stack frame", ""},
		{"ptxas spill stores separator", "cuda13-h200/ptxas_flash_spill_sm90a.txt", "    1152 bytes stack frame, 1676 bytes spill stores", "    1152 bytes stack frame, 1,676 bytes spill stores", " 676 "},
		{"ptxas spill loads overflow", "cuda13-h200/ptxas_flash_spill_sm90a.txt", "    1152 bytes stack frame, 1676 bytes spill stores, 1684 bytes spill loads", "    1152 bytes stack frame, 1676 bytes spill stores, 18446744073709551616 bytes spill loads", ""},
		{"ptxas spill loads negative", "cuda13-h200/ptxas_flash_spill_sm90a.txt", "    1152 bytes stack frame, 1676 bytes spill stores, 1684 bytes spill loads", "    1152 bytes stack frame, 1676 bytes spill stores, -1684 bytes spill loads", ""},
		{"ptxas cumulative stack separator", "shared-h200-cuda13.0/ptxas_sm90_spill.txt", "2048 bytes cumulative stack size", "2,048 bytes cumulative stack size", ""},
		{"ptxas cmem bank not a number", "cuda13-h200/ptxas_kernels_sm89.txt", "bytes cmem[0]", "bytes cmem[x]", ""},
		{"ptxas gmem separator", "shared-h200-cuda13.0/ptxas_sm90.txt", "ptxas info    : 0 bytes gmem", "ptxas info    : 4,096 bytes gmem", ""},
		{"ptxas gmem negative", "shared-h200-cuda13.0/ptxas_sm90.txt", "ptxas info    : 0 bytes gmem", "ptxas info    : -1 bytes gmem", ""},
		{"--resource-usage registers separator", "shared-h200-cuda13.0/resource_usage_flag.txt", "Used 32 registers", "Used 2,032 registers", " 32 "},
		{"--resource-usage lmem overflow", "cuda13-h200/ptxas_dialects_resusage_sm90a.txt", "Used 32 registers", "Used 32 registers, 99999999999999999999 bytes lmem", ""},
		{"nvlink registers separator", "cuda13-h200/nvlink_rdc.txt", "used 24 registers", "used 1,024 registers", " 24 "},
		{"nvlink stack negative", "cuda13-h200/nvlink_rdc.txt", "0 stack", "-1 stack", ""},
		{"nvlink cmem overflow", "cuda13-h200/nvlink_rdc.txt", "536 bytes cmem[0]", "99999999999999999999 bytes cmem[0]", ""},
		{"nvlink gmem garbage", "cuda13-h200/nvlink_rdc.txt", "nvlink info    : 0 bytes gmem", "nvlink info    : 0x10 bytes gmem", ""},
		{"cuobjdump REG negative", "shared-h200-cuda13.0/cuobjdump_res.txt", "REG:22 ", "REG:-22 ", ""},
		{"cuobjdump REG overflow", "shared-h200-cuda13.0/cuobjdump_res.txt", "REG:22 ", "REG:99999999999999999999 ", ""},
		{"cuobjdump REG plus sign", "shared-h200-cuda13.0/cuobjdump_res.txt", "REG:22 ", "REG:+22 ", ""},
		{"cuobjdump SHARED separator", "shared-h200-cuda13.0/cuobjdump_res.txt", "SHARED:1536", "SHARED:1,536", ""},
		{"cuobjdump LOCAL empty", "shared-h200-cuda13.0/cuobjdump_res_spill.txt", "LOCAL:0", "LOCAL:", ""},
		{"cuobjdump STACK garbage", "shared-h200-cuda13.0/cuobjdump_res.txt", "REG:22 STACK:0", "REG:22 STACK:0x0", ""},
		{"cuobjdump CONSTANT bank", "shared-h200-cuda13.0/cuobjdump_res.txt", "CONSTANT[0]:552", "CONSTANT[-1]:552", ""},
		{"cuobjdump CONSTANT separator", "shared-h200-cuda13.0/cuobjdump_res.txt", "CONSTANT[0]:552", "CONSTANT[0]:1,552", ""},
		{"cuobjdump GLOBAL negative", "cuda13-h200/cuobjdump_res_cubin.txt", "GLOBAL:0", "GLOBAL:-4096", ""},
		{"cuobjdump field without value", "shared-h200-cuda13.0/cuobjdump_res.txt", "TEXTURE:0", "TEXTURE", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := readTestdata(t, tt.file)
			ln := lineOf(t, orig, tt.old)
			in := bytes.Replace(orig, []byte(tt.old), []byte(tt.new), 1)
			l := parseBytes(t, in)
			errs := errorsAt(l)
			if !slices.Contains(errs, fmt.Sprintf("bad-number@%d", ln)) && !slices.Contains(errs, fmt.Sprintf("incomplete-record@%d", ln)) {
				t.Fatalf("no error at line %d: %q", ln, errs)
			}
			if tt.forbidden != "" {
				// The changed record: the one whose line is the closest before ln.
				for _, k := range l.Kernels {
					if k.Line <= ln && ln-k.Line < 4 && strings.Contains(compact(k), tt.forbidden) {
						t.Errorf("record holds a value read from %q: %s", tt.new, compact(k))
					}
				}
			}
			g, err := Evaluate(l, Config{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != result.Fail || !strings.Contains(findingMessages(g), fmt.Sprintf("(x:%d)", ln)) {
				t.Errorf("verdict %s, want a failure naming x:%d:\n%s", g.Verdict, ln, findingMessages(g))
			}
			for _, k := range l.Kernels {
				for _, v := range []*int64{k.Registers, k.Barriers, k.StackFrame, k.SpillStores, k.SpillLoads, k.CumulativeStack, k.Smem, k.Lmem, k.Gmem} {
					if v != nil && (*v < 0 || *v > maxCount) {
						t.Errorf("record with %d: %s", *v, compact(k))
					}
				}
			}
		})
	}
}

func TestParseCount(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "127": "127", "0127": "127", "9007199254740992": "9007199254740992",
		"9007199254740993": "out of range", "99999999999999999999": "out of range",
		"": "no digits", "-1": "negative", "1,676": "thousands separator", "+1": "not a decimal count",
		"1.5": "not a decimal count", "12x": "not a decimal count", "0x10": "not a decimal count", " 1": "not a decimal count",
	} {
		v, err := parseCount([]byte(in))
		got := fmt.Sprint(v)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, want) {
			t.Errorf("parseCount(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"8+16": "24", "512": "512", "8+": "no digits", "+8": "no digits", "8+-1": "negative", "4503599627370496+4503599627370497": "out of range"} {
		v, err := parseSum([]byte(in))
		got := fmt.Sprint(v)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, want) {
			t.Errorf("parseSum(%q) = %q, want %q", in, got, want)
		}
	}
}

// failedBuildLines are what a build prints when it fails other than by a compiler error:
// the OOM killer, a crashed tool, the linker, the dynamic loader, an uncaught exception.
var failedBuildLines = []struct{ line, kind string }{
	{"Killed", "crashed"},
	{"/bin/sh: line 1: 48213 Killed                  nvcc -O3 -Xptxas -v -c kernels/flash_fwd.cu -o fa.o", "crashed"},
	{"bash: line 1:  4242 Segmentation fault      (core dumped) nvcc -c x.cu", "crashed"},
	{"Segmentation fault (core dumped)", "crashed"},
	{"Segmentation fault", "crashed"},
	{"Aborted (core dumped)", "crashed"},
	{"make: *** [Makefile:12: harness] Killed", "build-failed"},
	{"make[2]: *** [CMakeFiles/h.dir/build.make:76: CMakeFiles/h.dir/harness.cu.o] Segmentation fault (core dumped)", "build-failed"},
	{"make: *** No rule to make target 'kernels/flash_fwd.cu', needed by 'fa.o'.  Stop.", "build-failed"},
	{"collect2: error: ld returned 1 exit status", "link-error"},
	{"/usr/bin/ld: cannot find -lcudart_static: No such file or directory", "link-error"},
	{"/usr/bin/ld: harness.o: in function `main': harness.cu:(.text+0x2a): undefined reference to `kg_launch'", "link-error"},
	{"clang: error: linker command failed with exit code 1 (use -v to see invocation)", "link-error"},
	{"ld returned 1 exit status", "link-error"},
	{"./harness: error while loading shared libraries: libcudart.so.13: cannot open shared object file: No such file or directory", "loader-error"},
	{"terminate called after throwing an instance of 'std::bad_alloc'", "crashed"},
	{"  what():  std::bad_alloc", "crashed"},
	{"c++: fatal error: Killed signal terminated program cc1plus", "build-failed"},
	{"gcc: error: fa.o: No such file or directory", "build-failed"},
	{"virtual memory exhausted: Cannot allocate memory", "crashed"},
	{"cc1plus: out of memory allocating 65536 bytes after a total of 1234567 bytes", "crashed"},
	{"kernels/flash_fwd.cu:120:1: internal compiler error: Segmentation fault", "compile-error"},
	{"CMake Error at CMakeLists.txt:3 (project):", "build-failed"},
}

// A log with valid records followed by a failed build step fails the gate naming the
// line, through the prefixes the parser reads logs through (make, ninja and CI output
// between the lines, GitHub Actions timestamps, BuildKit, ANSI colour, CRLF).
func TestParseFailedBuildAfterRecords(t *testing.T) {
	good := string(readTestdata(t, "shared-h200-cuda13.0/ptxas_sm90.txt"))
	n := strings.Count(good, "\n")
	prefixes := map[string]func(string) string{
		"plain":      func(s string) string { return s },
		"timestamps": func(s string) string { return prefixLines(s, "2026-11-21T05:39:12.1234567Z ") },
		"buildkit":   func(s string) string { return prefixLines(s, "#12 3.456 ") },
		"ansi":       func(s string) string { return "\x1b[1;31m" + strings.TrimSuffix(s, "\n") + "\x1b[0m\n" },
		"crlf":       func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
	}
	for _, fl := range failedBuildLines {
		for pname, pf := range prefixes {
			t.Run(pname+"/"+fl.line, func(t *testing.T) {
				in := pf(good) + pf("[ 90%] Linking CUDA executable harness\n") + pf(fl.line+"\n")
				l := parseBytes(t, []byte(in))
				if len(l.Kernels) != 5 {
					t.Fatalf("%d records, want the log's 5", len(l.Kernels))
				}
				ln := n + 2
				if got := errorsAt(l); !slices.Equal(got, []string{fmt.Sprintf("%s@%d", fl.kind, ln)}) {
					t.Fatalf("errors %q, want %s@%d", got, fl.kind, ln)
				}
				g, err := Evaluate(l, Config{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if g.Verdict != result.Fail {
					t.Errorf("verdict %s", g.Verdict)
				}
				msg := findingMessages(g)
				if d := l.Diagnostics[len(l.Diagnostics)-1]; d.File == "" && !strings.Contains(msg, fmt.Sprintf("(x:%d)", ln)) {
					t.Errorf("no finding names x:%d:\n%s", ln, msg)
				}
			})
		}
	}
}

// Lines that mention the same words without a failure: none is an error.
func TestParseFailureWordsInPassingLogs(t *testing.T) {
	benign := []string{
		"-- Looking for pthread_create in pthreads - not found",
		"[ 50%] Linking CUDA device code CMakeFiles/h.dir/cmake_device_link.o",
		"    catch (const std::bad_alloc&) { return 1; }",
		"Killed processes: 0",
		"Segmentation faults are reported by compute-sanitizer",
		"make[1]: Entering directory '/src/Killed'",
		"// the harness aborts on a CUDA error: Aborted is its exit",
		"ptxas info    : Compile time = 1.332 ms",
		"-- The CUDA compiler identification is NVIDIA 13.0.88 (exception: none)",
	}
	in := strings.Join(benign, "\n") + "\n" + string(readTestdata(t, "shared-h200-cuda13.0/ptxas_sm90.txt"))
	if errs := errorsAt(parseBytes(t, []byte(in))); len(errs) != 0 {
		t.Errorf("errors %q on lines that report no failure", errs)
	}
}

// A real log that ends with a resource line and no line end may have lost items to a cut
// (smem of "..., 45056 bytes smem, 392 bytes cmem[0]"): an error. The same line with its
// line end is whole.
func TestParseLastResourceLineWithoutLineEnd(t *testing.T) {
	nv := readTestdata(t, "cuda13-h200/nvlink_rdc.txt")
	whole := nv[:bytes.Index(nv, []byte("exit=0"))]
	if l := parseBytes(t, whole); len(errorsAt(l)) != 0 || len(l.Kernels) != 1 {
		t.Fatalf("whole: errors %q, %d records", errorsAt(l), len(l.Kernels))
	}
	l := parseBytes(t, bytes.TrimSuffix(whole, []byte("\n")))
	if got := errorsAt(l); !slices.Equal(got, []string{"incomplete-record@4"}) {
		t.Errorf("errors %q, want incomplete-record@4", got)
	}
}
