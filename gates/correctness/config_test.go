package correctness

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
)

// fileConfig is the part of kernel-gate.yml that this package reads.
type fileConfig struct {
	CUDA        string `yaml:"cuda"`
	Correctness Config `yaml:"correctness"`
}

func decodeConfig(t *testing.T, text string) Config {
	t.Helper()
	var fc fileConfig
	if err := yaml.Unmarshal([]byte(text), &fc); err != nil {
		t.Fatal(err)
	}
	fc.Correctness.File = "kernel-gate.yml"
	return fc.Correctness
}

const configYAML = `cuda: ">=12.4"
correctness:
  max_err: 0.01
  mean_err: 0.0005
  rtol: 0.002
  bad_fraction: 0
  repeat_tol: 0
  min_checks: 2
  kernels:
    - match: "flash_fwd*"
      max_err: 0.02
      reason: fp16 attention
    - match: flash_fwd
      shapes: [long, mission]
      max_err: 0.03
      repeat_tol: 1e-6
      min_checks: 5
    - match: "gemm_*"
      shapes: [256x192x320]
`

// validate resolves c as config.Parse does, for its error.
func validate(c Config) error { return c.Resolve(c.File) }

func TestConfigYAML(t *testing.T) {
	c := decodeConfig(t, configYAML)
	if err := validate(c); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	wantLines := map[string]int{"max_err": 3, "mean_err": 4, "rtol": 5, "bad_fraction": 6, "repeat_tol": 7, "min_checks": 8, "kernels": 9}
	for k, want := range wantLines {
		if got := c.KeyLine(k); got != want {
			t.Errorf("line of %s = %d, want %d", k, got, want)
		}
	}
	if *c.MaxErr != 0.01 || *c.MeanErr != 0.0005 || *c.RTol != 0.002 || *c.BadFraction != 0 || *c.RepeatTol != 0 || *c.MinChecks != 2 {
		t.Errorf("top level = %+v", c.Tolerance)
	}
	if len(c.Kernels) != 3 {
		t.Fatalf("rules = %+v", c.Kernels)
	}
	for i, want := range []int{10, 13, 18} {
		if c.Kernels[i].Line != want {
			t.Errorf("rule %d line = %d, want %d", i, c.Kernels[i].Line, want)
		}
	}
	r := c.Kernels[1]
	if r.Match != "flash_fwd" || strings.Join(r.Shapes, ",") != "long,mission" || *r.MaxErr != 0.03 || *r.RepeatTol != 1e-6 || *r.MinChecks != 5 || r.MeanErr != nil {
		t.Errorf("rule 1 = %+v", r)
	}
	if c.Kernels[0].Reason != "fp16 attention" || c.Kernels[2].MaxErr != nil {
		t.Errorf("rules 0 and 2 = %+v, %+v", c.Kernels[0], c.Kernels[2])
	}
	if cc, err := c.compiled(); err != nil || !strings.HasSuffix(cc.rules[1].From, " (flash_fwd × long, mission)") {
		t.Errorf("rule 1 is described as %q (%v)", cc.rules[1].From, err)
	}

	// An absent or empty section is the defaults, and valid.
	for _, text := range []string{"cuda: \">=12.4\"\n", "correctness: {}\n", "correctness:\n"} {
		if err := validate(decodeConfig(t, text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		contains []string
	}{
		{"negative max_err", "correctness:\n  max_err: -0.1\n",
			[]string{"kernel-gate.yml:2", "correctness.max_err", ">= 0", "-0.1"}},
		{"NaN tolerance", "correctness:\n  mean_err: .nan\n",
			[]string{"kernel-gate.yml:2", "correctness.mean_err", "NaN"}},
		{"infinite tolerance", "correctness:\n\n  rtol: .inf\n",
			[]string{"kernel-gate.yml:3", "correctness.rtol", "finite", "+Inf"}},
		{"bad_fraction over 1", "correctness:\n  bad_fraction: 5\n",
			[]string{"kernel-gate.yml:2", "bad_fraction", "between 0 and 1"}},
		{"min_checks 0", "correctness:\n  min_checks: 0\n",
			[]string{"kernel-gate.yml:2", "min_checks", "at least 1"}},
		{"negative tolerance in a rule", "correctness:\n  kernels:\n    - match: flash_fwd\n      repeat_tol: -1\n",
			[]string{"kernel-gate.yml:3", "correctness.kernels[0]", `"flash_fwd"`, "repeat_tol", ">= 0"}},
		{"empty match", "correctness:\n  kernels:\n    - match: \"\"\n      max_err: 0.1\n",
			[]string{"kernel-gate.yml:3", "correctness.kernels[0]", "non-empty kernel glob"}},
		{"missing match", "correctness:\n  kernels:\n    - max_err: 0.1\n",
			[]string{"kernel-gate.yml:3", "non-empty kernel glob"}},
		{"empty shape", "correctness:\n  kernels:\n    - match: flash_fwd\n      shapes: [long, \" \"]\n",
			[]string{"kernel-gate.yml:3", "shapes[1] is empty"}},
		{"rule that does nothing", "correctness:\n  kernels:\n    - match: flash_fwd\n      reason: why\n",
			[]string{"kernel-gate.yml:3", "does nothing"}},
		{"two problems", "correctness:\n  max_err: -1\n  kernels:\n    - match: a\n      rtol: -2\n",
			[]string{"kernel-gate.yml:2", "kernel-gate.yml:4"}},
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

	// File names the config in messages; a config built in Go has no lines.
	c := decodeConfig(t, "correctness:\n  max_err: -1\n")
	c.File = ".github/kernel-gate.yml"
	if err := validate(c); err == nil || !strings.Contains(err.Error(), ".github/kernel-gate.yml:2: correctness.max_err") {
		t.Errorf("File not used in the message: %v", err)
	}
	if err := validate(Config{Tolerance: Tolerance{MaxErr: f64(-1)}}); err == nil || !strings.HasPrefix(err.Error(), "kernel-gate.yml: correctness.max_err") {
		t.Errorf("Go-built config: %v", err)
	}
	if err := validate(Config{}); err != nil {
		t.Errorf("the zero config is the defaults: %v", err)
	}
	// A type error is YAML's, with its line.
	var fc fileConfig
	if err := yaml.Unmarshal([]byte("correctness:\n  max_err: lots\n"), &fc); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("type error: %v", err)
	}
}

// Only keeps a resolved section resolved: its compiled form is cut with the rules, and is what
// compiling the cut section gives.
func TestOnly(t *testing.T) {
	c := decodeConfig(t, configYAML)
	if err := c.Resolve(c.File); err != nil {
		t.Fatal(err)
	}
	calls := 0
	only := c.Only(func(r Rule) bool { calls++; return r.Match != "flash_fwd" })
	if len(c.Kernels) != 3 || len(only.Kernels) != 3-1 || calls != 3 || slices.ContainsFunc(only.Kernels, func(r Rule) bool { return r.Match == "flash_fwd" }) {
		t.Fatalf("%d calls; kept %+v of %+v", calls, only.Kernels, c.Kernels)
	}
	kept, err := configpos.Resolved(only, func(Config) (compiled, error) {
		t.Error("Only's copy compiled again")
		return compiled{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fresh, err := only.compile(); err != nil || !reflect.DeepEqual(kept, fresh) {
		t.Errorf("kept %+v\nfresh %+v (%v)", kept, fresh, err)
	}
	// A section built in Go stays unresolved: it resolves when used.
	built := Config{Kernels: c.Kernels}.Only(func(Rule) bool { return true })
	if _, err := built.compiled(); err != nil || len(built.Kernels) != 3 {
		t.Errorf("%v %+v", err, built.Kernels)
	}
}
