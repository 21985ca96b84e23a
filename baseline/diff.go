package baseline

// Diffs: what changed between two entries of one key, for `kernel-gate baseline diff`.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/explain"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// DiffSchema names the JSON of a Diff. Within v1 fields are only added.
const DiffSchema = "kernel-gate/baseline-diff/v1"

// Changes of one row of a diff.
const (
	ChangeAdded     = "added"     // only in the newer entry
	ChangeRemoved   = "removed"   // only in the older entry
	ChangeChanged   = "changed"   // in both, and something differs
	ChangeUnchanged = "unchanged" // in both, and nothing that is recorded differs
)

// Timing changes: whether the two medians' intervals (TimingLevel each) are apart. Stored
// times come from different runs, often on different days, so even a change beyond the
// intervals is a lead, not a verdict: the speedup gate judges head against base timed
// side by side.
const (
	TimingSlower     = "slower"      // the newer interval lies wholly above the older
	TimingFaster     = "faster"      // wholly below
	TimingOverlap    = "overlapping" // the intervals overlap: no change shown
	TimingNoInterval = "no interval" // a side has a median but no interval (fewer than 6 rounds)
)

// Diff is what changed from one entry of a key (From) to another (To).
type Diff struct {
	Schema string `json:"schema"`
	Key    Key    `json:"key"`
	From   Side   `json:"from"`
	To     Side   `json:"to"`
	// Fingerprint lists the software that differs between the two ("driver", "cuda").
	Fingerprint []ValueChange `json:"fingerprint"`
	// Kernels has every kernel × arch of either entry; UnchangedKernels counts those whose
	// change is ChangeUnchanged.
	Kernels          []KernelDiff `json:"kernels"`
	UnchangedKernels int          `json:"unchanged_kernels"`
	// Timings has every target × kernel × shape that either entry has a median for.
	Timings     []TimingDiff      `json:"timings"`
	Correctness []CorrectnessDiff `json:"correctness"`
	Sanitizer   []SanitizerDiff   `json:"sanitizer"`
	// Notes say what the diff cannot show: parts an entry did not measure, SASS without
	// digests.
	Notes []string `json:"notes"`
}

// Side names one of the two entries.
type Side struct {
	Commit      string         `json:"commit"`
	Time        time.Time      `json:"time"`
	Tool        string         `json:"tool,omitempty"`
	Verdict     result.Verdict `json:"verdict"`
	Fingerprint Fingerprint    `json:"fingerprint"`
	Missing     []string       `json:"missing,omitempty"`
}

// ValueChange is one recorded value, before and after.
type ValueChange struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
}

// KernelDiff is one kernel × arch: its PTXAS numbers and its SASS.
type KernelDiff struct {
	// Kernel is the name without parameters ("kg::flash_fwd<64, 64, false>"); Name is the
	// mangled one of the newer entry (the older's when removed).
	Kernel string `json:"kernel"`
	Name   string `json:"name"`
	Arch   string `json:"arch"`
	Change string `json:"change"`
	// RenamedFrom is the older entry's mangled name of a kernel the change renamed
	// (explain.Pair: on its arch, the one kernel only the older entry has and the one only
	// the newer has); absent where both name it alike.
	RenamedFrom string `json:"renamed_from,omitempty"`
	// Metrics are the PTXAS numbers that differ (both sides, where recorded).
	Metrics []MetricChange `json:"metrics,omitempty"`
	// SASS is "changed" or "unchanged" by digest (and instruction count), "unknown" when a
	// side has no digest and the counts agree, absent when neither side has SASS.
	SASS         string `json:"sass,omitempty"`
	Instructions *Delta `json:"instructions,omitempty"`
	// Explain says what changed (package explain): the PTXAS resources, where both
	// entries have a record and a number changed, and the SASS instruction mix, where the
	// code changed and both entries keep a mix (entries written before it was kept say
	// nothing of it); never occupancy, as an entry keeps no launch. Absent otherwise.
	Explain *result.Explanation `json:"explain,omitempty"`
}

