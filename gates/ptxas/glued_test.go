package ptxas

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// gluedTexts are failures as a parallel build prints them into another tool's line: each
// ends its own line, but what it follows may not (make -j, ninja, buffered output).
// key is what the error filed for it says, whatever else was glued to it.
var gluedTexts = []struct{ text, key string }{
	{"ptxas fatal   : Unresolved extern function '_Z6helperv'", "Unresolved extern function '_Z6helperv'"},
	{"nvcc error   : 'cicc' died due to signal 9 (Kill signal)", "'cicc' died due to signal 9"},
	{"nvcc error   : 'ptxas' died due to signal 11 (Invalid memory reference)", "'ptxas' died due to signal 11"},
	{"Segmentation fault (core dumped)", "Segmentation fault (core dumped)"},
	{"Segmentation fault", "Segmentation fault"},
	{"Aborted (core dumped)", "Aborted (core dumped)"},
	{"Killed", "Killed"},
	{"/bin/sh: line 1: 48213 Killed                  nvcc -O3 -Xptxas -v -c kernels/flash_fwd.cu -o fa.o", "48213 Killed"},
	{"terminate called after throwing an instance of 'std::bad_alloc'", "terminate called after throwing an instance of 'std::bad_alloc'"},
	{"kernels/flash_fwd.cu(120): error: identifier \"kv\" is undefined", "(120): error: identifier \"kv\" is undefined"},
	{"kernels/flash_fwd.cu:120:5: error: use of undeclared identifier 'kv'", ":120:5: error: use of undeclared identifier 'kv'"},
	{"1 error detected in the compilation of \"kernels/flash_fwd.cu\".", "error detected in the compilation of"},
	{"make[2]: *** [CMakeFiles/h.dir/build.make:76: harness.cu.o] Error 1", "make[2]: *** [CMakeFiles/h.dir/build.make:76: harness.cu.o] Error 1"},
	{"collect2: error: ld returned 1 exit status", "ld returned 1 exit status"},
	{"c++: fatal error: Killed signal terminated program cc1plus", "c++: fatal error: Killed signal terminated program cc1plus"},
}

