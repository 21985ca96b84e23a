package speedup

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// fileConfig is the part of kernel-gate.yml that this package reads.
type fileConfig struct {
	CUDA    string `yaml:"cuda"`
	Speedup Config `yaml:"speedup"`
}

func decodeConfig(t *testing.T, text string) Config {
	t.Helper()
	var fc fileConfig
	if err := yaml.Unmarshal([]byte(text), &fc); err != nil {
		t.Fatal(err)
	}
	fc.Speedup.File = "kernel-gate.yml"
	return fc.Speedup
}

const configYAML = `cuda: ">=12.4"
speedup:
  max_slowdown: 0.03
  confidence: 0.995
  min_rounds: 8
  max_rounds: 256
  gpu_seconds_budget: 30
  kernels:
    - match: "flash_fwd*"
      max_slowdown: 0.05
      reason: noisy on shared runners
    - match: flash_fwd
      shapes: [mission]
      min_speedup_vs_reference: 15
      reason: the 15x over SDPA we promised
`

// validate resolves c as config.Parse does, for its error.
func validate(c Config) error { return c.Resolve(c.File) }

func TestConfigYAML(t *testing.T) {
	c := decodeConfig(t, configYAML)
	if err := validate(c); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	for k, want := range map[string]int{"max_slowdown": 3, "confidence": 4, "min_rounds": 5, "max_rounds": 6, "gpu_seconds_budget": 7, "kernels": 8} {
		if got := c.KeyLine(k); got != want {
			t.Errorf("line of %s = %d, want %d", k, got, want)
		}
	}
	if len(c.Kernels) != 2 || c.Kernels[0].Line != 9 || c.Kernels[1].Line != 12 {
		t.Fatalf("rules %+v", c.Kernels)
	}
	if cc, err := c.compiled(); err != nil || !strings.HasSuffix(cc.rules[1].From, " (flash_fwd × mission)") {
		t.Errorf("rule 1 is described as %q (%v)", cc.rules[1].From, err)
	}

	cc, err := c.compiled()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kernel, shape string
		margin, goal  float64
		marginFrom    string
	}{
		{"flash_fwd", "mission", 0.05, 15, `(from kernel-gate.yml:9 (flash_fwd*): "noisy on shared runners")`},
		{"flash_fwd", "long", 0.05, 0, `(from kernel-gate.yml:9 (flash_fwd*): "noisy on shared runners")`},
		{"gemm", "mission", 0.03, 0, "(from kernel-gate.yml:3)"},
		{"kg::flash_fwd<64, 64, false>", "mission", 0.05, 0, `(from kernel-gate.yml:9 (flash_fwd*): "noisy on shared runners")`},
	} {
		r := cc.resolve(kernelname.Parse(tc.kernel), tc.shape)
		if r.MaxSlowdown != tc.margin || r.MinSpeedupVsReference != tc.goal || r.margin.text() != tc.marginFrom {
			t.Errorf("%s × %s: margin %v goal %v from %s", tc.kernel, tc.shape, r.MaxSlowdown, r.MinSpeedupVsReference, r.margin.text())
		}
		if r.Confidence != 0.995 || r.MinRounds != 8 || r.MaxRounds != 256 || r.GPUSecondsBudget != 30 {
			t.Errorf("%s: top level %+v", tc.kernel, r.Limits)
		}
	}
	if l := c.Limits("flash_fwd", "mission"); l.MinSpeedupVsReference != 15 || l.Looks() != 6 {
		t.Errorf("Limits = %+v (looks %d)", l, l.Looks())
	}

	// An absent or empty section is the defaults, and valid.
	for _, text := range []string{"cuda: \">=12.4\"\n", "speedup: {}\n", "speedup:\n"} {
		c := decodeConfig(t, text)
		if err := validate(c); err != nil {
			t.Errorf("%q: %v", text, err)
		}
		if l := c.Limits("k", "s"); l != DefaultLimits() {
			t.Errorf("%q: limits %+v", text, l)
		}
	}
}

func TestConfigInvalid(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"speedup:\n  max_slowdown: -0.01\n", "kernel-gate.yml:2: speedup.max_slowdown: must be a fraction >= 0 and below 1"},
		{"speedup:\n  max_slowdown: 2\n", "speedup.max_slowdown: must be a fraction"},
		{"speedup:\n  max_slowdown: .nan\n", "got NaN"},
		{"speedup:\n  confidence: 1\n", "kernel-gate.yml:2: speedup.confidence: must be at least 0.5 and below 1"},
		{"speedup:\n  confidence: 99\n", "speedup.confidence"},
		{"speedup:\n  min_rounds: 1\n", "kernel-gate.yml:2: speedup.min_rounds: must be at least 2"},
		{"speedup:\n  min_rounds: 32\n  max_rounds: 16\n", "kernel-gate.yml:3: speedup.max_rounds: 16 is below min_rounds 32"},
		{"speedup:\n  max_rounds: 8\n", "below the default min_rounds 16"},
		{"speedup:\n  min_rounds: 1024\n", "above the default max_rounds 512"},
		{"speedup:\n  gpu_seconds_budget: 0\n", "kernel-gate.yml:2: speedup.gpu_seconds_budget: must be a finite number of seconds > 0"},
		{"speedup:\n  gpu_seconds_budget: .inf\n", "gpu_seconds_budget"},
		{"speedup:\n  kernels:\n    - match: \"\"\n      max_slowdown: 0.1\n", "kernel-gate.yml:3: speedup.kernels[0] (match \"\"): match must be a non-empty kernel glob"},
		{"speedup:\n  kernels:\n    - match: k\n", "the rule sets no max_slowdown, min_speedup_vs_reference or shapes"},
		{"speedup:\n  kernels:\n    - match: k\n      min_speedup_vs_reference: 0\n", "min_speedup_vs_reference: must be a finite ratio > 0"},
		{"speedup:\n  kernels:\n    - match: k\n      max_slowdown: 1.5\n", "speedup.kernels[0] (match \"k\"): max_slowdown: must be a fraction"},
		{"speedup:\n  kernels:\n    - match: k\n      shapes: [\" \"]\n", "shapes[0] is empty"},
	} {
		err := validate(decodeConfig(t, tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
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
	if len(c.Kernels) != 2 || len(only.Kernels) != 2-1 || calls != 2 || slices.ContainsFunc(only.Kernels, func(r Rule) bool { return r.Match == "flash_fwd" }) {
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
	if _, err := built.compiled(); err != nil || len(built.Kernels) != 2 {
		t.Errorf("%v %+v", err, built.Kernels)
	}
}
