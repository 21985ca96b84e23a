package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/shard"
)

var testTargets = []string{"attention", "gemm", "softmax"} // 2 shards: gemm and softmax in 1, attention in 2

var (
	h100 = &Device{Name: "NVIDIA H100 80GB HBM3", Arch: "sm_90", Driver: "580.1"}
	l4   = &Device{Name: "NVIDIA L4", Arch: "sm_89", Driver: "580.1"}
)

// shardResult is shard i/n of a run of testTargets on dev, with a correctness gate per
// target of the shard judged v, and a guard gate the same in every shard.
func shardResult(t *testing.T, i, n int, dev *Device, v Verdict) Result {
	t.Helper()
	targets := shard.Spec{Index: i, Count: n}.Select(testTargets)
	c := Gate{Name: "correctness", Table: &Table{Columns: []string{"target", "kernel"}}}
	for _, tg := range targets {
		sev := Notice
		if v == Fail {
			sev = Error
		}
		c.Findings = append(c.Findings, Finding{Severity: sev, Kernel: tg + "_kernel", Message: tg + ": max_err 0.001"})
		c.Table.Rows = append(c.Table.Rows, Row{Status: v, Cells: []string{tg, tg + "_kernel"}})
	}
	if err := c.SetData(map[string]any{"results": targets, "tolerance": 0.01, "shape": "shard" + strings.Repeat("I", i)}); err != nil {
		t.Fatal(err)
	}
	c.Decide(v != Skip)
	g := Gate{Name: "guard", Findings: []Finding{{Severity: Warning, File: "run.sh", Line: 3, Message: "clock change"}}, Data: json.RawMessage(`{"files":["run.sh"]}`)}
	g.Decide(true)
	res := New("kernel-gate test", g, c)
	res.Device = dev
	res.Shard = &Shard{Index: i, Count: n, Targets: targets, AllTargets: testTargets, Commit: "c0ffee", Base: "ba5e", Config: "sha256:abc"}
	return res
}

func in(name string, r Result) MergeInput { return MergeInput{Name: name, Result: r} }

func errorsOf(g Gate) string {
	var b strings.Builder
	for _, f := range g.Findings {
		if f.Severity == Error {
			b.WriteString(f.Message + "\n")
		}
	}
	return b.String()
}