// MetricChange is a PTXAS number before and after; a side that does not record it is
// absent.
type MetricChange struct {
	Metric string `json:"metric"`
	Delta
}

// Delta is a count before and after.
type Delta struct {
	From *int64 `json:"from,omitempty"`
	To   *int64 `json:"to,omitempty"`
}

// SASS comparisons.
const (
	SASSChanged   = "changed"
	SASSUnchanged = "unchanged"
	SASSUnknown   = "unknown"
)

// TimingDiff is one target × kernel × shape's median time, before and after.
type TimingDiff struct {
	Target string       `json:"target,omitempty"`
	Kernel string       `json:"kernel"`
	Shape  string       `json:"shape"`
	Change string       `json:"change"`
	From   *TimeSummary `json:"from,omitempty"`
	To     *TimeSummary `json:"to,omitempty"`
	// Ratio is To's median over From's; Timing is one of the Timing* words.
	Ratio  *float64 `json:"ratio,omitempty"`
	Timing string   `json:"timing,omitempty"`
}

// TimeSummary is one side's median and its interval (TimingLevel), in µs.
type TimeSummary struct {
	MedianUs float64  `json:"median_us"`
	LowUs    *float64 `json:"low_us,omitempty"`
	HighUs   *float64 `json:"high_us,omitempty"`
	Rounds   int      `json:"rounds,omitempty"`
}

// CorrectnessDiff is one target × kernel × shape's error against the reference.
type CorrectnessDiff struct {
	Target      string           `json:"target,omitempty"`
	Kernel      string           `json:"kernel"`
	Shape       string           `json:"shape"`
	Change      string           `json:"change"`
	FromVerdict result.Verdict   `json:"from_verdict,omitempty"`
	ToVerdict   result.Verdict   `json:"to_verdict,omitempty"`
	FromMaxErr  *benchfile.Float `json:"from_max_err,omitempty"`
	ToMaxErr    *benchfile.Float `json:"to_max_err,omitempty"`
}

// SanitizerDiff is one target × tool's compute-sanitizer status.
type SanitizerDiff struct {
	Target     string `json:"target,omitempty"`
	Tool       string `json:"tool"`
	Change     string `json:"change"`
	FromStatus string `json:"from_status,omitempty"`
	ToStatus   string `json:"to_status,omitempty"`
	FromErrors *int   `json:"from_errors,omitempty"`
	ToErrors   *int   `json:"to_errors,omitempty"`
}

// DiffEntries compares entry from with the newer entry to. Both should be of one key; a
// diff across keys says so in its notes.
func DiffEntries(from, to Entry) Diff {
	d := Diff{Schema: DiffSchema, Key: to.Key(), From: sideOf(from), To: sideOf(to),
		Fingerprint: []ValueChange{}, Kernels: []KernelDiff{}, Timings: []TimingDiff{},
		Correctness: []CorrectnessDiff{}, Sanitizer: []SanitizerDiff{}, Notes: []string{}}
	if fk, tk := from.Key(), to.Key(); !fk.same(tk) {
		d.Notes = append(d.Notes, fmt.Sprintf("the entries are of two GPUs, %s and %s: their numbers are not comparable", fk, tk))
	}
	for _, v := range []ValueChange{
		{"gpu", from.Fingerprint.GPU, to.Fingerprint.GPU},
		{"arch", from.Fingerprint.Arch, to.Fingerprint.Arch},
		{"driver", from.Fingerprint.Driver, to.Fingerprint.Driver},
		{"cuda", from.Fingerprint.CUDA, to.Fingerprint.CUDA},
	} {
		if v.From != v.To {
			d.Fingerprint = append(d.Fingerprint, v)
		}
	}
	d.diffKernels(from, to)
	d.diffTimings(from, to)
	d.diffCorrectness(from, to)
	d.diffSanitizer(from, to)
	for _, p := range entryParts() {
		part := p.name
		var who []string
		for _, s := range []Side{d.From, d.To} {
			for _, m := range s.Missing {
				if m == part {
					who = append(who, shortCommit(s.Commit))
				}
			}
		}
		if len(who) > 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("%s: not recorded in %s", part, strings.Join(who, " and ")))
		}
	}
	return d
}

