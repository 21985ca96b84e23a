package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The names of testdata/cuda11.8-cpu/list-elf.txt, which cuobjdump -xelf all wrote.
var realCubins = []string{"softmax-gemm_wmma.sm_89.cubin", "softmax-gemm_wmma.sm_90.cubin", "softmax.sm_89.cubin", "softmax.sm_90.cubin", "gemm_wmma.sm_89.cubin", "gemm_wmma.sm_90.cubin"}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// A record of the extraction directory checks out only when it holds exactly the listed
// cubins, each a regular file, each once.
func TestCubinsFileCheck(t *testing.T) {
	files := func(names ...string) []cubinEntry {
		var out []cubinEntry
		for _, n := range names {
			out = append(out, cubinEntry{Name: n, Kind: "file", Size: 1072})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		rec  cubinsFile
		want string
	}{
		{"all of them", cubinsFile{Entries: files(realCubins...)}, ""},
		{"in another order", cubinsFile{Entries: files(reversed(realCubins)...)}, ""},
		{"one missing", cubinsFile{Entries: files(realCubins[:5]...)}, `"gemm_wmma.sm_90.cubin", which --list-elf lists, was not extracted`},
		{"one more", cubinsFile{Entries: files(append(slices.Clone(realCubins), "x.cubin")...)}, `it holds "x.cubin", which --list-elf does not list`},
		{"more than were read", cubinsFile{Entries: files(realCubins...), More: true}, "more files than --list-elf lists"},
		{"a link", cubinsFile{Entries: append(files(realCubins[1:]...), cubinEntry{Name: realCubins[0], Kind: "a symbolic link"})}, "is a symbolic link, not a regular file"},
		{"twice", cubinsFile{Entries: files(append(slices.Clone(realCubins), realCubins[0])...)}, "is there twice"},
		{"a name to show", cubinsFile{Entries: files("\x1b[31m::error::x\n")}, `it holds "\x1b[31m::error::x\n", which`},
		{"empty", cubinsFile{Entries: []cubinEntry{}}, `"softmax-gemm_wmma.sm_89.cubin", which --list-elf lists, was not extracted`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rec.check(realCubins)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// A name cuobjdump --list-elf prints is extracted only when it names a file of the
// extraction directory and nothing else.
func TestCubinNameProblem(t *testing.T) {
	for name, want := range map[string]string{
		"kg_ext.1.sm_90a.cubin": "", "flash_fwd.sm_80.cubin": "", "softmax-gemm_wmma.sm_89.cubin": "", "module.cubin": "",
		"../x.cubin": "path separator", "a/b.cubin": "path separator", `a\b.cubin`: "path separator", "..": `".."`, "a..b.cubin": `".."`,
		"-o.cubin": `starts with "-"`, "a\tb.cubin": "control character", "": "empty",
	} {
		if got := cubinNameProblem(name); want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
}

// cubins.json (a recording's, or a restored base's) holds only kinds of entries a run writes:
// a check's message shows the kind as it is, so any other text is refused where it is read.
func TestCubinsFileRefusesKindsNoRunWrites(t *testing.T) {
	for _, kind := range []string{"file", "a symbolic link", "a directory", "unreadable", "a FIFO (named pipe)", "not a regular file"} {
		var c cubinsFile
		if err := readCubinsFile([]byte(`{"entries": [{"name": "softmax.sm_89.cubin", "kind": "`+kind+`"}]}`), &c); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
	for _, kind := range []string{"\u001b[31m::error::forged", "a link](https://example.com)", "", "File"} {
		var c cubinsFile
		err := readCubinsFile([]byte(`{"entries": [{"name": "softmax.sm_89.cubin", "kind": "`+kind+`"}]}`), &c)
		if err == nil {
			t.Errorf("kind %q read; check says %q", kind, c.check([]string{"softmax.sm_89.cubin"}))
		} else if strings.ContainsAny(err.Error(), "\x1b\n") {
			t.Errorf("kind %q: the refusal shows it as it is: %q", kind, err)
		}
	}
}

func FuzzCubinsFile(f *testing.F) {
	f.Add([]byte(`{"entries": [{"name": "softmax.sm_89.cubin", "kind": "file", "size": 27360}]}`))
	f.Add([]byte(`{"entries": [{"name": "softmax.sm_89.cubin", "kind": "a symbolic link"}], "more": true}`))
	f.Add([]byte(`{"entries": [], "entries": []}`))
	f.Add([]byte(`{"entries": [{"name": "x", "kind": "file", "extra": 1}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var c cubinsFile
		if err := readCubinsFile(raw, &c); err != nil {
			return
		}
		if c.check(realCubins) != "" {
			return
		}
		// Checked out: exactly the listed names, each a regular file, once.
		var names []string
		for _, e := range c.Entries {
			if e.Kind != "file" || e.Size < 0 {
				t.Fatalf("%+v passed", e)
			}
			names = append(names, e.Name)
		}
		slices.Sort(names)
		want := slices.Sorted(slices.Values(realCubins))
		if !slices.Equal(names, want) || c.More {
			t.Fatalf("entries %q (more %v) passed for %q", names, c.More, want)
		}
	})
}

// The cubins' outputs are joined a line apart: one that does not end its last line must not
// glue the next one's first line (its .target or .headerflags, which says its arch) to it.
func TestConcatOutputsKeepsLinesApart(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, text := range []string{"\t.target\tsm_89\nLAST", "\t.target\tsm_90a\nend\n", ""} {
		path := filepath.Join(dir, strconv.Itoa(i)+".txt")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	var b bytes.Buffer
	if err := concatOutputs(&b, paths); err != nil {
		t.Fatal(err)
	}
	if want := "\t.target\tsm_89\nLAST\n\t.target\tsm_90a\nend\n"; b.String() != want {
		t.Errorf("joined %q, want %q", b.String(), want)
	}
	if err := concatOutputs(&b, []string{filepath.Join(dir, "missing.txt")}); err == nil {
		t.Error("a missing output joined without an error")
	}
}
