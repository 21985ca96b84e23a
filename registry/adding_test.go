package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/pipeline"
	"github.com/kernel-gate/kernel-gate/registry"
	"github.com/kernel-gate/kernel-gate/report"
)

// toyName, toyConfig and judgeToy are a toy gate's package: it fails when the build has
// more PTXAS kernel records than its section's max_kernels.
const toyName = "kernel-count"

type toyConfig struct {
	MaxKernels *int `yaml:"max_kernels"`
	max        int
	file       string
}

func (c *toyConfig) Resolve(file string) error {
	c.file, c.max = file, 100
	if c.MaxKernels != nil {
		if *c.MaxKernels < 1 {
			return fmt.Errorf("%s: kernel_count.max_kernels: must be at least 1, got %d", file, *c.MaxKernels)
		}
		c.max = *c.MaxKernels
	}
	return nil
}

func judgeToy(_ context.Context, in registry.Input) (result.Gate, error) {
	cfg := in.Section.(*toyConfig)
	n := 0
	for _, g := range in.Gates {
		if g.Name == ptxas.Name {
			var d ptxas.Data
			if err := json.Unmarshal(g.Data, &d); err != nil {
				return result.Gate{}, err
			}
			n = len(d.Kernels)
		}
	}
	g := result.Gate{Verdict: result.Pass, Summary: fmt.Sprintf("%d kernel records of %d target(s)", n, len(in.Targets))}
	if n > cfg.max {
		g.Verdict = result.Fail
		g.Findings = []result.Finding{{Severity: result.Error, Metric: "kernels",
			Message: fmt.Sprintf("%d kernel records > max_kernels %d (%s)", n, cfg.max, cfg.file)}}
	}
	return g, nil
}

// Adding a gate is its package (above) plus one registry line (With): config decodes and
// checks its section, a replay of a recorded run judges it after the other gates, the
// report renders it and a baseline entry is made from the result, with no other change.
func TestAddingAGate(t *testing.T) {
	reg, err := registry.Builtin().With(registry.Gate{Name: toyName, Section: "kernel_count", Step: registry.StepResult,
		NewSection: func() registry.Section { return &toyConfig{} }, Judge: judgeToy})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../kernel-gate.yml")
	if err != nil {
		t.Fatal(err)
	}

	// config: its section is decoded, resolved and checked like a built-in one.
	if _, err := config.ParseWith(append(slices.Clone(raw), "kernel_count:\n  max_kernel: 3\n"...), "k.yml", reg); err == nil ||
		!strings.Contains(err.Error(), `unknown key "max_kernel" in kernel_count (did you mean "max_kernels"?)`) {
		t.Errorf("a typo in the toy's section: %v", err)
	}
	if _, err := config.ParseWith(append(slices.Clone(raw), "kernel_count:\n  max_kernels: 0\n"...), "k.yml", reg); err == nil ||
		!strings.Contains(err.Error(), "k.yml: kernel_count.max_kernels: must be at least 1") {
		t.Errorf("a bad setting in the toy's section: %v", err)
	}
	if _, err := config.Parse(append(slices.Clone(raw), "kernel_count:\n  max_kernels: 3\n"...), "k.yml"); err == nil ||
		!strings.Contains(err.Error(), `unknown key "kernel_count"`) {
		t.Errorf("without the toy, its section is unknown: %v", err)
	}
	cfg, err := config.ParseWith(append(slices.Clone(raw), "kernel_count:\n  max_kernels: 16\n"...), "k.yml", reg)
	if err != nil {
		t.Fatal(err)
	}

	// pipeline: a replay judges it last, with the gates before it.
	res, err := pipeline.Run(context.Background(), cfg, pipeline.Options{Replay: filepath.Join("..", "testdata/replay/clean"), Tool: "kernel-gate test"})
	if err != nil {
		t.Fatal(err)
	}
	last := res.Gates[len(res.Gates)-1]
	if last.Name != toyName || last.Verdict != result.Fail || res.Verdict != result.Fail ||
		len(last.Findings) != 1 || last.Findings[0].Message != "28 kernel records > max_kernels 16 (k.yml)" {
		t.Fatalf("the toy gate: %+v; overall %s", last, res.Verdict)
	}
	if got := slices.Collect(func(yield func(string) bool) {
		for _, g := range res.Gates {
			if !yield(g.Name) {
				return
			}
		}
	}); !slices.Equal(got, append(slices.DeleteFunc(registry.Builtin().Names(), func(n string) bool { return n == "guard" }), toyName)) {
		t.Errorf("gates in report order: %v", got)
	}
	only, err := pipeline.Run(context.Background(), cfg, pipeline.Options{Replay: filepath.Join("..", "testdata/replay/clean"), Gates: []string{"ptxas"}})
	if err != nil || len(only.Gates) != 1 {
		t.Errorf("a run of other gates leaves the toy out: %v %v", only.Gates, err)
	}

	// report: rendered like every gate.
	for f, want := range map[report.Format]string{
		report.Text:     "28 kernel records > max_kernels 16",
		report.SARIF:    "28 kernel records > max_kernels 16",
		report.Markdown: `28 kernel records &gt; max\_kernels 16`,
	} {
		var b bytes.Buffer
		if err := report.Render(&b, res, f, report.Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s report lacks the toy's finding:\n%s", f, b.String())
		}
	}

	// baseline: an entry is made; the toy fills no part of it.
	e, err := baseline.EntryFromResult(res, "5b111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != result.Fail || len(e.Kernels) == 0 {
		t.Errorf("entry: verdict %s, %d kernels", e.Verdict, len(e.Kernels))
	}
	if g, _ := reg.Lookup(toyName); g.Entry() != "" {
		t.Errorf("the toy fills entry part %q", g.Entry())
	}
}