func sideOf(e Entry) Side {
	return Side{Commit: e.Commit, Time: e.Time, Tool: e.Tool, Verdict: e.Verdict, Fingerprint: e.Fingerprint, Missing: e.Missing}
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// pairs matches the rows of two lists by key, in the newer list's order, then the rows
// only the older has, in its order. A key repeated within a list is told apart by its
// occurrence.
func pairs[T any](from, to []T, key func(T) string) (out []struct{ from, to *T }) {
	index := func(xs []T) ([]string, map[string]int) {
		keys, seen, at := make([]string, len(xs)), map[string]int{}, map[string]int{}
		for i, x := range xs {
			k := key(x)
			seen[k]++
			k += "\x00" + strconv.Itoa(seen[k])
			keys[i], at[k] = k, i
		}
		return keys, at
	}
	fromKeys, fromAt := index(from)
	toKeys, _ := index(to)
	used := map[string]bool{}
	for i, k := range toKeys {
		p := struct{ from, to *T }{to: &to[i]}
		if j, ok := fromAt[k]; ok {
			p.from, used[k] = &from[j], true
		}
		out = append(out, p)
	}
	for j, k := range fromKeys {
		if !used[k] {
			out = append(out, struct{ from, to *T }{from: &from[j]})
		}
	}
	return out
}

func presence[T any](from, to *T) string {
	switch {
	case from == nil:
		return ChangeAdded
	case to == nil:
		return ChangeRemoved
	}
	return ChangeUnchanged
}

func (d *Diff) diffKernels(from, to Entry) {
	noDigest := 0
	for _, p := range renamedPairs(pairs(from.Kernels, to.Kernels, func(k Kernel) string {
		return kernelname.Parse(k.Name).Identity() + "\x00" + k.Arch
	})) {
		k := p.to
		if k == nil {
			k = p.from
		}
		kd := KernelDiff{Kernel: kernelname.Parse(k.Name).Short, Name: k.Name, Arch: k.Arch, Change: presence(p.from, p.to)}
		if p.from != nil && p.to != nil && p.from.Name != p.to.Name &&
			kernelname.Parse(p.from.Name).Identity() != kernelname.Parse(p.to.Name).Identity() {
			kd.RenamedFrom = p.from.Name
		}
		if kd.Change == ChangeUnchanged {
			kd.Metrics = ptxasChanges(p.from.Ptxas, p.to.Ptxas)
			kd.SASS, kd.Instructions = sassChange(p.from.SASS, p.to.SASS)
			if kd.SASS == SASSUnknown {
				noDigest++
			}
			if len(kd.Metrics) > 0 || kd.SASS == SASSChanged || kd.RenamedFrom != "" {
				kd.Change = ChangeChanged
			}
			records := len(kd.Metrics) > 0 && p.from.Ptxas != nil && p.to.Ptxas != nil
			mixes := kd.SASS == SASSChanged && p.from.SASS.Function() != nil && p.to.SASS.Function() != nil
			if records || mixes {
				kd.Explain = explainKernel(*p.from, *p.to, to.Fingerprint.Arch, kd.RenamedFrom != "")
			}
		}
		if kd.Change == ChangeUnchanged {
			d.UnchangedKernels++
		}
		d.Kernels = append(d.Kernels, kd)
	}
	if noDigest > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("SASS of %d kernel × arch pair(s) has no digest on a side (an entry written before digests were kept): "+
			"only instruction counts are compared there", noDigest))
	}
}

