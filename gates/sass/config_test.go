package sass

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestPatternSemantics(t *testing.T) {
	tests := []struct {
		pattern string
		opcode  string
		want    bool
	}{
		{"HMMA|HGMMA", "HMMA.16816.F32", true},
		{"HMMA|HGMMA", "HGMMA.64x128x16.F32", true},
		{"HMMA|HGMMA", "HMMA", true},
		{"HMMA|HGMMA", "IMMA.16832.S8.S8", false},
		{"HMMA|HGMMA", "XHMMA", false},
		{"LDL", "LDL", true},
		{"LDL", "LDL.64", true},
		{"LDL", "LDLX", false},
		{"LDL|STL", "STL.128", true},
		{"HMMA.16816", "HMMA.16816.F32", true},
		{"HMMA.16816", "HMMA.1688.F32", false},
		{`HMMA\.16816\.F32`, "HMMA.16816.F32", true},
		{`HMMA\.16816\.F32`, "HMMA.16816.F32.BF16", true},
		{"LDG.E.128", "LDG.E.128.CONSTANT", true},
		{"LDG.E.128", "LDG.E.64", false},
		{"LDG.*CONSTANT", "LDG.E.CONSTANT", true},
		{"hmma", "HMMA.16816.F32", false},
		{"(?i)hmma", "HMMA.16816.F32", true},
		{"NOP|EXIT", "EXIT", true},
	}
	for _, tt := range tests {
		p := mustPattern(t, tt.pattern)
		if got := p.Match(tt.opcode); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.opcode, got, tt.want)
		}
	}
	for _, bad := range []string{"", "  ", "HMMA(", "A)|(B", "[", "*"} {
		if _, err := CompilePattern(bad); err == nil {
			t.Errorf("CompilePattern(%q) accepted", bad)
		}
	}
}

const configYAML = `cuda: ">=12.2"
sass:
  require: [EXIT]
  forbid:
    - LDL|STL
  kernels:
    - match: "gemm_*"
      arch: [sm_90]
      require: ["HMMA|HGMMA"]
      reason: tensor cores
    - match: "flash_*"
      forbid: [LDL]
`

type fileConfig struct {
	CUDA string `yaml:"cuda"`
	SASS Config `yaml:"sass"`
}

func yamlDecode(text string, v any) error { return yaml.Unmarshal([]byte(text), v) }

func decodeConfig(t *testing.T, text string) Config {
	t.Helper()
	var fc fileConfig
	if err := yaml.Unmarshal([]byte(text), &fc); err != nil {
		t.Fatal(err)
	}
	return fc.SASS
}

// validate resolves c as config.Parse does, for its error.
func validate(c Config) error { return c.Resolve(c.File) }

func TestConfigYAML(t *testing.T) {
	c := decodeConfig(t, configYAML)
	if len(c.Kernels) != 2 || c.Kernels[0].Line != 7 || c.Kernels[1].Line != 11 {
		t.Fatalf("rules %+v, want lines 7 and 11", c.Kernels)
	}
	if r := c.Kernels[0]; r.Match != "gemm_*" || r.Arch[0] != "sm_90" || r.Require[0] != "HMMA|HGMMA" || r.Reason != "tensor cores" {
		t.Errorf("rule 0 = %+v", r)
	}
	if c.KeyLine("require") != 3 || c.KeyLine("forbid") != 4 || c.Forbid[0] != "LDL|STL" {
		t.Errorf("top level: %+v", c)
	}
	if err := validate(c); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		contains []string
	}{
		{"bad regexp in a rule", "sass:\n  kernels:\n    - match: gemm_*\n      require: [\"HMMA(\"]\n",
			[]string{"kernel-gate.yml:3", "sass.kernels[0]", `"HMMA("`, "missing closing )"}},
		{"bad regexp at the top", "sass:\n  forbid: [LDL, \"STL[\"]\n",
			[]string{"kernel-gate.yml:2", "forbid[1]", "missing closing ]"}},
		{"empty glob", "sass:\n  kernels:\n    - match: \"\"\n      require: [HMMA]\n",
			[]string{"kernel-gate.yml:3", "non-empty kernel glob"}},
		{"nothing to check", "sass:\n  kernels:\n    - match: gemm_*\n",
			[]string{"kernel-gate.yml:3", "neither require nor forbid"}},
		{"bad arch", "sass:\n  kernels:\n    - match: gemm_*\n      arch: [hopper]\n      require: [HMMA]\n",
			[]string{"kernel-gate.yml:3", `"hopper"`, "sm_90"}},
		{"virtual arch", "sass:\n  kernels:\n    - match: gemm_*\n      arch: [compute_90]\n      require: [HMMA]\n",
			[]string{"PTX (virtual) arch", `"sm_90"`}},
		{"empty pattern", "sass:\n  kernels:\n    - match: gemm_*\n      require: [\"\"]\n",
			[]string{"kernel-gate.yml:3", "empty instruction pattern"}},
		{"two problems", "sass:\n  kernels:\n    - match: a\n      require: [\"(\"]\n    - match: b\n      forbid: [\")\"]\n",
			[]string{"kernel-gate.yml:3", "kernel-gate.yml:5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(decodeConfig(t, tt.yaml))
			if err == nil {
				t.Fatal("Validate accepted the config")
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not contain %q", err, c)
				}
			}
		})
	}
	c := decodeConfig(t, "sass:\n  kernels:\n    - match: a\n      require: [\"(\"]\n")
	c.File = ".github/kernel-gate.yml"
	if err := validate(c); err == nil || !strings.Contains(err.Error(), ".github/kernel-gate.yml:3") {
		t.Errorf("File not used in the message: %v", err)
	}
	if _, err := Evaluate(&Dump{}, c); err == nil {
		t.Error("Evaluate accepted an invalid config")
	}
	if err := validate(Config{}); err != nil {
		t.Errorf("an empty config is valid (it skips): %v", err)
	}
	var none *Dump
	if _, err := Evaluate(none, Config{}); err == nil || errors.Is(err, ErrNoFunctions) {
		t.Errorf("nil dump: %v", err)
	}
}

func TestArchMatches(t *testing.T) {
	tests := []struct {
		filter, arch string
		want         bool
	}{
		{"sm_90", "sm_90", true},
		{"sm_90", "sm_90a", true},
		{"sm_90a", "sm_90a", true},
		{"sm_90a", "sm_90", false},
		{"sm_9", "sm_90", false},
		{"sm_90", "sm_900", false},
		{"sm_100", "sm_100f", true},
		{"sm_80", "SM_80", true},
		{"sm_80", "", false},
	}
	for _, tt := range tests {
		if got := archMatches(tt.filter, tt.arch); got != tt.want {
			t.Errorf("archMatches(%q, %q) = %v", tt.filter, tt.arch, got)
		}
	}
	if a, err := normArch(" SM_90A "); err != nil || a != "sm_90a" {
		t.Errorf("normArch = %q, %v", a, err)
	}
}
