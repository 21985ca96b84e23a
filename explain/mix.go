package explain

import (
	"cmp"
	"slices"

	"github.com/kernel-gate/kernel-gate/gates/sass"
)

// MixChange is one instruction class's count on both sides (sass.Mix).
type MixChange struct {
	Class      sass.Class
	Base, Head int
}

// Delta is Head - Base.
func (c MixChange) Delta() int { return c.Head - c.Base }

// Ratio is the relative change (0.5 for +50%); +Inf from zero is reported as 1e9.
func (c MixChange) Ratio() float64 {
	if c.Base == 0 {
		if c.Head == 0 {
			return 0
		}
		return 1e9
	}
	return float64(c.Head-c.Base) / float64(c.Base)
}

// CompareMix lists the classes whose count changed, the biggest relative change first
// (ties: the larger absolute change, then by name); sass.OtherClass last, since it says
// nothing of why.
func CompareMix(base, head sass.Mix) []MixChange {
	var out []MixChange
	seen := map[sass.Class]bool{}
	for _, m := range []sass.Mix{base, head} {
		for c := range m {
			if seen[c] {
				continue
			}
			seen[c] = true
			if base[c] != head[c] {
				out = append(out, MixChange{Class: c, Base: base[c], Head: head[c]})
			}
		}
	}
	abs := func(x float64) float64 { return max(x, -x) }
	slices.SortFunc(out, func(a, b MixChange) int {
		if (a.Class == sass.OtherClass) != (b.Class == sass.OtherClass) {
			if a.Class == sass.OtherClass {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(abs(b.Ratio()), abs(a.Ratio())), cmp.Compare(abs(float64(b.Delta())), abs(float64(a.Delta()))), cmp.Compare(a.Class.Label(), b.Class.Label()))
	})
	return out
}
