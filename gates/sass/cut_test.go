package sass

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// wholeDumps are the real captures that are whole tool output (not grep-filtered).
var wholeDumps = []string{
	"cuda13-h200/cuobjdump_sass_gemm_multi.txt",
	"cuda13-h200/cuobjdump_sass_cubin_softmax.txt",
	"cuda13-h200/cuobjdump_sass_dialects.txt",
	"cuda13-h200/nvdisasm_softmax_sm90a.txt",
	"cuda13-h200/nvdisasm_g_flash_sm90a.txt",
}

// cutPoints are byte offsets at which to cut a dump: every line start near a line that
// opens, ends or names a function (both tools' formats), the middle of those lines and of
// the instruction lines near them, and every 53rd line start besides.
func cutPoints(raw []byte) []int {
	var starts []int
	for i := 0; i < len(raw); {
		starts = append(starts, i)
		j := bytes.IndexByte(raw[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	marks := []string{"Function :", "..........", "code for", "Fatbin", ".section", ".size", ".text.", "//----", ".L_x_", ".headerflags"}
	seen := map[int]bool{}
	var cuts []int
	add := func(c int) {
		if c >= 0 && c <= len(raw) && !seen[c] {
			seen[c] = true
			cuts = append(cuts, c)
		}
	}
	for n, s := range starts {
		end := len(raw)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		line := string(raw[s:end])
		if n%53 == 0 {
			add(s)
		}
		for _, m := range marks {
			if strings.Contains(line, m) {
				for d := -2; d <= 3; d++ {
					if k := n + d; k >= 0 && k < len(starts) {
						add(starts[k])
						next := len(raw)
						if k+1 < len(starts) {
							next = starts[k+1]
						}
						add((starts[k] + next) / 2) // mid-line
					}
				}
				break
			}
		}
	}
	return cuts
}

// A whole real dump cut anywhere: Parse refuses it (ErrIncomplete, or ErrNoFunctions
// before the first function), or every function it returns is one of the whole dump's,
// in order, with the same instructions. No cut passes with a function that lost
// instructions (so a forbid rule would pass on what the cut removed).
func TestParseCutDumps(t *testing.T) {
	for _, file := range wholeDumps {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			raw := readFile(t, testdata(file))
			full := mustParse(t, raw, ParseOptions{})
			refused := 0
			for _, cut := range cutPoints(raw) {
				d, err := Parse(bytes.NewReader(raw[:cut]), ParseOptions{})
				if err != nil {
					if !errors.Is(err, ErrIncomplete) && !errors.Is(err, ErrNoFunctions) {
						t.Fatalf("cut at byte %d: %v", cut, err)
					}
					if errors.Is(err, ErrIncomplete) && !strings.HasPrefix(err.Error(), "line ") {
						t.Fatalf("cut at byte %d: error without its line: %v", cut, err)
					}
					refused++
					continue
				}
				for i, f := range d.Functions {
					if f.Filtered && f.Instructions == 0 {
						// Cut between the first header and the first line that shows the dump
						// whole (.headerflags, .size): it reads as a grep-filtered dump of an
						// empty function, on which no rule passes.
						one := &Dump{Format: d.Format, Functions: []Function{f}}
						g, err := Evaluate(one, Config{Forbid: []string{"DFMA"}, Require: []string{"EXIT"}})
						if err != nil || g.Verdict != result.Fail || len(g.Findings) != 2 {
							t.Fatalf("cut at byte %d: an empty filtered function: %v %s %+v", cut, err, g.Verdict, g.Findings)
						}
						continue
					}
					if i >= len(full.Functions) {
						t.Fatalf("cut at byte %d: %d functions, the whole dump has %d", cut, len(d.Functions), len(full.Functions))
					}
					w := full.Functions[i]
					if f.Name != w.Name || f.Arch != w.Arch || f.Instructions != w.Instructions || !maps.Equal(f.Opcodes, w.Opcodes) || f.Digest != w.Digest || f.Filtered {
						t.Fatalf("cut at byte %d (%q) passes with function %d %s %s: %d instructions, the whole dump has %d",
							cut, raw[max(0, cut-60):cut], i, f.Name.Short, f.Arch, f.Instructions, w.Instructions)
					}
				}
			}
			if refused == 0 {
				t.Error("no cut was refused")
			}
		})
	}
}

// The adversary's case: a dump cut in the middle of a function, before the instruction a
// forbid rule looks for, is refused with the line of that function; so is the same
// function with every instruction gone.
func TestParseCutMidFunction(t *testing.T) {
	gemm := readFile(t, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt"))
	header := bytes.Index(gemm, []byte("\t\tFunction : _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii\n\t.headerflags\t@\"EF_CUDA_ACCELERATORS EF_CUDA_SM90"))
	if header < 0 {
		t.Fatal("no sm_90a function header in the capture")
	}
	line := bytes.Count(gemm[:header], []byte("\n")) + 1
	firstHMMA := header + bytes.Index(gemm[header:], []byte("HMMA"))
	cut := bytes.LastIndexByte(gemm[:firstHMMA], '\n') + 1

	nvd := readFile(t, testdata("cuda13-h200/nvdisasm_softmax_sm90a.txt"))
	text := bytes.Index(nvd, []byte(".text._ZN2kg11row_softmaxILi256EEEvPKfPfi:\n"))
	nvCut := text + bytes.Index(nvd[text:], []byte("        /*0400*/"))
	nvLine := bytes.Count(nvd[:bytes.Index(nvd, []byte("//--------------------- .text."))], []byte("\n")) + 1

	tests := []struct {
		name, in string
		line     int
		why      string
	}{
		{"cuobjdump cut before its HMMA", string(gemm[:cut]), line, `has no end (cuobjdump's ".........." line)`},
		{"cuobjdump cut mid-line", string(gemm[:cut+30]), line, "has no end"},
		{"cuobjdump header only", string(gemm[:header]) + "\t\tFunction : _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii\n", line, "has no end"},
		{"cuobjdump no instructions", string(gemm[:header]) + "\t\tFunction : _ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii\n\t.headerflags\t@\"EF_CUDA_SM90\"\n\t\t..........\n", line, "has no instructions"},
		{"cuobjdump next function before the end", string(gemm[:cut]) + "\t\tFunction : _Z3foov\n" + "        /*0000*/                   EXIT ;\n\t\t..........\n", line, "has no end"},
		{"nvdisasm cut mid-function", string(nvd[:nvCut]), nvLine, "has no end (the label .L_x_30 that its .size names)"},
		{"nvdisasm cut mid-line", string(nvd[:nvCut+20]), nvLine, "has no end"},
		{"nvdisasm empty section", string(nvd[:text]) +
			".text._ZN2kg11row_softmaxILi256EEEvPKfPfi:\n.L_x_30:\n", nvLine, "has no instructions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(strings.NewReader(tt.in), ParseOptions{})
			if !errors.Is(err, ErrIncomplete) || d != nil {
				t.Fatalf("Parse = %s, %v; want ErrIncomplete", summarize(d), err)
			}
			want := fmt.Sprintf("line %d: ", tt.line)
			if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("error %q, want it to start with %q and say %q", err, want, tt.why)
			}
		})
	}
}