func TestMerge(t *testing.T) {
	mut := func(r Result, f func(*Shard)) Result {
		s := *r.Shard
		f(&s)
		r.Shard = &s
		return r
	}
	for _, tc := range []struct {
		name    string
		inputs  func(t *testing.T) []MergeInput
		opts    MergeOptions
		verdict Verdict
		shards  Verdict // the merged shards gate
		errs    []string
	}{
		{"all present, all pass", func(t *testing.T) []MergeInput {
			return []MergeInput{in("b.json", shardResult(t, 2, 2, h100, Pass)), in("a.json", shardResult(t, 1, 2, h100, Pass))}
		}, MergeOptions{ExpectShards: 2, ExpectGPUs: 1}, Pass, Pass, nil},
		{"all present, one fails", func(t *testing.T) []MergeInput {
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", shardResult(t, 2, 2, h100, Fail))}
		}, MergeOptions{}, Fail, Pass, nil},
		{"all present, nothing judged", func(t *testing.T) []MergeInput {
			a, b := shardResult(t, 1, 2, h100, Skip), shardResult(t, 2, 2, h100, Skip)
			a.Gates, b.Gates = a.Gates[1:], b.Gates[1:] // the correctness gates alone: both skip
			a.Verdict, b.Verdict = Skip, Skip
			return []MergeInput{in("a.json", a), in("b.json", b)}
		}, MergeOptions{}, Skip, Skip, nil},
		{"one shard of one", func(t *testing.T) []MergeInput {
			return []MergeInput{in("a.json", shardResult(t, 1, 1, h100, Pass))}
		}, MergeOptions{}, Pass, Pass, nil},
		{"missing", func(t *testing.T) []MergeInput {
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass))}
		}, MergeOptions{}, Fail, Fail, []string{"shard 2/2 of H100 80GB HBM3, sm_90 is missing"}},
		{"duplicate", func(t *testing.T) []MergeInput {
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", shardResult(t, 2, 2, h100, Pass)), in("c.json", shardResult(t, 2, 2, h100, Pass))}
		}, MergeOptions{}, Fail, Fail, []string{"shard 2/2 of H100 80GB HBM3, sm_90 is given twice: b.json and c.json"}},
		{"unparsable", func(t *testing.T) []MergeInput {
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), {Name: "b.json", Err: errors.New("not a kernel-gate result file: line 1, column 2")}}
		}, MergeOptions{}, Fail, Fail, []string{"b.json: not merged: not a kernel-gate result file: line 1, column 2", "shard 2/2 of H100 80GB HBM3, sm_90 is missing"}},
		{"not a shard", func(t *testing.T) []MergeInput {
			r := shardResult(t, 1, 1, h100, Pass)
			r.Shard = nil
			return []MergeInput{in("a.json", r)}
		}, MergeOptions{}, Fail, Fail, []string{`a.json: not a shard (no "shard" record)`, "no shard result to merge"}},
		{"no inputs", func(t *testing.T) []MergeInput { return nil }, MergeOptions{}, Fail, Fail, []string{"no shard result to merge"}},
		{"other commit", func(t *testing.T) []MergeInput {
			b := mut(shardResult(t, 2, 2, h100, Pass), func(s *Shard) { s.Commit = "deadbeef" })
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", b)}
		}, MergeOptions{}, Fail, Fail, []string{`b.json: not a shard of the same run as a.json: its commit is "deadbeef", a.json's is "c0ffee"`, "shard 2/2"}},
		{"other base", func(t *testing.T) []MergeInput {
			b := mut(shardResult(t, 2, 2, h100, Pass), func(s *Shard) { s.Base = "" })
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", b)}
		}, MergeOptions{}, Fail, Fail, []string{`its base is none, a.json's is "ba5e"`}},
		{"other config", func(t *testing.T) []MergeInput {
			b := mut(shardResult(t, 2, 2, h100, Pass), func(s *Shard) { s.Config = "sha256:def" })
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", b)}
		}, MergeOptions{}, Fail, Fail, []string{"its config is"}},
		{"other target list", func(t *testing.T) []MergeInput {
			b := mut(shardResult(t, 2, 2, h100, Pass), func(s *Shard) { s.AllTargets = []string{"attention", "gemm"} })
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", b)}
		}, MergeOptions{}, Fail, Fail, []string{"its target list is"}},
		{"other shard count", func(t *testing.T) []MergeInput {
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", shardResult(t, 2, 3, h100, Pass))}
		}, MergeOptions{}, Fail, Fail, []string{"its shard count is"}},
		{"expected more shards", func(t *testing.T) []MergeInput {
			return []MergeInput{in("a.json", shardResult(t, 1, 1, h100, Pass))}
		}, MergeOptions{ExpectShards: 2}, Fail, Fail, []string{"a.json: is shard 1/1, but 2 shards are expected", "no shard result to merge"}},
		{"a GPU missing", func(t *testing.T) []MergeInput {
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", shardResult(t, 2, 2, h100, Pass))}
		}, MergeOptions{ExpectGPUs: 2}, Fail, Fail, []string{"2 GPU(s) expected (--expect-gpus), but the results come from 1: H100 80GB HBM3, sm_90"}},
		{"targets not its own", func(t *testing.T) []MergeInput {
			b := mut(shardResult(t, 2, 2, h100, Pass), func(s *Shard) { s.Targets = []string{"attention", "gemm"} })
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", b)}
		}, MergeOptions{}, Fail, Fail, []string{"b.json: shard 2/2 of H100 80GB HBM3, sm_90 gated attention, gemm, but its targets by their names' hash are attention"}},
		{"impossible shard", func(t *testing.T) []MergeInput {
			b := mut(shardResult(t, 2, 2, h100, Pass), func(s *Shard) { s.Index = 3 })
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", b)}
		}, MergeOptions{}, Fail, Fail, []string{"b.json: says it is shard 3/2, which no run has"}},
		{"a shard's own shards gate failed", func(t *testing.T) []MergeInput {
			b := shardResult(t, 2, 2, h100, Pass)
			sg := Gate{Name: ShardsGate, Findings: []Finding{{Severity: Error, Message: "planted"}}}
			sg.Decide(true)
			b = New(b.Tool, append([]Gate{sg}, b.Gates...)...)
			b.Device, b.Shard = h100, shardResult(t, 2, 2, h100, Pass).Shard
			return []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", b)}
		}, MergeOptions{}, Fail, Fail, []string{"b.json: planted"}},
		{"two GPUs, all present", func(t *testing.T) []MergeInput {
			return []MergeInput{in("l4-1.json", shardResult(t, 1, 2, l4, Pass)), in("h-1.json", shardResult(t, 1, 2, h100, Pass)),
				in("l4-2.json", shardResult(t, 2, 2, l4, Fail)), in("h-2.json", shardResult(t, 2, 2, h100, Pass))}
		}, MergeOptions{ExpectShards: 2, ExpectGPUs: 2}, Fail, Pass, nil},
		{"two GPUs, one shard missing", func(t *testing.T) []MergeInput {
			return []MergeInput{in("l4-1.json", shardResult(t, 1, 2, l4, Pass)), in("h-1.json", shardResult(t, 1, 2, h100, Pass)), in("h-2.json", shardResult(t, 2, 2, h100, Pass))}
		}, MergeOptions{}, Fail, Fail, []string{"shard 2/2 of L4, sm_89 is missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Tool = "kernel-gate merge-test"
			res, err := Merge(tc.inputs(t), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", res.Verdict, tc.verdict)
			}
			if len(res.Gates) == 0 || res.Gates[0].Name != ShardsGate {
				t.Fatalf("the shards gate must come first: %+v", res.Gates)
			}
			sg := res.Gates[0]
			if sg.Verdict != tc.shards {
				t.Errorf("shards gate %s, want %s: %s", sg.Verdict, tc.shards, errorsOf(sg))
			}
			got := errorsOf(sg)
			for _, want := range tc.errs {
				if !strings.Contains(got, want) {
					t.Errorf("errors lack %q:\n%s", want, got)
				}
			}
			if len(tc.errs) == 0 && got != "" {
				t.Errorf("unexpected errors:\n%s", got)
			}
			// The merged result is a result every reader takes.
			var b bytes.Buffer
			if err := Write(&b, res); err != nil {
				t.Fatal(err)
			}
			if _, err := Read(&b); err != nil {
				t.Errorf("the merged result does not read back: %v", err)
			}
		})
	}
}