// renamedPairs joins a kernel only the newer entry has with the one only the older has
// where package explain's rule (explain.Pair) says the change renamed it: on its arch,
// exactly one kernel is the older's alone and exactly one the newer's alone. The joined
// row takes the newer's place; every other row is as pairs made it.
func renamedPairs(ps []struct{ from, to *Kernel }) []struct{ from, to *Kernel } {
	var older, newer []explain.Function
	for _, p := range ps {
		switch {
		case p.to == nil:
			older = append(older, explain.Function{Name: kernelname.Parse(p.from.Name), Arch: p.from.Arch})
		case p.from == nil:
			newer = append(newer, explain.Function{Name: kernelname.Parse(p.to.Name), Arch: p.to.Arch})
		}
	}
	if len(older) == 0 || len(newer) == 0 {
		return ps
	}
	pair := explain.Pair(older, newer)
	joined := map[*Kernel]bool{}
	for i, p := range ps {
		if p.from != nil {
			continue
		}
		b, renamed, _ := pair.Base(kernelname.Parse(p.to.Name), p.to.Arch)
		if !renamed {
			continue
		}
		for _, q := range ps {
			if q.to == nil && q.from.Arch == p.to.Arch && kernelname.Parse(q.from.Name).Identity() == b.Identity() {
				ps[i].from, joined[q.from] = q.from, true
				break
			}
		}
	}
	return slices.DeleteFunc(ps, func(p struct{ from, to *Kernel }) bool { return p.to == nil && joined[p.from] })
}

// explainKernel explains two entries' records of one kernel × arch on gpu (the newer
// entry's arch, "sm_90"), or on the kernel's own arch where that does not run on it: their
// PTXAS records and, where both entries keep it, their instruction mix (an entry written
// before the mix was kept says nothing of it). An entry keeps no launch, so occupancy is
// left out, saying so.
func explainKernel(from, to Kernel, gpu string, renamed bool) *result.Explanation {
	in := explain.Input{
		Base:        explain.Side{Record: from.Ptxas, SASS: from.SASS.Function()},
		Head:        explain.Side{Record: to.Ptxas, SASS: to.SASS.Function()},
		NoBlockSize: "a baseline entry keeps no launch; kernel-gate explain --block-size computes it",
	}
	if in.Base.Record == nil || in.Head.Record == nil {
		// Resources and occupancy need both records; without them, the mix alone.
		in.Base.Record, in.Head.Record = nil, nil
	}
	if renamed {
		in.Headline = explain.RenamedHeadline(kernelname.Parse(from.Name))
	}
	in.GPU = to.Arch
	if gpu != "" && gpuinfo.RunnableOn([]string{to.Arch}, gpu) {
		in.GPU = gpu
	}
	e := explain.Build(in)
	return &e
}

// ptxasChanges lists the numbers of two PTXAS records that differ; a record only one side
// has shows every number it has.
func ptxasChanges(a, b *ptxas.Kernel) []MetricChange {
	if a == nil && b == nil {
		return nil
	}
	get := func(k *ptxas.Kernel, f func(*ptxas.Kernel) *int64) *int64 {
		if k == nil {
			return nil
		}
		return f(k)
	}
	var out []MetricChange
	for _, m := range []struct {
		name string
		f    func(*ptxas.Kernel) *int64
	}{
		{ptxas.MetricRegisters, func(k *ptxas.Kernel) *int64 { return k.Registers }},
		{ptxas.MetricSpillStores, func(k *ptxas.Kernel) *int64 { return k.SpillStores }},
		{ptxas.MetricSpillLoads, func(k *ptxas.Kernel) *int64 { return k.SpillLoads }},
		{ptxas.MetricStackFrame, func(k *ptxas.Kernel) *int64 { return k.StackFrame }},
		{ptxas.MetricSmem, func(k *ptxas.Kernel) *int64 { return k.Smem }},
		{ptxas.MetricLmem, func(k *ptxas.Kernel) *int64 { return k.Lmem }},
		{"barriers", func(k *ptxas.Kernel) *int64 { return k.Barriers }},
	} {
		x, y := get(a, m.f), get(b, m.f)
		if (x == nil) != (y == nil) || x != nil && *x != *y {
			out = append(out, MetricChange{Metric: m.name, Delta: Delta{From: x, To: y}})
		}
	}
	return out
}

