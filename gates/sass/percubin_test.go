package sass

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// gunzip reads a gzipped testdata file.
func gunzip(t testing.TB, path string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// cuda118Cubins are nvdisasm -c -hex's outputs of the cubins of testdata/cuda11.8-cpu's
// binary, in the order cuobjdump --list-elf lists them (SOURCE.md there).
func cuda118Cubins(t testing.TB) (names []string, outputs [][]byte) {
	t.Helper()
	l, err := ParseListELF(bytes.NewReader(readFile(t, testdata("cuda11.8-cpu", "list-elf.txt"))))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range l.Files {
		names = append(names, f.Name)
		outputs = append(outputs, gunzip(t, testdata("cuda11.8-cpu", "nvdisasm", f.Name+".txt.gz")))
	}
	return names, outputs
}

// fnKey names a function of one arch.
func fnKey(f Function) string { return f.Arch + " " + f.Name.Mangled }

// nvdisasm of each cubin of a binary, the outputs concatenated in --list-elf's order (what
// kernel-gate run keeps as the binary's sass.txt), reads as cuobjdump --dump-sass of the
// binary: the same functions × archs, instruction and opcode counts, mix and clock reads.
// Each output names its arch only in its .headerflags (CUDA 11.8), so a function takes its
// own cubin's. nvdisasm also says every function is a kernel, and states sm_89's registers;
// the digests differ (labels where cuobjdump prints addresses). Parsing each output alone
// gives the same functions as the concatenation (the pipeline checks each cubin's arch so).
func TestNvdisasmPerCubinAgreesWithCuobjdump(t *testing.T) {
	names, outputs := cuda118Cubins(t)
	concat := mustParse(t, bytes.Join(outputs, nil), ParseOptions{})
	cuobj := mustParse(t, gunzip(t, testdata("cuda11.8-cpu", "cuobjdump-sass.txt.gz")), ParseOptions{})
	if concat.Format != FormatNvdisasm || cuobj.Format != FormatCuobjdump {
		t.Fatalf("formats %q, %q", concat.Format, cuobj.Format)
	}
	byKey := func(d *Dump) map[string]Function {
		m := map[string]Function{}
		for _, f := range d.Functions {
			if _, dup := m[fnKey(f)]; dup {
				t.Fatalf("%s twice", fnKey(f))
			}
			m[fnKey(f)] = f
		}
		return m
	}
	n, c := byKey(concat), byKey(cuobj)
	// cuobjdump --dump-sass of the binary, read by hand: 2 functions × 2 archs.
	want := []string{"sm_89 _ZN2kg11row_softmaxILi256EEEvPKfPfi", "sm_89 _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii",
		"sm_90 _ZN2kg11row_softmaxILi256EEEvPKfPfi", "sm_90 _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii"}
	if got := slices.Sorted(maps.Keys(c)); !slices.Equal(got, want) {
		t.Fatalf("cuobjdump's functions %q, want %q", got, want)
	}
	if got := slices.Sorted(maps.Keys(n)); !slices.Equal(got, want) {
		t.Fatalf("nvdisasm's functions %q, want %q", got, want)
	}
	for _, k := range want {
		nf, cf := n[k], c[k]
		if nf.Instructions != cf.Instructions || !maps.Equal(nf.Opcodes, cf.Opcodes) || !maps.Equal(nf.Mix(), cf.Mix()) || nf.ClockReads != cf.ClockReads {
			t.Errorf("%s: nvdisasm %d instructions %v, cuobjdump %d %v", k, nf.Instructions, nf.Mix(), cf.Instructions, cf.Mix())
		}
		if nf.LocalAccess() != cf.LocalAccess() {
			t.Errorf("%s: local access %+v, cuobjdump %+v", k, nf.LocalAccess(), cf.LocalAccess())
		}
		if !nf.EntryKnown || !nf.Entry || cf.EntryKnown {
			t.Errorf("%s: entry nvdisasm %v/%v, cuobjdump %v/%v", k, nf.Entry, nf.EntryKnown, cf.Entry, cf.EntryKnown)
		}
		if nf.Filtered || cf.Filtered {
			t.Errorf("%s: read as filtered", k)
		}
		if nf.Digest == cf.Digest {
			t.Errorf("%s: the digests agree, but nvdisasm prints labels where cuobjdump prints addresses", k)
		}
		// grep -A3 '^\s*\.section\s*\.text' | grep SHI_REGISTERS in the sm_89 outputs: 39 and 70.
		if wantRegs := map[string]int{want[0]: 39, want[1]: 70}[k]; nf.Registers != wantRegs || cf.Registers != 0 {
			t.Errorf("%s: registers %d (cuobjdump %d), want %d", k, nf.Registers, cf.Registers, wantRegs)
		}
	}
	var alone []Function
	for i, out := range outputs {
		d, err := Parse(bytes.NewReader(out), ParseOptions{})
		if strings.HasPrefix(names[i], "softmax-gemm_wmma.") {
			if err == nil {
				t.Errorf("%s holds no code, but parses as %d functions", names[i], len(d.Functions))
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
		arch := archOf(names[i])
		for _, f := range d.Functions {
			if f.Arch != arch {
				t.Errorf("%s: function %s has arch %q, its cubin's name says %s", names[i], f.Name.Mangled, f.Arch, arch)
			}
		}
		alone = append(alone, d.Functions...)
	}
	if !slices.EqualFunc(alone, concat.Functions, func(a, b Function) bool {
		return fnKey(a) == fnKey(b) && a.Digest == b.Digest && a.Instructions == b.Instructions && a.Registers == b.Registers
	}) {
		t.Error("the outputs parsed one by one differ from their concatenation")
	}
}

// Concatenated outputs never lend a cubin the arch of the one before: a header whose flags
// name none (a flag this parser does not know), or that is cut to nothing, leaves the next
// functions without arch; CUDA 13's ".target" and CUDA 11.8's ".headerflags" mix.
func TestConcatenatedNvdisasmArchs(t *testing.T) {
	_, outputs := cuda118Cubins(t)
	softmax89, gemm90 := outputs[2], outputs[5]
	// What nvdisasm 11.8 printed for an sm_90 cubin with the sm_90a bit (0x800 of e_flags)
	// set by hand: a flag it does not know.
	unknown := bytes.Replace(gemm90, []byte("EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"), []byte("EF_CUDA_64BIT_ADDRESS EF_CUDA_SW_1729687 EF_CUDA_SM90"), 1)
	cuda13 := readFile(t, testdata("cuda13-h200/nvdisasm_softmax_sm90a.txt"))
	accel := bytes.Replace(gemm90, []byte("EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"), []byte("EF_CUDA_64BIT_ADDRESS EF_CUDA_ACCELERATORS EF_CUDA_SM90"), 1)
	for _, tc := range []struct {
		name  string
		parts [][]byte
		want  []string // fnKey of each function
	}{
		{"an unknown flag names no arch", [][]byte{softmax89, unknown},
			[]string{"sm_89 _ZN2kg11row_softmaxILi256EEEvPKfPfi", " _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii"}},
		{"CUDA 13's .target, then 11.8's .headerflags", [][]byte{cuda13, gemm90},
			[]string{"sm_90a _ZN2kg11row_softmaxILi256EEEvPKfPfi", "sm_90 _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii"}},
		{"11.8's .headerflags, then CUDA 13's .target", [][]byte{softmax89, cuda13},
			[]string{"sm_89 _ZN2kg11row_softmaxILi256EEEvPKfPfi", "sm_90a _ZN2kg11row_softmaxILi256EEEvPKfPfi"}},
		{"the accelerators flag is sm_90a", [][]byte{softmax89, accel},
			[]string{"sm_89 _ZN2kg11row_softmaxILi256EEEvPKfPfi", "sm_90a _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii"}},
		{".target and .headerflags of one header", [][]byte{softmax89, append([]byte("\t.target\tsm_90a\n"), unknown...)},
			[]string{"sm_89 _ZN2kg11row_softmaxILi256EEEvPKfPfi", "sm_90a _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, bytes.Join(tc.parts, nil), ParseOptions{})
			var got []string
			for _, f := range d.Functions {
				got = append(got, fnKey(f))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("functions %q, want %q", got, tc.want)
			}
		})
	}
}

// The arch in .headerflags: the lines nvdisasm (CUDA 11.8, testdata/cuda11.8-cpu) and
// cuobjdump (CUDA 13, testdata/cuda13-h200) print, and what is not an arch.
func TestHeaderFlagsArch(t *testing.T) {
	for _, tc := range []struct{ flags, want string }{
		{`@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM89 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM89)"`, "sm_89"},
		{`@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"`, "sm_90"},
		{`@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"`, "sm_90a"},
		{`@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"`, "sm_80"},
		{`@"EF_CUDA_SM90 EF_CUDA_PTX_SM(EF_CUDA_SM90)"`, "sm_90"},
		{`@"EF_CUDA_ACCELERATORS_V1 EF_CUDA_SM100"`, "sm_100a"},
		{`@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SW_1729687 EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"`, ""},
		{`@"EF_CUDA_SM89 EF_CUDA_SM90"`, ""},
		{`@"EF_CUDA_64BIT_ADDRESS"`, ""},
		{`@"EF_CUDA_SMX9"`, ""},
		{`@"EF_CUDA_SM9"`, ""},
		{`@""`, ""},
		{`EF_CUDA_SM90`, ""},
		{`@"EF_CUDA_SM90`, ""},
		{``, ""},
	} {
		if got := headerFlagsArch([]byte("\t" + tc.flags)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.flags, got, tc.want)
		}
	}
}

// archPattern is every arch a function may get.
var archPattern = regexp.MustCompile(`^sm_[0-9]{2,4}[a-z]?$`)

func FuzzHeaderFlagsArch(f *testing.F) {
	f.Add([]byte(`@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM89 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM89)"`))
	f.Add([]byte(`@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"`))
	f.Add([]byte(`@"EF_CUDA_SW_1729687 EF_CUDA_SM90"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		a := headerFlagsArch(in)
		if a != "" && !archPattern.MatchString(a) {
			t.Fatalf("%q: arch %q", in, a)
		}
		if a != "" && !bytes.Contains(in, []byte("EF_CUDA_SM"+strings.TrimSuffix(strings.TrimPrefix(a, "sm_"), "a"))) {
			t.Fatalf("%q: arch %q that no flag names", in, a)
		}
	})
}

// CUDA 13 on an H200 (testdata/cuda13-h200-cubins, capture.sh there): cuobjdump -xelf all
// writes each cubin under the name --list-elf gives it (what the pipeline's per-cubin dump
// relies on), and nvdisasm -c -hex of softmax's cubins, concatenated in listing order, reads
// as one function per cubin with that cubin's arch (sm_90a from ".target sm_90a"), a kernel.
func TestCUDA13PerCubinCapture(t *testing.T) {
	dir := "cuda13-h200-cubins"
	l, err := ParseListELF(bytes.NewReader(readFile(t, testdata(dir, "list-elf.txt"))))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, f := range l.Files {
		listed = append(listed, f.Name)
	}
	if len(listed) != 10 {
		t.Fatalf("listed %q, want the harness's 10 cubins", listed)
	}
	extracted := regexp.MustCompile(`(?m)^Extracting ELF file +\d+: (\S+)$`).FindAllStringSubmatch(string(readFile(t, testdata(dir, "xelf.txt"))), -1)
	var names []string
	for _, m := range extracted {
		names = append(names, m[1])
	}
	if !slices.Equal(names, listed) {
		t.Errorf("-xelf extracted %q, --list-elf listed %q", names, listed)
	}
	_, ls, _ := strings.Cut(string(readFile(t, testdata(dir, "xelf.txt"))), "\n+ ls\n")
	written := regexp.MustCompile(`(?m) (\S+\.cubin)$`).FindAllStringSubmatch(ls, -1)
	var files []string
	for _, m := range written {
		files = append(files, m[1])
	}
	if !slices.Equal(slices.Sorted(slices.Values(files)), slices.Sorted(slices.Values(listed))) {
		t.Errorf("the directory holds %q, --list-elf listed %q", files, listed)
	}
	var outputs [][]byte
	var want []string
	for _, name := range listed {
		if !strings.HasPrefix(name, "softmax.") {
			continue
		}
		outputs = append(outputs, readFile(t, testdata(dir, "nvdisasm_"+strings.TrimSuffix(name, ".cubin")+".txt")))
		want = append(want, archOf(name)+" _ZN2kg11row_softmaxILi256EEEvPKfPfi")
	}
	d := mustParse(t, bytes.Join(outputs, nil), ParseOptions{})
	var got []string
	for _, f := range d.Functions {
		got = append(got, fnKey(f))
		if !f.EntryKnown || !f.Entry || f.Instructions == 0 {
			t.Errorf("%s: entry known %v, entry %v, %d instructions", fnKey(f), f.EntryKnown, f.Entry, f.Instructions)
		}
	}
	if !slices.Equal(got, want) || len(want) != 2 {
		t.Errorf("functions %q, want %q", got, want)
	}
}

// A cubin whose code section is not named .text.NAME (testdata/cuda11.8-crafted: kernel dk's
// section renamed by a build that post-processed its cubin): nvdisasm prints dk's
// instructions, its DFMA among them, with no line that starts a function, where cuobjdump
// still names the function. Those instructions are nobody's to judge, so the dump is
// refused as incomplete, naming the first line: a forbid of DFMA must never pass on the
// other kernel alone. A cubin of nothing else holds code too, not "no SASS" (NoSASS), which
// the pipeline takes for a cubin without code.
func TestCodeOutsideAnyFunctionIsIncomplete(t *testing.T) {
	dir := "cuda11.8-crafted"
	cuobj := mustParse(t, readFile(t, testdata(dir, "cuobjdump-renamed-crafted.txt")), ParseOptions{})
	g, err := Evaluate(cuobj, Config{Forbid: []string{"DFMA"}})
	if err != nil || g.Verdict != result.Fail || !strings.Contains(findingText(g), "forbidden instruction DFMA found in dk (sm_89)") {
		t.Fatalf("cuobjdump's dump of the cubin: %v %s %s", err, g.Verdict, findingText(g))
	}
	_, err = Parse(bytes.NewReader(readFile(t, testdata(dir, "nvdisasm-renamed-crafted.txt"))), ParseOptions{})
	if !errors.Is(err, ErrIncomplete) || errors.Is(err, ErrNoFunctions) || NoSASS(err) ||
		!strings.Contains(err.Error(), "line 15: ") || !strings.Contains(err.Error(), "24 instruction lines outside any function") {
		t.Errorf("nvdisasm's dump with dk's code outside any function: %v", err)
	}
	_, err = Parse(bytes.NewReader(readFile(t, testdata(dir, "nvdisasm-renamed-dk.txt"))), ParseOptions{})
	if !errors.Is(err, ErrIncomplete) || !errors.Is(err, ErrNoFunctions) || NoSASS(err) {
		t.Errorf("nvdisasm's dump of dk alone: %v", err)
	}
	// What NoSASS is for: a cubin whose output is its header alone (a link's stub), and PTX.
	names, outputs := cuda118Cubins(t)
	for i, name := range names {
		if !strings.HasPrefix(name, "softmax-gemm_wmma.") {
			continue
		}
		if _, err := Parse(bytes.NewReader(outputs[i]), ParseOptions{}); !NoSASS(err) {
			t.Errorf("%s, which holds no code: %v", name, err)
		}
	}
	if _, err := Parse(strings.NewReader("Fatbin ptx code:\n================\narch = sm_90\n.version 8.0\n"), ParseOptions{}); !NoSASS(err) {
		t.Errorf("PTX alone: %v", err)
	}
}
