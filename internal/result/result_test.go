package result

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOverall(t *testing.T) {
	tests := []struct {
		verdicts []Verdict
		want     Verdict
	}{
		{nil, Skip},
		{[]Verdict{Skip}, Skip},
		{[]Verdict{Skip, Pass}, Pass},
		{[]Verdict{Pass, Fail, Skip}, Fail},
	}
	for _, tt := range tests {
		var gates []Gate
		for _, v := range tt.verdicts {
			gates = append(gates, Gate{Verdict: v})
		}
		if got := Overall(gates); got != tt.want {
			t.Errorf("Overall(%v) = %s, want %s", tt.verdicts, got, tt.want)
		}
	}
}

func TestDecide(t *testing.T) {
	g := Gate{Findings: []Finding{{Severity: Warning}, {Severity: Notice}}}
	if g.Decide(true); g.Verdict != Pass {
		t.Errorf("warnings alone: %s", g.Verdict)
	}
	if g.Decide(false); g.Verdict != Skip {
		t.Errorf("nothing judged: %s", g.Verdict)
	}
	g.Findings = append(g.Findings, Finding{Severity: Error})
	if g.Decide(false); g.Verdict != Fail {
		t.Errorf("an error always fails: %s", g.Verdict)
	}
}

func TestRoundTripKeepsContract(t *testing.T) {
	g := Gate{Name: "ptxas"}
	if err := g.SetData(map[string]any{"kernels": []map[string]any{{"name": "flash_fwd<64>"}}}); err != nil {
		t.Fatal(err)
	}
	g.Findings = []Finding{{Severity: Error, Kernel: "flash_fwd<64>", Arch: "sm_89", File: "kernels/fa.cu",
		Metric: "registers", Value: Num(130), Limit: Num(120), Message: "..."}}
	g.Decide(true)
	var b bytes.Buffer
	if err := Write(&b, New("kernel-gate test", g, Gate{Name: "sass", Verdict: Skip})); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`"schema": "kernel-gate/result/v1"`, `"verdict": "fail"`, `"kernel": "flash_fwd<64>"`,
		`"line": 0`, `"value": 130`, `"limit": 120`, `"findings": []`, `"data": {}`, `"name": "flash_fwd<64>"`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s:\n%s", want, out)
		}
	}
	back, err := Read(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	Write(&again, back)
	if again.String() != out {
		t.Errorf("round trip changed the file:\n%s\n---\n%s", out, again.String())
	}
}

func TestReadRejects(t *testing.T) {
	for _, in := range []string{"", "{}", `{"schema":"other/v1"}`, "ptxas info : x",
		`{"schema":"kernel-gate/result/v1","verdict":"pass","gates":[{"name":"x","verdict":"maybe"}]}`} {
		if _, err := Read(strings.NewReader(in)); !errors.Is(err, ErrNotResult) {
			t.Errorf("Read(%q) = %v, want ErrNotResult", in, err)
		}
	}
}

