package ptxas

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseBytes(t testing.TB, b []byte) *Log {
	t.Helper()
	var l Log
	if err := l.Parse(bytes.NewReader(b), "x", nil); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return &l
}

func num(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// compact renders every field of a record (see realLogs).
func compact(k Kernel) string {
	entry := "-"
	if k.Entry != nil {
		entry = fmt.Sprint(*k.Entry)
	}
	var banks []string
	for b, v := range sortedBanks(k.Cmem) {
		banks = append(banks, fmt.Sprintf("%s=%d", b, v))
	}
	cmem := strings.Join(banks, ";")
	return strings.Join([]string{k.Name, k.Arch, entry, num(k.Registers), num(k.Barriers), num(k.StackFrame),
		num(k.SpillStores), num(k.SpillLoads), num(k.CumulativeStack), num(k.Smem), or(cmem), num(k.Lmem), num(k.Gmem),
		k.Source, or(k.File)}, " ")
}

func compactDiag(d Diagnostic) string {
	return fmt.Sprintf("%s %s %s %s:%d @%d", d.Severity, d.Kind, or(d.Kernel), or(d.File), d.Line, d.InputLn)
}

func or(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func records(l *Log) []string {
	var out []string
	for _, k := range l.Kernels {
		out = append(out, compact(k))
	}
	return out
}

func diags(l *Log) []string {
	var out []string
	for _, d := range l.Diagnostics {
		out = append(out, compactDiag(d))
	}
	return out
}

func TestParseRealLogs(t *testing.T) {
	for _, tt := range realLogs {
		t.Run(tt.file, func(t *testing.T) {
			l := parseBytes(t, readTestdata(t, tt.file))
			if got := records(l); !slices.Equal(got, tt.records) {
				t.Errorf("records:\n got %q\nwant %q", got, tt.records)
			}
			if got := diags(l); !slices.Equal(got, tt.diags) {
				t.Errorf("diagnostics:\n got %q\nwant %q", got, tt.diags)
			}
			if len(l.Inputs) != 1 || l.Inputs[0].Lines != bytes.Count(readTestdata(t, tt.file), []byte("\n")) {
				t.Errorf("inputs = %+v", l.Inputs)
			}
		})
	}
}

// Real logs pass through CI systems and terminals: the same records must come out of a
// log with CRLF endings, ANSI colour, timestamp prefixes and other build output between
// the lines.
func TestParseTransformedLogs(t *testing.T) {
	ansi := regexp.MustCompile(`(ptxas info|ptxas warning|\d+ registers)`)
	transforms := map[string]func(string) string{
		"crlf": func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		"ansi": func(s string) string { return ansi.ReplaceAllString(s, "\x1b[1;32m$1\x1b[0m") },
		"actions-timestamps": func(s string) string {
			return prefixLines(s, "2026-11-21T05:39:12.1234567Z ")
		},
		"docker-buildkit": func(s string) string { return prefixLines(s, "#12 3.456 ") },
		"interleaved-build-output": func(s string) string {
			var b strings.Builder
			for i, line := range strings.SplitAfter(s, "\n") {
				fmt.Fprintf(&b, "[%3d%%] Building CUDA object CMakeFiles/x.dir/fa.cu.o\nmake[2]: Entering directory '/src'\n", i%100)
				b.WriteString(line)
			}
			return b.String()
		},
		"no-final-newline": func(s string) string { return strings.TrimRight(s, "\n") },
	}
	for _, file := range []string{"shared-h200-cuda13.0/ptxas_multi.txt", "cuda13-h200/ptxas_flash_spill_sm90a.txt",
		"shared-h200-cuda13.0/ptxas_debug.txt", "shared-h200-cuda13.0/cuobjdump_res.txt", "cuda13-h200/nvlink_rdc.txt"} {
		orig := readTestdata(t, file)
		want := records(parseBytes(t, orig))
		if len(want) == 0 {
			t.Fatalf("%s: no records in the original", file)
		}
		for name, tr := range transforms {
			if name == "interleaved-build-output" && strings.Contains(file, "cuobjdump") {
				continue // a cuobjdump listing is not build output
			}
			t.Run(file+"/"+name, func(t *testing.T) {
				l := parseBytes(t, []byte(tr(string(orig))))
				got, exp := records(l), want
				if name == "interleaved-build-output" {
					// The fake cmake lines name a translation unit; compare all but the file.
					got, exp = stripFile(got), stripFile(want)
				}
				if !slices.Equal(got, exp) {
					t.Errorf("got %q\nwant %q", got, exp)
				}
			})
		}
	}
}

func prefixLines(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

func stripFile(recs []string) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r[:strings.LastIndexByte(r, ' ')]
	}
	return out
}

// Older toolkits printed other forms. These lines are reconstructed from NVIDIA's
// documentation and public build logs of CUDA 8-11 (no capture of those toolkits runs here):
// no "used N barriers", several cmem banks, "N+M bytes smem", "bytes lmem", no
// "Compile time", and ptxas errors on a PTX file.
func TestParseOlderDialects(t *testing.T) {
	log := `ptxas info    : 0 bytes gmem, 24 bytes cmem[14]
ptxas info    : Compiling entry function '_Z6kernelPfS_i' for 'sm_52'
ptxas info    : Function properties for _Z6kernelPfS_i
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, 344 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Compiling entry function '_Z3oldPf' for 'sm_30'
ptxas info    : Function properties for _Z3oldPf
    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 63 registers, 16 bytes lmem, 8+16 bytes smem, 1 textures, 320 bytes cmem[0]
ptxas /tmp/tmpxft_00001a2b_00000000-6_k.ptx, line 42; error   : Unknown symbol 'missing'
`
	l := parseBytes(t, []byte(log))
	want := []string{
		"_Z6kernelPfS_i sm_52 true 10 - 0 0 0 - - 0=344;2=8 - 0 ptxas -",
		"_Z3oldPf sm_30 true 63 - 16 8 8 - 24 0=320 16 0 ptxas -",
	}
	if got := records(l); !slices.Equal(got, want) {
		t.Errorf("records:\n got %q\nwant %q", got, want)
	}
	if got := diags(l); !slices.Equal(got, []string{"error ptx-error - /tmp/tmpxft_00001a2b_00000000-6_k.ptx:42 @10"}) {
		t.Errorf("diagnostics = %q", got)
	}
}

func TestParseTruncatedLog(t *testing.T) {
	full := string(readTestdata(t, "shared-h200-cuda13.0/ptxas_sm90.txt"))
	cut := full[:strings.Index(full, "ptxas info    : Used 12 registers, used 1 barriers")]
	l := parseBytes(t, []byte(cut))
	got := diags(l)
	if len(got) != 1 || !strings.HasPrefix(got[0], "error incomplete-record _Z17divergent_barrierPf") {
		t.Fatalf("diagnostics = %q, want one incomplete-record error", got)
	}
	if !strings.Contains(l.Diagnostics[0].Text, "truncated") {
		t.Errorf("message %q should say the log is truncated", l.Diagnostics[0].Text)
	}
}

func TestCheckNoKernels(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"empty", "", "the input is empty"},
		{"blank", "\n\n  \n", "3 blank lines"},
		{"nvcc missing", string(readTestdata(t, "seed-l4-cuda12.8/ptxas_0953f67.txt")), "nvcc: command not found"},
		{"sanitizer log", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", "ERROR SUMMARY"},
		{"sass dump", string(readTestdata(t, "shared-h200-cuda13.0/sass_mma.txt")), "Function : _Z9wmma_tile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := parseBytes(t, []byte(tt.input))
			err := l.Check()
			if !errors.Is(err, ErrNoKernels) {
				t.Fatalf("Check() = %v, want ErrNoKernels", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check() = %q, want it to mention %q", err, tt.want)
			}
		})
	}
	// A failed compile with no records is not "no input": the gate fails and names it.
	for _, f := range []string{"shared-h200-cuda13.0/ptxas_warnspills.txt", "cuda13-h200/nvcc_syntax_error.txt"} {
		if err := parseBytes(t, readTestdata(t, f)).Check(); err != nil {
			t.Errorf("%s: Check() = %v, want nil (the gate reports the failed build)", f, err)
		}
	}
}

