package envdumptest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Clean dumps pass; each way a dump can fail is reported, naming the dump and what it held.
func TestCheck(t *testing.T) {
	const canary = "KG_CANARY=seen"
	secrets := map[string]string{"GITHUB_TOKEN": "ghs_secret_value"}
	forbidden := func(name string) bool { return strings.HasPrefix(name, "ACTIONS_") }
	dir := t.TempDir()
	write := func(name string, lines ...string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("nvcc.101", "PATH=/usr/bin", canary)
	Check(t, dir, canary, secrets, forbidden, "nvcc")

	write("harness.102", "PATH=/usr/bin")
	write("cuobjdump.103", canary, "OTHER=ghs_secret_value")
	write("ncu.104", canary, "GITHUB_TOKEN=")
	write("nvidia-smi.105", canary, "ACTIONS_RUNTIME_URL=x")
	ft := &fakeT{TB: t}
	Check(ft, dir, canary, secrets, forbidden, "nvcc", "compute-sanitizer")
	want := []string{
		"compute-sanitizer left no environment dump (dumps of: [cuobjdump harness ncu nvcc nvidia-smi]): the fake toolchain did not run",
		"cuobjdump.103 was handed the value of GITHUB_TOKEN",
		"harness.102: the dump is not the tool's environment:\nPATH=/usr/bin\n",
		"ncu.104 was handed GITHUB_TOKEN",
		"nvidia-smi.105 was handed ACTIONS_RUNTIME_URL",
	}
	slices.Sort(ft.errors)
	if !slices.Equal(ft.errors, want) {
		t.Errorf("errors\n%q\nwant\n%q", ft.errors, want)
	}
}

type fakeT struct {
	testing.TB
	errors []string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
