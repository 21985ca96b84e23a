package baseline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

func TestLoadPtxasKernels(t *testing.T) {
	// A baseline saved from the real recorded build: the compile of each of its sources.
	logs, err := filepath.Glob(filepath.Join("..", "testdata", "replay", "clean", "head", "attention", "compile", "*.log"))
	if err != nil || len(logs) != 6 {
		t.Fatalf("the clean recording's compile logs: %q, %v", logs, err)
	}
	var l ptxas.Log
	for _, name := range logs {
		log, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Parse(bytes.NewReader(log), name, nil); err != nil {
			t.Fatal(err)
		}
	}
	g, err := ptxas.Evaluate(&l, ptxas.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "base.json")
	var b bytes.Buffer
	result.Write(&b, result.New("test", g))
	os.WriteFile(path, b.Bytes(), 0o644)

	res, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := PtxasKernels(res)
	if err != nil || len(ks) != len(l.Kernels) || len(ks) < 8 || ks[0].Registers == nil {
		t.Fatalf("got %d kernels, %v", len(ks), err)
	}

	if _, err := PtxasKernels(result.New("test", result.Gate{Name: "sass", Verdict: result.Pass})); err == nil ||
		!strings.Contains(err.Error(), "no ptxas gate") {
		t.Errorf("a result without ptxas data: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing baseline must be an error")
	}
}
