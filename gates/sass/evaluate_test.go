package sass

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

func TestEvaluate(t *testing.T) {
	const (
		gemm     = "cuda13-h200/cuobjdump_sass_gemm_multi.txt"
		dialects = "cuda13-h200/cuobjdump_sass_dialects.txt"
		flash    = "cuda13-h200/nvdisasm_g_flash_sm90a.txt"
		seed     = "seed-l4-cuda12.8/wmma_proof_0953f67.txt"
	)
	type finding struct {
		kernel, arch, metric string
		value                float64
	}
	tests := []struct {
		name     string
		file     string
		config   string // the sass section's body, as YAML; it starts on line 2, after "sass:"
		verdict  result.Verdict
		findings []finding
		contains []string // in the joined finding messages
		rows     int
	}{
		{
			name: "require HMMA passes on every arch of the gemm", file: gemm,
			config:  "kernels:\n  - match: gemm_*\n    require: [\"HMMA|HGMMA\"]\n",
			verdict: result.Pass, rows: 3,
		},
		{
			name: "forbid HMMA fails on every arch of the gemm", file: gemm,
			config:  "kernels:\n  - match: gemm_*\n    forbid: [HMMA]\n    reason: testing\n",
			verdict: result.Fail, rows: 3,
			findings: []finding{
				{"kg::gemm_wmma<64, 64, 32>", "sm_80", MetricForbid, 16},
				{"kg::gemm_wmma<64, 64, 32>", "sm_89", MetricForbid, 16},
				{"kg::gemm_wmma<64, 64, 32>", "sm_90a", MetricForbid, 16},
			},
			contains: []string{"forbidden instruction HMMA found in kg::gemm_wmma<64, 64, 32> (sm_80): 16 of 440 instructions match (HMMA.16816.F32 x16); rule kernel-gate.yml:3 (reason: testing)"},
		},
		{
			name: "a glob that matches nothing fails", file: gemm,
			config:  "kernels:\n  - match: gemm_*\n    require: [HMMA]\n  - match: flash_*\n    require: [HMMA]\n",
			verdict: result.Fail, rows: 4,
			findings: []finding{{"", "", MetricMatch, 0}},
			contains: []string{"rule kernel-gate.yml:5 (flash_*) matched no kernel in the SASS: a renamed kernel must not pass silently; the SASS has kg::gemm_wmma<64, 64, 32>"},
		},
		{
			name: "arch filter: sm_90 covers sm_90a only", file: gemm,
			config:  "kernels:\n  - match: gemm_*\n    arch: [sm_90]\n    forbid: [HMMA]\n",
			verdict: result.Fail, rows: 1,
			findings: []finding{{"kg::gemm_wmma<64, 64, 32>", "sm_90a", MetricForbid, 16}},
		},
		{
			name: "arch filter matching no function fails", file: gemm,
			config:  "kernels:\n  - match: gemm_*\n    arch: [sm_75, sm_100]\n    require: [HMMA]\n",
			verdict: result.Fail, rows: 1,
			findings: []finding{{"", "sm_75,sm_100", MetricMatch, 0}},
			contains: []string{"rule kernel-gate.yml:3 (gemm_*, arch sm_75, sm_100) matched no kernel of arch sm_75, sm_100 in the SASS", "gemm_* matches kernels of sm_80, sm_89, sm_90a only"},
		},
		{
			name: "require a missing instruction", file: flash,
			config:  "kernels:\n  - match: \"flash_fwd<*, false>\"\n    require: [\"HGMMA\"]\n",
			verdict: result.Fail, rows: 1,
			findings: []finding{{"kg::flash_fwd<64, 64, false>", "sm_90a", MetricRequire, 0}},
			contains: []string{"required instruction HGMMA not found in kg::flash_fwd<64, 64, false> (sm_90a): 0 of 1760 instructions match; rule kernel-gate.yml:3"},
		},
		{
			name: "top-level forbid finds local memory", file: dialects,
			config:  "forbid: [LDL|STL]\n",
			verdict: result.Fail, rows: 7,
			findings: []finding{
				{"recursive_kernel", "sm_90a", MetricForbid, 10},
				{"calls_noinline", "sm_90a", MetricForbid, 9},
			},
			contains: []string{"(LDL x5, STL x5); sass.forbid (kernel-gate.yml:2)", "(STL.128 x8, LDL x1)"},
		},
		{
			name: "top-level require skips device functions", file: seed,
			config:  "require: [HMMA]\n",
			verdict: result.Fail, rows: 5,
			findings: []finding{
				{"qk_row_wmma<KernelTraits<32, 64, 64, 4, 2, true, true> >", "", MetricRequire, 0},
				{"qk_row_wmma<KernelTraits<32, 32, 64, 4, 2, true, true> >", "", MetricRequire, 0},
				{"qk_row_wmma<KernelTraits<48, 64, 64, 8, 2, true, true> >", "", MetricRequire, 0},
				{"qk_row_wmma<KernelTraits<32, 64, 64, 4, 1, true, true> >", "", MetricRequire, 0},
				{"qk_row_wmma<KernelTraits<16, 64, 64, 4, 2, true, true> >", "", MetricRequire, 0},
			},
			contains: []string{"(arch unknown)"},
		},
		{
			name: "a rule reaches device functions by name", file: seed,
			config:  "kernels:\n  - match: \"*mma_sync\"\n    require: [HMMA.16816]\n",
			verdict: result.Pass, rows: 1,
		},
		{
			name: "no rules skips", file: gemm,
			config:  "{}\n",
			verdict: result.Skip, rows: -1,
			findings: []finding{{"", "", "", -1}},
			contains: []string{"no SASS rules are configured"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, readFile(t, testdata(tt.file)), ParseOptions{})
			var cfg Config
			if err := yamlUnmarshal(tt.config, &cfg); err != nil {
				t.Fatal(err)
			}
			g, err := Evaluate(d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if g.Name != "sass" || g.Verdict != tt.verdict {
				t.Errorf("gate %q verdict %q, want %q; findings %+v", g.Name, g.Verdict, tt.verdict, g.Findings)
			}
			var got []finding
			var msgs []string
			for _, f := range g.Findings {
				v := -1.0
				if f.Value != nil {
					v = *f.Value
				}
				got = append(got, finding{f.Kernel, f.Arch, f.Metric, v})
				msgs = append(msgs, f.Message)
				if f.Severity == result.Error && (f.File != "kernel-gate.yml" || f.Line == 0) {
					t.Errorf("finding without its rule's location: %+v", f)
				}
			}
			if !reflect.DeepEqual(got, tt.findings) {
				t.Errorf("findings\n got %+v\nwant %+v\n%s", got, tt.findings, strings.Join(msgs, "\n"))
			}
			all := strings.Join(msgs, "\n")
			for _, c := range tt.contains {
				if !strings.Contains(all, c) {
					t.Errorf("messages do not contain %q:\n%s", c, all)
				}
			}
			if tt.rows < 0 {
				if g.Table != nil {
					t.Errorf("table %+v", g.Table)
				}
			} else if g.Table == nil || len(g.Table.Rows) != tt.rows {
				t.Errorf("table %+v, want %d rows", g.Table, tt.rows)
			} else {
				checkTable(t, g.Table)
			}
			var data Data
			if err := json.Unmarshal(g.Data, &data); err != nil || len(data.Functions) != len(d.Functions) {
				t.Errorf("data %s: %v", g.Data, err)
			}
		})
	}
}

