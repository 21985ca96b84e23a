package result

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/shard"
)

// ShardsGate names the gate that says how a run was sharded: in a shard's result (a pass
// that says "no targets in shard" when the shard had none), and in a merged result, where
// it fails when the shards are not one run's, or one is missing, twice, unreadable or not
// a shard at all.
const ShardsGate = "shards"

// MaxMergeGPUs is the most GPUs one merge takes results from (kernel-gate merge
// --expect-gpus): a typo, not a matrix, beyond it. Readers of a merged result size their
// limits by it.
const MaxMergeGPUs = 64

// MergeInput is one result handed to Merge: Name says where it came from (a file), Err why
// it could not be read (Result is then ignored and the merge fails naming it).
type MergeInput struct {
	Name   string
	Result Result
	Err    error
}

// MergeOptions say what Merge expects besides what the results say.
type MergeOptions struct {
	// Tool names kernel-gate and its version in the merged result.
	Tool string
	// ExpectShards, when not 0, is the n every shard must be one of.
	ExpectShards int
	// ExpectGPUs, when not 0, is how many GPUs (device name and arch) the results must
	// come from: a GPU whose every shard is missing leaves no result to miss otherwise.
	ExpectGPUs int
}

// noGPU labels the results of runs that found no GPU.
const noGPU = "no GPU"

// part is one usable shard result.
type part struct {
	name string
	res  Result
	gpu  string
}

// Merge makes one result of the shards of one run (kernel-gate run --shard i/n), on one GPU
// or several. It never passes what it cannot vouch for: an input that could not be read,
// is not a shard, is of another commit, base, config or target list, or a shard missing
// or given twice for a GPU, each fails the merged "shards" gate with a message that names
// it. The other gates are each gate's parts merged: failed when a part failed, passed
// when one passed, skipped when all skipped; findings, table rows and data lists joined,
// what several shards share kept once (every shard runs the static gates — toolkit,
// guard — on its own runner, and targets that share a build report its ptxas and sass
// records in each shard). Results from several GPUs give one gate per GPU, "ptxas (L4, sm_89)",
// except where a gate is the same on every GPU (the guard), which is shown once. The error
// is only for data that cannot be encoded.
// Why: docs/threat-model.md, threat-model T2.
func Merge(inputs []MergeInput, o MergeOptions) (Result, error) {
	m := merger{o: o}
	var parts []part
	for _, in := range inputs {
		if p, ok := m.accept(in); ok {
			parts = append(parts, p)
		}
	}
	groups := m.check(parts)
	var gates []Gate
	perGPU := make([][]Gate, len(groups))
	for i, g := range groups {
		var err error
		if perGPU[i], err = mergeShards(g.parts); err != nil {
			return Result{}, err
		}
	}
	if len(groups) == 1 {
		gates = perGPU[0]
	} else {
		gates = joinGPUs(groups, perGPU)
	}
	judged := slices.ContainsFunc(gates, func(g Gate) bool { return g.Verdict != Skip })
	sg, err := m.shardsGate(groups, judged)
	if err != nil {
		return Result{}, err
	}
	out := New(o.Tool, append([]Gate{sg}, gates...)...)
	if len(groups) == 1 {
		out.Device = groups[0].parts[0].res.Device
	}
	for i, p := range parts {
		out.Replay = cmp.Or(out.Replay, p.res.Replay)
		if i == 0 {
			out.Trigger = p.res.Trigger
		} else if !sameJSON(out.Trigger, p.res.Trigger) {
			out.Trigger = nil
		}
	}
	return out, nil
}

// merger gathers what is wrong with the inputs.
type merger struct {
	o        MergeOptions
	problems []Finding
	// ref is the first shard, whose run the others must be of.
	ref *part
}

func (m *merger) fail(format string, a ...any) {
	m.problems = append(m.problems, Finding{Severity: Error, Metric: "shard", Message: fmt.Sprintf(format, a...)})
}

