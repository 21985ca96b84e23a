package configpos

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestWhere(t *testing.T) {
	for _, tt := range []struct {
		file string
		line int
		want string
	}{{"", 0, "kernel-gate.yml"}, {"", 7, "kernel-gate.yml:7"}, {"ci/k.yml", 3, "ci/k.yml:3"}} {
		if got := Where(tt.file, tt.line); got != tt.want {
			t.Errorf("Where(%q, %d) = %q, want %q", tt.file, tt.line, got, tt.want)
		}
	}
}

func TestKeyLines(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("a: 1\n\nb:\n  c: 2\n"), &n); err != nil {
		t.Fatal(err)
	}
	got := KeyLines(n.Content[0])
	if got["a"] != 1 || got["b"] != 3 || len(got) != 2 {
		t.Errorf("KeyLines = %v", got)
	}
	if KeyLines(n.Content[0].Content[1]) != nil {
		t.Error("a scalar has no keys")
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"max_registers", "max_smem", "max_spill_loads", "max_spill_stores"}
	if got, ok := Closest("max_register", keys); !ok || got != "max_registers" {
		t.Errorf("got %q %v", got, ok)
	}
	if got, ok := Closest("zzzzzzzzzz", keys); ok {
		t.Errorf("nothing is close, got %q", got)
	}
	if got, _ := Closest("gpu-clock", []string{"gpu-reset", "gpu-clocks"}); got != "gpu-clocks" {
		t.Errorf("got %q", got)
	}
}
