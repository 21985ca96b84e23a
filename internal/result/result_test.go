package result

import (
	"bytes"
	"errors"
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