// accept checks one input on its own: readable, a shard, of the same run as the first.
func (m *merger) accept(in MergeInput) (part, bool) {
	if in.Err != nil {
		m.fail("%s: not merged: %v", in.Name, in.Err)
		return part{}, false
	}
	s := in.Result.Shard
	switch {
	case s == nil:
		m.fail("%s: not a shard (no \"shard\" record): kernel-gate merge takes results of kernel-gate run --shard i/n (--shard 1/1 for a run that is not split)", in.Name)
		return part{}, false
	case s.Count < 1 || s.Count > shard.Max || s.Index < 1 || s.Index > s.Count:
		m.fail("%s: says it is shard %d/%d, which no run has (1 <= i <= n <= %d)", in.Name, s.Index, s.Count, shard.Max)
		return part{}, false
	case m.o.ExpectShards > 0 && s.Count != m.o.ExpectShards:
		m.fail("%s: is shard %d/%d, but %d shards are expected (--expect-shards)", in.Name, s.Index, s.Count, m.o.ExpectShards)
		return part{}, false
	}
	for _, g := range in.Result.Gates {
		if g.Name == ShardsGate && g.Verdict == Fail {
			// Not merged as a gate (the merge makes its own), but its failure stands.
			for _, f := range g.Findings {
				if f.Severity == Error {
					m.fail("%s: %s", in.Name, f.Message)
				}
			}
		}
	}
	p := part{name: in.Name, res: in.Result, gpu: gpuLabel(in.Result.Device)}
	if m.ref == nil {
		m.ref = &p
		return p, true
	}
	r := m.ref.res.Shard
	differs := func(what, a, b string) bool {
		if a == b {
			return false
		}
		m.fail("%s: not a shard of the same run as %s: its %s is %s, %s's is %s", in.Name, m.ref.name, what, quoteOrNone(b), m.ref.name, quoteOrNone(a))
		return true
	}
	if differs("commit", r.Commit, s.Commit) || differs("base", r.Base, s.Base) || differs("config", r.Config, s.Config) ||
		differs("shard count", fmt.Sprint(r.Count), fmt.Sprint(s.Count)) ||
		differs("target list", strings.Join(r.AllTargets, ", "), strings.Join(s.AllTargets, ", ")) {
		return part{}, false
	}
	return p, true
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}

// gpuGroup is the shards of one GPU, ordered by index.
type gpuGroup struct {
	gpu    string
	device *Device
	parts  []part
	// missing are the indexes no result gave.
	missing []int
}

// check groups the parts by GPU and fails the merge for a shard given twice, a shard
// missing, a shard whose targets are not the ones its index owns, and a GPU count other
// than expected.
func (m *merger) check(parts []part) []*gpuGroup {
	byGPU := map[string]*gpuGroup{}
	for _, p := range parts {
		g := byGPU[p.gpu]
		if g == nil {
			g = &gpuGroup{gpu: p.gpu, device: p.res.Device}
			byGPU[p.gpu] = g
		}
		g.parts = append(g.parts, p)
	}
	groups := slices.SortedFunc(maps.Values(byGPU), func(a, b *gpuGroup) int { return strings.Compare(a.gpu, b.gpu) })
	n := m.o.ExpectShards
	if m.ref != nil {
		n = m.ref.res.Shard.Count
	}
	for _, g := range groups {
		slices.SortStableFunc(g.parts, func(a, b part) int { return cmp.Compare(a.res.Shard.Index, b.res.Shard.Index) })
		var kept []part
		for _, p := range g.parts {
			s := p.res.Shard
			if len(kept) > 0 && kept[len(kept)-1].res.Shard.Index == s.Index {
				m.fail("shard %d/%d of %s is given twice: %s and %s (one result per shard and GPU)", s.Index, s.Count, g.gpu, kept[len(kept)-1].name, p.name)
				continue
			}
			if want := (shard.Spec{Index: s.Index, Count: s.Count}).Select(s.AllTargets); !slices.Equal(want, s.Targets) {
				m.fail("%s: shard %d/%d of %s gated %s, but its targets by their names' hash are %s", p.name, s.Index, s.Count, g.gpu, listOrNone(s.Targets), listOrNone(want))
			}
			kept = append(kept, p)
		}
		g.parts = kept
		for i := 1; i <= n; i++ {
			if !slices.ContainsFunc(kept, func(p part) bool { return p.res.Shard.Index == i }) {
				g.missing = append(g.missing, i)
				m.fail("shard %d/%d of %s is missing: no result was given for it (did its job fail before it wrote one?)", i, n, g.gpu)
			}
		}
	}
	if m.ref == nil {
		m.fail("no shard result to merge")
	}
	if e := m.o.ExpectGPUs; e > 0 && len(groups) != e {
		var names []string
		for _, g := range groups {
			names = append(names, g.gpu)
		}
		m.fail("%d GPU(s) expected (--expect-gpus), but the results come from %d: %s", e, len(groups), listOrNone(names))
	}
	return groups
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "no targets"
	}
	return strings.Join(xs, ", ")
}

