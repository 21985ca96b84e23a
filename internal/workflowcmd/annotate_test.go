package workflowcmd

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

func TestAnnotateCommands(t *testing.T) {
	tests := []struct {
		name  string
		f     GateFinding
		root  string
		props map[string]string
		data  string
	}{
		{
			name: "file, line and column under the root",
			f: GateFinding{Gate: "guard", Finding: result.Finding{Severity: result.Error,
				File: "/home/runner/work/repo/repo/.github/workflows/ci.yml", Line: 12, Column: 7,
				Message: "stops the VM"}},
			root: "/home/runner/work/repo/repo",
			props: map[string]string{"file": ".github/workflows/ci.yml", "line": "12", "col": "7",
				"title": "kernel-gate guard"},
			data: "stops the VM",
		},
		{
			name: "path outside the root stays absolute",
			f: GateFinding{Gate: "sanitizer", Finding: result.Finding{Severity: result.Error, Kernel: "flash_fwd",
				File: "/tmp/x/kernels/flash_fwd.cu", Line: 190, Message: "race"}},
			root:  "/home/runner/work/repo/repo",
			props: map[string]string{"file": "/tmp/x/kernels/flash_fwd.cu", "line": "190", "title": "kernel-gate sanitizer: flash_fwd"},
			data:  "race",
		},
		{
			name: "a sibling with the root as prefix is not under it",
			f: GateFinding{Gate: "g", Finding: result.Finding{Severity: result.Notice,
				File: "/repo-other/a.cu", Message: "m"}},
			root:  "/repo",
			props: map[string]string{"file": "/repo-other/a.cu", "title": "kernel-gate g"},
			data:  "m",
		},
		{
			name: "relative path, line 0: no line property",
			f: GateFinding{Gate: "ptxas", Finding: result.Finding{Severity: result.Warning, Kernel: "kg::flash_fwd<64, 64, false>",
				Arch: "sm_90a", File: "./kernels/flash_fwd.cu", Column: 3, Message: "registers grew by 2"}},
			props: map[string]string{"file": "kernels/flash_fwd.cu", "title": "kernel-gate ptxas: kg::flash_fwd<64, 64, false> (sm_90a)"},
			data:  "registers grew by 2",
		},
		{
			name: "no file: still annotated, without file",
			f: GateFinding{Gate: "toolkit", Finding: result.Finding{Severity: result.Notice, Line: 4,
				Message: "CUDA 13.0.88 satisfies >=12.4"}},
			props: map[string]string{"title": "kernel-gate toolkit"},
			data:  "CUDA 13.0.88 satisfies >=12.4",
		},
		{
			name: "hostile kernel name and message",
			f: GateFinding{Gate: "ptxas\n::add-mask::g", Finding: result.Finding{Severity: result.Error,
				Kernel: "evil\n::add-mask::x,title=pwned\r\n##[error]y%0A::set-output name=a::b",
				File:   "k,line=1.cu\n::error::f", Line: 3,
				Message: "line one\n::stop-commands::t\r\n##[add-mask]z %0A%25 done"}},
			props: map[string]string{
				"file":  "k,line=1.cu\n::error::f",
				"line":  "3",
				"title": "kernel-gate ptxas ::add-mask::g: evil ::add-mask::x,title=pwned  #♯[error]y%0A::set-output name=a::b",
			},
			data: "line one\n∶:stop-commands::t\r\n#♯[add-mask]z %0A%25 done",
		},
		{
			name: "a path with a bidirectional control is named in the message, escaped, not posted",
			f: GateFinding{Gate: "guard", Finding: result.Finding{Severity: result.Error,
				File: "scripts/txt\u202eexe.sh", Line: 3, Message: "reboots"}},
			props: map[string]string{"title": "kernel-gate guard"},
			data:  `reboots (file scripts/txt\u202eexe.sh)`,
		},
		{
			name:  "unknown severity is a notice; empty message uses the metric",
			f:     GateFinding{Gate: "x", Finding: result.Finding{Severity: "bogus", Metric: "spill_stores"}},
			props: map[string]string{"title": "kernel-gate x"},
			data:  "spill_stores",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			st := Annotate(&buf, []GateFinding{tt.f}, AnnotateOptions{Root: tt.root})
			if st.Written.Total() != 1 || st.Omitted.Total() != 0 || st.Err != nil {
				t.Errorf("stats %+v", st)
			}
			out := buf.String()
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Errorf("not one line: %q", out)
			}
			cmds := parseRunner(out)
			if len(cmds) != 1 {
				t.Fatalf("runner sees %d commands in %q", len(cmds), out)
			}
			c := cmds[0]
			if want := levels[levelOf(tt.f.Severity)]; c.name != want {
				t.Errorf("command %q, want %q", c.name, want)
			}
			if fmt.Sprint(c.props) != fmt.Sprint(tt.props) {
				t.Errorf("properties\n got %q\nwant %q\nline %q", c.props, tt.props, out)
			}
			if c.data != tt.data {
				t.Errorf("message\n got %q\nwant %q", c.data, tt.data)
			}
		})
	}
}