// A failure printed into another line fails the gate as it does on its own line: glued to
// the end of each kind of line a real log has (the resource line, cmem[0] and all; the
// entry's line; the stack frame line; the module's gmem line), into a resource line where
// an item ends, or before a tool's line. It was an "unrecognised resource item" notice, or
// nothing, and the gate passed.
func TestParseFailureGluedIntoALine(t *testing.T) {
	log := string(readTestdata(t, "shared-h200-cuda13.0/ptxas_multi.txt"))
	lines := strings.SplitAfter(log, "\n")
	find := func(prefix string) int {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
		if i < 0 {
			t.Fatalf("no line %q in the capture", prefix)
		}
		return i
	}
	// where: the line (0-based) and how the failure goes into it.
	places := []struct {
		name string
		line int
		put  func(line, failure string) string
	}{
		{"end of a resource line", find("ptxas info    : Used 22 registers, used 0 barriers, 376 bytes cmem[0]"), atEnd},
		{"end of a resource line with smem", find("ptxas info    : Used 10 registers, used 1 barriers, 512 bytes smem"), atEnd},
		{"after an item", find("ptxas info    : Used 10 registers, used 1 barriers, 512 bytes smem"), func(l, f string) string {
			i := strings.Index(l, "used 1 barriers, ") + len("used 1 barriers, ")
			return l[:i] + f + "\n" + l[i:]
		}},
		{"end of an entry's line", find("ptxas info    : Compiling entry function '_Z9smem_racePf' for 'sm_89'"), atEnd},
		{"end of a stack frame line", find("    0 bytes stack frame"), atEnd},
		{"end of the gmem line", find("ptxas info    : 0 bytes gmem"), atEnd},
		{"before a resource line", find("ptxas info    : Used 22 registers"), func(l, f string) string { return f + l }},
	}
	for _, pl := range places {
		for _, gf := range gluedTexts {
			t.Run(pl.name+"/"+gf.text, func(t *testing.T) {
				in := slices.Clone(lines)
				in[pl.line] = pl.put(in[pl.line], gf.text)
				l := parseBytes(t, []byte(strings.Join(in, "")))
				if !slices.ContainsFunc(l.Diagnostics, func(d Diagnostic) bool {
					return d.Severity == "error" && d.InputLn == pl.line+1 && strings.Contains(d.Text, gf.key)
				}) {
					t.Errorf("no error at line %d says %q; errors: %q", pl.line+1, gf.key, errorsAt(l))
				}
				g, err := Evaluate(l, Config{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if g.Verdict != result.Fail {
					t.Errorf("verdict %s", g.Verdict)
				}
			})
		}
	}
}

func atEnd(line, failure string) string { return strings.TrimSuffix(line, "\n") + failure + "\n" }

// No false alarm: kernels named after a crash, or with error in their names, in every line
// that names a kernel, pass; so do words of failure in prose and paths.
func TestParseNoFalseAlarmOnNames(t *testing.T) {
	var b strings.Builder
	b.WriteString("ptxas info    : 0 bytes gmem\n")
	names := []string{"segfault_test", "Killed", "wasKilled", "_Z6KilledPf", "Aborted", "_Z13Aborted_errorv", "error_check", "_Z10nvcc_errorv",
		"Segmentation_fault", "_Z11TerminatedPf", "kill_signal_9", "dumped_core"}
	for _, n := range names {
		fmt.Fprintf(&b, "ptxas info    : Compiling entry function '%s' for 'sm_90'\n", n)
		fmt.Fprintf(&b, "ptxas info    : Function properties for %s\n", n)
		b.WriteString("    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n")
		b.WriteString("ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n")
		fmt.Fprintf(&b, "ptxas warning : Registers are spilled to local memory in function '%s', 8 bytes spill stores, 8 bytes spill loads\n", n)
	}
	b.WriteString("Fatbin elf code:\n================\narch = sm_90\ncode version = [1,8]\nhost = linux\ncompile_size = 64bit\n\nResource usage:\n Common:\n  GLOBAL:0\n")
	for _, n := range names {
		fmt.Fprintf(&b, " Function %s:\n  REG:8 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:360 TEXTURE:0 SURFACE:0 SAMPLER:0\n", n)
	}
	for _, prose := range []string{
		"-- Installing: /opt/kernels/Killed", "make[1]: Leaving directory '/src/Segmentation fault'", "[ 50%] Building CUDA object CMakeFiles/Killed.dir/Killed.cu.o",
		"test_segfault: ok", "    // the watchdog reports: Segmentation fault", "harness: checked 3 kernels, no error: all passed",
	} {
		b.WriteString(prose + "\n")
	}
	l := parseBytes(t, []byte(b.String()))
	if errs := errorsAt(l); len(errs) != 0 {
		for _, d := range l.Diagnostics {
			t.Logf("%s %s @%d: %s", d.Severity, d.Kind, d.InputLn, d.Text)
		}
		t.Fatalf("errors %q on a log that reports no failure", errs)
	}
	if len(l.Kernels) != 2*len(names) {
		t.Errorf("%d records, want %d", len(l.Kernels), 2*len(names))
	}
}

// Every real capture in testdata/ (build logs, dumps, the sanitizer's and the harness's
// output, gzipped or not) raises no failure found inside another line.
func TestParseRealCapturesHaveNoGluedFailure(t *testing.T) {
	files := 0
	err := filepath.WalkDir(filepath.Join("..", "..", "testdata"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "fakegpu" {
			return filepath.SkipDir // the fake toolchain's scripts, not captures
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		if strings.HasSuffix(p, ".gz") {
			if r, err = gzip.NewReader(f); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		var l Log
		if err := l.Parse(r, p, nil); err != nil {
			return err
		}
		files++
		for _, d := range l.Diagnostics {
			if strings.Contains(d.Text, gluedNote) {
				t.Errorf("%s:%d: %s: %s", p, d.InputLn, d.Kind, d.Text)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 1000 {
		t.Errorf("only %d captures read", files)
	}
}

// A glued failure is found however the line reaches the parser (CRLF, ANSI colour, CI
// timestamps), and only once.
func TestParseGluedFailureOnce(t *testing.T) {
	in := "2026-11-21T05:39:12.1234567Z \x1b[1mptxas info    : Used 22 registers, 376 bytes cmem[0]Segmentation fault (core dumped)\x1b[0m\r\n"
	l := parseBytes(t, []byte("ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_89'\nptxas info    : Function properties for _Z3fooPf\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"+in))
	if got := errorsAt(l); !slices.Equal(got, []string{"crashed@4"}) {
		t.Errorf("errors %q, want crashed@4", got)
	}
	if !bytes.Contains([]byte(l.Diagnostics[len(l.Diagnostics)-1].Text), []byte("Segmentation fault (core dumped) (printed into another line")) {
		t.Errorf("text %q", l.Diagnostics[len(l.Diagnostics)-1].Text)
	}
}

// A line longer than the parser reads (progress output with no line end, megabytes of it)
// is still read at its end: a crash printed there fails the gate. A resource line cut so
// is an error; any other long line is no failure by its length.
func TestParseLongLineEnd(t *testing.T) {
	log := string(readTestdata(t, "shared-h200-cuda13.0/ptxas_sm90.txt"))
	progress := strings.Repeat("\r[#####     ] building", (2*maxLine)/22)
	for _, tc := range []struct {
		name, line, want string
	}{
		{"a crash after progress output", progress + "Segmentation fault (core dumped)", "crashed"},
		{"a killed compiler after progress output", progress + "nvcc error   : 'cicc' died due to signal 9 (Kill signal)", "tool-error"},
		{"progress output alone", progress + " done", ""},
		{"a resource line over the limit", "ptxas info    : Used 22 registers, " + strings.Repeat("0 bytes smem, ", maxLine/14+1) + "8 bytes lmem", "incomplete-record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := parseBytes(t, []byte(log+tc.line+"\n"+log))
			want := []string{}
			if tc.want != "" {
				want = []string{fmt.Sprintf("%s@%d", tc.want, strings.Count(log, "\n")+1)}
			}
			if got := errorsAt(l); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("errors %q, want %q", got, want)
			}
		})
	}
}