// gpuLabel names a GPU as a check run does: "L4, sm_89".
func gpuLabel(d *Device) string {
	if d == nil || d.Name == "" {
		return noGPU
	}
	name := strings.TrimPrefix(d.Name, "NVIDIA ")
	if d.Arch == "" {
		return name
	}
	return name + ", " + d.Arch
}

// shardsGate says what was merged, and fails with every problem found. With none it is
// a pass when any merged gate judged something and a skip otherwise, so that a complete
// merge has the verdict of its parts.
func (m *merger) shardsGate(groups []*gpuGroup, judged bool) (Gate, error) {
	g := Gate{Name: ShardsGate, Findings: slices.Clone(m.problems),
		Table: &Table{Columns: []string{"gpu", "shard", "targets", "verdict", "result"}, Rows: []Row{}}}
	type shardData struct {
		Index   int      `json:"index"`
		Result  string   `json:"result"`
		Verdict Verdict  `json:"verdict"`
		Targets []string `json:"targets"`
	}
	type gpuData struct {
		GPU     string      `json:"gpu"`
		Device  *Device     `json:"device,omitempty"`
		Shards  []shardData `json:"shards"`
		Missing []int       `json:"missing,omitempty"`
	}
	data := struct {
		Count  int    `json:"count"`
		Commit string `json:"commit,omitempty"`
		Base   string `json:"base,omitempty"`
		Config string `json:"config,omitempty"`
		// ExpectGPUs is --expect-gpus (absent when not given: the GPUs were not counted).
		ExpectGPUs int       `json:"expect_gpus,omitempty"`
		GPUs       []gpuData `json:"gpus"`
	}{GPUs: []gpuData{}, ExpectGPUs: m.o.ExpectGPUs}
	if m.ref != nil {
		r := m.ref.res.Shard
		data.Count, data.Commit, data.Base, data.Config = r.Count, r.Commit, r.Base, r.Config
	}
	shards := 0
	for _, gr := range groups {
		gd := gpuData{GPU: gr.gpu, Device: gr.device, Shards: []shardData{}, Missing: gr.missing}
		for _, p := range gr.parts {
			s := p.res.Shard
			gd.Shards = append(gd.Shards, shardData{Index: s.Index, Result: p.name, Verdict: p.res.Verdict, Targets: s.Targets})
			g.Table.Rows = append(g.Table.Rows, Row{Status: p.res.Verdict,
				Cells: []string{gr.gpu, fmt.Sprintf("%d/%d", s.Index, s.Count), listOrNone(s.Targets), string(p.res.Verdict), p.name}})
			shards++
		}
		for _, i := range gr.missing {
			g.Table.Rows = append(g.Table.Rows, Row{Status: Fail, Cells: []string{gr.gpu, fmt.Sprintf("%d/%d", i, data.Count), "", "missing", ""}})
		}
		data.GPUs = append(data.GPUs, gd)
	}
	if err := g.SetData(data); err != nil {
		return g, err
	}
	g.Decide(judged)
	if g.Verdict == Fail {
		g.Summary = fmt.Sprintf("%s: the merged result cannot vouch for the whole run", numtext.Count(len(m.problems), "problem"))
	} else {
		g.Summary = fmt.Sprintf("%s of %d shard(s) merged from %s", numtext.Count(shards, "result"), data.Count, numtext.Count(len(groups), "GPU"))
		g.Findings = append(g.Findings, Finding{Severity: Notice, Metric: "shard", Message: "every shard of every GPU was merged: " + g.Summary})
		if m.o.ExpectGPUs == 0 {
			g.Findings = append(g.Findings, Finding{Severity: Notice, Metric: "shard", Message: fmt.Sprintf(
				"the GPUs were not counted (no --expect-gpus): a GPU whose every shard is missing left no result to miss, so this result vouches for the %s it holds only", numtext.Count(len(groups), "GPU"))})
		}
	}
	return g, nil
}