func TestAnnotateLongKernelTitle(t *testing.T) {
	k := strings.Repeat("a", 500) + "<" + strings.Repeat("b", 500) + ">"
	var buf bytes.Buffer
	Annotate(&buf, []GateFinding{{Gate: "ptxas", Finding: result.Finding{Severity: result.Error, Kernel: k, Message: "m"}}}, AnnotateOptions{})
	title := parseRunner(buf.String())[0].props["title"]
	if n := len([]rune(title)); n > 200 || !strings.Contains(title, "…") || !strings.HasSuffix(title, "b>") {
		t.Errorf("title of %d runes: %q", n, title)
	}
}

// makeFindings returns n findings cycling notice, warning, error, numbered in Message.
func makeFindings(n int) []GateFinding {
	sev := []result.Severity{result.Notice, result.Warning, result.Error}
	fs := make([]GateFinding, n)
	for i := range fs {
		fs[i] = GateFinding{Gate: "ptxas", Finding: result.Finding{Severity: sev[i%3], Kernel: "k",
			File: "kernels/k.cu", Line: i + 1, Message: fmt.Sprintf("finding %d", i)}}
	}
	return fs
}

func TestAnnotateWorstFirstAndCapped(t *testing.T) {
	for _, tt := range []struct {
		n                 int
		written, omitted  Counts
		countLine         string
		firstErr, lastNot string
	}{
		{n: 100000, written: Counts{10, 10, 10}, omitted: Counts{33323, 33323, 33324},
			countLine: "kernel-gate: 99970 more findings (33323 errors, 33323 warnings, 33324 notices) are in the job summary: GitHub shows at most 10 annotations of each level per step.",
			firstErr:  "finding 2", lastNot: "finding 27"},
		{n: 30, written: Counts{10, 10, 10}, firstErr: "finding 2", lastNot: "finding 27"},
		{n: 31, written: Counts{10, 10, 10}, omitted: Counts{0, 0, 1},
			countLine: "kernel-gate: 1 more finding (1 notice) is in the job summary: GitHub shows at most 10 annotations of each level per step.",
			firstErr:  "finding 2", lastNot: "finding 27"},
		{n: 3, written: Counts{1, 1, 1}, firstErr: "finding 2", lastNot: "finding 0"},
	} {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			var buf bytes.Buffer
			st := Annotate(&buf, makeFindings(tt.n), AnnotateOptions{})
			if st.Written != tt.written || st.Omitted != tt.omitted || st.Err != nil {
				t.Errorf("stats %+v, want written %+v omitted %+v", st, tt.written, tt.omitted)
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if tt.countLine != "" {
				if last := lines[len(lines)-1]; last != tt.countLine {
					t.Errorf("last line %q\nwant %q", last, tt.countLine)
				}
				lines = lines[:len(lines)-1]
			}
			if len(lines) != tt.written.Total() {
				t.Fatalf("%d annotation lines, want %d", len(lines), tt.written.Total())
			}
			cmds := parseRunner(buf.String())
			if len(cmds) != tt.written.Total() {
				t.Fatalf("runner sees %d commands, want %d", len(cmds), tt.written.Total())
			}
			// Worst first, and in the given order within a level.
			rank := map[string]int{"error": 0, "warning": 1, "notice": 2}
			prevLine := 0
			for i, c := range cmds {
				if i > 0 && rank[c.name] < rank[cmds[i-1].name] {
					t.Fatalf("command %d (%s) after a %s", i, c.name, cmds[i-1].name)
				}
				line := 0
				fmt.Sscan(c.props["line"], &line)
				if i > 0 && c.name == cmds[i-1].name && line <= prevLine {
					t.Errorf("command %d: line %d after %d in the same level: not stable", i, line, prevLine)
				}
				prevLine = line
			}
			if cmds[0].data != tt.firstErr || cmds[len(cmds)-1].data != tt.lastNot {
				t.Errorf("first %q last %q, want %q and %q", cmds[0].data, cmds[len(cmds)-1].data, tt.firstErr, tt.lastNot)
			}
		})
	}
}

func TestAnnotateNothingAndWriteError(t *testing.T) {
	var buf bytes.Buffer
	if st := Annotate(&buf, nil, AnnotateOptions{}); st != (Stats{}) || buf.Len() != 0 {
		t.Errorf("no findings: %+v, %q", st, buf.String())
	}
	st := Annotate(failWriter{}, makeFindings(40), AnnotateOptions{Max: 2})
	if st.Err == nil || st.Written.Total() != 0 || st.Omitted.Total() != 40 {
		t.Errorf("write error: %+v", st)
	}
}

func TestFromResult(t *testing.T) {
	r := result.New("t",
		result.Gate{Name: "ptxas", Findings: []result.Finding{{Message: "a"}, {Message: "b"}}},
		result.Gate{Name: "sass"},
		result.Gate{Name: "ncu", Findings: []result.Finding{{Message: "c"}}})
	got := FromResult(r)
	var s []string
	for _, f := range got {
		s = append(s, f.Gate+":"+f.Message)
	}
	if strings.Join(s, " ") != "ptxas:a ptxas:b ncu:c" {
		t.Errorf("FromResult = %v", s)
	}
}

func BenchmarkAnnotate100k(b *testing.B) {
	fs := makeFindings(100000)
	for b.Loop() {
		var buf bytes.Buffer
		Annotate(&buf, fs, AnnotateOptions{})
	}
}

func findingWith(s string) result.Finding {
	return result.Finding{Severity: result.Error, Kernel: s, Arch: s, File: "f" + s, Line: 1, Column: 1, Message: s}
}
