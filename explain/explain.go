// Package explain says why a kernel got slower or heavier between base and head, from the
// numbers kernel-gate already has, never from a guess:
//
//  1. Resources: both sides' ptxas records (registers, shared memory, stack, spills).
//  2. Occupancy: the theoretical blocks and warps per SM those resources allow on the
//     runner's GPU at the launch's block size (internal/occupancy), and the limiter.
//  3. Instruction mix: both sides' SASS opcodes folded into classes (sass.Mix: global,
//     shared and local loads and stores, tensor-core MMA, FP32/FP16/FP64 math,
//     conversions, barriers, branches), biggest change first; new local memory traffic,
//     lost tensor-core MMA and new barriers are called out. The mix comes from the dumps
//     or, for two saved results, from the sass gate's data, which keeps it: both give
//     the same sentence.
//  4. Profile: Nsight Compute's fixed metric set on both sides (Profile), where it ran.
//
// Build turns them into clauses by fixed rules, each naming its source, ranks the clauses
// by how telling they are for the finding's Kind (rank: for a slower kernel the stall
// reasons that rose most and the instructions that cost lead, for a heavier one spills,
// occupancy and resources; what got better goes after what got worse), and makes the
// sentence of the headline and the first few (result.SentenceShows): the first clause
// alone fits a check-run annotation, the sentence a report's line, every clause the
// summary. Build reads only what it is given; it costs nothing where no finding asks.
package explain

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/internal/occupancy"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Side is what one build says of the kernel.
type Side struct {
	// Record is the kernel's ptxas record for the arch that runs (nil: none).
	Record *ptxas.Kernel
	// SASS is the kernel's function as the sass gate's data records it, from a dump
	// (sass.Function.Data) or a saved result (nil: no SASS). The instruction mix is
	// compared only where both sides have one (FunctionData.Mix).
	SASS *sass.FunctionData
	// Profile is Nsight Compute's metrics of the kernel (nil: not profiled).
	Profile []Metric
}

// Metric is one profiled figure.
type Metric struct {
	Name  string
	Unit  string
	Value float64
}

// Input is everything Build reads.
type Input struct {
	// Headline is what the finding says changed ("5.0% slower", "registers 127 → 168").
	Headline string
	Base     Side
	Head     Side
	// GPU is the runner's compute capability ("9.0") or arch ("sm_89"), for occupancy.
	GPU string
	// BlockSize is the launch's threads per block, BlockSizeFrom where it was read
	// ("ncu", "harness"); 0 when unknown, and occupancy is then not computed.
	BlockSize     int
	BlockSizeFrom string
	// NoBlockSize says why BlockSize is 0, for the occupancy clause (default: Nsight
	// Compute did not run and the harness does not report block_size).
	NoBlockSize string
	// DynamicSmem is the launch's dynamic shared memory in bytes, where known.
	DynamicSmem int
	// Kind is what the finding says of the kernel (Heavier: the default), which ranks
	// the clauses.
	Kind Kind
}

