// Package trend draws the history a baseline store keeps: per GPU (baseline.Key) and
// commit, each kernel's registers, shared memory and spills per arch, and each harness
// kernel × shape's median time (with its interval) and max_err.
//
// FromEntries turns a key's entries into a History of series over its commits; WriteHTML
// draws histories as one self-contained page (inline SVG and CSS: no script, nothing
// fetched, a Content-Security-Policy that forbids both), with a data table under every
// chart; WriteText says the same in a few lines for a terminal; package report shows a
// History's last points in the job summary. Every string an entry holds (kernel names,
// commits, reasons, replay labels) is untrusted and escaped where it is written.
package trend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// History is one key's entries as series over its commits, oldest first.
type History struct {
	Key    baseline.Key
	Points []Point
	// Kernels are the compiled functions' resources, sorted by name.
	Kernels []Kernel
	// Shapes are the harness kernels × shapes, grouped by target and kernel in the order
	// the newest entry lists them.
	Shapes []Shape
}

// Point is one entry: where on the x axis it is, and what it was measured with.
type Point struct {
	Commit  string
	Time    time.Time
	Verdict result.Verdict
	Tool    string
	Driver  string
	CUDA    string
	// Event and Reason are the GitHub event that stored the entry and a dispatch's reason.
	Event, Reason string
	// Replay is set when the entry came from a recording, not a live run.
	Replay string
}

// Label is the commit as the x axis shows it: a hex SHA's first 7 digits, another name
// (a replay's) cut to 12 characters.
func (p Point) Label() string {
	c := strings.TrimSpace(p.Commit)
	if len(c) >= 7 && isHex(c) {
		return c[:7]
	}
	return cut(c, 12)
}

// Date is the point's day and time in UTC, as the table and tooltips show it.
func (p Point) Date() string { return p.Time.UTC().Format("2006-01-02 15:04") }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// cut shortens s to at most n runes, ending in '…' when it was longer.
func cut(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}

// Kernel is one compiled function's resources, a series per arch in each metric.
type Kernel struct {
	// ID names the function across builds: its demangled signature without the
	// per-file hash of anonymous namespaces (kernelname.Name.Identity).
	ID string
	// Name is the short form: "kg::flash_fwd<64, 64, false>".
	Name                      string
	Registers, Shared, Spills Metric
}

// Shape is one harness kernel × shape of one target.
type Shape struct {
	Target, Kernel, Shape string
	// Time has one series, the median (µs) with its interval as the band.
	Time Metric
	// MaxErr has the max_err series and, dashed, its limit.
	MaxErr Metric
}

// Title names the shape: "flash_fwd × long".
func (s Shape) Title() string { return s.Kernel + " × " + s.Shape }

// Metric is what one chart draws: its series over the History's points.
type Metric struct {
	Name string // "registers", "median time", ...
	Unit string // UnitCount, UnitBytes, UnitMicros or UnitError
	// Series have one Value per point of the History.
	Series []Series
}

// Units of a Metric, which say how its values are written and drawn.
const (
	UnitCount  = ""
	UnitBytes  = "B"
	UnitMicros = "µs"
	// UnitError is a numerical error, drawn on a log scale when it spans decades.
	UnitError = "err"
)

// Series is one line of a chart.
type Series struct {
	Label  string
	Values []Value
	// Limit marks a threshold (max_err's limit): drawn dashed, not a measurement.
	Limit bool
}

// Value is one point of a series. A NaN or infinite V is a measurement (a max_err of NaN)
// and is drawn as such; a value that was not measured is not Set.
type Value struct {
	Set bool
	V   float64
	// Low and High are the interval of V when Band is set.
	Low, High float64
	Band      bool
}

// Has reports whether the metric has any value to draw.
func (m Metric) Has() bool {
	for _, s := range m.Series {
		if s.Limit {
			continue
		}
		for _, v := range s.Values {
			if v.Set {
				return true
			}
		}
	}
	return false
}

// allZero reports whether every value set in the metric is 0.
func (m Metric) allZero() bool {
	for _, s := range m.Series {
		for _, v := range s.Values {
			if v.Set && v.V != 0 {
				return false
			}
		}
	}
	return true
}

// FromEntries draws key k's entries (in any order; Store.History gives them newest first)
// as a History, oldest first. Entries of the same time keep the order the store gave, read
// backwards, so that an entry added later stands right of one added earlier.
func FromEntries(k baseline.Key, entries []baseline.Entry) History {
	es := slices.Clone(entries)
	slices.Reverse(es)
	slices.SortStableFunc(es, func(a, b baseline.Entry) int { return a.Time.Compare(b.Time) })
	h := History{Key: k, Points: make([]Point, len(es))}
	for i, e := range es {
		p := Point{Commit: e.Commit, Time: e.Time, Verdict: e.Verdict, Tool: e.Tool, Driver: e.Fingerprint.Driver,
			CUDA: e.Fingerprint.CUDA, Replay: e.Replay}
		if e.Trigger != nil {
			p.Event, p.Reason = e.Trigger.Event, e.Trigger.Reason
		}
		h.Points[i] = p
	}
	h.Kernels = kernels(es)
	h.Shapes = shapes(es)
	return h
}

