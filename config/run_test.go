package config

import (
	"strings"
	"testing"
)

// The target form of issue 14: a build command, a harness command and its binaries.
func TestRunCommandTarget(t *testing.T) {
	c, err := Parse([]byte(`run:
  targets:
    - name: attention-torch
      build: ""
      env: {KG_TORCH_FORM: load, NVCC_APPEND_FLAGS: "-DX=1"}
      harness: "python3 kernels/torch/kg_harness.py"
      sanitize: "python3 kernels/torch/kg_harness.py --small"
      binaries: ["$KG_CACHE_DIR/torch_extensions/**/*.so", "${KG_CACHE_DIR}/triton/**/*.cubin", "build/**/*.so"]
      kernels: [flash_fwd]
      functions: ["flash_fwd<*>"]
      shapes: {check: [small, mission], sanitize: [small], bench: [mission]}
    - name: attention
      sources: [kernels/harness.cu]
`), "k.yml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := c.Run.Settings()
	if err != nil {
		t.Fatal(err)
	}
	tt := set.Targets[0]
	if !tt.HasCommands() || set.Targets[1].HasCommands() || tt.Env["KG_TORCH_FORM"] != "load" || len(tt.Binaries) != 3 {
		t.Errorf("targets: %+v", set.Targets)
	}
	if tt.SanitizeCommand() != "python3 kernels/torch/kg_harness.py --small" {
		t.Errorf("sanitize command %q", tt.SanitizeCommand())
	}
	tt.Sanitize = ""
	if tt.SanitizeCommand() != tt.Harness {
		t.Errorf("the sanitizer runs the harness by default, not %q", tt.SanitizeCommand())
	}
	for glob, want := range map[string][2]string{
		"$KG_CACHE_DIR/a/*.so":   {"true", "a/*.so"},
		"${KG_CACHE_DIR}/a/*.so": {"true", "a/*.so"},
		"build/*.so":             {"false", "build/*.so"},
	} {
		under, rel := CacheGlob(glob)
		if got := [2]string{map[bool]string{true: "true", false: "false"}[under], rel}; got != want {
			t.Errorf("CacheGlob(%q) = %q, want %q", glob, got, want)
		}
	}
}

// Each bad setting of a harness target is refused with its file and line.
func TestRunCommandTargetErrors(t *testing.T) {
	target := func(fields string) string {
		return "run:\n  targets:\n    - name: t\n" + fields
	}
	ok := "      harness: ./h\n      binaries: [build/h]\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"both forms", target("      sources: [a.cu]\n" + ok), `k.yml:3: run.targets[t]: sources and harness: give one`},
		{"neither", target("      kernels: [a]\n"), `k.yml:3: run.targets[t]: sources: name the .cu files nvcc builds the harness from, or give harness`},
		{"no binaries", target("      harness: ./h\n"), `k.yml:3: run.targets[t]: binaries: name what build`},
		{"blank harness", target("      harness: \"  \"\n      binaries: [x]\n"), `harness: an empty command`},
		{"build without harness", target("      sources: [a.cu]\n      build: make\n"), `run.targets[t]: build: only a target with harness`},
		{"binaries without harness", target("      sources: [a.cu]\n      binaries: [x]\n"), `binaries: only a target with harness`},
		{"nvcc flags", target(ok + "      flags: [-O3]\n"), `flags: nvcc flags of a sources target`},
		{"absolute glob", target("      harness: ./h\n      binaries: [/usr/lib/x.so]\n"), `binaries: "/usr/lib/x.so" is absolute`},
		{"glob out of the tree", target("      harness: ./h\n      binaries: [\"../x/*.so\"]\n"), `binaries: "../x/*.so" has an empty, "." or ".." segment`},
		{"other variable", target("      harness: ./h\n      binaries: [\"$HOME/x.so\"]\n"), `only $KG_CACHE_DIR/ at the start expands`},
		{"bad glob", target("      harness: ./h\n      binaries: [\"a/[x\"]\n"), `syntax error`},
		{"bad env name", target(ok + "      env: {\"A-B\": x}\n"), `env: "A-B" is not a variable name`},
		{"reserved cache", target(ok + "      env: {TORCH_EXTENSIONS_DIR: /tmp/shared}\n"), `env: TORCH_EXTENSIONS_DIR is set by kernel-gate run for each side`},
		{"reserved protocol", target(ok + "      env: {KG_MODE: bench}\n"), `env: KG_MODE is set by kernel-gate run`},
		{"reserved cache dir", target(ok + "      env: {KG_CACHE_DIR: /x}\n"), `env: KG_CACHE_DIR is set by kernel-gate run`},
		{"env on a sources target", target("      sources: [a.cu]\n      env: {A: b}\n"), `env: only a target with harness`},
		{"unknown key", target(ok + "      binary: [x]\n"), `unknown key "binary" in run.targets[0] (did you mean "binaries"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "k.yml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