// Build explains the change from in.Base to in.Head: every clause, ranked for in.Kind
// (rank), and the sentence of the headline and the most telling of them.
func Build(in Input) result.Explanation {
	var e result.Explanation
	var cs []ranked
	add := func(r ranked, format string, a ...any) {
		r.text = fmt.Sprintf(format, a...)
		cs = append(cs, r)
	}

	var mix []MixChange
	bs, hs := in.Base.SASS, in.Head.SASS
	// A side without a mix (a result written before the gate kept one) says nothing of
	// it: never compared with zero.
	mixed := bs != nil && hs != nil && bs.Mix != nil && hs.Mix != nil
	if mixed {
		mix = CompareMix(bs.Mix, hs.Mix)
		for _, c := range mix {
			e.Mix = append(e.Mix, result.Change{Name: c.Class.Label(), Unit: "instructions", Base: float64(c.Base), Head: float64(c.Head)})
		}
	}
	// Local memory that falls is no cause of a slowdown: it goes with what got better
	// (llm.c's layernorm_backward_kernel9 lost kernel8's spills and still got slower).
	local := changeOf(mix, sass.LocalLoad, sass.LocalStore)
	if len(local) > 0 {
		r := ranked{source: "sass", role: roleLocal}
		switch b, h := mixTotal(local, true), mixTotal(local, false); {
		case b == 0:
			add(r, "local memory traffic appears (%s)", describeMix(local))
		case h == 0:
			r.against = true
			add(r, "local memory traffic is gone (%s)", describeMix(local))
		case h < b:
			r.against = true
			add(r, "local memory traffic falls (%s)", describeMix(local))
		default:
			add(r, "local memory traffic changes (%s)", describeMix(local))
		}
	}
	if mma := changeOf(mix, sass.TensorCore); len(mma) > 0 && mma[0].Head < mma[0].Base {
		verb := "fewer tensor-core MMA instructions"
		if mma[0].Head == 0 {
			verb = "tensor-core MMA lost"
		}
		add(ranked{source: "sass", role: roleCostlyMix}, "%s (%s)", verb, describeMix(mma))
	}

	if mixed && hs.ClockReads > bs.ClockReads {
		e.Mix = append(e.Mix, result.Change{Name: "clock reads", Unit: "instructions", Base: float64(bs.ClockReads), Head: float64(hs.ClockReads)})
		add(ranked{source: "sass", role: roleCostlyMix}, "clock reads %d → %d (a timed wait or in-kernel timing: S2R/CS2R of SR_CLOCKLO)", bs.ClockReads, hs.ClockReads)
	}

	e.Resources = resourceChanges(in.Base.Record, in.Head.Record)
	spillsRise := slices.ContainsFunc(e.Resources, func(c result.Change) bool {
		return (c.Name == "spill stores" || c.Name == "spill loads") && c.Head > c.Base
	})
	resourceAt := map[string]int{} // a resource's clause in cs, for the occupancy it limits
	for _, c := range e.Resources {
		r := ranked{source: "ptxas", role: roleResource, against: c.Head < c.Base}
		switch {
		case c.Name == "spill stores" || c.Name == "spill loads" || c.Name == "stack frame":
			r.role = roleLocal
		case c.Name == "registers" && c.Head < c.Base && spillsRise:
			// Fewer registers as spills appear are the spills' cause: with them.
			r.role, r.against = roleLocal, false
		}
		resourceAt[c.Name] = len(cs)
		add(r, "%s %s → %s%s", c.Name, num(c.Base), num(c.Head), unitSuffix(c.Unit))
	}

	if occ, why := occupancyChange(in); occ != nil {
		e.Occupancy = occ
		b, h := occ.Base, occ.Head
		r := ranked{source: "occupancy", role: roleOccupancySame}
		switch theory := achievedSame(in); {
		case b.BlocksPerSM == h.BlocksPerSM && b.Limiter == h.Limiter:
			add(r, "occupancy unchanged (%d warps/SM, limited by %s)", h.WarpsPerSM, h.Limiter)
		case theory != "":
			add(r, "occupancy %d → %d warps/SM (%s → %s of the SM) at %d threads per block, limited by %s%s",
				b.WarpsPerSM, h.WarpsPerSM, pct(b.Occupancy), pct(h.Occupancy), occ.BlockSize, limiterChange(b.Limiter, h.Limiter), theory)
		default:
			r.role, r.against = roleOccupancy, h.WarpsPerSM > b.WarpsPerSM
			add(r, "occupancy %d → %d warps/SM (%s → %s of the SM) at %d threads per block, limited by %s",
				b.WarpsPerSM, h.WarpsPerSM, pct(b.Occupancy), pct(h.Occupancy), occ.BlockSize, limiterChange(b.Limiter, h.Limiter))
			// The resource that limits it explains it: right after it.
			if i, ok := resourceAt[h.Limiter]; ok && cs[i].role == roleResource {
				cs[i].role, cs[i].sub = roleOccupancy, 1
			}
		}
	} else if why != "" && (in.Base.Record != nil || in.Head.Record != nil) {
		add(ranked{source: "occupancy", role: roleNotComputed}, "occupancy not computed: %s", why)
	}

	for _, c := range mix {
		r := ranked{source: "sass", role: roleMix, against: c.Head < c.Base, weight: math.Abs(float64(c.Delta()))}
		switch c.Class {
		case sass.LocalLoad, sass.LocalStore, sass.TensorCore, sass.OtherClass:
			continue
		case sass.Barrier, sass.FP64:
			r.role, r.weight = roleCostlyMix, 0
		case sass.SharedLoad, sass.SharedStore, sass.GlobalLoad, sass.GlobalStore:
			r.role, r.sub = roleCostlyMix, 1
		}
		if c.Class != sass.Barrier && math.Abs(c.Ratio()) < 0.10 {
			continue // small shifts in the mix say nothing
		}
		add(r, "%s %s (%d → %d)", c.Class.Label(), signedPct(c.Ratio()), c.Base, c.Head)
	}

	e.Profile = profileChanges(in.Base.Profile, in.Head.Profile)
	var stalls []int // the stall reasons that rose, in cs
	for _, c := range e.Profile {
		r := profileRank(c)
		if t := profileClause(c); t != "" {
			// Not-selected warps were ready and another was picked: no cause.
			if reason, ok := stallReason(c.Name); ok && c.Head > c.Base && reason != "not-selected" {
				stalls = append(stalls, len(cs))
			}
			add(r, "%s", t)
		} else if c.Name == durationMetric {
			// Profiles are taken for a slower verdict: a duration that does not move says
			// the profiled launches (one at a time, caches flushed) do not show it.
			r.against = false
			add(r, "duration %s → %s %s under Nsight Compute (%+.1f%%): its launches do not show the slowdown", num(c.Base), num(c.Head), c.Unit, 100*relChange(c))
		}
	}
	// The stall reasons that rose most point at where the time went.
	slices.SortStableFunc(stalls, func(a, b int) int { return cmp.Compare(cs[b].weight, cs[a].weight) })
	for i, at := range stalls {
		if i < causeStalls && cs[at].weight >= causeStall {
			cs[at].role = roleStall
		}
	}

	// A clause that only repeats the headline ("registers 72 → 108") says nothing new.
	cs = slices.DeleteFunc(cs, func(c ranked) bool { return c.text == in.Headline })
	e.Clauses = rank(in.Kind, cs)
	e.Sentence = sentence(in.Headline, e.Clauses)
	return e
}