// One GPU: the gates keep their names, the device is the GPU's, each part's findings and
// rows are joined and the identical ones (the guard's, run in every shard) kept once, and
// the data's lists are joined while a value that differs is kept per shard.
func TestMergeOneGPUJoinsParts(t *testing.T) {
	res, err := Merge([]MergeInput{in("b.json", shardResult(t, 2, 2, h100, Fail)), in("a.json", shardResult(t, 1, 2, h100, Pass))}, MergeOptions{Tool: "kg"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Device != h100 || res.Shard != nil {
		t.Errorf("device %v, shard %v", res.Device, res.Shard)
	}
	var names []string
	for _, g := range res.Gates {
		names = append(names, g.Name+"="+string(g.Verdict))
	}
	if want := []string{"shards=pass", "guard=pass", "correctness=fail"}; !slices.Equal(names, want) {
		t.Fatalf("gates %q, want %q", names, want)
	}
	guard := res.Gates[1]
	if len(guard.Findings) != 1 {
		t.Errorf("the guard's finding, the same in both shards, must be kept once: %+v", guard.Findings)
	}
	c := res.Gates[2]
	var rows []string
	for _, r := range c.Table.Rows {
		rows = append(rows, r.Cells[0])
	}
	if want := []string{"gemm", "softmax", "attention"}; !slices.Equal(rows, want) {
		t.Errorf("rows %q, want %q (shard order)", rows, want)
	}
	if n := len(c.Findings); n != 3 {
		t.Errorf("%d findings, want 3", n)
	}
	var d struct {
		Results   []string `json:"results"`
		Tolerance float64  `json:"tolerance"`
		ByShard   []struct {
			Part  string `json:"part"`
			Shape string `json:"shape"`
		} `json:"by_shard"`
	}
	if err := json.Unmarshal(c.Data, &d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Results, []string{"gemm", "softmax", "attention"}) || d.Tolerance != 0.01 ||
		len(d.ByShard) != 2 || d.ByShard[0].Part != "1/2" || d.ByShard[0].Shape != "shardI" || d.ByShard[1].Shape != "shardII" {
		t.Errorf("data %s", c.Data)
	}
	sg := res.Gates[0]
	if len(sg.Table.Rows) != 2 || sg.Table.Rows[0].Cells[1] != "1/2" || sg.Table.Rows[0].Cells[4] != "a.json" || sg.Table.Rows[1].Cells[2] != "attention" {
		t.Errorf("shards table %+v", sg.Table.Rows)
	}
}

// Several GPUs: a gate the same on every GPU is shown once, any other once per GPU,
// named after it; the device is nobody's.
func TestMergeGPUsApart(t *testing.T) {
	res, err := Merge([]MergeInput{in("l4-1.json", shardResult(t, 1, 2, l4, Pass)), in("h-1.json", shardResult(t, 1, 2, h100, Pass)),
		in("l4-2.json", shardResult(t, 2, 2, l4, Fail)), in("h-2.json", shardResult(t, 2, 2, h100, Pass))}, MergeOptions{Tool: "kg"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range res.Gates {
		names = append(names, g.Name+"="+string(g.Verdict))
	}
	want := []string{"shards=pass", "guard=pass", "correctness (H100 80GB HBM3, sm_90)=pass", "correctness (L4, sm_89)=fail"}
	if !slices.Equal(names, want) {
		t.Fatalf("gates %q, want %q", names, want)
	}
	if res.Device != nil {
		t.Errorf("a result of two GPUs names no one device: %v", res.Device)
	}
	if n := len(res.Gates[0].Table.Rows); n != 4 {
		t.Errorf("shards table has %d rows, want 4", n)
	}
}

func FuzzMerge(f *testing.F) {
	var one, two bytes.Buffer
	seed := func(i int, b *bytes.Buffer) {
		r := New("kg", Gate{Name: "ptxas", Verdict: Pass, Findings: []Finding{}, Data: json.RawMessage(`{"kernels":[{"name":"k"}],"n":1}`)})
		r.Shard = &Shard{Index: i, Count: 2, Targets: shard.Spec{Index: i, Count: 2}.Select(testTargets), AllTargets: testTargets}
		r.Device = h100
		if err := Write(b, r); err != nil {
			f.Fatal(err)
		}
	}
	seed(1, &one)
	seed(2, &two)
	f.Add(one.Bytes(), two.Bytes())
	f.Add(one.Bytes(), one.Bytes())
	f.Add([]byte(`{}`), two.Bytes())
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var inputs []MergeInput
		for i, raw := range [][]byte{a, b} {
			r, err := Read(bytes.NewReader(raw))
			inputs = append(inputs, MergeInput{Name: []string{"a", "b"}[i], Result: r, Err: err})
		}
		res, err := Merge(inputs, MergeOptions{Tool: "kg", ExpectShards: len(a) % 3, ExpectGPUs: len(b) % 3})
		if err != nil {
			return
		}
		if inputs[0].Err != nil || inputs[1].Err != nil {
			if res.Verdict != Fail {
				t.Fatalf("an unreadable input must fail the merge, got %s", res.Verdict)
			}
		}
		for _, in := range inputs {
			if in.Err == nil && in.Result.Verdict == Fail && res.Verdict != Fail {
				t.Fatal("a failed shard must fail the merge")
			}
		}
		var out bytes.Buffer
		if err := Write(&out, res); err != nil {
			return // a value JSON cannot hold (Read never gives one)
		}
		if _, err := Read(&out); err != nil {
			t.Fatalf("the merged result does not read back: %v", err)
		}
	})
}

// Every way a merge can lack a shard fails it, whatever was or was not said on the command
// line: the highest shard missing with no --expect-shards (the count comes from the shards
// themselves), a GPU whose every shard is missing (with --expect-gpus; without, the merged
// result says that it counted no GPUs), a merged result given to merge again.
func TestMergeNeverPassesAMissingShard(t *testing.T) {
	merged, err := Merge([]MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("b.json", shardResult(t, 2, 2, h100, Pass))}, MergeOptions{Tool: "kg"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		inputs []MergeInput
		opts   MergeOptions
		want   string
	}{
		{"the highest of three missing, no --expect-shards", []MergeInput{in("a.json", shardResult(t, 1, 3, h100, Pass)), in("b.json", shardResult(t, 2, 3, h100, Pass))},
			MergeOptions{}, "shard 3/3 of H100 80GB HBM3, sm_90 is missing"},
		{"the first missing, no --expect-shards", []MergeInput{in("b.json", shardResult(t, 2, 2, h100, Pass))},
			MergeOptions{}, "shard 1/2 of H100 80GB HBM3, sm_90 is missing"},
		{"a GPU with every shard missing", []MergeInput{in("h-1.json", shardResult(t, 1, 2, h100, Pass)), in("h-2.json", shardResult(t, 2, 2, h100, Pass))},
			MergeOptions{ExpectShards: 2, ExpectGPUs: 2}, "2 GPU(s) expected (--expect-gpus), but the results come from 1"},
		{"a merged result merged again", []MergeInput{in("merged.json", merged)},
			MergeOptions{}, `merged.json: not a shard (no "shard" record)`},
		{"a merged result beside a shard", []MergeInput{in("a.json", shardResult(t, 1, 2, h100, Pass)), in("merged.json", merged)},
			MergeOptions{}, "shard 2/2 of H100 80GB HBM3, sm_90 is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Merge(tc.inputs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != Fail || res.Gates[0].Verdict != Fail || !strings.Contains(errorsOf(res.Gates[0]), tc.want) {
				t.Errorf("verdict %s, shards gate %s, errors:\n%s\nwant a failure saying %q", res.Verdict, res.Gates[0].Verdict, errorsOf(res.Gates[0]), tc.want)
			}
		})
	}
	// Without --expect-gpus a GPU whose every shard is missing leaves nothing to see: the
	// merged result says it vouches only for the GPUs it holds, and records that no number
	// of GPUs was expected.
	sg := merged.Gates[0]
	var notes []string
	for _, f := range sg.Findings {
		notes = append(notes, f.Message)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "the GPUs were not counted (no --expect-gpus)") || strings.Contains(string(sg.Data), "expect_gpus") {
		t.Errorf("findings %q, data %s", notes, sg.Data)
	}
}