// yamlUnmarshal decodes a sass section through the same path as the config loader.
func yamlUnmarshal(text string, c *Config) error {
	var fc fileConfig
	err := yamlDecode("sass:\n"+indent(text), &fc)
	*c = fc.SASS
	return err
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}

// checkTable asserts that failing rows come first and every row has a cell per column.
func checkTable(t *testing.T, tb *result.Table) {
	t.Helper()
	if tb.Columns[0] != "kernel" || tb.Columns[1] != "arch" || tb.Columns[2] != "instructions" {
		t.Errorf("columns %v", tb.Columns)
	}
	seenPass := false
	for _, r := range tb.Rows {
		if len(r.Cells) != len(tb.Columns) {
			t.Errorf("row %v has %d cells for %d columns", r.Cells, len(r.Cells), len(tb.Columns))
		}
		switch r.Status {
		case result.Pass:
			seenPass = true
		case result.Fail:
			if seenPass {
				t.Errorf("failing row %v after a passing one", r.Cells)
			}
		default:
			t.Errorf("row status %q", r.Status)
		}
	}
}

func TestEvaluateDataAndTable(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt")), ParseOptions{})
	cfg := Config{
		Forbid:  []string{"LDL|STL"},
		Kernels: []Rule{{Match: "gemm_*", Arch: []string{"sm_90"}, Require: []string{"HMMA|HGMMA"}, Item: configpos.Item{Line: 12}}},
	}
	g, err := Evaluate(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Pass || len(g.Findings) != 0 {
		t.Fatalf("verdict %q findings %+v", g.Verdict, g.Findings)
	}
	if g.Summary != "4 checks passed on 3 functions" {
		t.Errorf("summary %q", g.Summary)
	}
	wantCols := []string{"kernel", "arch", "instructions", "forbid LDL|STL", "require HMMA|HGMMA"}
	if !reflect.DeepEqual(g.Table.Columns, wantCols) {
		t.Errorf("columns %v", g.Table.Columns)
	}
	wantRows := [][]string{
		{"kg::gemm_wmma<64, 64, 32>", "sm_80", "440", "0", "-"},
		{"kg::gemm_wmma<64, 64, 32>", "sm_89", "456", "0", "-"},
		{"kg::gemm_wmma<64, 64, 32>", "sm_90a", "472", "0", "16"},
	}
	for i, r := range g.Table.Rows {
		if !reflect.DeepEqual(r.Cells, wantRows[i]) || r.Status != result.Pass {
			t.Errorf("row %d: %s %v, want %v", i, r.Status, r.Cells, wantRows[i])
		}
	}
	var raw struct {
		Functions []map[string]any `json:"functions"`
		Rules     []map[string]any `json:"rules"`
	}
	if err := json.Unmarshal(g.Data, &raw); err != nil {
		t.Fatal(err)
	}
	f := raw.Functions[2]
	if f["name"] != "_ZN2kg9gemm_wmmaILi64ELi64ELi32EEEvPK6__halfS3_Pfiii" || f["arch"] != "sm_90a" ||
		f["entry"] != nil || f["instructions"] != 472.0 ||
		!reflect.DeepEqual(f["matches"], map[string]any{"HMMA|HGMMA": 16.0, "LDL|STL": 0.0}) {
		t.Errorf("data function %v", f)
	}
	if !strings.HasPrefix(f["demangled"].(string), "void kg::gemm_wmma<64, 64, 32>(") {
		t.Errorf("demangled %v", f["demangled"])
	}
	if r := raw.Rules[0]; r["line"] != 12.0 || r["functions"] != 1.0 {
		t.Errorf("data rule %v", r)
	}

	// nvdisasm knows entry points: "entry": true.
	n := mustParse(t, readFile(t, testdata("cuda13-h200/nvdisasm_softmax_sm90a.txt")), ParseOptions{})
	g, err = Evaluate(n, Config{Require: []string{"EXIT"}})
	if err != nil || g.Verdict != result.Pass {
		t.Fatalf("%v %+v", err, g)
	}
	if !strings.Contains(string(g.Data), `"entry":true`) {
		t.Errorf("data %s", g.Data)
	}
}

// Failing rows sort before passing ones; the unmatched rule's row comes first of all.
func TestEvaluateTableOrder(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_dialects.txt")), ParseOptions{})
	cfg := Config{
		Forbid:  []string{"LDL|STL"},
		Kernels: []Rule{{Match: "renamed_kernel", Require: []string{"EXIT"}, Item: configpos.Item{Line: 9}}},
	}
	g, err := Evaluate(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range g.Table.Rows {
		order = append(order, string(r.Status)+" "+r.Cells[0])
	}
	want := []string{
		"fail recursive_kernel",
		"fail calls_noinline",
		"fail renamed_kernel (rule kernel-gate.yml:9): no match",
		"pass kg::flagged<3>",
		"pass kg::reduce_vec<float, 4, kg::detail::Plus>",
		"pass uses_const",
		"pass lmem_kernel",
		"pass plain_c_kernel",
	}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("rows\n got %q\nwant %q", order, want)
	}
	if g.Summary != "2 of 7 checks failed on 7 functions; 1 rule matched no kernel" {
		t.Errorf("summary %q", g.Summary)
	}
}

// A dump that names no arch and a rule limited to an arch: the message says why.
func TestEvaluateArchUnknown(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("shared-h200-cuda13.0/sass_mma.txt")), ParseOptions{})
	g, err := Evaluate(d, Config{Kernels: []Rule{{Match: "wmma_tile", Arch: []string{"sm_90"}, Require: []string{"HMMA"}, Item: configpos.Item{Line: 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail || len(g.Findings) != 1 || !strings.Contains(g.Findings[0].Message, "the dump names none") {
		t.Errorf("%+v", g.Findings)
	}
	// Given the arch, the same rule passes: wmma_tile has its 2 HMMA.
	d = mustParse(t, readFile(t, testdata("shared-h200-cuda13.0/sass_mma.txt")), ParseOptions{Arch: "sm_90a"})
	g, err = Evaluate(d, Config{Kernels: []Rule{{Match: "wmma_tile", Arch: []string{"sm_90"}, Require: []string{"HMMA"}, Item: configpos.Item{Line: 3}}}})
	if err != nil || g.Verdict != result.Pass {
		t.Errorf("%v %+v", err, g.Findings)
	}
}

// Only device functions and only a top-level require: nothing to judge, the gate skips and
// says why, without saying the top-level forbid would not have judged them (it judges
// every function); with a top-level forbid it judges them.
func TestEvaluateNothingToCheck(t *testing.T) {
	d := &Dump{Functions: []Function{{Name: kernelname.Parse("$__internal_0_$__cuda_sm20_rcp_rn_f32_slowpath"), EntryKnown: true, Opcodes: map[string]int{"FFMA": 1}, Instructions: 1}}}
	g, err := Evaluate(d, Config{Require: []string{"HMMA"}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Skip || len(g.Findings) != 1 || g.Findings[0].Severity != result.Warning ||
		!strings.Contains(g.Findings[0].Message, "sass.require applies to kernels") || strings.Contains(g.Findings[0].Message, "sass.forbid apply to kernels") {
		t.Errorf("%q %+v", g.Verdict, g.Findings)
	}
	g, err = Evaluate(d, Config{Require: []string{"HMMA"}, Forbid: []string{"DFMA"}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Pass || len(g.Findings) != 0 || g.Summary != "1 checks passed on 1 functions" {
		t.Errorf("with a forbid: %q %q %+v", g.Verdict, g.Summary, g.Findings)
	}
}

// The gate's data carries each function's digest, the parser's: with rules or without, the
// same per function × arch, and different where the code differs (the gemm on three archs).
func TestDataCarriesDigests(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt")), ParseOptions{})
	withRules := Config{Require: []string{"HMMA|HGMMA"}}
	for _, cfg := range []Config{{}, withRules} {
		g, err := Evaluate(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var data Data
		if err := json.Unmarshal(g.Data, &data); err != nil {
			t.Fatal(err)
		}
		if len(data.Functions) != len(d.Functions) {
			t.Fatalf("%d functions in the data, %d parsed", len(data.Functions), len(d.Functions))
		}
		seen := map[string]string{}
		for i, f := range data.Functions {
			if len(f.Digest) != 64 || f.Digest != d.Functions[i].Digest {
				t.Errorf("%s %s: digest %q, parsed %q", f.Name, f.Arch, f.Digest, d.Functions[i].Digest)
			}
			if other, ok := seen[f.Digest]; ok {
				t.Errorf("%s %s has the digest of %s", f.Name, f.Arch, other)
			}
			seen[f.Digest] = f.Name + " " + f.Arch
		}
	}
}

// A device function's code runs inside the kernels that call it: the top-level forbid
// judges it (a forbidden instruction moved into a __noinline__ helper that the dump shows
// as a function of its own, as nvdisasm does for -rdc and -G builds, is still found), the
// top-level require does not (a helper need not hold what a kernel must). The real sm_89
// dump of row_softmax, with nvdisasm's entry mark taken off, stands for such a helper.
func TestTopLevelForbidJudgesDeviceFunctions(t *testing.T) {
	raw := strings.Replace(string(readFile(t, testdata("cuda13-h200/nvdisasm_softmax_sm89.txt"))),
		`_ZN2kg11row_softmaxILi256EEEvPKfPfi,@"STO_CUDA_ENTRY STV_DEFAULT"`, `_ZN2kg11row_softmaxILi256EEEvPKfPfi,@"STV_DEFAULT"`, 1)
	d := mustParse(t, []byte(raw), ParseOptions{})
	i := slices.IndexFunc(d.Functions, func(f Function) bool { return f.Name.Short == "kg::row_softmax<256>" })
	if i < 0 || !d.Functions[i].EntryKnown || d.Functions[i].Entry {
		t.Fatalf("row_softmax is not read as a device function: %+v", d.Functions)
	}
	g, err := Evaluate(d, Config{Forbid: []string{"SHFL"}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail || !strings.Contains(findingText(g), "row_softmax") {
		t.Errorf("forbid SHFL in a device function: %s %+v", g.Verdict, g.Findings)
	}
	g, err = Evaluate(d, Config{Require: []string{"HMMA"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(findingText(g), "row_softmax") {
		t.Errorf("the top-level require judged a device function: %+v", g.Findings)
	}
}

func findingText(g result.Gate) string {
	var b strings.Builder
	for _, f := range g.Findings {
		b.WriteString(f.Kernel + " " + f.Message + "\n")
	}
	return b.String()
}

// Real nvdisasm output of a device function (testdata/cuda11.8-rdc: built with -rdc=true, a
// function of its own that the kernel calls): nvdisasm prints no .other line for it at all,
// where a kernel's says STO_CUDA_ENTRY. Shown whole without one, it is no kernel: the
// top-level require judges kern alone (helper need not make the CALL a kernel must), the
// top-level forbid judges helper too.
func TestRealDeviceFunctionIsNoKernel(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("cuda11.8-rdc/nvdisasm-base.txt")), ParseOptions{})
	entry := map[string]string{}
	for _, f := range d.Functions {
		entry[f.Name.Short] = fmt.Sprintf("known %v, kernel %v", f.EntryKnown, f.Entry)
	}
	if entry["kern"] != "known true, kernel true" || entry["helper"] != "known true, kernel false" {
		t.Fatalf("entries: %v", entry)
	}
	g, err := Evaluate(d, Config{Require: []string{"CALL"}})
	if err != nil || g.Verdict != result.Pass {
		t.Errorf("require CALL: %v %s %s", err, g.Verdict, findingText(g))
	}
	g, err = Evaluate(d, Config{Forbid: []string{"FADD"}})
	if err != nil || g.Verdict != result.Fail || !strings.Contains(findingText(g), "forbidden instruction FADD found in helper (sm_89)") {
		t.Errorf("forbid FADD: %v %s %s", err, g.Verdict, findingText(g))
	}
	// A grep-filtered dump (no .size, no .other) says nothing of which are kernels.
	var kept []string
	for _, l := range strings.Split(string(readFile(t, testdata("cuda11.8-rdc/nvdisasm-base.txt"))), "\n") {
		if strings.Contains(l, ".text.") || strings.Contains(l, "CALL") {
			kept = append(kept, l)
		}
	}
	for _, f := range mustParse(t, []byte(strings.Join(kept, "\n")), ParseOptions{}).Functions {
		if f.EntryKnown {
			t.Errorf("%s: entry known in a filtered dump", f.Name.Short)
		}
	}
}
