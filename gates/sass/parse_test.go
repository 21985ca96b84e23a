package sass

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func testdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func mustParse(t testing.TB, raw []byte, opts ParseOptions) *Dump {
	t.Helper()
	d, err := Parse(bytes.NewReader(raw), opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return d
}

func mustPattern(t testing.TB, s string) Pattern {
	t.Helper()
	p, err := CompilePattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantFunc is what a test asserts about one function. entry is "yes", "no" or "?"
// (unknown); instructions and hmma are skipped when -1.
type wantFunc struct {
	short, arch, entry string
	instructions, hmma int
}

// realDumps lists every SASS capture with what is true of it. Counts were taken with awk
// over the files themselves (commands in the comments), not with this parser.
var realDumps = []struct {
	file   string
	format Format
	funcs  []wantFunc
}{
	{
		// awk '/code for/{a=$3} /^ *\/\*[0-9a-f]+\*\/ /{n[a]++} /HMMA/{h[a]++}
		//      END{for(k in n)print k,n[k],h[k]}' cuobjdump_sass_gemm_multi.txt
		// (encoding-only lines start with "/* 0x", so the address pattern skips them)
		file:   "cuda13-h200/cuobjdump_sass_gemm_multi.txt",
		format: FormatCuobjdump,
		funcs: []wantFunc{
			{"kg::gemm_wmma<64, 64, 32>", "sm_80", "?", 440, 16},
			{"kg::gemm_wmma<64, 64, 32>", "sm_89", "?", 456, 16},
			{"kg::gemm_wmma<64, 64, 32>", "sm_90a", "?", 472, 16},
		},
	},
	{
		// grep -cE '^\s*/\*[0-9a-f]{4}\*/ ' cuobjdump_sass_cubin_softmax.txt -> 672
		// (the last one is /*29f0*/: 0x29f0/16+1 = 672)
		file:   "cuda13-h200/cuobjdump_sass_cubin_softmax.txt",
		format: FormatCuobjdump,
		funcs:  []wantFunc{{"kg::row_softmax<256>", "sm_90a", "?", 672, 0}},
	},
	{
		// awk '/Function :/{f=$3} /^ *\/\*[0-9a-f]+\*\/ /{n[f]++} END{for(k in n)print k,n[k]}'
		file:   "cuda13-h200/cuobjdump_sass_dialects.txt",
		format: FormatCuobjdump,
		funcs: []wantFunc{
			{"kg::flagged<3>", "sm_90a", "?", 24, 0},
			{"kg::reduce_vec<float, 4, kg::detail::Plus>", "sm_90a", "?", 32, 0},
			{"uses_const", "sm_90a", "?", 32, 0},
			{"lmem_kernel", "sm_90a", "?", 344, 0},
			{"recursive_kernel", "sm_90a", "?", 56, 0},
			{"calls_noinline", "sm_90a", "?", 104, 0},
			{"plain_c_kernel", "sm_90a", "?", 24, 0},
		},
	},
	{
		// awk '/\.section/{t=($2 ~ /^\.text\./)} t && /^ *\/\*[0-9a-f]+\*\/ +[^ .\/]/{n++}
		//      END{print n}' nvdisasm_softmax_sm90a.txt -> 672
		file:   "cuda13-h200/nvdisasm_softmax_sm90a.txt",
		format: FormatNvdisasm,
		funcs:  []wantFunc{{"kg::row_softmax<256>", "sm_90a", "yes", 672, 0}},
	},
	{
		// awk '/\.section/{t=($2 ~ /^\.text\./); f=$2} t && /^ *\/\*[0-9a-f]+\*\/ +[^ .\/]/{n[f]++}
		//      /HMMA/{h[f]++} END{for(k in n)print k,n[k],h[k]}' nvdisasm_g_flash_sm90a.txt
		file:   "cuda13-h200/nvdisasm_g_flash_sm90a.txt",
		format: FormatNvdisasm,
		funcs: []wantFunc{
			{"kg::flash_fwd<64, 64, false>", "sm_90a", "yes", 1760, 64},
			{"kg::flash_fwd<64, 64, true>", "sm_90a", "yes", 1792, 64},
		},
	},
	{
		// grep -n 'Function\|HMMA': 5 Function lines, 2 HMMA lines (in wmma_tile), no
		// "code for" line, so no arch.
		file:   "shared-h200-cuda13.0/sass_mma.txt",
		format: FormatCuobjdump,
		funcs: []wantFunc{
			{"wmma_tile", "", "?", 2, 2},
			{"divergent_barrier", "", "?", 0, 0},
			{"uninit_read", "", "?", 0, 0},
			{"smem_race", "", "?", 0, 0},
			{"oob_write", "", "?", 0, 0},
		},
	},
	{
		// CUDA 12.8 on an L4, filtered to Function and HMMA lines: the two HMMA are in
		// the WMMA header's mma_sync, a device function of its own in this (-G) build.
		file:   "seed-l4-cuda12.8/wmma_proof_0953f67.txt",
		format: FormatCuobjdump,
		funcs: []wantFunc{
			{"qk_row_wmma<KernelTraits<32, 64, 64, 4, 2, true, true> >", "", "?", 0, 0},
			{"qk_row_wmma<KernelTraits<32, 32, 64, 4, 2, true, true> >", "", "?", 0, 0},
			{"qk_row_wmma<KernelTraits<48, 64, 64, 8, 2, true, true> >", "", "?", 0, 0},
			{"qk_row_wmma<KernelTraits<32, 64, 64, 4, 1, true, true> >", "", "?", 0, 0},
			{"qk_row_wmma<KernelTraits<16, 64, 64, 4, 2, true, true> >", "", "?", 0, 0},
			{"nvcuda::wmma::fill_fragment<float, 8, 8>", "", "no", 0, 0},
			{"nvcuda::wmma::load_matrix_sync", "", "no", 0, 0},
			{"nvcuda::wmma::load_matrix_sync", "", "no", 0, 0},
			{"nvcuda::wmma::mma_sync", "", "no", 2, 2},
			{"nvcuda::wmma::store_matrix_sync", "", "no", 0, 0},
			{"nvcuda::wmma::__get_storage_value<float, float, float>", "", "no", 0, 0},
		},
	},
}

func entryString(f Function) string {
	switch {
	case !f.EntryKnown:
		return "?"
	case f.Entry:
		return "yes"
	}
	return "no"
}

func TestParseRealDumps(t *testing.T) {
	hmma := mustPattern(t, "HMMA")
	for _, tt := range realDumps {
		t.Run(tt.file, func(t *testing.T) {
			d := mustParse(t, readFile(t, testdata(tt.file)), ParseOptions{})
			if d.Format != tt.format {
				t.Errorf("format %q, want %q", d.Format, tt.format)
			}
			if len(d.Functions) != len(tt.funcs) {
				for _, f := range d.Functions {
					t.Logf("got %s %s %d", f.Name.Short, f.Arch, f.Instructions)
				}
				t.Fatalf("%d functions, want %d", len(d.Functions), len(tt.funcs))
			}
			for i, w := range tt.funcs {
				f := d.Functions[i]
				got := wantFunc{f.Name.Short, f.Arch, entryString(f), f.Instructions, f.Count(hmma)}
				if got != w {
					t.Errorf("function %d:\n got %+v\nwant %+v", i, got, w)
				}
				sum := 0
				for op, n := range f.Opcodes {
					sum += n
					if !validOpcode([]byte(op)) {
						t.Errorf("%s: opcode %q is not an opcode", f.Name.Short, op)
					}
				}
				if sum != f.Instructions {
					t.Errorf("%s: opcodes sum to %d, instructions %d", f.Name.Short, sum, f.Instructions)
				}
			}
		})
	}
}

// The extern "C" kernel keeps its plain name in every form, so a glob finds it.
func TestParseExternC(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_dialects.txt")), ParseOptions{})
	last := d.Functions[len(d.Functions)-1]
	if n := last.Name; n.Mangled != "plain_c_kernel" || n.Short != "plain_c_kernel" || n.Base != "plain_c_kernel" {
		t.Errorf("extern C name %+v", n)
	}
}

// Modifiers are kept: the gemm uses HMMA.16816.F32 only, 16 per arch.
func TestParseOpcodeModifiers(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt")), ParseOptions{})
	for _, f := range d.Functions {
		if f.Opcodes["HMMA.16816.F32"] != 16 {
			t.Errorf("%s: HMMA.16816.F32 x%d, want 16 (opcodes %v)", f.Arch, f.Opcodes["HMMA.16816.F32"], f.Opcodes)
		}
		if f.Opcodes["EXIT"] == 0 || f.Opcodes["NOP"] == 0 {
			t.Errorf("%s: EXIT and the NOP padding are instructions: %v", f.Arch, f.Opcodes)
		}
	}
	// softmax: grep -c 'LDG.E.CONSTANT' cuobjdump_sass_cubin_softmax.txt -> 63
	s := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_cubin_softmax.txt")), ParseOptions{})
	if n := s.Functions[0].Opcodes["LDG.E.CONSTANT"]; n != 63 {
		t.Errorf("LDG.E.CONSTANT x%d, want 63", n)
	}
}

// cuobjdump -sass and nvdisasm of the same cubin (softmax, sm_90a) agree on the function,
// its arch, its instruction count and every opcode count. nvdisasm also knows it is an
// entry point; cuobjdump does not say.
func TestCuobjdumpAndNvdisasmAgree(t *testing.T) {
	c := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_cubin_softmax.txt")), ParseOptions{})
	n := mustParse(t, readFile(t, testdata("cuda13-h200/nvdisasm_softmax_sm90a.txt")), ParseOptions{})
	if len(c.Functions) != 1 || len(n.Functions) != 1 {
		t.Fatalf("functions: cuobjdump %d, nvdisasm %d", len(c.Functions), len(n.Functions))
	}
	cf, nf := c.Functions[0], n.Functions[0]
	if cf.Name != nf.Name || cf.Arch != nf.Arch || cf.Instructions != nf.Instructions {
		t.Errorf("cuobjdump %s %s %d, nvdisasm %s %s %d",
			cf.Name.Mangled, cf.Arch, cf.Instructions, nf.Name.Mangled, nf.Arch, nf.Instructions)
	}
	if !reflect.DeepEqual(cf.Opcodes, nf.Opcodes) {
		t.Errorf("opcode counts differ:\ncuobjdump %v\nnvdisasm  %v", cf.Opcodes, nf.Opcodes)
	}
	if cf.EntryKnown || !nf.EntryKnown || !nf.Entry {
		t.Errorf("entry: cuobjdump %v/%v, nvdisasm %v/%v", cf.Entry, cf.EntryKnown, nf.Entry, nf.EntryKnown)
	}
}

// nvdisasm prints data sections (.debug_frame, .nv.info, ...) with addresses too:
// grep -cE '^\s*/\*[0-9a-f]{4,}\*/' nvdisasm_softmax_sm90a.txt -> 1582 lines, of which
// only the 672 in .text are instructions.
func TestParseNvdisasmDataSectionsAreNotInstructions(t *testing.T) {
	raw := readFile(t, testdata("cuda13-h200/nvdisasm_softmax_sm90a.txt"))
	addressed := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "/*") {
			addressed++
		}
	}
	if addressed != 1582 {
		t.Fatalf("the file has %d address lines, want 1582", addressed)
	}
	d := mustParse(t, raw, ParseOptions{})
	f := d.Functions[0]
	if f.Instructions != 672 {
		t.Errorf("instructions %d, want 672", f.Instructions)
	}
	for op := range f.Opcodes {
		if strings.HasPrefix(op, ".") || strings.EqualFold(op, "byte") {
			t.Errorf("data directive %q counted as an instruction", op)
		}
	}
}

