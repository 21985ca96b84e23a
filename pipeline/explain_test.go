package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// explained replays a recording and returns its explained findings by gate.
func explained(t *testing.T, rcase string) map[string][]result.Finding {
	t.Helper()
	res, err := Run(context.Background(), loadConfig(t), Options{Replay: filepath.Join(root, "testdata/replay", rcase), Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]result.Finding{}
	for _, g := range res.Gates {
		for _, f := range g.Findings {
			if f.Explain != nil {
				out[g.Name] = append(out[g.Name], f)
			}
		}
	}
	return out
}

// findExplained is the explained finding of that kernel, arch and metric.
func findExplained(t *testing.T, fs []result.Finding, kernel, arch, metric string) result.Finding {
	t.Helper()
	for _, f := range fs {
		if f.Kernel == kernel && f.Arch == arch && f.Metric == metric {
			return f
		}
	}
	t.Fatalf("no explained %s finding of %s (%s) among %d", metric, kernel, arch, len(fs))
	return result.Finding{}
}

// The recorded defects are explained from both sides' records and SASS, the recording's GPU
// and the launch's block size, each led by what caused it: spill (local memory appears,
// then the register cap; the spill recording stopped before the harness ran, so no block
// size: the clause says why), occupancy (the harness's block size 128 in gemm/check.json:
// 28 → 16 warps/SM, limited by registers) and slow5 (the wait stalls of the timed wait,
// then the duration that shows it and its clock reads; ncu's block size; flash_fwd_causal
// as the function its profile ran). want is said in
// the explanation's clauses, in the sentence or after it.
func TestReplayExplanations(t *testing.T) {
	for _, tt := range []struct {
		rcase, gate, kernel, arch, metric string
		prefix                            string
		want                              []string
		blockFrom                         string
	}{
		{"spill", "ptxas", "kg::flash_fwd<64, 64, false>", "sm_90a", "spill_stores",
			"spill stores 0 → 1676 bytes: local memory traffic appears (local loads 0 → 315, local stores 0 → 295); registers 153 → 32; ",
			[]string{"spill loads 0 → 1684 bytes",
				"occupancy not computed: the launch's block size is unknown (Nsight Compute did not run and the harness does not report block_size)"}, ""},
		{"occupancy", "ptxas", "kg::gemm_wmma<64, 64, 32>", "sm_90a", "register_increase",
			"registers 72 → 108: occupancy 28 → 16 warps/SM (44% → 25% of the SM) at 128 threads per block, limited by registers",
			nil, "harness"},
		{"slow5", "speedup", "flash_fwd", "", "slowdown",
			// The base-vs-head profile (the recording of 2026-11-27 has it): the wait shows.
			"5.6% slower (kg::flash_fwd<64, 64, false>, sm_90a, the one the harness's flash_fwd ran in its profile, of 2 functions matching flash_fwd<*>): " +
				"wait stalls +18% (1.14 → 1.34 warps per issued instruction); duration 36384 → 38528 ns (+6%); " +
				"clock reads 0 → 2 (a timed wait or in-kernel timing: S2R/CS2R of SR_CLOCKLO); occupancy unchanged (12 warps/SM, limited by registers); ",
			[]string{"registers 153 → 148"}, "ncu"},
		// The harness's label names no function: its own profile says which it ran (the causal
		// instantiation), where the first with changed SASS would be the other one.
		{"slow5", "speedup", "flash_fwd_causal", "", "slowdown",
			"6.0% slower (kg::flash_fwd<64, 64, true>, sm_90a, the one the harness's flash_fwd_causal ran in its profile, of 2 functions matching flash_fwd<*>): " +
				"wait stalls +15% (1.13 → 1.30 warps per issued instruction); mio-throttle stalls +150% (0.08 → 0.20 warps per issued instruction); duration 32896 → 34784 ns (+6%); ",
			[]string{"registers 154 → 160"}, "ncu"},
	} {
		t.Run(tt.rcase, func(t *testing.T) {
			f := findExplained(t, explained(t, tt.rcase)[tt.gate], tt.kernel, tt.arch, tt.metric)
			e := f.Explain
			t.Log(e.Sentence)
			if !strings.HasPrefix(e.Sentence, tt.prefix) {
				t.Errorf("sentence does not start with %q:\n%s", tt.prefix, e.Sentence)
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(e.Clauses, func(c result.Clause) bool { return c.Text == w }) {
					t.Errorf("no clause %q:\n%+v", w, e.Clauses)
				}
			}
			if tt.blockFrom == "" && e.Occupancy != nil || tt.blockFrom != "" && (e.Occupancy == nil || e.Occupancy.BlockSizeFrom != tt.blockFrom || e.Occupancy.GPU != "9.0") {
				t.Errorf("occupancy %+v, want block size from %q on 9.0", e.Occupancy, tt.blockFrom)
			}
		})
	}
}

// An explanation costs nothing where every gate passes: explainGates builds none and reads
// nothing (the pipeline here has no executor, which any read would need, and no records).
func TestNoExplanationWhereGatesPass(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "testdata/replay/clean/result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res result.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res.Verdict != result.Pass {
		t.Fatalf("the clean recording's verdict is %s", res.Verdict)
	}
	p := &pipeline{}
	if n := p.explainGates(context.Background(), res.Gates); n != 0 {
		t.Errorf("%d explanations built where every gate passed", n)
	}
	// The clean recording, replayed whole, explains nothing either.
	if n := len(explained(t, "clean")); n != 0 {
		t.Errorf("the clean replay has explained findings in %d gates", n)
	}
}

// baseName pairs a head function with a base function of another name only where the
// change renamed it beyond doubt (llm.c's layernorm_backward_kernel8 → kernel9): base has
// no function of head's name, and exactly one function of the target's globs is base's
// alone and one head's alone. Anything else keeps head's own name, and with it no base.
func TestBaseNameRenamed(t *testing.T) {
	const k8, k9, k7, k10 = "layernorm_backward_kernel8", "layernorm_backward_kernel9", "layernorm_backward_kernel7", "layernorm_backward_kernel10"
	tgt := &config.Target{Functions: []string{"layernorm_backward_kernel*"}}
	for _, tt := range []struct {
		name       string
		base, head []string
		target     *config.Target
		want       string
	}{
		{"renamed", []string{k8, "gelu_forward_kernel2"}, []string{k9, "gelu_forward_kernel2"}, tgt, k8},
		{"same name", []string{k8}, []string{k8}, tgt, k8},
		{"two gone: no choice made", []string{k7, k8}, []string{k9}, tgt, k9},
		{"two new: no choice made", []string{k8}, []string{k9, k10}, tgt, k9},
		{"outside the globs", []string{"gelu_forward_kernel2"}, []string{k9}, tgt, k9},
		{"no target", []string{k8}, []string{k9}, nil, k9},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p pipeline
			for side, names := range [][]string{tt.base, tt.head} {
				for _, n := range names {
					p.records[side] = append(p.records[side], ptxas.Kernel{Name: n, Arch: "sm_90"})
				}
			}
			head := &p.records[sideHead][0]
			if got := p.baseName(head, tt.target).Short; got != tt.want {
				t.Errorf("baseName(%s) = %s, want %s", head.Name, got, tt.want)
			}
			// Another arch has no such function: never paired across arches.
			other := ptxas.Kernel{Name: head.Name, Arch: "sm_80"}
			if got := p.baseName(&other, tt.target).Short; got != head.Name {
				t.Errorf("on sm_80: %s", got)
			}
		})
	}
}