func TestParseSeveralInputsDeduplicates(t *testing.T) {
	var l Log
	b := readTestdata(t, "shared-h200-cuda13.0/ptxas_multi.txt")
	for i := range 3 {
		if err := l.Parse(bytes.NewReader(b), fmt.Sprintf("copy%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.Kernels) != 10 || len(l.Inputs) != 3 || l.Inputs[2].Records != 10 {
		t.Errorf("3 copies of a 10-record log: %d kernels, inputs %+v", len(l.Kernels), l.Inputs)
	}
}

// TestCompileErrorColumn: a column is kept only where the compiler printed one.
func TestCompileErrorColumn(t *testing.T) {
	l := parseBytes(t, []byte("fa.cu:12:5: error: use of undeclared identifier 'x'\n"+
		"\x1b[1mfa.cu:13:9: \x1b[31mfatal error: \x1b[0m'y.h' file not found\n"+
		"fa.cu(14): error: identifier \"z\" is undefined\n"+
		"fa.cu:15: error: no column\n"))
	var got []string
	for _, d := range l.Diagnostics {
		f := diagnosticFinding(d)
		got = append(got, fmt.Sprintf("%s:%d:%d %d:%d", d.File, d.Line, d.Column, f.Line, f.Column))
	}
	want := []string{"fa.cu:12:5 12:5", "fa.cu:13:9 13:9", "fa.cu:14:0 14:0", "fa.cu:15:0 15:0"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("positions %q, want %q", got, want)
	}
}

func TestParseLongLine(t *testing.T) {
	long := "ptxas info    : Compiling entry function '_Z" + strings.Repeat("x", 3<<20) + "' for 'sm_90'\n"
	l := parseBytes(t, []byte(long+string(readTestdata(t, "shared-h200-cuda13.0/ptxas_sm90.txt"))))
	if n := len(l.Kernels); n != 6 {
		t.Errorf("got %d records, want the 5 real ones plus the cut one", n)
	}
	if len(l.Kernels[0].Name) > maxLine {
		t.Errorf("a %d-byte name survived the %d-byte line bound", len(l.Kernels[0].Name), maxLine)
	}
}

func TestObserverSeesForeignLines(t *testing.T) {
	var seen []string
	var l Log
	in := "+ nvcc --version\nCuda compilation tools, release 13.0, V13.0.88\n" + string(readTestdata(t, "shared-h200-cuda13.0/ptxas_sm90.txt"))
	if err := l.Parse(strings.NewReader(in), "build.log", func(input string, n int, line string) {
		seen = append(seen, fmt.Sprintf("%s:%d:%s", input, n, line))
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(seen, "build.log:2:Cuda compilation tools, release 13.0, V13.0.88") {
		t.Errorf("observer saw %q", seen)
	}
	for _, s := range seen {
		if strings.Contains(s, "ptxas info") {
			t.Errorf("observer must not see resource lines: %q", s)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, tt := range realLogs {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", tt.file))
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			b = b[:4096]
		}
		f.Add(b)
	}
	f.Add([]byte("ptxas info    : Used 1 registers\n    1 bytes stack frame\nFunction x:\n  REG:x\n"))
	// Hostile inputs: cut records, counts that overflow, are negative or carry a thousands
	// separator, in every dialect; failed build steps after valid records.
	for _, s := range []string{
		"Resource usage:\n Function _Z1kv:\n  REG:12",
		"Resource usage:\n Common:\n  GLOBAL:-1\n Function k:\n  REG:1,676 STACK:-1 SHARED:99999999999999999999 LOCAL:0 CONSTANT[x]:1 TEXTURE:0 SURFACE:0 SAMPLER:\n Function j:\n",
		"ptxas info    : 4,096 bytes gmem\nptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Function properties for k\n    1,676 bytes stack frame, -1 bytes spill stores, 0 bytes spill lo\nptxas info    : Used 99999999999999999999 registers, 8+ bytes smem, 1 bytes cmem[",
		"ptxas info    : Function properties for f\nptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used 127 registers, used 1 barriers, 45056 bytes sm",
		"nvlink info    : Function properties for 'k':\nnvlink info    : used 2,400 registers, -1 stack, 536 bytes cmem[0]",
	} {
		f.Add([]byte(s))
	}
	for _, fl := range failedBuildLines {
		f.Add([]byte("ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used 8 registers\n" + fl.line + "\n"))
	}
	// Failures printed into another line.
	for _, g := range gluedTexts {
		f.Add([]byte("ptxas info    : Compiling entry function 'k' for 'sm_89'\nptxas info    : Function properties for k\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 8 registers, 376 bytes cmem[0]" + g.text + "\n"))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var l Log
		if err := l.Parse(bytes.NewReader(in), "fuzz", nil); err != nil {
			t.Fatalf("Parse of an in-memory input cannot fail: %v", err)
		}
		err := l.Check()
		if len(l.Kernels) > 0 && err != nil {
			t.Fatalf("records found but Check() = %v", err)
		}
		if err != nil && !errors.Is(err, ErrNoKernels) {
			t.Fatalf("Check() = %v, want ErrNoKernels or nil", err)
		}
		for _, k := range l.Kernels {
			for _, v := range []*int64{k.Registers, k.StackFrame, k.SpillStores, k.SpillLoads, k.Smem, k.Lmem} {
				if v != nil && (*v < 0 || *v > maxCount) {
					t.Fatalf("value out of range in %+v", k)
				}
			}
		}
		if _, err := Evaluate(&l, Config{}, nil); err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
	})
}

// A device function that ptxas prints before a run's first "Compiling entry function ...
// for 'sm_XX'" line (a __noinline__ function defined before the kernels) belongs to that
// run's arch, not to none (the first run) nor to the run before (the next ones). The real
// multi-arch log with such a record (its form as ptxas_dialects_sm80.txt prints _Z3fibi)
// after each run's gmem line.
func TestParseDeviceFunctionBeforeTheFirstEntry(t *testing.T) {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(readTestdata(t, "cuda13-h200/ptxas_flash_multi.txt")), "\n") {
		b.WriteString(l)
		if strings.Contains(l, "bytes gmem") {
			b.WriteString("ptxas info    : Function properties for _Z3fibi\n    24 bytes stack frame, 20 bytes spill stores, 20 bytes spill loads\n")
		}
	}
	l := parseBytes(t, []byte(b.String()))
	var got []string
	for _, k := range l.Kernels {
		if k.Name == "_Z3fibi" {
			got = append(got, k.Arch+" "+compact(k))
		}
	}
	want := []string{
		"sm_80 _Z3fibi sm_80 false - - 24 20 20 - - - - 0 ptxas flash_fwd.cu",
		"sm_89 _Z3fibi sm_89 false - - 24 20 20 - - - - 0 ptxas flash_fwd.cu",
		"sm_90a _Z3fibi sm_90a false - - 24 20 20 - - - - 0 ptxas flash_fwd.cu",
	}
	if !slices.Equal(got, want) {
		t.Errorf("device function records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(l.Kernels) != 6+3 || len(l.Diagnostics) != 0 {
		t.Errorf("%d records, diagnostics %q", len(l.Kernels), diags(l))
	}
}

// Real ptxas output (testdata/cuda13-h200, capture-issue21.sh): a __noinline__ device
// function of three archs gets each run's arch; ptxas's limit warnings ("Too big
// maxrregcount value specified 300", "adjusting per thread register count of 8 to lower
// bound of 24") name no kernel, so none of their numbers becomes one.
func TestParseIssue21Captures(t *testing.T) {
	l := parseBytes(t, readTestdata(t, "cuda13-h200/ptxas_devfirst_multi.txt"))
	var fib []string
	for _, k := range l.Kernels {
		if k.Name == "_Z3fibi" {
			fib = append(fib, k.Arch)
		}
	}
	if !slices.Equal(fib, []string{"sm_80", "sm_89", "sm_90a"}) {
		t.Errorf("_Z3fibi archs %q", fib)
	}
	for _, file := range []string{"cuda13-h200/ptxas_limits_sm90a.txt", "cuda13-h200/ptxas_maxrreg300_sm90a.txt", "cuda13-h200/ptxas_maxrreg8_sm80.txt"} {
		l := parseBytes(t, readTestdata(t, file))
		for _, k := range l.Kernels {
			if k.Name != "_Z8few_regsPd" && k.Name != "_Z12many_threadsPf" {
				t.Errorf("%s: a record named %q", file, k.Name)
			}
		}
		for _, d := range l.Diagnostics {
			if d.Kernel != "" && d.Kernel != "_Z8few_regsPd" && d.Kernel != "_Z12many_threadsPf" {
				t.Errorf("%s: diagnostic of kernel %q: %s", file, d.Kernel, d.Text)
			}
		}
		if len(l.Kernels) != 2 {
			t.Errorf("%s: %d records", file, len(l.Kernels))
		}
	}
}

// ptxas's fatal messages quote values, not only functions. Real lines, as XLA's tests keep
// them (openxla/xla, xla/stream_executor/cuda/ptx_compiler_helpers_test.cc): the register
// count '64' and the option value 'sm_80' must never become a kernel; the spill warning's
// function does.
func TestParseQuotedValuesAreNoKernel(t *testing.T) {
	for _, tt := range []struct{ line, kernel string }{
		{"ptxas fatal   : (C7600) Register allocation failed with register count of '64'. Compile the program with a higher register target", ""},
		{"ptxas fatal   : Value 'sm_80' is not defined for option 'gpu-name'", ""},
		{"ptxas warning : Registers are spilled to local memory in function '__kernel', 18 bytes spill stores, 8 bytes spill loads", "__kernel"},
		{"ptxas error   : Entry function '_Z3bigPf' uses too much shared data (0x10000 bytes, 0xc000 max)", "_Z3bigPf"},
	} {
		var l Log
		_ = l.Parse(strings.NewReader(tt.line+"\n"), "x", nil)
		if len(l.Diagnostics) != 1 || l.Diagnostics[0].Kernel != tt.kernel {
			t.Errorf("%s: diagnostics %q", tt.line, diags(&l))
		}
	}
}
