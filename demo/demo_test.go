package demo

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

func TestCasesAndTheirConfigs(t *testing.T) {
	cases, err := Cases(filepath.Join("..", Dir))
	if err != nil || !slices.Contains(cases, DefaultCase) {
		t.Fatalf("Cases: %q, %v; want %s among them", cases, err, DefaultCase)
	}
	for name, want := range map[string]string{
		"clean":       "kernel-gate.yml",
		"spill":       "kernel-gate.yml",
		"torch-oob":   filepath.Join("kernels", "torch", "kernel-gate.yml"),
		"triton-slow": filepath.Join("kernels", "triton", "kernel-gate.yml"),
	} {
		if got := CaseConfig(name); got != want {
			t.Errorf("CaseConfig(%q) = %q, want %q", name, got, want)
		}
	}
	for dir, want := range map[string]string{
		filepath.Join(t.TempDir(), "none"): "no recorded run at",
		t.TempDir():                        "holds no recorded case",
	} {
		if _, err := Cases(dir); err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), want) {
			t.Errorf("Cases(%s): %v, want exit 2 saying %q", dir, err, want)
		}
	}
}