// mixTotal is the instructions of cs on one side.
func mixTotal(cs []MixChange, base bool) int {
	n := 0
	for _, c := range cs {
		if base {
			n += c.Base
		} else {
			n += c.Head
		}
	}
	return n
}

// achievedSame qualifies a theoretical occupancy change that the profile's achieved
// occupancy does not show (within 2 points): a grid smaller than the theoretical limit
// (llm.c's layernorm_backward launches 2 blocks per SM on either side) never reaches it.
func achievedSame(in Input) string {
	b, okB := metricOf(in.Base.Profile, achievedMetric)
	h, okH := metricOf(in.Head.Profile, achievedMetric)
	if !okB || !okH || math.Abs(h.Value-b.Value) >= 2 {
		return ""
	}
	return fmt.Sprintf(", in theory only: achieved occupancy %.1f%% → %.1f%% (Nsight Compute)", b.Value, h.Value)
}

// changeOf picks the changes of the given classes, in that order.
func changeOf(mix []MixChange, classes ...sass.Class) []MixChange {
	var out []MixChange
	for _, want := range classes {
		for _, c := range mix {
			if c.Class == want {
				out = append(out, c)
			}
		}
	}
	return out
}

func describeMix(cs []MixChange) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d → %d", c.Class.Label(), c.Base, c.Head)
	}
	return strings.Join(parts, ", ")
}