// sassChange compares two functions' code: by digest where both have one, else by
// instruction count, which tells a change but never its absence.
func sassChange(a, b *SASS) (string, *Delta) {
	if a == nil && b == nil {
		return "", nil
	}
	if a == nil || b == nil {
		return SASSUnknown, nil
	}
	var n *Delta
	if a.Instructions != b.Instructions {
		x, y := int64(a.Instructions), int64(b.Instructions)
		n = &Delta{From: &x, To: &y}
	}
	switch {
	case n != nil, a.Digest != "" && b.Digest != "" && a.Digest != b.Digest:
		return SASSChanged, n
	case a.Digest != "" && a.Digest == b.Digest:
		return SASSUnchanged, nil
	}
	return SASSUnknown, nil
}

func (d *Diff) diffTimings(from, to Entry) {
	measured := func(ts []Timing) []Timing {
		var out []Timing
		for _, t := range ts {
			if t.MedianUs != nil {
				out = append(out, t)
			}
		}
		return out
	}
	for _, p := range pairs(measured(from.Timings), measured(to.Timings), func(t Timing) string {
		return t.Target + "\x00" + t.Kernel + "\x00" + t.Shape
	}) {
		t := cmp.Or(p.to, p.from)
		td := TimingDiff{Target: t.Target, Kernel: t.Kernel, Shape: t.Shape, Change: presence(p.from, p.to),
			From: timeSummary(p.from), To: timeSummary(p.to)}
		if td.Change == ChangeUnchanged {
			if *p.from.MedianUs != *p.to.MedianUs {
				td.Change = ChangeChanged
			}
			if r := *p.to.MedianUs / *p.from.MedianUs; *p.from.MedianUs > 0 && !math.IsInf(r, 0) && !math.IsNaN(r) {
				td.Ratio = &r
			}
			td.Timing = intervals(td.From, td.To)
		}
		d.Timings = append(d.Timings, td)
	}
	if len(d.Timings) == 0 {
		d.Notes = append(d.Notes, "neither entry holds the head's own times (medians), so no timing is compared")
	}
}

func timeSummary(t *Timing) *TimeSummary {
	if t == nil {
		return nil
	}
	return &TimeSummary{MedianUs: *t.MedianUs, LowUs: t.LowUs, HighUs: t.HighUs, Rounds: t.Rounds}
}

// intervals says whether two medians' intervals are apart.
func intervals(a, b *TimeSummary) string {
	if a.LowUs == nil || a.HighUs == nil || b.LowUs == nil || b.HighUs == nil {
		return TimingNoInterval
	}
	switch {
	case *b.LowUs > *a.HighUs:
		return TimingSlower
	case *b.HighUs < *a.LowUs:
		return TimingFaster
	}
	return TimingOverlap
}

func (d *Diff) diffCorrectness(from, to Entry) {
	for _, p := range pairs(from.Correctness, to.Correctness, func(c Correctness) string {
		return c.Target + "\x00" + c.Kernel + "\x00" + c.Shape
	}) {
		c := cmp.Or(p.to, p.from)
		cd := CorrectnessDiff{Target: c.Target, Kernel: c.Kernel, Shape: c.Shape, Change: presence(p.from, p.to)}
		if p.from != nil {
			cd.FromVerdict, cd.FromMaxErr = p.from.Verdict, p.from.MaxErr
		}
		if p.to != nil {
			cd.ToVerdict, cd.ToMaxErr = p.to.Verdict, p.to.MaxErr
		}
		if cd.Change == ChangeUnchanged && (cd.FromVerdict != cd.ToVerdict || !sameFloat(cd.FromMaxErr, cd.ToMaxErr)) {
			cd.Change = ChangeChanged
		}
		d.Correctness = append(d.Correctness, cd)
	}
}

