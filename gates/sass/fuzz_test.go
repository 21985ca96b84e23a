package sass

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// lines returns lines [from, to) of a testdata file, for fuzz seeds.
func lines(t testing.TB, file string, from, to int) []byte {
	all := strings.SplitAfter(string(readFile(t, testdata(file))), "\n")
	from, to = min(from, len(all)), min(to, len(all))
	return []byte(strings.Join(all[from:to], ""))
}

func FuzzParse(f *testing.F) {
	// Short slices (lines [from, to) of every real dump: headers, function boundaries,
	// data sections), so that iterations and the minimization of new inputs stay cheap.
	f.Add(lines(f, "cuda13-h200/cuobjdump_sass_gemm_multi.txt", 0, 16))
	f.Add(lines(f, "cuda13-h200/cuobjdump_sass_gemm_multi.txt", 893, 912))
	f.Add(lines(f, "cuda13-h200/cuobjdump_sass_dialects.txt", 11, 26))
	f.Add(lines(f, "cuda13-h200/cuobjdump_sass_dialects.txt", 1284, 1298))
	f.Add(lines(f, "cuda13-h200/nvdisasm_softmax_sm90a.txt", 0, 10))
	f.Add(lines(f, "cuda13-h200/nvdisasm_softmax_sm90a.txt", 1169, 1180))
	f.Add(lines(f, "cuda13-h200/nvdisasm_softmax_sm90a.txt", 1808, 1815))
	f.Add(lines(f, "cuda13-h200/nvdisasm_softmax_sm90a.txt", 1883, 1893))
	f.Add(lines(f, "cuda13-h200/nvdisasm_g_flash_sm90a.txt", 13, 20))
	f.Add(lines(f, "cuda13-h200/nvdisasm_g_flash_sm90a.txt", 2547, 2556))
	f.Add(readFile(f, testdata("shared-h200-cuda13.0/sass_mma.txt")))
	f.Add(lines(f, "seed-l4-cuda12.8/wmma_proof_0953f67.txt", 8, 11))
	f.Add([]byte("cuobjdump fatal   : Could not open input file 'x.o'\n"))
	f.Add([]byte("\x1b[31m\t\tFunction : k\x1b[0m\r\n        /*0000*/ { @!UPT NOP ;}\r\n"))
	f.Add([]byte(""))
	// Hostile: a function cut before its end, one without instructions, nvdisasm's .size
	// without its label, an instruction after the end line.
	f.Add(lines(f, "cuda13-h200/cuobjdump_sass_gemm_multi.txt", 10, 20))
	f.Add([]byte("\tcode for sm_90a\n\t\tFunction : k\n\t.headerflags\t@\"EF_CUDA_SM90\"\n\t\t..........\n"))
	f.Add([]byte("\t\tFunction : k\n        /*0000*/ EXIT ;\n\t\t..........\n        /*0010*/ LDL R0, [R1] ;\n"))
	f.Add([]byte("\t.target\tsm_90a\n\t.section\t.text.k,\"ax\",@progbits\n\t.size\tk,(.L_x_1 - k)\n.text.k:\n        /*0000*/ EXIT ;\n"))
	f.Add([]byte("\t.section\t.text.k,\"ax\",@progbits\n\t.size\tk,(.L_x_1 - k)\n.text.k:\n.L_x_1:\n\t.section\t.text.j,\"ax\",@progbits\n.text.j:\n        /*0000*/ EXIT ;\n"))
	// nvdisasm of CUDA 11.8: each cubin's arch only in its .headerflags, .sectionflags in a
	// text section; two outputs concatenated, as kernel-gate run keeps a binary's.
	_, cubins := cuda118Cubins(f)
	head := func(b []byte, n int) []byte { return []byte(strings.Join(strings.SplitAfter(string(b), "\n")[:n], "")) }
	f.Add(head(cubins[2], 20))
	f.Add(append(head(cubins[0], 3), head(cubins[5], 18)...))
	f.Add([]byte("\t.headerflags\t@\"EF_CUDA_SM89\"\n\t.section\t.text.k,\"ax\",@progbits\n\t.sectionflags\t@\"SHF_BARRIERS=1\"\n.text.k:\n        /*0000*/ EXIT ;\n" +
		"\t.headerflags\t@\"EF_CUDA_SW_1 EF_CUDA_SM90\"\n\t.section\t.text.j,\"ax\",@progbits\n.text.j:\n        /*0000*/ EXIT ;\n"))
	// A code section nvdisasm prints under a name that is not .text.NAME (a cubin a build
	// changed: testdata/cuda11.8-crafted): instructions outside any function.
	f.Add(readFile(f, testdata("cuda11.8-crafted", "nvdisasm-renamed-crafted.txt")))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := Parse(bytes.NewReader(in), ParseOptions{})
		if err != nil {
			if d != nil {
				t.Fatalf("error %v with a dump", err)
			}
			if !errors.Is(err, ErrNoFunctions) && !errors.Is(err, ErrToolFailed) && !errors.Is(err, ErrIncomplete) {
				t.Fatalf("error %v is neither ErrNoFunctions, ErrToolFailed nor ErrIncomplete", err)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
		} else {
			if d == nil || len(d.Functions) == 0 || d.Format == "" {
				t.Fatalf("no error and no functions: %+v", d)
			}
			for _, fn := range d.Functions {
				if fn.Name.Mangled == "" || strings.ContainsAny(fn.Name.Mangled, " \t\n") {
					t.Fatalf("function name %q", fn.Name.Mangled)
				}
				if fn.Arch != "" && !archPattern.MatchString(fn.Arch) {
					t.Fatalf("%s: arch %q", fn.Name.Mangled, fn.Arch)
				}
				sum := 0
				for op, n := range fn.Opcodes {
					if n <= 0 || !validOpcode([]byte(op)) {
						t.Fatalf("opcode %q x%d", op, n)
					}
					sum += n
				}
				if sum != fn.Instructions {
					t.Fatalf("%s: opcodes sum to %d, instructions %d", fn.Name.Mangled, sum, fn.Instructions)
				}
				if fn.Entry && !fn.EntryKnown {
					t.Fatalf("%s: entry without EntryKnown", fn.Name.Mangled)
				}
				if !fn.Filtered && fn.Instructions == 0 {
					t.Fatalf("%s: a function of a whole dump without instructions", fn.Name.Mangled)
				}
			}
		}
		if len(in) > 256 {
			// Keep iterations cheap, so that the fuzzer's minimization of a new input
			// (quadratic in its length) stays short. TestParseTransformedRealFiles checks
			// the same properties on whole real files.
			return
		}
		// The same bytes read one at a time parse the same.
		d2, err2 := Parse(iotest.OneByteReader(bytes.NewReader(in)), ParseOptions{})
		if !reflect.DeepEqual(d, d2) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("one-byte reads differ: %v / %v", err, err2)
		}
		// CRLF line ends change nothing.
		d3, err3 := Parse(bytes.NewReader(bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))), ParseOptions{})
		if !reflect.DeepEqual(d, d3) || (err == nil) != (err3 == nil) {
			t.Fatalf("CRLF differs: %v / %v", err, err3)
		}
	})
}

// BenchmarkParse parses a real multi-arch dump repeated to 32 MiB, generated on the fly.
// Allocations grow with the functions in the stream (3 per repetition), not its bytes.
func BenchmarkParse(b *testing.B) {
	raw := readFile(b, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt"))
	const size = 32 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(newRepeatReader(nil, raw, nil, size), ParseOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseSize parses one function whose instructions repeat to 4 MiB and to
// 64 MiB: B/op and allocs/op are the same at both sizes.
func BenchmarkParseSize(b *testing.B) {
	prefix, body, suffix := oneFunction(b)
	for _, bc := range []struct {
		name string
		size int64
	}{{"4MiB", 4 << 20}, {"64MiB", 64 << 20}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(bc.size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(newRepeatReader(prefix, body, suffix, bc.size), ParseOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
