package explain

import (
	"slices"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Function is one side's function on one arch, as Pair reads it.
type Function struct {
	Name kernelname.Name
	Arch string
}

// Pairs is head's functions paired with base's (Pair).
type Pairs struct {
	base    map[identityArch]bool
	renamed map[identityArch]kernelname.Name
}

// Pair pairs head's functions with base's, the one rule of `kernel-gate run`'s
// explanation, `kernel-gate explain` and `kernel-gate baseline diff`: on the same arch, a
// function is base's of the same identity (kernelname) where base has one; else, where the
// change renamed it (llm.c's layernorm_backward_kernel8 became layernorm_backward_kernel9
// in the commit that slowed it), the one function base alone has on that arch, when
// exactly one is base's alone and exactly one head's alone: a pairing that leaves no
// choice, never a guess. Two functions only in base, or two only in head, pair none of
// them. The caller picks the functions that may pair (a target's globs, entry functions).
func Pair(base, head []Function) Pairs {
	p := Pairs{base: map[identityArch]bool{}, renamed: map[identityArch]kernelname.Name{}}
	inHead := map[identityArch]bool{}
	for _, f := range base {
		p.base[identityArch{f.Name.Identity(), f.Arch}] = true
	}
	for _, f := range head {
		inHead[identityArch{f.Name.Identity(), f.Arch}] = true
	}
	// only lists each arch's functions that one side alone has, each identity once.
	only := func(fs []Function, other map[identityArch]bool) map[string][]Function {
		out := map[string][]Function{}
		for _, f := range fs {
			if other[identityArch{f.Name.Identity(), f.Arch}] || slices.ContainsFunc(out[f.Arch], func(o Function) bool {
				return o.Name.Identity() == f.Name.Identity()
			}) {
				continue
			}
			out[f.Arch] = append(out[f.Arch], f)
		}
		return out
	}
	baseOnly, headOnly := only(base, inHead), only(head, p.base)
	for arch, hs := range headOnly {
		if bs := baseOnly[arch]; len(bs) == 1 && len(hs) == 1 {
			p.renamed[identityArch{hs[0].Name.Identity(), arch}] = bs[0].Name
		}
	}
	return p
}

// Base is base's function that head's function on arch is: itself where base has its
// identity, renamed false; the one it was renamed from, renamed true; ok false where base
// has neither.
func (p Pairs) Base(head kernelname.Name, arch string) (base kernelname.Name, renamed, ok bool) {
	k := identityArch{head.Identity(), arch}
	if p.base[k] {
		return head, false, true
	}
	if b, found := p.renamed[k]; found {
		return b, true, true
	}
	return kernelname.Name{}, false, false
}

// RenamedHeadline is the headline of a kernel paired as renamed: "base's X, taken as
// renamed (...)". It says what the pairing rests on, since no build says a kernel was
// renamed: across two baseline entries many commits apart it may be two unrelated kernels.
func RenamedHeadline(base kernelname.Name) string {
	return "base's " + base.Short + ", " + renamedWhy
}

// renamedWhy is the reason RenamedHeadline gives for a pairing.
const renamedWhy = "taken as renamed (the only one of its arch gone, this the only one new)"
