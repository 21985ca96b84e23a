package registry

import (
	"cmp"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The package doc's table is the registry's: each row names a gate's name, section,
// command, step, entry part and report, in order.
func TestTable(t *testing.T) {
	raw, err := os.ReadFile("registry.go")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(raw), "//\tgate ")
	table, _, _ = strings.Cut(table, "\n//\n")
	rows := strings.Split(table, "\n")[1:]
	gates := Builtin().Gates()
	if len(rows) != len(gates) {
		t.Fatalf("the doc has %d rows, the registry %d gates", len(rows), len(gates))
	}
	for i, g := range gates {
		cols := strings.Split(strings.TrimPrefix(rows[i], "//\t"), "  ")
		var got []string
		for _, c := range cols {
			if c = strings.TrimSpace(c); c != "" {
				got = append(got, c)
			}
		}
		want := []string{g.Name, g.Section, g.Command, string(g.Step), cmp.Or(g.Entry(), "-"), cmp.Or(g.Report, "-")}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("row %d: %q, want %q", i, got, want)
		}
	}
}

func TestWith(t *testing.T) {
	judge := func(context.Context, Input) (result.Gate, error) { return result.Gate{}, nil }
	for _, tt := range []struct {
		g    Gate
		want string
	}{
		{Gate{Name: "ptxas", Step: StepResult, Judge: judge}, "the name is taken"},
		{Gate{Name: "Toy", Step: StepResult, Judge: judge}, "a name is lower-case"},
		{Gate{Name: "toy", Step: StepTarget, Judge: judge}, `step "target"`},
		{Gate{Name: "toy", Step: StepResult}, "has a Judge"},
		{Gate{Name: "toy", Step: StepResult, Judge: judge, Section: "toy"}, "needs NewSection"},
		{Gate{Name: "toy", Step: StepResult, Judge: judge, Section: "sass", NewSection: func() Section { return nil }}, `section "sass" is gate "sass"'s`},
	} {
		if _, err := Builtin().With(tt.g); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.g, err, tt.want)
		}
	}
	if err := Builtin().Check(Gate{Name: "toy", Step: "later"}); err == nil || !strings.Contains(err.Error(), `no step "later"`) {
		t.Errorf("a step that is none: %v", err)
	}
	var seen Registry = Registry{gates: []Gate{}}
	for _, g := range builtin() {
		if err := seen.Check(g); err != nil {
			t.Errorf("built in: %v", err)
		}
		seen.gates = append(seen.gates, g)
	}
	r, err := Builtin().With(Gate{Name: "toy", Step: StepResult, Judge: judge})
	if err != nil {
		t.Fatal(err)
	}
	if names := r.Names(); len(names) != len(builtin())+1 || names[len(names)-1] != "toy" || len(Builtin().Names()) != len(builtin()) {
		t.Errorf("With adds to a copy: %v", names)
	}
	if err := r.CheckNames("input gates", []string{"toy", "bogus"}); err == nil || !strings.Contains(err.Error(), `input gates: no gate "bogus" (gates: ptxas, toolkit, sass, sanitizer, correctness, speedup, ncu, guard, toy)`) {
		t.Errorf("CheckNames: %v", err)
	}
	if (Registry{}).SectionOf("guard") != "guard" || len((Registry{}).Step(StepTarget)) != 4 {
		t.Error("the zero Registry is Builtin")
	}
}