func TestParseArchOption(t *testing.T) {
	raw := readFile(t, testdata("seed-l4-cuda12.8/wmma_proof_0953f67.txt"))
	d := mustParse(t, raw, ParseOptions{Arch: "sm_89"})
	for _, f := range d.Functions {
		if f.Arch != "sm_89" {
			t.Errorf("%s: arch %q, want the option's sm_89", f.Name.Short, f.Arch)
		}
	}
	// The dump's own "code for" wins over the option.
	g := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt")), ParseOptions{Arch: "sm_75"})
	if g.Functions[0].Arch != "sm_80" {
		t.Errorf("arch %q, want sm_80 from the dump", g.Functions[0].Arch)
	}
}

// transforms of a real file that must not change what Parse reads.
var transforms = []struct {
	name string
	fn   func([]byte) []byte
}{
	{"crlf", func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }},
	{"ansi", func(b []byte) []byte {
		// Colour whole lines and, inside them, opcodes and function names, as a
		// colourising log viewer would.
		var out bytes.Buffer
		for _, l := range strings.SplitAfter(string(b), "\n") {
			body := strings.TrimSuffix(l, "\n")
			body = strings.ReplaceAll(body, "HMMA", "\x1b[1;31mHMMA\x1b[0m")
			body = strings.ReplaceAll(body, "Function", "\x1b[32mFunction\x1b[m")
			body = strings.ReplaceAll(body, "NOP", "\x1b[2mNOP\x1b(B\x1b[0m")
			out.WriteString("\x1b[0;37m" + body + "\x1b[0m")
			if strings.HasSuffix(l, "\n") {
				out.WriteString("\n")
			}
		}
		return out.Bytes()
	}},
	{"crlf+ansi", func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte("\n"), []byte("\x1b[0m\r\n"))
		return bytes.ReplaceAll(b, []byte("EXIT"), []byte("\x1b[33mEXIT\x1b[0m"))
	}},
	{"grep-n", func(b []byte) []byte {
		var out bytes.Buffer
		for i, l := range strings.SplitAfter(string(b), "\n") {
			if l != "" {
				fmt.Fprintf(&out, "%d:%s", i+1, l)
			}
		}
		return out.Bytes()
	}},
	{"long-foreign-line", func(b []byte) []byte {
		// A 1 MiB line of noise (longer than the line buffer) after the first line.
		i := bytes.IndexByte(b, '\n') + 1
		noise := bytes.Repeat([]byte("x /*0000*/ HMMA "), 1<<16)
		return append(append(append(append([]byte{}, b[:i]...), noise...), '\n'), b[i:]...)
	}},
	{"no-final-newline", func(b []byte) []byte { return bytes.TrimRight(b, "\n") }},
}

