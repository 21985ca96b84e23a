package config

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
)

func TestParseExampleConfig(t *testing.T) {
	c, err := Load(filepath.Join("..", "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if c.CUDA != ">=12.4" || *c.PTXAS.MaxRegisters != 128 || *c.PTXAS.MaxRegisterIncrease != 32 {
		t.Errorf("top level: %+v", c)
	}
	if len(c.PTXAS.Kernels) != 3 || c.PTXAS.Kernels[0].Match != "flash_fwd<*>" || *c.PTXAS.Kernels[0].MaxRegisters != 160 ||
		c.PTXAS.Kernels[0].Line == 0 {
		t.Errorf("ptxas rules: %+v", c.PTXAS.Kernels)
	}
	if len(c.SASS.Kernels) != 2 || c.SASS.Kernels[0].Require[0] != "HMMA|HGMMA" || c.SASS.Kernels[0].Line == 0 {
		t.Errorf("sass rules: %+v", c.SASS.Kernels)
	}
	if c.PTXAS.File == "" || c.SASS.File == "" || c.Run.File == "" {
		t.Error("gate configs must know the file name for their messages")
	}
	set, err := c.Run.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Targets) != 3 || set.Targets[0].Name != "attention" || set.Targets[0].Line == 0 ||
		!slices.Equal(set.Arch, []string{"sm_89", "sm_90a"}) || set.CheckRounds != DefaultRunCheckRounds {
		t.Errorf("run: %+v", set)
	}
}

// Every bad setting of the run section is reported with its line.
func TestRunSectionErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"bad arch", "run:\n  arch: [sm90]\n  targets: [{name: a, sources: [a.cu]}]\n", `k.yml:2: run.arch: "sm90" is not an architecture`},
		{"owned flag", "run:\n  flags: [-o, x]\n", `"-o" is set by kernel-gate run`},
		{"owned flag with value", "run:\n  flags: [\"--gpu-architecture=sm_90\"]\n", `is set by kernel-gate run`},
		{"no sources", "run:\n  targets:\n    - name: a\n", `k.yml:3: run.targets[a]: sources: name the .cu files`},
		{"bad name", "run:\n  targets:\n    - name: \"a/b\"\n      sources: [x.cu]\n", `name "a/b"`},
		{"twice", "run:\n  targets:\n    - {name: a, sources: [x.cu]}\n    - {name: a, sources: [y.cu]}\n", `the name "a" is used twice`},
		{"comma in kernel", "run:\n  targets:\n    - {name: a, sources: [x.cu], kernels: [\"f,g\"]}\n", `KG_KERNELS is comma-separated`},
		{"bad reference", "run:\n  targets:\n    - {name: a, sources: [x.cu], reference: \"python3 'x\"}\n", `reference:`},
		{"bad timeout", "run:\n  timeout: soon\n", `k.yml:2: run.timeout: "soon" is not a positive duration`},
		{"check rounds", "run:\n  check_rounds: 0\n", `run.check_rounds: must be between 1 and 1000`},
		{"unknown key", "run:\n  targets:\n    - {name: a, sources: [x.cu], shapez: {}}\n", `shapez`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "k.yml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown top-level key", "cuda: '>=12'\nptxs:\n  max_registers: 1\n", `k.yml:2: unknown key "ptxs" in the top level (did you mean "ptxas"?)`},
		{"unknown limit", "ptxas:\n  max_regs: 1\n", `k.yml:2: unknown key "max_regs" in ptxas`},
		{"unknown key in a rule", "ptxas:\n  kernels:\n    - match: a\n      max_register: 9\n", `k.yml:4: unknown key "max_register" in ptxas.kernels[0] (did you mean "max_registers"?)`},
		{"unknown key in an arch section", "ptxas:\n  arch:\n    sm_90a:\n      max_smem_bytes: 9\n", `k.yml:4: unknown key "max_smem_bytes" in ptxas.arch.sm_90a`},
		{"unknown key in a sass rule", "sass:\n  kernels:\n    - match: a\n      requires: [HMMA]\n", `k.yml:4: unknown key "requires" in sass.kernels[0] (did you mean "require"?)`},
		{"far-off key lists the valid ones", "zzzzzzzz: 1\n", "valid keys: baseline, correctness, cuda, guard, "},
		{"wrong type", "ptxas:\n  max_registers: lots\n", "k.yml: line 2: cannot unmarshal !!str `lots` into int64"},
		{"bad constraint", "cuda: 'twelve'\n", `k.yml:1: cuda: "twelve" is not a version constraint`},
		{"empty glob", "ptxas:\n  kernels:\n    - max_registers: 9\n", "k.yml:3: ptxas.kernels[0]: match must be a non-empty kernel glob"},
		{"bad sass regexp", "sass:\n  kernels:\n    - match: a\n      require: ['HMMA(']\n", "k.yml:3"},
		{"not yaml", "ptxas: [\n", "k.yml: yaml:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "k.yml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseEmptyAndAnchors(t *testing.T) {
	for _, in := range []string{"", "# only a comment\n", "---\n"} {
		if _, err := Parse([]byte(in), "k.yml"); err != nil {
			t.Errorf("Parse(%q) = %v, want defaults", in, err)
		}
	}
	// YAML anchors are followed when checking keys.
	in := "limits: &l\n  max_registers: 1\n"
	if _, err := Parse([]byte(in), "k.yml"); err == nil || !strings.Contains(err.Error(), `unknown key "limits"`) {
		t.Errorf("anchored unknown key: %v", err)
	}
	ok := "ptxas:\n  arch:\n    sm_89: &small {max_registers: 96}\n    sm_80: *small\n"
	c, err := Parse([]byte(ok), "k.yml")
	if err != nil || *c.PTXAS.Arch["sm_80"].MaxRegisters != 96 {
		t.Errorf("alias: %v %+v", err, c.PTXAS.Arch)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	c, err := Find("")
	if err != nil || c.Path != "" {
		t.Errorf("no config anywhere: %+v, %v; want defaults", c, err)
	}
	os.MkdirAll(".github", 0o755)
	os.WriteFile(".github/kernel-gate.yml", []byte("cuda: '>=12'\n"), 0o644)
	if c, err := Find(""); err != nil || c.Path != ".github/kernel-gate.yml" {
		t.Errorf("got %q, %v", c.Path, err)
	}
	os.WriteFile("kernel-gate.yml", []byte("cuda: '>=13'\n"), 0o644)
	if c, err := Find(""); err != nil || c.CUDA != ">=13" {
		t.Errorf("kernel-gate.yml must win: %+v, %v", c, err)
	}
	if _, err := Find("missing.yml"); err == nil || !strings.Contains(err.Error(), "missing.yml") {
		t.Errorf("an explicit missing config must be an error: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("..", "kernel-gate.yml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte("ptxas:\n  kernels:\n    - match: a\n      arch: {sm_90: {max_registers: 1}}\n"))
	f.Add([]byte("baseline:\n  store: git\n  branch: perf/base\n  keep: 3\n  compatible_cuda: \"~13.0\"\n  compatible_driver: \">=570\"\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := Parse(in, "fuzz.yml")
		if err == nil && c.Path != "fuzz.yml" {
			t.Fatalf("Path = %q", c.Path)
		}
	})
}

// Findings name the config line that set their limit, at every level.
func TestLimitSourcesCarryLines(t *testing.T) {
	c, err := Parse([]byte("ptxas:\n  max_registers: 100\n  arch:\n    sm_89:\n      max_registers: 90\n  kernels:\n    - match: gemm_*\n      max_registers: 64\n"), "k.yml")
	if err != nil {
		t.Fatal(err)
	}
	// The clean recording's compiles of flash_fwd.cu and gemm_wmma.cu (each source has its
	// own log since the kernels' own translation units).
	var l ptxas.Log
	for _, log := range []string{"3.log", "4.log"} {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "replay", "clean", "head", "attention", "compile", log))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Parse(bytes.NewReader(raw), log, nil); err != nil {
			t.Fatal(err)
		}
	}
	g, err := ptxas.Evaluate(&l, c.PTXAS, nil)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, f := range g.Findings {
		msgs = append(msgs, f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"kg::flash_fwd<64, 64, true> (sm_90a) registers 154 > 100 (limit from k.yml:2)",
		"kg::flash_fwd<64, 64, true> (sm_89) registers 129 > 90 (limit from k.yml:4 (arch sm_89))",
		"kg::gemm_wmma<64, 64, 32> (sm_89) registers 70 > 64 (limit from k.yml:7 (gemm_*))",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no finding says %q; findings:\n%s", want, all)
		}
	}
}

// The configuration reference (docs/configuration.md) must be a config the loader accepts.
func TestConfigReferenceExampleParses(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "\n## Every key\n")
	if !ok {
		t.Fatal("docs/configuration.md has no \"Every key\" section")
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatal("the Every key section has no yaml block")
	}
	block, _, _ = strings.Cut(block, "```")
	c, err := Parse([]byte(block), "docs/configuration.md")
	if err != nil {
		t.Fatalf("the reference's example config does not load: %v", err)
	}
	if len(c.Sanitizer.Suppress) != 1 || len(c.Correctness.Kernels) != 1 || len(c.PTXAS.Kernels) != 1 || len(c.SASS.Kernels) != 1 {
		t.Errorf("sections lost: %+v", c)
	}
}