// kernels gathers the PTXAS records per function (by identity) and arch.
func kernels(es []baseline.Entry) []Kernel {
	n := len(es)
	type archSeries struct{ regs, smem, spills []Value }
	byID := map[string]*Kernel{}
	archs := map[string]map[string]*archSeries{}
	for i, e := range es {
		for _, k := range e.Kernels {
			if k.Ptxas == nil {
				continue
			}
			name := kernelname.Parse(k.Name)
			id := name.Identity()
			kt := byID[id]
			if kt == nil {
				kt = &Kernel{ID: id, Name: name.Short}
				byID[id] = kt
				archs[id] = map[string]*archSeries{}
			}
			as := archs[id][k.Arch]
			if as == nil {
				as = &archSeries{regs: make([]Value, n), smem: make([]Value, n), spills: make([]Value, n)}
				archs[id][k.Arch] = as
			}
			if as.regs[i].Set || as.smem[i].Set || as.spills[i].Set {
				continue // two functions of one identity in one build: the first is drawn
			}
			p := k.Ptxas
			if p.Registers != nil {
				as.regs[i] = Value{Set: true, V: float64(*p.Registers)}
			}
			// ptxas prints no smem for a function that uses none.
			as.smem[i] = Value{Set: true, V: float64(deref(p.Smem))}
			if p.SpillStores != nil || p.SpillLoads != nil {
				as.spills[i] = Value{Set: true, V: float64(deref(p.SpillStores)) + float64(deref(p.SpillLoads))}
			}
		}
	}
	out := make([]Kernel, 0, len(byID))
	for id, kt := range byID {
		kt.Registers = Metric{Name: "registers", Unit: UnitCount}
		kt.Shared = Metric{Name: "shared memory", Unit: UnitBytes}
		kt.Spills = Metric{Name: "spills (stores + loads)", Unit: UnitBytes}
		for _, arch := range sortedKeys(archs[id]) {
			as := archs[id][arch]
			kt.Registers.Series = append(kt.Registers.Series, Series{Label: arch, Values: as.regs})
			kt.Shared.Series = append(kt.Shared.Series, Series{Label: arch, Values: as.smem})
			kt.Spills.Series = append(kt.Spills.Series, Series{Label: arch, Values: as.spills})
		}
		out = append(out, *kt)
	}
	slices.SortFunc(out, func(a, b Kernel) int { return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID)) })
	return out
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// shapes gathers the timings and correctness errors per target × kernel × shape.
func shapes(es []baseline.Entry) []Shape {
	n := len(es)
	type id struct{ target, kernel, shape string }
	var order []id
	byID := map[id]*Shape{}
	get := func(target, kernel, shape string) *Shape {
		k := id{target, kernel, shape}
		s := byID[k]
		if s == nil {
			s = &Shape{Target: target, Kernel: kernel, Shape: shape,
				Time:   Metric{Name: "median time", Unit: UnitMicros, Series: []Series{{Label: "median", Values: make([]Value, n)}}},
				MaxErr: Metric{Name: "max_err", Unit: UnitError, Series: []Series{{Label: "max_err", Values: make([]Value, n)}, {Label: "limit", Values: make([]Value, n), Limit: true}}},
			}
			byID[k] = s
			order = append(order, k)
		}
		return s
	}
	// Newest first, so that the order is the newest entry's.
	for i := n - 1; i >= 0; i-- {
		e := es[i]
		for _, t := range e.Timings {
			if t.MedianUs == nil {
				continue
			}
			v := Value{Set: true, V: *t.MedianUs}
			if t.LowUs != nil && t.HighUs != nil {
				v.Low, v.High, v.Band = *t.LowUs, *t.HighUs, true
			}
			get(t.Target, t.Kernel, t.Shape).Time.Series[0].Values[i] = v
		}
		for _, c := range e.Correctness {
			if c.MaxErr == nil && c.Limit == nil {
				continue
			}
			s := get(c.Target, c.Kernel, c.Shape)
			if c.MaxErr != nil {
				s.MaxErr.Series[0].Values[i] = Value{Set: true, V: float64(*c.MaxErr)}
			}
			if c.Limit != nil {
				s.MaxErr.Series[1].Values[i] = Value{Set: true, V: *c.Limit}
			}
		}
	}
	// Grouped by target and kernel, each group where its first shape came.
	groupAt := map[[2]string]int{}
	for i, k := range order {
		if _, ok := groupAt[[2]string{k.target, k.kernel}]; !ok {
			groupAt[[2]string{k.target, k.kernel}] = i
		}
	}
	slices.SortStableFunc(order, func(a, b id) int {
		return cmp.Compare(groupAt[[2]string{a.target, a.kernel}], groupAt[[2]string{b.target, b.kernel}])
	})
	out := make([]Shape, len(order))
	for i, k := range order {
		out[i] = *byID[k]
	}
	return out
}

// Load reads the newest n entries (all for n <= 0) of every key in the store, or of the
// one key only names, as histories. A store with no history, or none for only, is an
// error that says what the store holds: a page with nothing on it would pass for one.
func Load(ctx context.Context, s baseline.Store, only *baseline.Key, n int) ([]History, error) {
	l, err := baseline.List(ctx, s, n)
	if err != nil {
		return nil, err
	}
	var out []History
	var held []string
	for _, k := range l.Keys {
		if len(k.Entries) == 0 {
			continue
		}
		held = append(held, k.Key.String())
		if only != nil && k.Key.File() != only.File() {
			continue
		}
		out = append(out, FromEntries(k.Key, k.Entries))
	}
	switch {
	case len(held) == 0:
		return nil, errors.New("the store holds no baseline yet: nothing to draw")
	case len(out) == 0:
		return nil, fmt.Errorf("the store holds no baseline for %s (it holds: %s)", only, strings.Join(held, ", "))
	}
	return out, nil
}

// ParseKey reads a key as the command line gives it (baseline.ParseKey: "GPU/arch",
// "GPU (arch)" or its file's name), its error naming --key.
func ParseKey(s string) (baseline.Key, error) {
	k, err := baseline.ParseKey(s)
	if err != nil {
		return baseline.Key{}, fmt.Errorf("--key %q: %w", s, err)
	}
	return k, nil
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
