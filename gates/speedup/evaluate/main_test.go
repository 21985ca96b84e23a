package main

import (
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
)

const capturePath = "../../../testdata/timing/slowdowns-h200.json.gz"

// trim keeps the first n rounds of every pair, so the tests stay fast.
func trim(c *capture, n int) {
	for i := range c.Families {
		for j := range c.Families[i].Pairs {
			p := &c.Families[i].Pairs[j]
			p.A, p.B = p.A[:min(n, len(p.A))], p.B[:min(n, len(p.B))]
		}
	}
}

// TestRatesShape runs the evaluation on the first 320 rounds of the real capture and checks
// the shape of the rates: no false alarm on A/A, every 10% slowdown found, the 1% pairs
// not failed, and the other rules behaving as their thresholds say.
func TestRatesShape(t *testing.T) {
	c, err := load(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	trim(c, 320)
	o := defaultOptions()
	r, err := run(c, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []string{"compute-bound", "memory-bound"} {
		cells := r.cells[fam]
		if s := cells[0]; s.trials < 15 || s.slower != 0 || s.passed != s.trials || s.benchstat > 1 {
			t.Errorf("%s A/A: %+v", fam, s)
		}
		if s := cells[0.01]; s.trials < 10 || s.slower != 0 || s.benchstat != s.trials {
			t.Errorf("%s 1%%: %+v (ours must not fail it; benchstat flags it)", fam, s)
		}
		for _, nom := range []float64{0.03, 0.05, 0.10} {
			if s := cells[nom]; s.trials < 15 || s.slower != s.trials || s.gab != 0 {
				t.Errorf("%s %v: %+v", fam, nom, s)
			}
		}
		if s := cells[0.10]; s.asv != s.trials {
			t.Errorf("%s 10%%: asv found %d of %d", fam, s.asv, s.trials)
		}
		if s := cells[0.03]; s.asv != 0 {
			t.Errorf("%s 3%%: asv (factor 1.1) found %d", fam, s.asv)
		}
	}
	launch := r.cells["launch-bound"]
	if s := launch[0.10]; s.trials < 5 || s.slower != s.trials {
		t.Errorf("launch-bound 10%%: %+v", s)
	}
	for _, nom := range []float64{0, 0.01} {
		if s := launch[nom]; s.slower != 0 {
			t.Errorf("launch-bound %v: %d false slower", nom, s.slower)
		}
	}
	// Trials are consecutive and do not overlap.
	for _, fam := range c.Families {
		for _, p := range fam.Pairs {
			ts, err := runTrials(p, o)
			if err != nil {
				t.Fatal(err)
			}
			next := 0
			for _, tr := range ts {
				if tr.start != next || tr.rounds < o.lim.MinRounds || tr.rounds%2 != 0 {
					t.Errorf("%s %v: trial at %d of %d rounds, want start %d", fam.Name, p.Nominal, tr.start, tr.rounds, next)
				}
				next = tr.start + tr.rounds
			}
			if next > len(p.A) {
				t.Errorf("%s %v: trials run past the recorded rounds", fam.Name, p.Nominal)
			}
		}
	}
}

// TestReport renders the report from a short capture.
func TestReport(t *testing.T) {
	c, err := load(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	trim(c, 128)
	c.Rounds = 128
	var b strings.Builder
	if err := report(&b, c, capturePath, defaultOptions()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# Speedup gate: evaluation on real H200 timings",
		Command,
		"| compute-bound | A/A: false `slower` ≤ 1% | 0/",
		"quantised to 32 ns",
		"github-action-benchmark",
		"## Why side by side: a GEMM whose clocks drift",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestBaselines(t *testing.T) {
	a := [][]float64{{10, 10.1, 9.9, 10}, {10, 10.2, 9.8, 10}}
	twice := [][]float64{{20, 20.2, 19.8, 20}, {20, 20.4, 19.6, 20}}
	if gabSlower(a, a) || !gabSlower(a, [][]float64{{21, 21, 21, 21}, {21, 21, 21, 21}}) || gabSlower(a, twice) {
		t.Error("github-action-benchmark's rule: alert only above 2.0")
	}
	if !benchstatSlower(a, twice) || benchstatSlower(twice, a) || benchstatSlower(a, a) {
		t.Error("benchstat's rule")
	}
	if !asvSlower(a, twice) || asvSlower(twice, a) {
		t.Error("asv's rule")
	}
	if got := speedup.DefaultLimits().Looks(); got != 6 {
		t.Errorf("looks %d", got)
	}
}