// mergedRecord is what a merged result's shards gate keeps of the shards (shardsGate's
// data), as checkMerged reads it.
type mergedRecord struct {
	Count      int `json:"count"`
	ExpectGPUs int `json:"expect_gpus"`
	GPUs       []struct {
		GPU    string `json:"gpu"`
		Shards []struct {
			Index int `json:"index"`
		} `json:"shards"`
		Missing []int `json:"missing"`
	} `json:"gpus"`
}

// checkMerged refuses a merged result (a shards gate and no shard record of its own) whose
// shards gate does not fail although its record of the shards is not every shard 1..n of
// every GPU once: Merge never writes one, so it was edited, or cut, and cannot vouch for
// the whole run. A result without a shards gate says nothing of shards, and is not checked.
func checkMerged(res Result) error {
	if res.Shard != nil {
		return nil // a shard's own shards gate records the shard
	}
	var sg *Gate
	for i := range res.Gates {
		if res.Gates[i].Name != ShardsGate {
			continue
		}
		if sg != nil {
			return fmt.Errorf("%w: the merged result has two %q gates", ErrNotResult, ShardsGate)
		}
		sg = &res.Gates[i]
	}
	if sg == nil || sg.Verdict == Fail {
		return nil
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: the merged result's %q gate says %s, but %s: it cannot vouch for every shard of the run", ErrNotResult, ShardsGate, sg.Verdict, fmt.Sprintf(format, a...))
	}
	var rec mergedRecord
	if err := json.Unmarshal(sg.Data, &rec); err != nil {
		return bad("its data is no record of the shards merged (%v)", err)
	}
	switch {
	case rec.Count < 1 || rec.Count > shard.Max:
		return bad("its record says the run had %d shards (want 1 to %d)", rec.Count, shard.Max)
	case len(rec.GPUs) == 0:
		return bad("its record names no GPU")
	case rec.ExpectGPUs > 0 && len(rec.GPUs) != rec.ExpectGPUs:
		return bad("its record names %d GPU(s) and %d were expected", len(rec.GPUs), rec.ExpectGPUs)
	}
	for _, gd := range rec.GPUs {
		if len(gd.Missing) > 0 {
			return bad("its record says shard(s) %v of %s are missing", gd.Missing, quoteOrNone(gd.GPU))
		}
		seen := make([]bool, rec.Count+1)
		for _, sd := range gd.Shards {
			if sd.Index < 1 || sd.Index > rec.Count || seen[sd.Index] {
				return bad("its record gives shard %d/%d of %s twice or out of range", sd.Index, rec.Count, quoteOrNone(gd.GPU))
			}
			seen[sd.Index] = true
		}
		if i := slices.Index(seen[1:], false); i >= 0 {
			return bad("its record has no shard %d/%d of %s", i+1, rec.Count, quoteOrNone(gd.GPU))
		}
	}
	return nil
}

