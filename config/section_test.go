package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/registry"
)

// A loaded section keeps what it resolved to; a copy that the command line changes the way it
// does (fewer rules, a setting from a flag: With, Only) must be judged by its own settings,
// never by the kept form of the original. Only gives the same gate as cutting the rules with
// With.
func TestChangedCopiesAreNotStale(t *testing.T) {
	c, err := Parse([]byte(`correctness:
  kernels:
    - match: a
      max_err: 0.01
    - match: b
      max_err: 0.5
speedup:
  max_slowdown: 0.05
sanitizer:
  tools: [memcheck]
`), "k.yml")
	if err != nil {
		t.Fatal(err)
	}
	v := func(x float64) *benchfile.Float { f := benchfile.Float(x); return &f }
	n := func(x int) *int { return &x }
	f := &benchfile.File{Schema: benchfile.Schema, Request: &benchfile.Request{Mode: benchfile.ModeCheck, Rounds: 1},
		Results: []benchfile.Result{{Kernel: "a", Shape: "s", MaxErr: v(0.05), Checks: n(1)}}}
	maxErr := func(cfg correctness.Config) string {
		g, err := correctness.Evaluate(f, "check.json", cfg)
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, x := range g.Findings {
			if x.Metric == correctness.MetricMaxErr || x.Metric == correctness.MetricRule {
				msgs = append(msgs, x.Message)
			}
		}
		return strings.Join(msgs, "; ")
	}
	if got := maxErr(c.Correctness); !strings.Contains(got, "max_err 0.05 > 0.01 (limit from k.yml:3 (a))") {
		t.Errorf("loaded: %s", got)
	}
	notA := func(r correctness.Rule) bool { return r.Match != "a" }
	cut, err := c.Correctness.With(func(cut *correctness.Config) {
		cut.Kernels = slices.DeleteFunc(slices.Clone(cut.Kernels), func(r correctness.Rule) bool { return !notA(r) })
	})
	if err != nil {
		t.Fatal(err)
	}
	byHand, only := maxErr(cut), maxErr(c.Correctness.Only(notA))
	if strings.Contains(byHand, "0.01") || !strings.Contains(byHand, "rule k.yml:5 (b) matches no result") || only != byHand {
		t.Errorf("rules cut by hand: %s\nby Only: %s", byHand, only)
	}

	// bench compare's --max-slowdown and sanitize's --tools set a field of the loaded section.
	if l := c.Speedup.Limits("k", "s"); l.MaxSlowdown != 0.05 {
		t.Errorf("loaded margin %v", l.MaxSlowdown)
	}
	flag := 0.2
	sp, err := c.Speedup.With(func(sp *speedup.Config) { sp.MaxSlowdown = &flag })
	if l := sp.Limits("k", "s"); err != nil || l.MaxSlowdown != 0.2 {
		t.Errorf("margin from a flag: %v", l.MaxSlowdown)
	}
	if l := c.Speedup.Limits("k", "s"); l.MaxSlowdown != 0.05 {
		t.Errorf("the loaded section changed: %v", l.MaxSlowdown)
	}
	san, err := c.Sanitizer.With(func(san *sanitizer.Config) { san.Tools = []string{sanitizer.ToolRacecheck, sanitizer.ToolMemcheck} })
	if o, oerr := san.RunOptions(); err != nil || oerr != nil || !slices.Equal(o.Tools, san.Tools) {
		t.Errorf("tools from a flag: %v %v %v", o.Tools, err, oerr)
	}
	if _, err := c.Sanitizer.With(func(san *sanitizer.Config) { san.Tools = []string{"leakcheck"} }); err == nil || !strings.Contains(err.Error(), `k.yml:10: sanitizer.tools: unknown tool "leakcheck"`) {
		t.Errorf("a bad tool from a flag: %v", err)
	}
	if o, err := c.Sanitizer.RunOptions(); err != nil || !slices.Equal(o.Tools, []string{sanitizer.ToolMemcheck}) {
		t.Errorf("the loaded section changed: %v %v", o.Tools, err)
	}
}

// Config's fields are the built-in gates' sections, under the keys the registry lists
// (a struct tag cannot name a constant), and Parse resolves every section that has a
// Resolve.
func TestSectionsAreTheRegistrys(t *testing.T) {
	fields := map[string]reflect.Type{}
	collectFields(reflect.TypeFor[Config](), fields)
	for _, g := range registry.Builtin().Gates() {
		if _, ok := fields[g.Section]; !ok {
			t.Errorf("gate %s: config has no section %q", g.Name, g.Section)
		}
	}
	var c Config
	resolvable := 0
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if _, ok := v.Field(i).Addr().Interface().(registry.Section); ok {
			resolvable++
		}
	}
	if n := len(c.sections()); n != resolvable {
		t.Errorf("sections() lists %d sections, Config has %d with Resolve", n, resolvable)
	}
}
