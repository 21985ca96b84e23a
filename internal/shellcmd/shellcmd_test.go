package shellcmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The values of kernel-gate.yml, kernels/*/kernel-gate.yml and testdata/external's configs,
// and what a pipe or a list adds.
var words = []struct {
	line string
	want []string
}{
	{"python3 kernels/sdpa_reference.py", []string{"python3", "kernels/sdpa_reference.py"}},
	{`./build/harness --x "a b"`, []string{"./build/harness", "--x", "a b"}},
	{`./build/harness --x 'a b' c\ d`, []string{"./build/harness", "--x", "a b", "c d"}},
	{"python3 bench/kg_harness.py", []string{"python3", "bench/kg_harness.py"}},
	{"cd kernels && python3 softmax.py | tee out.txt", []string{"cd", "kernels", "python3", "softmax.py", "tee", "out.txt"}},
	{"PYTHONPYCACHEPREFIX=/tmp/pyc python3 x.py", []string{"PYTHONPYCACHEPREFIX=/tmp/pyc", "python3", "x.py"}},
	{"env PYTHONDONTWRITEBYTECODE=1 python3 x.py", []string{"env", "PYTHONDONTWRITEBYTECODE=1", "python3", "x.py"}},
	{"export A=1; ./h", []string{"A=1", "./h"}},
	{`sh -c "python3 x.py"`, []string{"sh", "-c", "python3 x.py"}},
	{"$HOME/h --n $(nproc) x", []string{"--n", "x", "nproc"}},
	{`./h "a \"b\" \$x" 'c\d'`, []string{"./h", `a "b" $x`, `c\d`}},
	{"", nil},
	{"'open", nil},
}

func TestWords(t *testing.T) {
	for _, tt := range words {
		got := Words(tt.line)
		if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("Words(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		line, want string // want: part of the error, "" for none
	}{
		{"python3 kernels/sdpa_reference.py", ""},
		{`./build/harness --x "a b"`, ""},
		{"python3 x.py | tee log && test -s log", ""},
		{"cd kernels && ./h > out 2>&1", ""},
		{"", "an empty command"},
		{"  \t", "an empty command"},
		{"./h\x00 --x", "NUL"},
		{`./h "open`, "not a shell command"},
		{"./h && ", "not a shell command"},
		{strings.Repeat("a", MaxBytes+1), "at most"},
	} {
		err := Check(tt.line)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%.40q) = %v, want nil", tt.line, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%.40q) = %v, want one saying %q", tt.line, err, tt.want)
		}
	}
}

func TestShow(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{Argv("python3 x.py | tee log"), "python3 x.py | tee log"},
		{[]string{"/tmp/rec/base/harness"}, "/tmp/rec/base/harness"},
		{[]string{"./h", "a b"}, "./h 'a b'"},
		{[]string{"sh", "-c", "x", "extra"}, "sh -c x extra"},
	} {
		if got := Show(tt.argv); got != tt.want {
			t.Errorf("Show(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

// TestArgvRuns runs each command through sh -c as kernel-gate does: the words of the
// values split without a shell before mean the same, and a pipe, a list and $VAR from the
// command's environment work.
func TestArgvRuns(t *testing.T) {
	dir := t.TempDir()
	// A program that prints its arguments one a line, as a harness sees them.
	prog := filepath.Join(dir, "args")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ line, want string }{
		{`./args --x "a b"`, "[--x]\n[a b]\n"},
		{`./args 'a  b' c\ d`, "[a  b]\n[c d]\n"},
		{`./args "$KG_MODE"`, "[bench]\n"},
		{`./args one | tr o 0`, "[0ne]\n"},
		{`./args one && ./args two`, "[one]\n[two]\n"},
		{`cd . && ./args "$PWD" >/dev/null; echo done`, "done\n"},
	} {
		argv := Argv(tt.line)
		cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, []string{"KG_MODE=bench", "PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.line, out, err, tt.want)
		}
	}
}

func FuzzWords(f *testing.F) {
	for _, tt := range words {
		f.Add(tt.line)
	}
	f.Add("a $(b $(c `d`)) \"${e:-f}\" <<EOF\nx\nEOF\n")
	f.Fuzz(func(t *testing.T, line string) {
		ws := Words(line)
		if _, err := parse(line); err != nil && ws != nil {
			t.Errorf("Words(%q) = %q of a line that does not parse", line, ws)
		}
		if got := Show(Argv(line)); got != line {
			t.Errorf("Show(Argv(%q)) = %q", line, got)
		}
	})
}
