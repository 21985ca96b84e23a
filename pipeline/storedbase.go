package pipeline

// The stored baseline: when there is no base build to compare with, the ptxas gate's
// regression limits (max_register_increase, the deltas, a kernel's stack frame) are judged
// against the newest comparable entry of the baseline store, and the gate says which.

import (
	"context"
	"fmt"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// MetricStoredBaseline marks the ptxas gate's finding that says which stored entry its
// baseline is, or why none is used.
const MetricStoredBaseline = "stored_baseline"

// storedPtxasBaseline is the ptxas gate's baseline when the run has no base build and
// Options.BaselineStore is set: the PTXAS records of the newest entry of the GPU's key that
// the config's baseline constraints allow comparing with. The finding says which entry
// that is, or why there is none; it is nil when no store was given or there is a base
// build. A store that cannot be read is an error finding: the limits it would have judged
// are not silently dropped.
func (p *pipeline) storedPtxasBaseline(ctx context.Context) (*ptxas.Baseline, *result.Finding) {
	if p.o.BaselineStore == nil || p.hasBase() {
		return nil, nil
	}
	say := func(s result.Severity, format string, a ...any) *result.Finding {
		return &result.Finding{Severity: s, Metric: MetricStoredBaseline, Message: fmt.Sprintf(format, a...)}
	}
	noBase := "no base build (" + strings.TrimSuffix(msgtext.FirstLine(p.decided.NoBase), ".") + ")"
	set, err := p.cfg.Baseline.Settings()
	if err != nil {
		return nil, say(result.Error, "%s, and the config's baseline section is not valid: %v", noBase, err)
	}
	if p.gpu == nil {
		return nil, say(result.Warning, "%s, and no GPU was detected (%s): the baseline store keeps one history per GPU, so none was read and register growth was not checked",
			noBase, msgtext.FirstLine(p.gpuWhy))
	}
	k, err := baseline.NewKey(p.gpu.Name, p.gpu.Arch())
	if err != nil {
		return nil, say(result.Warning, "%s, and the GPU names no baseline key: %v", noBase, err)
	}
	ch, err := baseline.NewestComparable(ctx, p.o.BaselineStore, k, set.Constraints)
	if err != nil {
		return nil, say(result.Error, "%s, and the baseline store could not be read: %v", noBase, msgtext.FirstLine(err.Error()))
	}
	switch {
	case ch.Entries == 0:
		return nil, say(result.Notice, "%s, and the baseline store holds no entry of %s yet: nothing to judge register growth against", noBase, k)
	case ch.Entry == nil:
		return nil, say(result.Warning, "%s, and none of the %d stored entries of %s is comparable, so none is used; the newest: %s",
			noBase, ch.Entries, k, ch.Passed[0].Why)
	}
	base := ch.Entry.PtxasBaseline()
	if base == nil {
		return nil, say(result.Warning, "%s, and the newest comparable stored entry, %s, holds no PTXAS record (it lacks %s)",
			noBase, ch.Entry.Describe(), strings.Join(ch.Entry.Missing, ", "))
	}
	f := say(result.Notice, "%s: deltas and max_register_increase are against the stored %s (%s)", noBase, ch.Entry.Describe(), ch.Why)
	if n := len(ch.Passed); n > 0 {
		f.Message += fmt.Sprintf("; %d newer entr%s passed over as not comparable, the newest: %s", n, map[bool]string{true: "y", false: "ies"}[n == 1], ch.Passed[0].Why)
	}
	return base, f
}

// addStoredBaselineFinding puts the stored baseline's finding on the ptxas gate (the
// first of gates, as PtxasGates returns them) and decides the gate again.
func addStoredBaselineFinding(gates []result.Gate, f *result.Finding) {
	if f == nil || len(gates) == 0 || gates[0].Name != ptxas.Name {
		return
	}
	g := &gates[0]
	g.Findings = append(g.Findings, *f)
	g.Decide(g.Verdict != result.Skip || f.Severity == result.Error)
}
