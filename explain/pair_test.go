package explain

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Pair's rule on names alone: identity first, a rename only where exactly one function is
// base's alone and exactly one head's alone on the arch, never across archs.
func TestPair(t *testing.T) {
	fs := func(arch string, names ...string) []Function {
		var out []Function
		for _, n := range names {
			out = append(out, Function{Name: kernelname.Parse(n), Arch: arch})
		}
		return out
	}
	both := func(a, b []Function) []Function { return append(append([]Function{}, a...), b...) }
	for _, c := range []struct {
		name       string
		base, head []Function
		want       map[string]string // head's name on sm_90 → base's ("": none)
	}{
		{"identity", fs("sm_90", "k8", "other"), fs("sm_90", "k8", "other"), map[string]string{"k8": "k8", "other": "other"}},
		{"one renamed", fs("sm_90", "k8", "other"), fs("sm_90", "k9", "other"), map[string]string{"k9": "k8", "other": "other"}},
		{"two only in base", fs("sm_90", "k7", "k8", "other"), fs("sm_90", "k9", "other"), map[string]string{"k9": "", "other": "other"}},
		{"two only in head", fs("sm_90", "k8", "other"), fs("sm_90", "k9", "k10", "other"), map[string]string{"k9": "", "k10": "", "other": "other"}},
		{"the other arch's is no rename", fs("sm_80", "k8"), fs("sm_90", "k9"), map[string]string{"k9": ""}},
		{"a rename per arch", both(fs("sm_80", "k8"), fs("sm_90", "k8", "k7")), both(fs("sm_80", "k9"), fs("sm_90", "k9")), map[string]string{"k9": ""}},
		{"the same function twice is one", fs("sm_90", "k8", "k8"), fs("sm_90", "k9", "k9"), map[string]string{"k9": "k8"}},
	} {
		p := Pair(c.base, c.head)
		for head, want := range c.want {
			b, renamed, ok := p.Base(kernelname.Parse(head), "sm_90")
			got := ""
			if ok {
				got = b.Short
			}
			if got != want || renamed != (ok && want != head) {
				t.Errorf("%s: %s pairs with %q (renamed %v), want %q", c.name, head, got, renamed, want)
			}
		}
	}
	// The arch paired on its own: sm_80's single rename stands beside sm_90's ambiguity.
	p := Pair(both(fs("sm_80", "k8"), fs("sm_90", "k8", "k7")), both(fs("sm_80", "k9"), fs("sm_90", "k9")))
	if b, renamed, _ := p.Base(kernelname.Parse("k9"), "sm_80"); !renamed || b.Short != "k8" {
		t.Errorf("sm_80's k9 pairs with %q (renamed %v), want k8", b.Short, renamed)
	}
}

// llmcSources reads one side of llm.c's recording (testdata/external/karpathy-llm.c): its
// build log and SASS dump, where the change renamed layernorm_backward_kernel8 to
// layernorm_backward_kernel9.
func llmcSources(t *testing.T, side string) Sources {
	t.Helper()
	dir := filepath.Join("..", "testdata", "external", "karpathy-llm.c", "recorded", "llmc-layernorm", side, "layernorm-backward-make")
	var s Sources
	if err := s.ReadLog(context.Background(), filepath.Join(dir, "build.log")); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadSASS(context.Background(), filepath.Join(dir, "bin0", "sass.txt.gz")); err != nil {
		t.Fatal(err)
	}
	return s
}

// Explain pairs llm.c's renamed kernel with base's and says so; a second function only in
// base, or a second only in head, leaves it unpaired, noted as only in head.
func TestExplainRenamedKernel(t *testing.T) {
	base, head := llmcSources(t, "base"), llmcSources(t, "head")
	e := Explain(base, head, Options{})
	if len(e.Kernels) != 1 {
		t.Fatalf("%d kernels explained, want llm.c's renamed one: %+v", len(e.Kernels), e.Kernels)
	}
	k := e.Kernels[0]
	if k.Kernel != "layernorm_backward_kernel9" || kernelname.Parse(k.Base).Short != "layernorm_backward_kernel8" {
		t.Errorf("explained %s (base %s)", k.Kernel, k.Base)
	}
	want := "base's layernorm_backward_kernel8, taken as renamed (the only one of its arch gone, this the only one new): registers 40 → 64; barriers +120% (15 → 33); "
	if !strings.HasPrefix(k.Explain.Sentence, want) || strings.Contains(strings.Join(e.Notes, "\n"), "only in head") {
		t.Errorf("sentence %q\nwant it to start %q; notes %q", k.Explain.Sentence, want, e.Notes)
	}
	entry := true
	extra := func(name string) ptxas.Kernel {
		return ptxas.Kernel{Name: name, Arch: k.Arch, Entry: &entry}
	}
	for _, c := range []struct {
		name       string
		base, head Sources
	}{
		{"two only in base", withRecord(base, extra("_Z27layernorm_backward_kernel7Pf")), head},
		{"two only in head", base, withRecord(head, extra("_Z28layernorm_backward_kernel10Pf"))},
	} {
		e := Explain(c.base, c.head, Options{})
		if len(e.Kernels) != 0 || !strings.Contains(strings.Join(e.Notes, "\n"), "layernorm_backward_kernel9 (sm_90) is only in head") {
			t.Errorf("%s: explained %+v, notes %q: want no pairing", c.name, e.Kernels, e.Notes)
		}
	}
}

// withRecord is s with one more ptxas record.
func withRecord(s Sources, k ptxas.Kernel) Sources {
	s.Records = append(append([]ptxas.Kernel{}, s.Records...), k)
	return s
}
