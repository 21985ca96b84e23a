package baseline

// Entries: what a run measured, cut down to what a later run compares with or a trend
// draws, from the result the gates wrote (and the head's timing file, which the result
// does not keep).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/gates/toolkit"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Entry is one run kept as a baseline: what a later change is compared against, and one
// point of its key's history. It keeps the measurements themselves rather than the whole
// result, so that a file of DefaultKeep entries stays small enough to rewrite on every
// update; paths of the runner that made it (build logs, artifacts) are left out, since no
// later run can open them.
type Entry struct {
	// Commit is the commit that was measured.
	Commit string `json:"commit"`
	// Time is when it was measured, in UTC (RFC 3339 in the file).
	Time time.Time `json:"time"`
	// Tool is the kernel-gate that measured it ("kernel-gate v0.2.0").
	Tool string `json:"tool,omitempty"`
	// Trigger is the GitHub event that asked for the update, with its reason (a dispatch's
	// "update-baseline" input); absent outside Actions.
	Trigger *result.Trigger `json:"trigger,omitempty"`
	// Replay is set when the result came from a recording, never from a live run.
	Replay string `json:"replay,omitempty"`
	// Verdict is the run's: a baseline from a failing run is allowed (the caller decides)
	// but must say so.
	Verdict     result.Verdict `json:"verdict"`
	Fingerprint Fingerprint    `json:"fingerprint"`
	// Kernels holds per kernel × arch the PTXAS record and the SASS summary.
	Kernels []Kernel `json:"kernels,omitempty"`
	// Timings holds per kernel × shape the timing summary.
	Timings []Timing `json:"timings,omitempty"`
	// Correctness holds per kernel × shape the error against the reference.
	Correctness []Correctness `json:"correctness,omitempty"`
	// Sanitizer holds per target × tool the compute-sanitizer run's status.
	Sanitizer []SanitizerRun `json:"sanitizer,omitempty"`
	// Missing names the parts the result gave nothing for (PartPtxas ... PartCUDA), so
	// that a reader can tell "not measured" from "nothing found".
	Missing []string `json:"missing,omitempty"`
}

// Fingerprint is the machine and software an entry was measured with. GPU and Arch make
// its Key; Driver and CUDA are compared by Constraints.
type Fingerprint struct {
	GPU    string `json:"gpu"`
	Arch   string `json:"arch"`
	Driver string `json:"driver,omitempty"`
	// CUDA is the toolkit that built the kernels ("13.0.88", from the toolkit gate), or,
	// when the result has no toolkit gate, the CUDA version the harness reported ("13.0").
	CUDA string `json:"cuda,omitempty"`
	// CUDAFrom says which of the two CUDA is: "toolkit" or "harness".
	CUDAFrom string `json:"cuda_from,omitempty"`
}

// Key is the entry's key.
func (f Fingerprint) Key() (Key, error) { return NewKey(f.GPU, f.Arch) }

// Key is the entry's key; a malformed fingerprint gives the zero Key.
func (e Entry) Key() Key {
	k, _ := e.Fingerprint.Key()
	return k
}

// Kernel is one compiled function for one arch.
type Kernel struct {
	Name      string `json:"name"` // mangled, as the tools print it
	Demangled string `json:"demangled,omitempty"`
	Arch      string `json:"arch"`
	// Ptxas is the PTXAS gate's record without where it was read from. In the file its
	// name, demangled name and arch are left to the Kernel's, which are the same: names
	// are most of a record's size.
	Ptxas *ptxas.Kernel `json:"ptxas,omitempty"`
	SASS  *SASS         `json:"sass,omitempty"`
}

// kernelJSON is Kernel without its methods.
type kernelJSON Kernel