// TestReadRefusesWhatItCannotTrust: a saved result that says two things (a key twice), an
// unknown verdict or severity, or verdicts that contradict their gates and findings.
func TestReadRefusesWhatItCannotTrust(t *testing.T) {
	const gate = `{"name":"ptxas","verdict":"fail","findings":[{"severity":"error","line":0,"message":"spills"}],"data":{}}`
	ok := `{"schema":"kernel-gate/result/v1","verdict":"fail","gates":[` + gate + `]}`
	if _, err := Read(strings.NewReader(ok)); err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"unknown verdict", `{"schema":"kernel-gate/result/v1","verdict":"maybe","gates":[]}`, `the verdict is "maybe" (want pass, fail or skip)`},
		{"no verdict", `{"schema":"kernel-gate/result/v1","gates":[]}`, `the verdict is ""`},
		{"a pass over a failed gate", strings.Replace(ok, `"verdict":"fail","gates"`, `"verdict":"pass","gates"`, 1), `the verdict is "pass" but its gates give "fail"`},
		{"a gate that passes with an error", strings.Replace(ok, `"verdict":"fail","findings"`, `"verdict":"pass","findings"`, 1), `gate 0 ("ptxas") has verdict "pass" but finding 0 is an error`},
		{"an unknown severity", strings.Replace(ok, `"severity":"error"`, `"severity":"critical"`, 1), `finding 0 has severity "critical"`},
		{"the verdict twice", strings.Replace(ok, `"verdict":"fail","gates"`, `"verdict":"fail","verdict":"pass","gates"`, 1), `line 1, column 52: duplicate key "verdict" at verdict, byte offset 51; first at byte offset 34`},
		{"another case", strings.Replace(ok, `"verdict":"fail","gates"`, `"verdict":"fail","Verdict":"pass","gates"`, 1), `duplicate key "Verdict" at Verdict`},
		{"a finding's severity twice", strings.Replace(ok, `"severity":"error"`, `"severity":"error","severity":"notice"`, 1), `duplicate key "severity" at gates[0].findings[0].severity`},
		{"a key twice in data", strings.Replace(ok, `"data":{}`, `"data":{"kernels":[{"regs":1,"regs":2}]}`, 1), `duplicate key "regs" at gates[0].data.kernels[0].regs`},
		{"two values", ok + "\n" + ok, `more than one JSON value`},
		{"cut", ok[:40], `unexpected EOF`},
		{"a syntax error", "{\n\"schema\" 1}", `line 2, column 10`},
		{"a type", "{\n  \"schema\": 1}", `line 2, column 14: json: cannot unmarshal number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			if !errors.Is(err, ErrNotResult) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read = %v, want ErrNotResult and %q", err, tc.want)
			}
		})
	}
	// Maps in data keep keys that differ in case.
	if _, err := Read(strings.NewReader(strings.Replace(ok, `"data":{}`, `"data":{"matches":{"HMMA":1,"hmma":2}}`, 1))); err != nil {
		t.Errorf("data map: %v", err)
	}
	// Every result the repository keeps reads.
	files, _ := filepath.Glob("../../testdata/*/*/result.json")
	more, _ := filepath.Glob("../../testdata/*/kg_*.json")
	for _, f := range append(files, more...) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Read(bytes.NewReader(raw)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if len(files)+len(more) < 8 {
		t.Errorf("only %d saved results", len(files)+len(more))
	}
}

func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	g := Gate{Name: "ptxas", Findings: []Finding{{Severity: Error, Message: "spills"}}}
	g.Decide(true)
	if err := Write(&b, New("kernel-gate fuzz", g, Gate{Name: "sass", Verdict: Skip})); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(`{"schema":"kernel-gate/result/v1","verdict":"maybe","gates":[]}`))
	f.Add([]byte(`{"schema":"kernel-gate/result/v1","verdict":"skip","verdict":"fail","gates":[{"name":"x","verdict":"skip","findings":[],"data":{"a":1,"A":2}}]}`))
	f.Add([]byte(`{"schema":"kernel-gate/result/v1","verdict":"pass","gates":[{"name":"x","verdict":"pass","findings":[{"severity":"error","message":""}]}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := Read(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrNotResult) {
				t.Fatalf("error without ErrNotResult: %v", err)
			}
			return
		}
		// What Read accepts is consistent, and reads back after Write.
		if res.Verdict != Overall(res.Gates) {
			t.Fatalf("verdict %s over gates %+v", res.Verdict, res.Gates)
		}
		var out bytes.Buffer
		if err := Write(&out, res); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(&out); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestWorstFirst(t *testing.T) {
	if got := WorstFirst(nil); got != nil {
		t.Errorf("no rows: %v, want nil (a table's rows stay null in JSON)", got)
	}
	row := func(s Verdict, name string) Row { return Row{Status: s, Cells: []string{name}} }
	got := WorstFirst([]Ranked{
		{Worst: 1.01, Row: row(Pass, "a")},
		{Fail: true, Worst: 1.2, Row: row(Fail, "b")},
		{Worst: 1.5, Row: row(Pass, "c")},
		{Fail: true, Worst: 2, Row: row(Fail, "d")},
		{Worst: 1.5, Row: row(Skip, "e")},
	})
	var names []string
	for _, r := range got {
		names = append(names, r.Cells[0])
	}
	if want := "d b c e a"; strings.Join(names, " ") != want {
		t.Errorf("order %v, want %s: failing first, then the largest, ties in their order", names, want)
	}
}

func TestVerdictRank(t *testing.T) {
	if !(Fail.Rank() < Pass.Rank() && Pass.Rank() < Skip.Rank()) {
		t.Errorf("ranks fail %d, pass %d, skip %d: a table lists failing rows first, then passing ones", Fail.Rank(), Pass.Rank(), Skip.Rank())
	}
}

func TestNumber(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if p := Number(v); p != nil {
			t.Errorf("Number(%v) = %v, want nil: JSON cannot hold it", v, *p)
		}
	}
	if p := Number(1.25); p == nil || *p != 1.25 {
		t.Errorf("Number(1.25) = %v", p)
	}
}