// resourceChanges lists ptxas's figures that differ between the records.
func resourceChanges(base, head *ptxas.Kernel) []result.Change {
	if base == nil || head == nil {
		return nil
	}
	var out []result.Change
	for _, f := range resourceFields(base, head) {
		if f.b == nil || f.h == nil || *f.b == *f.h {
			continue
		}
		out = append(out, result.Change{Name: f.name, Unit: f.unit, Base: float64(*f.b), Head: float64(*f.h)})
	}
	return out
}

// resourceField is one of ptxas's figures on both sides, with the gate's metric for it.
type resourceField struct {
	metric, name, unit string
	b, h               *int64
}

func resourceFields(base, head *ptxas.Kernel) []resourceField {
	return []resourceField{
		{ptxas.MetricRegisters, "registers", "", base.Registers, head.Registers},
		{ptxas.MetricSmem, "shared memory", "bytes", base.Smem, head.Smem},
		{ptxas.MetricStackFrame, "stack frame", "bytes", base.StackFrame, head.StackFrame},
		{ptxas.MetricSpillStores, "spill stores", "bytes", base.SpillStores, head.SpillStores},
		{ptxas.MetricSpillLoads, "spill loads", "bytes", base.SpillLoads, head.SpillLoads},
		{"", "barriers", "", base.Barriers, head.Barriers},
	}
}

// Headline is a ptxas finding's own short statement from both records: "registers 72 →
// 108" for register_increase or registers, "spill stores 0 → 1676 bytes"; "" when the
// metric is not one of the records' figures or a side lacks it.
func Headline(metric string, base, head *ptxas.Kernel) string {
	if base == nil || head == nil {
		return ""
	}
	if metric == ptxas.MetricRegisterIncrease {
		metric = ptxas.MetricRegisters
	}
	for _, f := range resourceFields(base, head) {
		if f.metric == metric && metric != "" && f.b != nil && f.h != nil {
			return fmt.Sprintf("%s %d → %d%s", f.name, *f.b, *f.h, unitSuffix(f.unit))
		}
	}
	return ""
}

// occupancyChange computes both sides' occupancy, or says why it cannot.
func occupancyChange(in Input) (*result.OccupancyChange, string) {
	if in.Base.Record == nil || in.Head.Record == nil || in.Base.Record.Registers == nil || in.Head.Record.Registers == nil {
		return nil, "a side has no ptxas register count"
	}
	if in.BlockSize <= 0 {
		return nil, "the launch's block size is unknown (" + cmp.Or(in.NoBlockSize, "Nsight Compute did not run and the harness does not report block_size") + ")"
	}
	l, ok := occupancy.For(in.GPU)
	if !ok {
		return nil, fmt.Sprintf("no occupancy limits for %q", in.GPU)
	}
	side := func(k *ptxas.Kernel) (result.Occupancy, error) {
		kk := occupancy.Kernel{BlockSize: in.BlockSize, Registers: int(*k.Registers), DynamicSmem: in.DynamicSmem}
		if k.Smem != nil {
			kk.StaticSmem = int(*k.Smem)
		}
		kk.OptIn = kk.StaticSmem+kk.DynamicSmem > l.SmemPerBlock // it launched, so it opted in
		r, err := occupancy.Compute(l, kk)
		return result.Occupancy{BlocksPerSM: r.BlocksPerSM, WarpsPerSM: r.WarpsPerSM, Occupancy: round3(r.Occupancy), Limiter: string(r.Limiter)}, err
	}
	b, err := side(in.Base.Record)
	if err != nil {
		return nil, "base: " + err.Error()
	}
	h, err := side(in.Head.Record)
	if err != nil {
		return nil, "head: " + err.Error()
	}
	return &result.OccupancyChange{GPU: l.CC, BlockSize: in.BlockSize, BlockSizeFrom: in.BlockSizeFrom, Base: b, Head: h}, ""
}

func limiterChange(b, h string) string {
	if b == h {
		return h
	}
	return h + " (was " + b + ")"
}

func num(v float64) string { return fmt.Sprintf("%g", v) }

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

func signedPct(r float64) string {
	if r >= 1e8 {
		return "new"
	}
	return fmt.Sprintf("%+.0f%%", 100*r)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