// A grep-filtered dump shows some instructions of each function, so a forbid rule
// cannot be judged on it: it fails, saying why, where it would have passed on the
// absence of what the filter dropped. require rules judge it as before.
func TestEvaluateFilteredDump(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("shared-h200-cuda13.0/sass_mma.txt")), ParseOptions{Arch: "sm_90a"})
	for _, f := range d.Functions {
		if !f.Filtered {
			t.Errorf("%s: not marked filtered", f.Name.Short)
		}
	}
	g, err := Evaluate(d, Config{Kernels: []Rule{
		{Match: "wmma_tile", Require: []string{"HMMA"}, Forbid: []string{"LDL|STL"}, Item: configpos.Item{Line: 3}},
		{Match: "divergent_barrier", Forbid: []string{"DFMA"}, Item: configpos.Item{Line: 7}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range g.Findings {
		got = append(got, fmt.Sprintf("%s %s %s:%d", f.Metric, f.Kernel, f.File, f.Line))
	}
	want := []string{"sass_incomplete wmma_tile kernel-gate.yml:3", "sass_incomplete divergent_barrier kernel-gate.yml:7"}
	if g.Verdict != result.Fail || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("verdict %s findings %q, want %q", g.Verdict, got, want)
	}
	if msg := g.Findings[0].Message; !strings.Contains(msg, "forbidden instruction LDL|STL cannot be ruled out: the dump of wmma_tile (sm_90a) is filtered") {
		t.Errorf("message %q", msg)
	}
	// require alone passes on the filtered dump, as it always did.
	g, err = Evaluate(d, Config{Kernels: []Rule{{Match: "wmma_tile", Require: []string{"HMMA"}, Item: configpos.Item{Line: 3}}}})
	if err != nil || g.Verdict != result.Pass {
		t.Errorf("require on a filtered dump: %v %s %+v", err, g.Verdict, g.Findings)
	}
	// A whole dump's functions are not filtered, and forbid judges them as before.
	w := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt")), ParseOptions{})
	for _, f := range w.Functions {
		if f.Filtered {
			t.Errorf("%s %s of a whole dump marked filtered", f.Name.Short, f.Arch)
		}
	}
	g, err = Evaluate(w, Config{Forbid: []string{"DFMA"}})
	if err != nil || g.Verdict != result.Pass {
		t.Errorf("forbid on a whole dump: %v %s %+v", err, g.Verdict, g.Findings)
	}
}

// A function without instructions (a Dump built in Go) passes no forbid rule either.
func TestEvaluateEmptyFunction(t *testing.T) {
	d := &Dump{Functions: []Function{{Name: kernelname.Parse("_Z3foov"), Arch: "sm_90a", Opcodes: map[string]int{}}}}
	g, err := Evaluate(d, Config{Forbid: []string{"LDL"}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail || len(g.Findings) != 1 || g.Findings[0].Metric != MetricIncomplete ||
		!strings.Contains(g.Findings[0].Message, "foo (sm_90a) has no instructions in the dump") {
		t.Errorf("%s %+v", g.Verdict, g.Findings)
	}
}