func sameFloat(a, b *benchfile.Float) bool {
	switch {
	case a == nil || b == nil:
		return a == b
	case math.IsNaN(float64(*a)):
		return math.IsNaN(float64(*b))
	}
	return *a == *b
}

func (d *Diff) diffSanitizer(from, to Entry) {
	for _, p := range pairs(from.Sanitizer, to.Sanitizer, func(s SanitizerRun) string { return s.Target + "\x00" + s.Tool }) {
		s := cmp.Or(p.to, p.from)
		sd := SanitizerDiff{Target: s.Target, Tool: s.Tool, Change: presence(p.from, p.to)}
		if p.from != nil {
			sd.FromStatus, sd.FromErrors = p.from.Status, &p.from.Errors
		}
		if p.to != nil {
			sd.ToStatus, sd.ToErrors = p.to.Status, &p.to.Errors
		}
		if sd.Change == ChangeUnchanged && (sd.FromStatus != sd.ToStatus || *sd.FromErrors != *sd.ToErrors) {
			sd.Change = ChangeChanged
		}
		d.Sanitizer = append(d.Sanitizer, sd)
	}
}

// WriteJSON writes the diff as indented JSON (DiffSchema).
func (d Diff) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // kernel names are full of '<' and '>'
	if err := enc.Encode(d); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteText writes the diff for a terminal: the two entries, then what changed per part.
