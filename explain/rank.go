package explain

import (
	"cmp"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Kind is what the finding an explanation rides on says of the kernel: it decides which
// clauses are the most telling (docs/gates.md, "Explanations").
type Kind int

const (
	// Heavier is a ptxas or sass finding, a baseline diff or kernel-gate explain: the
	// kernel's resources or code changed. Spills, occupancy and resources lead.
	Heavier Kind = iota
	// Slower is a speedup finding: the kernel took longer. The profile's causes and the
	// instructions that cost lead.
	Slower
)

// role is what a clause speaks of, which ranks it for a kind.
type role int

const (
	// roleStall: one of the (at most) two stall reasons that rose most, by at least
	// causeStall warps per issued instruction: where the time went.
	roleStall role = iota
	// roleDuration: Nsight Compute's duration, the slowdown shown or not.
	roleDuration
	// roleLocal: local memory traffic, spills, the stack frame, and registers that fell
	// as spills appeared (their cause).
	roleLocal
	// roleCostlyMix: instructions that cost beyond their count: tensor-core MMA lost,
	// clock reads, barriers and FP64 (sub 0), then shared and global loads and stores
	// (sub 1, the biggest change first).
	roleCostlyMix
	// roleOccupancy: occupancy that changed for real (the warps per SM or the limiter,
	// where the achieved occupancy does not say otherwise), the resource that limits it,
	// and the achieved occupancy.
	roleOccupancy
	// roleOccupancySame: occupancy unchanged, or changed in theory only.
	roleOccupancySame
	// roleMix: the rest of the instruction mix, the biggest change first.
	roleMix
	// roleProfile: the rest of the profile, stall reasons after the other metrics.
	roleProfile
	// roleResource: the rest of ptxas's figures.
	roleResource
	// roleNotComputed: what could not be computed, and why.
	roleNotComputed
)

// tier is where a role's clauses go for the kind, lowest first.
func (k Kind) tier(r role) int {
	var order []role
	if k == Slower {
		order = []role{roleStall, roleDuration, roleLocal, roleCostlyMix, roleOccupancy, roleOccupancySame, roleMix, roleProfile, roleResource, roleNotComputed}
	} else {
		order = []role{roleLocal, roleOccupancy, roleResource, roleCostlyMix, roleOccupancySame, roleMix, roleStall, roleDuration, roleProfile, roleNotComputed}
	}
	return slices.Index(order, r)
}

// causeStall is how much a stall reason must rise, in warps per issued instruction, to
// point at a cause (roleStall); causeStalls is how many may.
const (
	causeStall  = 0.1
	causeStalls = 2
)

// ranked is a clause with what ranks it.
type ranked struct {
	text, source string
	role         role
	// against: the clause goes the other way from the finding (something got better:
	// spills gone, stalls down); it goes after every clause that does not.
	against bool
	// sub orders clauses within a role (lower first), weight within a sub (bigger first).
	sub    int
	weight float64
}

// rank orders clauses for the kind: those that go the finding's way first, then those that
// go the other way, then what could not be computed; each group by its roles' tiers, sub
// and weight, then as they were made. The duration is never first:
// it says that a kernel got slower, not why, so the first clause that goes the finding's
// way after it goes before it.
func rank(k Kind, cs []ranked) []result.Clause {
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.group(), b.group()), cmp.Compare(k.tier(a.role), k.tier(b.role)),
			cmp.Compare(a.sub, b.sub), cmp.Compare(b.weight, a.weight))
	})
	if len(cs) > 1 && cs[0].role == roleDuration {
		if i := slices.IndexFunc(cs[1:], func(c ranked) bool { return !c.against }); i >= 0 {
			c := cs[i+1]
			cs = slices.Insert(slices.Delete(cs, i+1, i+2), 0, c)
		}
	}
	out := make([]result.Clause, len(cs))
	for i, c := range cs {
		out[i] = result.Clause{Text: c.text, Source: c.source}
	}
	return out
}

// group is 0 for a clause that goes the finding's way (or neither), 1 for one that goes
// the other way, 2 for what could not be computed.
func (c ranked) group() int {
	switch {
	case c.role == roleNotComputed:
		return 2
	case c.against:
		return 1
	}
	return 0
}

// sentence is the headline and the first clauses (result.SentenceShows), and how many
// more the explanation's clauses hold.
func sentence(headline string, cs []result.Clause) string {
	n := result.SentenceShows(len(cs))
	texts := make([]string, n)
	for i, c := range cs[:n] {
		texts[i] = c.Text
	}
	s := strings.Join(texts, "; ")
	if more := len(cs) - n; more > 0 {
		s += "; and " + numtext.Count(more, "more clause")
	}
	if headline == "" {
		return s
	}
	return headline + ": " + cmp.Or(s, "nothing kernel-gate measured of the kernel changed")
}
