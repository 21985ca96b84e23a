package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/baseline"
)

// The baseline section: defaults, every setting, and every bad one named with its line.
func TestBaselineSection(t *testing.T) {
	c, err := Parse([]byte("cuda: '>=12'\n"), "k.yml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := c.Baseline.Settings()
	if err != nil || set.Store != "" || set.Branch != baseline.DefaultBranch || set.Keep != baseline.DefaultKeep || set.Constraints != (baseline.Constraints{}) {
		t.Errorf("defaults: %+v %v", set, err)
	}
	c, err = Parse([]byte("baseline:\n  store: ./perf-history\n  branch: refs/heads/perf/baseline\n  keep: 30\n  compatible_cuda: \" ~13.0 \"\n  compatible_driver: \">=570, <590\"\n"), "k.yml")
	if err != nil {
		t.Fatal(err)
	}
	set, err = c.Baseline.Settings()
	if err != nil || set.Store != "./perf-history" || set.Branch != "refs/heads/perf/baseline" || set.Keep != 30 ||
		set.Constraints != (baseline.Constraints{CUDA: "~13.0", Driver: ">=570, <590"}) {
		t.Errorf("settings: %+v %v", set, err)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"cuda constraint", "baseline:\n  compatible_cuda: thirteen\n", `k.yml:2: baseline.compatible_cuda: "thirteen" is not a version constraint (e.g. "~13.0")`},
		{"driver constraint", "baseline:\n  keep: 5\n  compatible_driver: \">=570,, <\"\n", `k.yml:3: baseline.compatible_driver: ">=570,, <" is not a version constraint`},
		{"keep 0", "baseline:\n  keep: 0\n", "k.yml:2: baseline.keep: must be at least 1, got 0"},
		{"keep negative", "baseline:\n  keep: -3\n", "k.yml:2: baseline.keep: -3 is negative"},
		{"keep fraction", "baseline:\n  keep: 1.5\n", "k.yml:2: baseline.keep: 1.5 is not a whole number"},
		{"branch", "baseline:\n  branch: \"base line..x\"\n", `k.yml:2: baseline.branch: "base line..x" is not a branch name git accepts`},
		{"blank store", "baseline:\n  store: \"  \"\n", "k.yml:2: baseline.store: is blank"},
		{"unknown key", "baseline:\n  compatible_cdua: '~13'\n", `k.yml:2: unknown key "compatible_cdua" in baseline (did you mean "compatible_cuda"?)`},
		{"not a mapping", "baseline: git\n", "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "k.yml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// Every bad setting at once, each with its line.
	_, err = Parse([]byte("baseline:\n  keep: 0\n  compatible_cuda: cuda13\n  compatible_driver: y\n"), "k.yml")
	if err == nil || !strings.Contains(err.Error(), "k.yml:2:") || !strings.Contains(err.Error(), "k.yml:3:") || !strings.Contains(err.Error(), "k.yml:4:") {
		t.Errorf("all errors: %v", err)
	}
}

// The configuration reference (docs/configuration.md) is a config this package accepts,
// its baseline section included.
func TestConfigReferenceBaseline(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n## Every key\n")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/configuration.md has no configuration reference")
	}
	c, err := Parse([]byte(block), "docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	set, err := c.Baseline.Settings()
	if err != nil || set.Store != "git" || set.Keep != baseline.DefaultKeep || set.Branch != baseline.DefaultBranch || set.Constraints.CUDA != "~13.0" {
		t.Errorf("baseline: %+v %v", set, err)
	}
}