// Unchanged kernels and sanitizer runs are counted, not listed; every timing and
// correctness row is listed, since their numbers move on every run.
func (d Diff) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "baseline diff of %s\n", d.Key)
	for _, s := range []struct {
		label string
		side  Side
	}{{"from", d.From}, {"to  ", d.To}} {
		fmt.Fprintf(&b, "  %s %s  %s  %-4s  driver %s, CUDA %s\n", s.label, shortCommit(s.side.Commit), s.side.Time.UTC().Format("2006-01-02 15:04"),
			s.side.Verdict, cmp.Or(s.side.Fingerprint.Driver, "?"), cmp.Or(s.side.Fingerprint.CUDA, "?"))
	}
	for _, v := range d.Fingerprint {
		fmt.Fprintf(&b, "  %s changed: %s → %s\n", v.Name, cmp.Or(v.From, "?"), cmp.Or(v.To, "?"))
	}

	changed := len(d.Kernels) - d.UnchangedKernels
	fmt.Fprintf(&b, "\nkernels × arch: %d changed, added or removed; %d unchanged\n", changed, d.UnchangedKernels)
	for _, k := range d.Kernels {
		if k.Change == ChangeUnchanged {
			continue
		}
		var parts []string
		for _, m := range k.Metrics {
			parts = append(parts, m.Metric+" "+deltaText(m.Delta))
		}
		switch {
		case k.SASS == SASSChanged && k.Instructions != nil:
			parts = append(parts, "SASS changed ("+deltaText(*k.Instructions)+" instructions)")
		case k.SASS == SASSChanged:
			parts = append(parts, "SASS changed (same instruction count)")
		case k.SASS == SASSUnknown && k.Change == ChangeChanged:
			parts = append(parts, "SASS not comparable (no digest)")
		}
		line := k.Change
		if len(parts) > 0 && k.Change == ChangeChanged {
			line = strings.Join(parts, ", ")
		}
		if k.RenamedFrom != "" && k.Explain == nil { // where an explanation follows, its sentence says it
			line = explain.RenamedHeadline(kernelname.Parse(k.RenamedFrom))
			if len(parts) > 0 {
				line += ": " + strings.Join(parts, ", ")
			}
		}
		fmt.Fprintf(&b, "  %s %s: %s\n", k.Kernel, k.Arch, line)
		if k.Explain != nil && k.Explain.Sentence != "" {
			fmt.Fprintf(&b, "    why: %s\n", k.Explain.Sentence)
		}
	}

	fmt.Fprintf(&b, "\ntimings (median µs [%.0f%% interval]):\n", TimingLevel*100)
	if len(d.Timings) == 0 {
		b.WriteString("  none recorded\n")
	}
	for _, t := range d.Timings {
		fmt.Fprintf(&b, "  %s: %s → %s", rowName(t.Target, t.Kernel, t.Shape), timeText(t.From), timeText(t.To))
		if t.Ratio != nil {
			fmt.Fprintf(&b, ": %+.1f%%", (*t.Ratio-1)*100)
		}
		switch t.Timing {
		case TimingSlower, TimingFaster:
			fmt.Fprintf(&b, ", %s (the intervals do not overlap)", t.Timing)
		case TimingOverlap:
			b.WriteString(", within the intervals")
		case TimingNoInterval:
			b.WriteString(", no interval to judge by")
		}
		b.WriteByte('\n')
	}
	if len(d.Timings) > 0 {
		b.WriteString("  (times of two runs, maybe days apart: a lead, not a verdict; the speedup gate times head and base side by side)\n")
	}

	b.WriteString("\ncorrectness (max_err):\n")
	if len(d.Correctness) == 0 {
		b.WriteString("  none recorded\n")
	}
	for _, c := range d.Correctness {
		fmt.Fprintf(&b, "  %s: %s → %s", rowName(c.Target, c.Kernel, c.Shape), errText(c.FromMaxErr, c.FromVerdict), errText(c.ToMaxErr, c.ToVerdict))
		if c.FromVerdict != "" && c.ToVerdict != "" && c.FromVerdict != c.ToVerdict {
			fmt.Fprintf(&b, " (%s → %s)", c.FromVerdict, c.ToVerdict)
		}
		b.WriteByte('\n')
	}

	same := 0
	var lines []string
	for _, s := range d.Sanitizer {
		if s.Change == ChangeUnchanged {
			same++
			continue
		}
		lines = append(lines, fmt.Sprintf("  %s %s: %s → %s\n", cmp.Or(s.Target, "-"), s.Tool, statusText(s.FromStatus, s.FromErrors), statusText(s.ToStatus, s.ToErrors)))
	}
	fmt.Fprintf(&b, "\nsanitizer: %d changed, added or removed; %d unchanged\n%s", len(lines), same, strings.Join(lines, ""))

	if len(d.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func rowName(target, kernel, shape string) string {
	if target == "" {
		return kernel + " " + shape
	}
	return target + " " + kernel + " " + shape
}

func deltaText(d Delta) string {
	num := func(x *int64) string {
		if x == nil {
			return "-"
		}
		return strconv.FormatInt(*x, 10)
	}
	s := num(d.From) + " → " + num(d.To)
	if d.From != nil && d.To != nil {
		s += fmt.Sprintf(" (%+d)", *d.To-*d.From)
	}
	return s
}

func timeText(t *TimeSummary) string {
	if t == nil {
		return "not recorded"
	}
	s := us(t.MedianUs)
	if t.LowUs != nil && t.HighUs != nil {
		s += " [" + us(*t.LowUs) + ", " + us(*t.HighUs) + "]"
	}
	return s
}

// us writes a time with 4 significant digits and no exponent.
func us(x float64) string {
	decimals := 0
	if a := math.Abs(x); a > 0 && !math.IsInf(a, 0) && !math.IsNaN(a) {
		decimals = max(0, 3-int(math.Floor(math.Log10(a))))
	}
	return strconv.FormatFloat(x, 'f', min(decimals, 9), 64)
}

func errText(x *benchfile.Float, v result.Verdict) string {
	if x == nil {
		if v == "" {
			return "not recorded"
		}
		return "no max_err"
	}
	return strconv.FormatFloat(float64(*x), 'g', 3, 64)
}

func statusText(status string, errs *int) string {
	if status == "" {
		return "not recorded"
	}
	if errs != nil && *errs > 0 {
		return fmt.Sprintf("%s (%d errors)", status, *errs)
	}
	return status
}