func TestParseTransformedRealFiles(t *testing.T) {
	for _, tt := range realDumps {
		raw := readFile(t, testdata(tt.file))
		want := mustParse(t, raw, ParseOptions{})
		for _, tr := range transforms {
			t.Run(tt.file+"/"+tr.name, func(t *testing.T) {
				got := mustParse(t, tr.fn(raw), ParseOptions{})
				if !reflect.DeepEqual(got, want) {
					t.Errorf("the %s variant parses differently:\n got %s\nwant %s", tr.name, summarize(got), summarize(want))
				}
			})
		}
		t.Run(tt.file+"/one-byte-reads", func(t *testing.T) {
			got, err := Parse(iotest.OneByteReader(bytes.NewReader(raw)), ParseOptions{})
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("one-byte reads: err %v, got %s", err, summarize(got))
			}
		})
	}
}

func summarize(d *Dump) string {
	if d == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", d.Format)
	for _, f := range d.Functions {
		fmt.Fprintf(&b, " [%s %s %d]", f.Name.Short, f.Arch, f.Instructions)
	}
	return b.String()
}

// Line shapes that the real captures do not have (older archs, dual issue, predicates on
// uniform registers, very long lines), written after cuobjdump's layout.
func TestParseLineShapes(t *testing.T) {
	const header = "\tcode for sm_52\n\t\tFunction : _Z3fooPf\n\t.headerflags\t@\"EF_CUDA_SM52 EF_CUDA_PTX_SM(EF_CUDA_SM52)\"\n"
	tests := []struct {
		name string
		body string
		want map[string]int
	}{
		{"control word line", "                                                          /* 0x001c4400fe0007f6 */\n" +
			"        /*0008*/                   MOV R1, c[0x0][0x20] ;       /* 0x4c98078000870001 */\n",
			map[string]int{"MOV": 1}},
		{"dual issue braces", "        /*0048*/         {         IADD32I R1, R1, -0x8 ;   /* 0x1c0fffffff870101 */\n" +
			"        /*0050*/                   S2R R0, SR_TID.X        }\n" +
			"        /*0058*/                   {\n" +
			"        /*0060*/                   @P0 BRA 0x80;}\n",
			map[string]int{"IADD32I": 1, "S2R": 1, "BRA": 1}},
		{"predicates", "        /*0010*/               @P0 EXIT ;\n" +
			"        /*0020*/              @!PT LDS.U.32 RZ, [RZ] ;\n" +
			"        /*0030*/              @UP1 UMOV UR4, 0x1 ;\n" +
			"        /*0040*/             @!UPT UIADD3 UR4, UR4, 0x1, URZ ;\n",
			map[string]int{"EXIT": 1, "LDS.U.32": 1, "UMOV": 1, "UIADD3": 1}},
		{"reuse and modifiers", "        /*0160*/                   HMMA.16816.F32.BF16 R16, R4.reuse, R12, RZ ;\n" +
			"        /*0170*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;\n" +
			"        /*0180*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ, !UPT ;\n",
			map[string]int{"HMMA.16816.F32.BF16": 1, "LDG.E.128.CONSTANT": 1, "HGMMA.64x128x16.F32": 1}},
		{"no space before semicolon", "        /*0090*/                   NOP;\n        /*00a0*/                   BRA 0xa0;\n",
			map[string]int{"NOP": 1, "BRA": 1}},
		{"not instructions", "        /*0000*/ \t.byte\t0xff, 0xff\n" +
			"        /*0000*/ \t.word\t0x00000000\n" +
			"        /*0000*/\n" +
			"        /*zz*/   MOV R1, R2 ;\n" +
			"        /**/     MOV R1, R2 ;\n" +
			"        /*0010*/ @P0\n" +
			"        /*0010*/ mov R1, R2 ;\n" +
			"        /*0010*/ MOV(R1) ;\n",
			map[string]int{}},
		{"long operand line", "        /*0000*/                   NOP " + strings.Repeat("R0, ", 100_000) + ";\n" +
			"        /*0010*/                   EXIT ;\n",
			map[string]int{"NOP": 1, "EXIT": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// cuobjdump ends every function with a line of dots.
			in := []byte(header + tt.body + "\t\t..........\n")
			if len(tt.want) == 0 {
				// No instruction at all: a whole dump has none such, so it is refused.
				if _, err := Parse(bytes.NewReader(in), ParseOptions{}); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "has no instructions") {
					t.Errorf("Parse of a function without instructions: %v", err)
				}
				return
			}
			d := mustParse(t, in, ParseOptions{})
			if len(d.Functions) != 1 {
				t.Fatalf("%d functions", len(d.Functions))
			}
			f := d.Functions[0]
			if f.Arch != "sm_52" || !reflect.DeepEqual(f.Opcodes, tt.want) {
				t.Errorf("arch %q opcodes %v, want sm_52 %v", f.Arch, f.Opcodes, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	dialects := readFile(t, testdata("cuda13-h200/cuobjdump_sass_dialects.txt"))
	ptxOnly := strings.Join(strings.SplitAfter(string(dialects), "\n")[:11], "") // "+ cuobjdump", then the PTX header only
	gemm := readFile(t, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt"))
	tests := []struct {
		name     string
		input    string
		is       []error
		contains []string
	}{
		{"empty", "", []error{ErrNoFunctions}, []string{"empty input"}},
		{"blank lines", "\n\n  \r\n", []error{ErrNoFunctions}, []string{"no content"}},
		{"only the command echo", "+ cuobjdump --dump-sass a.o\nexit=1\n", []error{ErrNoFunctions}, []string{"no content", "status 1"}},
		{"garbage", "\x00\x01hello\nworld\n", []error{ErrNoFunctions}, []string{`first line "\x00\x01hello"`}},
		{"cuobjdump fatal", "+ cuobjdump --dump-sass missing.o\ncuobjdump fatal   : Could not open input file 'missing.o'\nexit=255\n",
			[]error{ErrNoFunctions, ErrToolFailed}, []string{"cuobjdump fatal   : Could not open input file 'missing.o'"}},
		{"nvdisasm fatal", "nvdisasm fatal   : Input file 'x.cubin' is not a valid cubin\n",
			[]error{ErrNoFunctions, ErrToolFailed}, []string{"is not a valid cubin"}},
		{"error line", "error: something broke\n", []error{ErrNoFunctions, ErrToolFailed}, []string{"something broke"}},
		{"no device code", "cuobjdump info    : File 'host.o' does not contain device code\n",
			[]error{ErrNoFunctions}, []string{"does not contain device code"}},
		{"ptx only", ptxOnly, []error{ErrNoFunctions}, []string{"PTX but no SASS"}},
		{"ptxas log", string(readFile(t, testdata("cuda13-h200/ptxas_kernels_sm90a.txt"))), []error{ErrNoFunctions}, []string{"none of cuobjdump", "ptxas info"}},
		{"resource usage, not sass", string(readFile(t, testdata("cuda13-h200/cuobjdump_res_cubin.txt"))), []error{ErrNoFunctions}, []string{"first line"}},
		{"instructions without header", "        /*0000*/   MOV R1, R2 ;\n", []error{ErrNoFunctions}, []string{"1 instruction lines but no"}},
		{"fatal after a dump", string(gemm) + "cuobjdump fatal   : Internal error\n", []error{ErrToolFailed}, []string{"after 3 functions", "Internal error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(strings.NewReader(tt.input), ParseOptions{})
			if err == nil || d != nil {
				t.Fatalf("Parse = %s, %v; want an error", summarize(d), err)
			}
			for _, is := range tt.is {
				if !errors.Is(err, is) {
					t.Errorf("error %q is not %v", err, is)
				}
			}
			if tt.name == "fatal after a dump" && errors.Is(err, ErrNoFunctions) {
				t.Errorf("a dump with functions must not be ErrNoFunctions: %v", err)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not contain %q", err, c)
				}
			}
		})
	}
	if _, err := Parse(nil, ParseOptions{}); !errors.Is(err, ErrNoFunctions) {
		t.Errorf("nil reader: %v", err)
	}
	readErr := errors.New("disk on fire")
	if _, err := Parse(iotest.ErrReader(readErr), ParseOptions{}); !errors.Is(err, readErr) {
		t.Errorf("read error not wrapped: %v", err)
	}
}

// A label named like a diagnostic word is not a tool error.
func TestParseLabelNamedError(t *testing.T) {
	in := "\t.target\tsm_90a\n\t.section\t.text.error,\"ax\",@progbits\nerror:\n.text.error:\n        /*0000*/                   EXIT ;\n"
	d := mustParse(t, []byte(in), ParseOptions{})
	if len(d.Functions) != 1 || d.Functions[0].Name.Mangled != "error" || d.Functions[0].Instructions != 1 {
		t.Errorf("got %s", summarize(d))
	}
}

// repeatReader generates prefix, body repeated to make about size bytes (whole copies of
// body, so the dump is not cut mid-function), then suffix, without holding the stream in
// memory.
type repeatReader struct {
	prefix, body, suffix []byte
	left                 int64 // bytes of prefix and body copies still to produce
	pos                  int   // position in the current part
	part                 int   // 0 prefix, 1 body, 2 suffix
}

func newRepeatReader(prefix, body, suffix []byte, size int64) *repeatReader {
	n := max(1, (size-int64(len(prefix))+int64(len(body))-1)/int64(len(body)))
	return &repeatReader{prefix: prefix, body: body, suffix: suffix, left: int64(len(prefix)) + n*int64(len(body))}
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for {
		switch r.part {
		case 0:
			if r.pos < len(r.prefix) {
				n := copy(p, r.prefix[r.pos:])
				r.pos += n
				r.left -= int64(n)
				return n, nil
			}
			r.part, r.pos = 1, 0
		case 1:
			if r.left <= 0 {
				r.part, r.pos = 2, 0
				continue
			}
			if r.pos == len(r.body) {
				r.pos = 0
			}
			n := int(min(int64(copy(p, r.body[r.pos:])), r.left))
			r.pos += n
			r.left -= int64(n)
			return n, nil
		default:
			if r.pos == len(r.suffix) {
				return 0, io.EOF
			}
			n := copy(p, r.suffix[r.pos:])
			r.pos += n
			return n, nil
		}
	}
}

// oneFunction splits a real cuobjdump file into its header (up to the first
// instruction), the instruction lines of its first function and the rest (its end line
// onwards), so that repeating the body makes one ever longer function.
func oneFunction(t testing.TB) (prefix, body, suffix []byte) {
	raw := readFile(t, testdata("cuda13-h200/cuobjdump_sass_cubin_softmax.txt"))
	start := bytes.Index(raw, []byte("        /*0000*/"))
	end := bytes.Index(raw, []byte("\t\t.........."))
	if start < 0 || end < start {
		t.Fatal("unexpected layout of cuobjdump_sass_cubin_softmax.txt")
	}
	return raw[:start], raw[start:end], raw[end:]
}

// Parse's allocations depend on the functions and opcodes in the input, not on its size:
// 16 times more instructions of the same function cost no more allocations.
func TestParseMemoryBounded(t *testing.T) {
	prefix, body, suffix := oneFunction(t)
	allocs := func(size int64) float64 {
		return testing.AllocsPerRun(3, func() {
			d, err := Parse(newRepeatReader(prefix, body, suffix, size), ParseOptions{})
			if err != nil || len(d.Functions) != 1 {
				t.Fatalf("Parse: %v", err)
			}
		})
	}
	small, large := allocs(1<<20), allocs(16<<20)
	if large > small+2 {
		t.Errorf("allocations grow with input size: %v for 1 MiB, %v for 16 MiB", small, large)
	}
}

// The digest decides kernel-gate run's "unchanged SASS: skipped". On the recorded H200 runs
// (testdata/replay), in both forms a run has dumped SASS in: base and head of the
// comment-only change dump identical SASS for every function; the race change alters both
// flash_fwd instantiations on both archs and nothing else; and no two functions of one
// dump share a digest by accident of the hashing. The nvdisasm dumps (cubin by cubin, the
// recordings of 2026-11-27) are their cubins' logs concatenated (sass.txt.gz); the
// cuobjdump --dump-sass dump is the recording of 2026-11-23 kept in testdata/replay-old.
func TestDigestOnRecordedBuilds(t *testing.T) {
	digests := func(t *testing.T, rel string) map[string]string {
		t.Helper()
		f, err := os.Open(testdata(rel))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(zr, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, fn := range d.Functions {
			if len(fn.Digest) != 64 {
				t.Fatalf("%s: digest %q", fn.Name.Mangled, fn.Digest)
			}
			m[fn.Arch+" "+fn.Name.Identity()] = fn.Digest
		}
		return m
	}
	for _, tc := range []struct {
		name, clean, race string // race: "" where that recording is gone
	}{
		{"nvdisasm", "replay/clean", "replay/race/head/attention/sass.txt.gz"},
		{"cuobjdump", "replay-old/clean-cuobjdump", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := digests(t, tc.clean+"/base/attention/sass.txt.gz"), digests(t, tc.clean+"/head/attention/sass.txt.gz")
			if len(base) < 16 || !maps.Equal(base, head) {
				var differ []string
				for k, d := range head {
					if base[k] != d {
						differ = append(differ, k)
					}
				}
				slices.Sort(differ)
				t.Errorf("clean: %d functions in base, %d in head, equal %v; differ: %q", len(base), len(head), maps.Equal(base, head), differ)
			}
			if tc.race != "" {
				race := digests(t, tc.race)
				var changed []string
				for k, d := range race {
					if base[k] != d {
						changed = append(changed, k)
					}
				}
				slices.Sort(changed)
				if len(changed) != 4 || !strings.Contains(changed[0], "flash_fwd") || !strings.Contains(changed[3], "flash_fwd") {
					t.Errorf("race changed %q, want the 4 flash_fwd function × arch pairs", changed)
				}
			}
			seen := map[string]string{}
			for k, d := range head {
				if other, ok := seen[d]; ok {
					t.Errorf("%s and %s share a digest", k, other)
				}
				seen[d] = k
			}
		})
	}
}

// nvdisasm of CUDA 12 and older states each text section's register count on the line
// after its .section line (`.sectioninfo @"SHI_REGISTERS=14"`, as NVIDIA's nvdisasm
// documentation shows it; CUDA 13's nvdisasm, which made the captures, no longer prints it
// for sm_90a). The same dumps with that line added read into the same functions, each with
// its register count, and a complete -g dump stays complete: the line never starts a
// section of its own.
func TestParseNvdisasmSectionInfo(t *testing.T) {
	for _, file := range []string{"cuda13-h200/nvdisasm_g_flash_sm90a.txt", "cuda13-h200/nvdisasm_softmax_sm90a.txt"} {
		t.Run(file, func(t *testing.T) {
			raw := readFile(t, testdata(file))
			want := mustParse(t, raw, ParseOptions{})
			var b strings.Builder
			regs := map[string]int{}
			for _, l := range strings.SplitAfter(string(raw), "\n") {
				b.WriteString(l)
				f := strings.Fields(l)
				if len(f) >= 2 && f[0] == ".section" && strings.HasPrefix(f[1], ".text.") {
					name, _, _ := strings.Cut(strings.TrimPrefix(f[1], ".text."), ",")
					regs[name] = 40 + len(regs)
					fmt.Fprintf(&b, "\t.sectioninfo\t@\"SHI_REGISTERS=%d\"\n", regs[name])
				}
			}
			if len(regs) == 0 {
				t.Fatal("no text section in the capture")
			}
			got := mustParse(t, []byte(b.String()), ParseOptions{})
			if len(got.Functions) != len(want.Functions) {
				t.Fatalf("%d functions, want %d", len(got.Functions), len(want.Functions))
			}
			for i, f := range got.Functions {
				w := want.Functions[i]
				if f.Registers != regs[f.Name.Mangled] || f.Registers == 0 {
					t.Errorf("%s: registers %d, want %d", f.Name.Mangled, f.Registers, regs[f.Name.Mangled])
				}
				f.Registers = 0
				if !reflect.DeepEqual(f, w) {
					t.Errorf("function %d: %+v, want %+v", i, f, w)
				}
			}
		})
	}
}

// A .sectioninfo that states no register count a thread can have states nothing.
func TestParseNvdisasmSectionInfoOddValues(t *testing.T) {
	for _, info := range []string{`@"SHI_REGISTERS=0"`, `@"SHI_REGISTERS=256"`, `@"SHI_REGISTERS=x"`, `@"SHI_REGISTERS=12`, `@"SHI_OTHER=3"`, ``} {
		in := "\t.target\tsm_80\n\t.section\t.text.k,\"ax\",@progbits\n\t.sectioninfo\t" + info + "\n\t.size\tk,(.L_x_1 - k)\n.text.k:\n        /*0000*/ EXIT ;\n.L_x_1:\n"
		d := mustParse(t, []byte(in), ParseOptions{})
		if len(d.Functions) != 1 || d.Functions[0].Registers != 0 || d.Functions[0].Instructions != 1 {
			t.Errorf("%s: %+v", info, d.Functions)
		}
	}
}

// Real nvdisasm output of CUDA 13 for sm_80 and sm_89 cubins (testdata/cuda13-h200,
// capture-issue21.sh) still prints .sectioninfo: the register count read from it is the
// one ptxas -v reported for the same build (ptxas_kernels_sm80.txt, ptxas_kernels_sm89.txt).
func TestParseNvdisasmSectionInfoCaptures(t *testing.T) {
	for file, regs := range map[string]int{"cuda13-h200/nvdisasm_softmax_sm80.txt": 32, "cuda13-h200/nvdisasm_softmax_sm89.txt": 39} {
		d := mustParse(t, readFile(t, testdata(file)), ParseOptions{})
		var found bool
		for _, f := range d.Functions {
			if f.Name.Short == "kg::row_softmax<256>" {
				found = true
				if f.Registers != regs || f.Instructions == 0 || f.Filtered {
					t.Errorf("%s: %s registers %d, %d instructions, filtered %v; want %d registers", file, f.Name.Short, f.Registers, f.Instructions, f.Filtered, regs)
				}
			}
		}
		if !found || !strings.Contains(string(readFile(t, testdata(file))), `.sectioninfo	@"SHI_REGISTERS=`) {
			t.Errorf("%s: no row_softmax, or no .sectioninfo line in the capture: %+v", file, d.Functions)
		}
	}
}

// A digest reads the code, not the build: nvdisasm's label numbers (cubin-wide, so another
// function's change renumbers them) and the anonymous namespace's path hash do not change
// it; an instruction does. The real sm_90a dump of row_softmax stands for both builds.
func TestDigestIgnoresLabelNumbersAndPathHashes(t *testing.T) {
	raw := string(readFile(t, testdata("cuda13-h200-cubins/nvdisasm_softmax.sm_90a.txt")))
	if !strings.Contains(raw, ".L_x_") {
		t.Fatal("the capture has no labels")
	}
	digest := func(text string) string {
		t.Helper()
		d := mustParse(t, []byte(text), ParseOptions{})
		if len(d.Functions) != 1 {
			t.Fatalf("%d functions", len(d.Functions))
		}
		return d.Functions[0].Digest
	}
	shifted := regexp.MustCompile(`\.L_x_(\d+)`).ReplaceAllStringFunc(raw, func(l string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(l, ".L_x_"))
		return ".L_x_" + strconv.Itoa(n+100)
	})
	if digest(shifted) != digest(raw) {
		t.Error("renumbered labels changed the digest")
	}
	line := regexp.MustCompile(`(?m)^\s+/\*[0-9a-f]{4}\*/\s+BRA .*$`).FindString(raw)
	if line == "" {
		t.Fatal("no BRA line")
	}
	hashed := strings.Replace(raw, line, line+" /* _GLOBAL__N__0fd4f9d3_17_a_cu */", 1)
	other := strings.Replace(raw, line, line+" /* _GLOBAL__N__ae983fb4_17_a_cu */", 1)
	if digest(hashed) != digest(other) {
		t.Error("the anonymous namespace's path hash changed the digest")
	}
	if digest(hashed) == digest(raw) {
		t.Error("a changed instruction line kept the digest")
	}
	changed := strings.Replace(raw, "FMUL", "FADD", 1)
	if changed == raw || digest(changed) == digest(raw) {
		t.Error("a changed opcode kept the digest")
	}
}