// mergeShards merges one GPU's shards, gate by gate in the order they first appear. Each
// shard's own "shards" gate is left out: the merge makes its own.
func mergeShards(parts []part) ([]Gate, error) {
	var order []string
	byName := map[string][]Gate{}
	labels := map[string][]string{}
	for _, p := range parts {
		for _, g := range p.res.Gates {
			if g.Name == ShardsGate {
				continue
			}
			if _, seen := byName[g.Name]; !seen {
				order = append(order, g.Name)
			}
			byName[g.Name] = append(byName[g.Name], g)
			labels[g.Name] = append(labels[g.Name], fmt.Sprintf("%d/%d", p.res.Shard.Index, p.res.Shard.Count))
		}
	}
	var out []Gate
	for _, name := range order {
		g, err := mergeGates(name, byName[name], labels[name], "by_shard")
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// joinGPUs puts the gates of several GPUs in one list: a gate the same on every GPU once,
// any other once per GPU, named "ptxas (L4, sm_89)".
func joinGPUs(groups []*gpuGroup, perGPU [][]Gate) []Gate {
	var order []string
	for _, gates := range perGPU {
		for _, g := range gates {
			if !slices.Contains(order, g.Name) {
				order = append(order, g.Name)
			}
		}
	}
	var out []Gate
	for _, name := range order {
		var same []Gate
		for _, gates := range perGPU {
			if i := slices.IndexFunc(gates, func(g Gate) bool { return g.Name == name }); i >= 0 {
				same = append(same, gates[i])
			}
		}
		if len(same) == len(groups) && !slices.ContainsFunc(same[1:], func(g Gate) bool { return !sameJSON(g, same[0]) }) {
			out = append(out, same[0])
			continue
		}
		for i, gates := range perGPU {
			if j := slices.IndexFunc(gates, func(g Gate) bool { return g.Name == name }); j >= 0 {
				g := gates[j]
				g.Name = fmt.Sprintf("%s (%s)", name, groups[i].gpu)
				out = append(out, g)
			}
		}
	}
	return out
}

// mergeGates makes one gate of parts of the same gate (one per shard or per GPU; labels
// name each, and key is where data that differs between them is kept per part). It fails
// when a part failed, passes when one passed, and skips when all skipped. Findings and
// table rows are joined, what several parts share kept once (onceAcross); the summaries
// joined, each once. Data: a list at the top level of every part's data is joined the
// same way, a value the same in every part is kept, and the values that differ are kept per
// part under key. One part is returned as it is.
func mergeGates(name string, parts []Gate, labels []string, key string) (Gate, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	g := Gate{Name: name, Verdict: Skip, Findings: []Finding{}}
	findings, rows := onceAcross[Finding]{}, onceAcross[Row]{}
	var summaries []string
	for _, p := range parts {
		switch {
		case p.Verdict == Fail:
			g.Verdict = Fail
		case p.Verdict == Pass && g.Verdict == Skip:
			g.Verdict = Pass
		}
		g.Findings = findings.add(g.Findings, p.Findings, jsonKey)
		if p.Summary != "" && !slices.Contains(summaries, p.Summary) {
			summaries = append(summaries, p.Summary)
		}
		if p.Table == nil {
			continue
		}
		if g.Table == nil {
			g.Table = &Table{Columns: slices.Clone(p.Table.Columns), Rows: []Row{}}
		}
		if !slices.Equal(g.Table.Columns, p.Table.Columns) {
			g.Findings = append(g.Findings, Finding{Severity: Notice, Metric: "table",
				Message: fmt.Sprintf("a part's table has other columns (%s): its %d row(s) are in its own result", strings.Join(p.Table.Columns, ", "), len(p.Table.Rows))})
			continue
		}
		g.Table.Rows = rows.add(g.Table.Rows, p.Table.Rows, jsonKey)
	}
	g.Summary = strings.Join(summaries, "; ")
	var raws []json.RawMessage
	for _, p := range parts {
		raws = append(raws, p.Data)
	}
	data, err := mergeData(raws, labels, key)
	if err != nil {
		return g, fmt.Errorf("gate %s: merging data: %w", name, err)
	}
	g.Data = data
	return g, nil
}

// mergeData joins the data of parts as MergeGates says.
func mergeData(parts []json.RawMessage, labels []string, key string) (json.RawMessage, error) {
	objs := make([]map[string]json.RawMessage, len(parts))
	var keys []string
	for i, raw := range parts {
		// Data that is not an object (null, absent) has nothing to join.
		if json.Unmarshal(raw, &objs[i]) != nil || objs[i] == nil {
			objs[i] = map[string]json.RawMessage{}
		}
		for _, k := range slices.Sorted(maps.Keys(objs[i])) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	out := map[string]json.RawMessage{}
	perPart := make([]map[string]json.RawMessage, len(parts))
	for _, k := range keys {
		var vals []json.RawMessage
		var owners []int
		for i, o := range objs {
			if v, ok := o[k]; ok {
				vals, owners = append(vals, v), append(owners, i)
			}
		}
		if joined, ok := joinLists(vals); ok {
			out[k] = joined
			continue
		}
		if len(vals) == len(parts) && !slices.ContainsFunc(vals[1:], func(v json.RawMessage) bool { return compact(v) != compact(vals[0]) }) {
			out[k] = vals[0]
			continue
		}
		for j, i := range owners {
			if perPart[i] == nil {
				perPart[i] = map[string]json.RawMessage{}
			}
			perPart[i][k] = vals[j]
		}
	}
	var differing []map[string]any
	for i, pp := range perPart {
		if pp == nil {
			continue
		}
		entry := map[string]any{"part": labels[i]}
		for k, v := range pp {
			entry[k] = v
		}
		differing = append(differing, entry)
	}
	if differing != nil {
		if _, taken := out[key]; taken {
			key = "_" + key
		}
		raw, err := encodeJSON(differing)
		if err != nil {
			return nil, err
		}
		out[key] = raw
	}
	return encodeJSON(out)
}

// onceAcross joins the lists of parts keeping what several parts share once: an item is
// added as often as the part that has it most often has it. Repeats within one part are
// that part's own (two targets of one shard with the same kernel × shape) and stay.
type onceAcross[T any] map[string]int

// add appends part's items to out beyond those out already has from earlier parts.
func (o onceAcross[T]) add(out, part []T, key func(any) string) []T {
	inPart := map[string]int{}
	for _, it := range part {
		k := key(it)
		inPart[k]++
		if inPart[k] > o[k] {
			o[k] = inPart[k]
			out = append(out, it)
		}
	}
	return out
}

// joinLists joins JSON arrays as onceAcross does; ok is false when a value is not an array.
func joinLists(vals []json.RawMessage) (json.RawMessage, bool) {
	items := []json.RawMessage{}
	seen := onceAcross[json.RawMessage]{}
	for _, v := range vals {
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil || list == nil && compact(v) != "[]" {
			return nil, false
		}
		items = seen.add(items, list, func(it any) string { return compact(it.(json.RawMessage)) })
	}
	raw, err := encodeJSON(items)
	return raw, err == nil
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func encodeJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // kernel names are full of '<' and '>'
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// jsonKey is v's encoding, for telling identical values apart from different ones.
func jsonKey(v any) string {
	raw, err := encodeJSON(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return compact(raw)
}

func sameJSON(a, b any) bool { return jsonKey(a) == jsonKey(b) }