// A config of several YAML documents is refused naming the second one's line: the parser
// used to read the first and drop the rest, so a limit written after "---" was never
// applied (and a typo there never reported).
func TestParseRefusesSecondDocument(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"limit after ---", "cuda: '>=12'\n---\nptxas:\n  max_registers: 64\n", `k.yml:2: a second YAML document starts here`},
		{"leading --- then a second", "---\nptxas:\n  max_registers: 64\n---\nptxas:\n  max_registers: 200\n", `k.yml:4: a second YAML document`},
		{"after an end marker", "cuda: '>=12'\n...\n---\nsass: {}\n", `k.yml:3: a second YAML document`},
		{"an empty second document", "cuda: '>=12'\n---\n", `k.yml:2: a second YAML document`},
		{"a broken second document", "cuda: '>=12'\n---\nptxas: [\n", `k.yml: after its first YAML document`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "k.yml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v; want one containing %q", err, tc.want)
			}
		})
	}
	// One document, with or without its markers, is read as before.
	for _, in := range []string{"---\nptxas:\n  max_registers: 64\n", "ptxas:\n  max_registers: 64\n...\n", "# c\n---\nptxas:\n  max_registers: 64\n"} {
		if c, err := Parse([]byte(in), "k.yml"); err != nil || c.PTXAS.MaxRegisters == nil || *c.PTXAS.MaxRegisters != 64 {
			t.Errorf("Parse(%q) = %v, %v", in, c.PTXAS.MaxRegisters, err)
		}
	}
}