// MarshalJSON writes the PTXAS record without the names the Kernel holds.
func (k Kernel) MarshalJSON() ([]byte, error) {
	p := kernelJSON(k)
	if k.Ptxas != nil {
		rec := *k.Ptxas
		if rec.Name == k.Name && rec.Demangled == k.Demangled && rec.Arch == k.Arch {
			rec.Name, rec.Demangled, rec.Arch = "", "", ""
		}
		p.Ptxas = &rec
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // kernel names are full of '<' and '>'
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// UnmarshalJSON gives the PTXAS record its names back.
func (k *Kernel) UnmarshalJSON(raw []byte) error {
	var p kernelJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if r := p.Ptxas; r != nil && r.Name == "" && r.Demangled == "" && r.Arch == "" {
		r.Name, r.Demangled, r.Arch = p.Name, p.Demangled, p.Arch
	}
	*k = Kernel(p)
	return nil
}

// SASS summarizes a function's machine code: its instruction count, pattern matches and
// digest, as the sass gate's data gives them. Digest is the one the pipeline's "unchanged
// SASS" check compares (sass.Function.Digest): equal digests are byte-identical code. It
// is empty for results written before the gate's data carried it.
type SASS struct {
	Instructions int            `json:"instructions"`
	Matches      map[string]int `json:"matches,omitempty"`
	Digest       string         `json:"digest,omitempty"`
	// Mix and ClockReads are the gate's instruction mix (sass.FunctionData), for baseline
	// diff's explanation; absent in entries written before the gate kept them.
	Mix        sass.Mix `json:"mix,omitempty"`
	ClockReads int      `json:"clock_reads,omitempty"`
}

// sassJSON is SASS without its methods.
type sassJSON SASS

// UnmarshalJSON reads a stored entry's SASS and checks its mix (sass.CheckMix), so that a
// hand-edited or damaged store never feeds an explanation a count no dump gave.
func (s *SASS) UnmarshalJSON(raw []byte) error {
	var p sassJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if err := sass.CheckMix(p.Instructions, p.Mix, p.ClockReads); err != nil {
		return fmt.Errorf("sass: %w", err)
	}
	*s = SASS(p)
	return nil
}

// Function is the SASS as the gate's data records it, for package explain; nil without a
// mix, which is then not compared.
func (s *SASS) Function() *sass.FunctionData {
	if s == nil || s.Mix == nil {
		return nil
	}
	return &sass.FunctionData{Instructions: s.Instructions, Digest: s.Digest, Mix: s.Mix, ClockReads: s.ClockReads}
}

// Timing is one kernel × shape's timing. The comparison with base comes from the speedup
// gate; the head's own times, from its kernel-gate/bench/v1 file (AddBench), since the
// result keeps only ratios.
type Timing struct {
	Target string `json:"target,omitempty"`
	Kernel string `json:"kernel"`
	Shape  string `json:"shape"`
	// MedianUs is the median of the per-round medians (µs), the unit the A/B runner's
	// rounds are independent in; LowUs and HighUs its distribution-free TimingLevel
	// interval (absent with fewer than 6 rounds). With one round of samples the samples
	// themselves are the units; with a summary-only harness, MedianUs is its p50.
	MedianUs *float64 `json:"median_us,omitempty"`
	LowUs    *float64 `json:"low_us,omitempty"`
	HighUs   *float64 `json:"high_us,omitempty"`
	Rounds   int      `json:"rounds,omitempty"`
	Samples  int      `json:"samples,omitempty"`
	// QuantilesUs are the 0th, 1st, ..., 100th percentiles of every valid launch, enough
	// to draw the distribution again; RoundMediansUs the per-round medians in order, for
	// drift within the run. Times keep 7 significant digits, the precision of the float32
	// timings harnesses report.
	QuantilesUs    []float64 `json:"quantiles_us,omitempty"`
	RoundMediansUs []float64 `json:"round_medians_us,omitempty"`
	// VsBase is head against base in the same run; VsReference against the reference
	// implementation timed beside it.
	VsBase      *VsBase      `json:"vs_base,omitempty"`
	VsReference *VsReference `json:"vs_reference,omitempty"`
}

// TimingLevel is the confidence of Timing's interval.
const TimingLevel = 0.95

// VsBase is the speedup gate's comparison of one kernel × shape.
type VsBase struct {
	Verdict string   `json:"verdict"`
	Ratio   *float64 `json:"ratio"` // head / base
	CILow   *float64 `json:"ci_low"`
	CIHigh  *float64 `json:"ci_high"`
	Rounds  int      `json:"rounds"`
}

// VsReference is the speedup over a reference implementation.
type VsReference struct {
	Name    string   `json:"name"`
	Speedup *float64 `json:"speedup"`
	CILow   *float64 `json:"ci_low"`
	CIHigh  *float64 `json:"ci_high"`
}

// Correctness is one kernel × shape's error against the reference. Non-finite errors are
// kept (as "NaN", "Infinity"), since they are what a reader most needs to see.
type Correctness struct {
	Target   string           `json:"target,omitempty"`
	Kernel   string           `json:"kernel"`
	Shape    string           `json:"shape"`
	Verdict  result.Verdict   `json:"verdict"`
	MaxErr   *benchfile.Float `json:"max_err,omitempty"`
	MeanErr  *benchfile.Float `json:"mean_err,omitempty"`
	Limit    *float64         `json:"limit,omitempty"`
	NaNCount *int64           `json:"nan_count,omitempty"`
	InfCount *int64           `json:"inf_count,omitempty"`
	Error    string           `json:"error,omitempty"`
}

// Sanitizer statuses.
const (
	SanitizerClean    = "clean"
	SanitizerErrors   = "errors"
	SanitizerTimedOut = "timed_out"
	// SanitizerFailed is a run the gate failed closed on (crashed, truncated, counts that
	// disagree).
	SanitizerFailed = "failed"
)

// SanitizerRun is one compute-sanitizer tool's outcome on one target.
type SanitizerRun struct {
	Target   string `json:"target,omitempty"`
	Tool     string `json:"tool"`
	Status   string `json:"status"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	Launches *int   `json:"launches,omitempty"`
	// Problems are the reasons of a failed status.
	Problems []string `json:"problems,omitempty"`
}

// FingerprintOf says which GPU and software res was measured with: the run's device
// (nvidia-smi), else the device the harness reported; the toolkit from the toolkit gate,
// else the harness's CUDA. A result that names no GPU has no fingerprint: its numbers
// could belong to any key.
func FingerprintOf(res result.Result) (Fingerprint, error) {
	var f Fingerprint
	if d := res.Device; d != nil {
		f = Fingerprint{GPU: d.Name, Arch: d.Arch, Driver: d.Driver}
	}
	if dev, ok := harnessDevice(res); ok {
		if f.GPU == "" {
			f.GPU, f.Arch = dev.Name, dev.ComputeCap
		}
		if f.Driver == "" {
			f.Driver = dev.Driver
		}
		if dev.CUDA != "" {
			f.CUDA, f.CUDAFrom = dev.CUDA, "harness"
		}
	}
	if v := toolkitVersion(res); v != "" {
		f.CUDA, f.CUDAFrom = v, toolkit.Name
	}
	k, err := f.Key()
	if err != nil {
		return Fingerprint{}, fmt.Errorf("baseline: %w (run it on the GPU with kernel-gate run, which records the device)", err)
	}
	f.GPU, f.Arch = k.GPU, k.Arch
	return f, nil
}

// harnessDevice is the device the first harness file of the correctness or speedup gate
// reported.
func harnessDevice(res result.Result) (benchfile.Device, bool) {
	for _, g := range res.Gates {
		parts, err := gateParts(g)
		if err != nil {
			continue
		}
		for _, p := range parts {
			var d struct {
				Device     *benchfile.Device `json:"device"`
				HeadDevice *benchfile.Device `json:"head_device"`
			}
			if json.Unmarshal(p.data, &d) != nil {
				continue
			}
			for _, dev := range []*benchfile.Device{d.Device, d.HeadDevice} {
				if dev != nil && dev.Name != "" {
					return *dev, true
				}
			}
		}
	}
	return benchfile.Device{}, false
}

// toolkitVersion is the first version the toolkit gate found (nvcc's banner in the build
// logs, or nvcc --version).
func toolkitVersion(res result.Result) string {
	for _, g := range res.Gates {
		if g.Name != toolkit.Name {
			continue
		}
		var d struct {
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
		}
		if json.Unmarshal(g.Data, &d) == nil {
			for _, v := range d.Versions {
				if v.Version != "" {
					return v.Version
				}
			}
		}
	}
	return ""
}

// part is one target's share of a gate's data (the whole data for a gate run on one
// harness, which has no targets).
type part struct {
	target  string
	verdict result.Verdict
	data    json.RawMessage
}

// gateParts splits a gate's data by target: `kernel-gate run` merges each target's data
// into data.targets[] (and also lists some records at the top, without their target);
// the single-harness commands write the data itself.
func gateParts(g result.Gate) ([]part, error) {
	var merged struct {
		Targets []struct {
			Target  string          `json:"target"`
			Verdict result.Verdict  `json:"verdict"`
			Data    json.RawMessage `json:"data"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(g.Data, &merged); err != nil {
		return nil, fmt.Errorf("%s data: %w", g.Name, err)
	}
	if len(merged.Targets) == 0 {
		return []part{{verdict: g.Verdict, data: g.Data}}, nil
	}
	var out []part
	for _, t := range merged.Targets {
		if len(t.Data) == 0 || string(t.Data) == "null" {
			continue // skipped: nothing measured
		}
		out = append(out, part{target: t.Target, verdict: t.Verdict, data: t.Data})
	}
	return out, nil
}

// EntryFromResult keeps what res measured as an entry for commit, measured at when. It
// fails when res is part of a run (wholeRun), names no GPU (FingerprintOf) or a gate's data
// cannot be read; gates res does not have are listed in Missing. Timings hold only the
// comparisons with base until AddBench adds the head's own times.
// Why: docs/threat-model.md, threat-model T2.
func EntryFromResult(res result.Result, commit string, when time.Time) (Entry, error) {
	commit = strings.TrimSpace(commit)
	if commit == "" {
		return Entry{}, errors.New("baseline: no commit to record the result under")
	}
	if when.IsZero() {
		return Entry{}, errors.New("baseline: no time to record the result at")
	}
	if err := wholeRun(res); err != nil {
		return Entry{}, err
	}
	fp, err := FingerprintOf(res)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{
		Commit: commit, Time: when.UTC().Truncate(time.Second), Tool: res.Tool, Replay: res.Replay,
		Verdict: res.Verdict, Fingerprint: fp,
	}
	if res.Trigger != nil {
		t := *res.Trigger
		e.Trigger = &t
	}
	for _, g := range res.Gates {
		p, ok := partOf(g.Name)
		if !ok {
			continue // a gate that measures nothing a later run compares with
		}
		if err := p.add(&e, g); err != nil {
			return Entry{}, fmt.Errorf("baseline: the result's %w", err)
		}
	}
	e.Missing = e.missing()
	return e, nil
}

// ErrPartRun is wrapped by EntryFromResult's error for a result that is part of a run: a
// baseline of it would hold only some targets, and a later run would find the others
// "new", compared with nothing.
var ErrPartRun = errors.New("the result is not a whole run")

// wholeRun refuses a shard's result (kernel-gate run --shard i/n) and a merged result whose
// shards gate failed (a shard missing, twice, unreadable or of another run). A shard 1/1
// that gated all of its run's targets is the whole run.
func wholeRun(res result.Result) error {
	if s := res.Shard; s != nil && (s.Count != 1 || !slices.Equal(s.Targets, s.AllTargets)) {
		return fmt.Errorf("baseline: %w: it is shard %d/%d of its run, which gated %d of its %d target(s): merge the shards first (kernel-gate merge, or the action's command: merge) and store the merged result",
			ErrPartRun, s.Index, s.Count, len(s.Targets), len(s.AllTargets))
	}
	if res.Shard != nil {
		return nil
	}
	for _, g := range res.Gates {
		if g.Name == result.ShardsGate && g.Verdict == result.Fail {
			why := g.Summary
			for _, f := range g.Findings {
				if f.Severity == result.Error {
					why = f.Message
					break
				}
			}
			return fmt.Errorf("baseline: %w: its merge failed (%s), so it may lack shards: merge every shard of the run and store that", ErrPartRun, why)
		}
	}
	return nil
}

// The parts of an entry that Missing names: one per gate that fills one (entryParts), and
// the fingerprint's software.
const (
	PartPtxas       = ptxas.Name
	PartSASS        = sass.Name
	PartTimings     = "timings" // the speedup gate's comparisons, and the head's own times
	PartCorrectness = correctness.Name
	PartSanitizer   = sanitizer.Name
	PartDriver      = "driver"
	PartCUDA        = "cuda"
)

// entryPart is what one gate's data adds to an entry.
type entryPart struct {
	name string // its name in Missing
	gate string // the gate whose data fills it
	add  func(*Entry, result.Gate) error
	has  func(*Entry) bool
}

// entryParts are the parts gates fill, in the order Missing lists them. A gate not here
// adds nothing to an entry.
func entryParts() []entryPart {
	return []entryPart{
		{PartPtxas, ptxas.Name, (*Entry).addPtxas, func(e *Entry) bool {
			return slices.ContainsFunc(e.Kernels, func(k Kernel) bool { return k.Ptxas != nil })
		}},
		{PartSASS, sass.Name, (*Entry).addSASS, func(e *Entry) bool {
			return slices.ContainsFunc(e.Kernels, func(k Kernel) bool { return k.SASS != nil })
		}},
		{PartTimings, speedup.Name, (*Entry).addComparisons, func(e *Entry) bool { return len(e.Timings) > 0 }},
		{PartCorrectness, correctness.Name, (*Entry).addCorrectness, func(e *Entry) bool { return len(e.Correctness) > 0 }},
		{PartSanitizer, sanitizer.Name, (*Entry).addSanitizer, func(e *Entry) bool { return len(e.Sanitizer) > 0 }},
	}
}

// partOf is the entry part the gate fills.
func partOf(gate string) (entryPart, bool) {
	for _, p := range entryParts() {
		if p.gate == gate {
			return p, true
		}
	}
	return entryPart{}, false
}

// PartOf names the part of an entry the gate's data fills ("" and false: none); the gate
// registry lists it.
func PartOf(gate string) (string, bool) {
	p, ok := partOf(gate)
	return p.name, ok
}

// missing names the parts of an entry that hold nothing.
func (e *Entry) missing() []string {
	var out []string
	for _, p := range entryParts() {
		if !p.has(e) {
			out = append(out, p.name)
		}
	}
	for _, m := range []struct {
		name string
		has  bool
	}{{PartDriver, e.Fingerprint.Driver != ""}, {PartCUDA, e.Fingerprint.CUDA != ""}} {
		if !m.has {
			out = append(out, m.name)
		}
	}
	return out
}

// kernel returns the record of name × arch, adding it when new.
func (e *Entry) kernel(name, demangled, arch string) *Kernel {
	for i := range e.Kernels {
		if k := &e.Kernels[i]; k.Name == name && k.Arch == arch {
			if k.Demangled == "" {
				k.Demangled = demangled
			}
			return k
		}
	}
	e.Kernels = append(e.Kernels, Kernel{Name: name, Demangled: demangled, Arch: arch})
	return &e.Kernels[len(e.Kernels)-1]
}

func (e *Entry) addPtxas(g result.Gate) error {
	var d ptxas.Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		return fmt.Errorf("ptxas data: %w", err)
	}
	for _, k := range d.Kernels {
		k.Input, k.Line = "", 0 // the runner's paths
		rec := k
		e.kernel(k.Name, k.Demangled, k.Arch).Ptxas = &rec
	}
	return nil
}

func (e *Entry) addSASS(g result.Gate) error {
	d, err := sass.ReadData(g.Data)
	if err != nil {
		return fmt.Errorf("sass data: %w", err)
	}
	for _, f := range d.Functions {
		s := &SASS{Instructions: f.Instructions, Digest: f.Digest, Mix: f.Mix, ClockReads: f.ClockReads}
		if len(f.Matches) > 0 {
			s.Matches = f.Matches
		}
		e.kernel(f.Name, f.Demangled, f.Arch).SASS = s
	}
	return nil
}

// timing returns the record of target × kernel × shape, adding it when new.
func (e *Entry) timing(target, kernel, shape string) *Timing {
	for i := range e.Timings {
		if t := &e.Timings[i]; t.Target == target && t.Kernel == kernel && t.Shape == shape {
			return t
		}
	}
	e.Timings = append(e.Timings, Timing{Target: target, Kernel: kernel, Shape: shape})
	return &e.Timings[len(e.Timings)-1]
}

func (e *Entry) addComparisons(g result.Gate) error {
	parts, err := gateParts(g)
	if err != nil {
		return err
	}
	for _, p := range parts {
		var d speedup.Data
		if err := json.Unmarshal(p.data, &d); err != nil {
			return fmt.Errorf("speedup data of target %q: %w", p.target, err)
		}
		for _, c := range d.Comparisons {
			t := e.timing(p.target, c.Kernel, c.Shape)
			t.VsBase = &VsBase{Verdict: string(c.Verdict), Ratio: c.Ratio, CILow: c.CILow, CIHigh: c.CIHigh, Rounds: c.Rounds}
			if r := c.SpeedupVsReference; r != nil {
				t.VsReference = &VsReference{Name: r.Name, Speedup: r.Speedup, CILow: r.CILow, CIHigh: r.CIHigh}
			}
		}
	}
	return nil
}

func (e *Entry) addCorrectness(g result.Gate) error {
	parts, err := gateParts(g)
	if err != nil {
		return err
	}
	for _, p := range parts {
		var d correctness.Data
		if err := json.Unmarshal(p.data, &d); err != nil {
			return fmt.Errorf("correctness data of target %q: %w", p.target, err)
		}
		for _, r := range d.Results {
			e.Correctness = append(e.Correctness, Correctness{
				Target: p.target, Kernel: r.Kernel, Shape: r.Shape, Verdict: r.Verdict, MaxErr: r.MaxErr,
				MeanErr: r.MeanErr, Limit: r.Limit, NaNCount: r.NaNCount, InfCount: r.InfCount, Error: r.Error,
			})
		}
	}
	return nil
}

func (e *Entry) addSanitizer(g result.Gate) error {
	parts, err := gateParts(g)
	if err != nil {
		return err
	}
	for _, p := range parts {
		var d sanitizer.Data
		if err := json.Unmarshal(p.data, &d); err != nil {
			return fmt.Errorf("sanitizer data of target %q: %w", p.target, err)
		}
		for _, r := range d.Runs {
			s := SanitizerRun{Target: p.target, Tool: r.Tool, Errors: r.Errors, Warnings: r.Warnings, Launches: r.Launches,
				Problems: slices.Clone(r.Problems)}
			switch {
			case r.TimedOut:
				s.Status = SanitizerTimedOut
			case len(r.Problems) > 0:
				s.Status = SanitizerFailed
			case r.Errors > 0:
				s.Status = SanitizerErrors
			default:
				s.Status = SanitizerClean
			}
			e.Sanitizer = append(e.Sanitizer, s)
		}
	}
	return nil
}

// AddBench adds the head's own timings from its kernel-gate/bench/v1 file (the A/B
// runner's head.json, whose rounds were run beside base) to target's kernel × shape
// records. A file from another GPU than the entry's is refused: its times belong to
// another key.
func (e *Entry) AddBench(target string, f *benchfile.File) error {
	if f == nil {
		return errors.New("baseline: no bench file")
	}
	if f.Device.Name != "" {
		k, err := NewKey(f.Device.Name, f.Device.ComputeCap)
		if err == nil && !k.same(e.Key()) {
			return fmt.Errorf("baseline: the timings of target %q ran on %s, not on %s: they belong to another baseline", target, k, e.Key())
		}
	}
	added := false
	for _, r := range f.Results {
		s, ok := summarize(r)
		if !ok {
			continue
		}
		t := e.timing(target, r.Kernel, r.Shape)
		t.MedianUs, t.LowUs, t.HighUs = s.median, s.low, s.high
		t.Rounds, t.Samples = s.rounds, s.samples
		t.QuantilesUs, t.RoundMediansUs = s.quantiles, s.roundMedians
		added = true
	}
	if added {
		e.Missing = e.missing()
	}
	return nil
}

// PtxasBaseline is the entry's PTXAS records as the ptxas gate's baseline, so that a pull
// request can be judged on max_register_increase and the other deltas when no base build
// is at hand. It is nil when the entry holds no PTXAS record.
func (e Entry) PtxasBaseline() *ptxas.Baseline {
	var ks []ptxas.Kernel
	for _, k := range e.Kernels {
		if k.Ptxas != nil {
			ks = append(ks, *k.Ptxas)
		}
	}
	if len(ks) == 0 {
		return nil
	}
	// Named without Describe's leading "baseline": the gate writes "not in baseline NAME".
	return ptxas.NewBaseline(strings.TrimPrefix(e.Describe(), "baseline "), ks)
}

// Describe names the entry in messages: "baseline NVIDIA H200 (sm_90) at 1a2b3c4d5e6f,
// 2026-01-02T03:04:05Z".
func (e Entry) Describe() string {
	c := e.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	return fmt.Sprintf("baseline %s at %s, %s", e.Key(), c, e.Time.UTC().Format(time.RFC3339))
}

// check is what every store asks of an entry before keeping it.
func (e *Entry) check() error {
	k, err := e.Fingerprint.Key()
	if err != nil {
		return fmt.Errorf("baseline: the entry's fingerprint: %w", err)
	}
	e.Fingerprint.GPU, e.Fingerprint.Arch = k.GPU, k.Arch
	if strings.TrimSpace(e.Commit) == "" {
		return errors.New("baseline: the entry has no commit")
	}
	if e.Time.IsZero() {
		return errors.New("baseline: the entry has no time")
	}
	e.Time = e.Time.UTC()
	return nil
}