// A merged result whose shards gate was made to pass by hand, although its own record of
// the shards lacks one (or holds none), is no result to trust: Read refuses it, so report
// mode, kernel-gate report and a baseline update never take it as a whole run's pass.
func TestReadRefusesMergedResultThatLacksAShard(t *testing.T) {
	// Two GPUs, shard 2/2 of the L4 missing: the shards gate fails.
	merged, err := Merge([]MergeInput{in("h-1.json", shardResult(t, 1, 2, h100, Pass)), in("h-2.json", shardResult(t, 2, 2, h100, Pass)), in("l4-1.json", shardResult(t, 1, 2, l4, Pass))},
		MergeOptions{Tool: "kg", ExpectGPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if merged.Gates[0].Verdict != Fail {
		t.Fatalf("shards gate %s", merged.Gates[0].Verdict)
	}
	// passed is the result with its shards gate passed by hand (its error findings gone) and
	// its data edited by edit (nil: as Merge wrote it).
	passed := func(edit func(d map[string]any)) []byte {
		r := merged
		r.Gates = slices.Clone(merged.Gates)
		sg := r.Gates[0]
		sg.Findings = nil
		sg.Decide(true)
		if edit != nil {
			var d map[string]any
			if err := json.Unmarshal(sg.Data, &d); err != nil {
				t.Fatal(err)
			}
			edit(d)
			if err := sg.SetData(d); err != nil {
				t.Fatal(err)
			}
		}
		r.Gates[0] = sg
		r.Verdict = Overall(r.Gates)
		var b bytes.Buffer
		if err := Write(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	gpus := func(d map[string]any) []any { return d["gpus"].([]any) }
	for _, tc := range []struct {
		name string
		edit func(d map[string]any)
		want string
	}{
		{"as merged", nil, `shard(s) [2] of "L4, sm_89" are missing`},
		{"missing list removed", func(d map[string]any) { delete(gpus(d)[1].(map[string]any), "missing") }, `no shard 2/2 of "L4, sm_89"`},
		{"a GPU removed, expected two", func(d map[string]any) { d["gpus"] = gpus(d)[:1] }, "names 1 GPU(s) and 2 were expected"},
		{"a shard given twice", func(d map[string]any) {
			g := gpus(d)[0].(map[string]any)
			g["shards"] = []any{g["shards"].([]any)[0], g["shards"].([]any)[0]}
		}, "twice or out of range"},
		{"no record", func(d map[string]any) { clear(d) }, "says the run had 0 shards"},
		{"no GPU", func(d map[string]any) { d["gpus"] = []any{}; delete(d, "expect_gpus") }, "names no GPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(passed(tc.edit)))
			if !errors.Is(err, ErrNotResult) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read: %v; want it refused saying %q", err, tc.want)
			}
		})
	}
	// Data that is not even a record: refused too.
	raw := bytes.Replace(passed(nil), []byte(`"count": 2`), []byte(`"count": "two"`), 1)
	if _, err := Read(bytes.NewReader(raw)); !errors.Is(err, ErrNotResult) || !strings.Contains(err.Error(), "no record of the shards") {
		t.Errorf("Read of a record that is not one: %v", err)
	}
	// As merged, failing, it reads back.
	var b bytes.Buffer
	if err := Write(&b, merged); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(&b); err != nil {
		t.Errorf("the failed merge does not read back: %v", err)
	}
}
