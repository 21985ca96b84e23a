package result

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// Schema names this version of the result format.
const Schema = "kernel-gate/result/v1"

// Verdict is a gate's or the whole run's outcome.
type Verdict string

const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// Skip means the gate had nothing to judge; a finding says why.
	Skip Verdict = "skip"
)

// Severity of a finding. Only Error findings fail a gate.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Notice  Severity = "notice"
)

// Rank orders severities from the most to the least severe (error = 0).
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	case Notice:
		return 2
	}
	return 3
}

// Finding is one thing a gate has to say about one kernel (or about its input).
// Value, Limit, Baseline and Delta are absent when they do not apply.
//
// Line and Column are 1-based; Column counts bytes, as compilers and the guard do, so that
// an editor or a code-scanning upload lands on the character. Column is set only where
// the input itself says it (the guard's parse, a clang/gcc "file:line:col: error"), and is
// absent otherwise: a column guessed from a message would point at the wrong place.
type Finding struct {
	Severity Severity `json:"severity"`
	Kernel   string   `json:"kernel,omitempty"`
	Arch     string   `json:"arch,omitempty"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line"`
	Column   int      `json:"column,omitempty"`
	Metric   string   `json:"metric,omitempty"`
	Value    *float64 `json:"value,omitempty"`
	Limit    *float64 `json:"limit,omitempty"`
	// Baseline is the metric's value in the baseline result, Delta = Value - Baseline.
	Baseline *float64 `json:"baseline,omitempty"`
	Delta    *float64 `json:"delta,omitempty"`
	Message  string   `json:"message"`
	// Explain says why, for a finding of a kernel that got slower or heavier.
	Explain *Explanation `json:"explain,omitempty"`
}

// Table is a gate's per-kernel view for humans: reporters render it without knowing the
// gate. Rows are in display order (worst first); Status is a row's verdict.
type Table struct {
	Columns []string `json:"columns"`
	Rows    []Row    `json:"rows"`
}

// Row is one line of a Table.
type Row struct {
	Status Verdict  `json:"status"`
	Cells  []string `json:"cells"`
}

// Subject adds a gate's findings about one thing it judges (a kernel × shape): each
// message starts with Label, and Errors counts the errors added, which fail the thing's
// row of the table.
type Subject struct {
	Gate   *Gate
	Kernel string // the kernel's short name, for Finding.Kernel
	File   string // the input the findings point at, when there is one
	Label  string // "flash_fwd × long"
	Errors int
}

// Add adds a finding about the subject.
func (s *Subject) Add(sev Severity, metric string, value, limit *float64, format string, args ...any) {
	if sev == Error {
		s.Errors++
	}
	s.Gate.Findings = append(s.Gate.Findings, Finding{
		Severity: sev, Kernel: s.Kernel, File: s.File, Metric: metric, Value: value, Limit: limit,
		Message: s.Label + ": " + fmt.Sprintf(format, args...),
	})
}

// Number is v as a JSON number for a Finding's Value or Limit, or a gate's data: nil for
// NaN and ±Inf, which JSON cannot hold (the message spells such a number out).
func Number(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Rank orders a row's status in a table: failing rows first, then passing ones, then the
// rest (skipped).
func (v Verdict) Rank() int {
	switch v {
	case Fail:
		return 0
	case Pass:
		return 1
	}
	return 2
}

// Ranked is a table row with what ranks it among the others: failing rows first, then the
// largest Worst first (a slowdown ratio, an error over its limit, a register count), so
// the rows a reader must act on lead.
type Ranked struct {
	Fail  bool
	Worst float64
	Row   Row
}

// WorstFirst sorts rows worst first (see Ranked), rows that tie keeping their order, and
// returns them as a table's rows: nil for none.
func WorstFirst(rows []Ranked) []Row {
	if len(rows) == 0 {
		return nil
	}
	slices.SortStableFunc(rows, func(a, b Ranked) int {
		if a.Fail != b.Fail {
			if a.Fail {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.Worst, a.Worst)
	})
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Row)
	}
	return out
}

// Gate is one gate's outcome. Data holds the gate's machine-readable records (for the
// PTXAS gate, data.kernels); it stays raw JSON so a saved result round-trips unchanged.
type Gate struct {
	Name     string          `json:"name"`
	Verdict  Verdict         `json:"verdict"`
	Summary  string          `json:"summary,omitempty"`
	Findings []Finding       `json:"findings"`
	Table    *Table          `json:"table,omitempty"`
	Data     json.RawMessage `json:"data"`
}

// Result is a whole run: the verdict over every gate.
type Result struct {
	Schema  string  `json:"schema"`
	Verdict Verdict `json:"verdict"`
	Tool    string  `json:"tool,omitempty"`
	// Replay is set when the inputs are a recording (kernel-gate demo, --replay), never live.
	Replay string `json:"replay,omitempty"`
	// Device is the GPU the run's GPU gates ran on (absent when none was found).
	Device *Device `json:"device,omitempty"`
	// Trigger is what asked for the run inside GitHub Actions (absent elsewhere).
	Trigger *Trigger `json:"trigger,omitempty"`
	// Shard is set when the run gated one shard of its targets (kernel-gate run --shard
	// i/n), for kernel-gate merge (absent otherwise, and in a merged result).
	Shard *Shard `json:"shard,omitempty"`
	Gates []Gate `json:"gates"`
	// Stages say where a live run's time went: each step's start and wall time, steps that
	// overlap ran at once (absent in a replay, a merge, a single command's result).
	Stages []Stage `json:"stages,omitempty"`
	// CriticalPath are the ids of the stages, in order, that the run's wall time waited on:
	// from the last to end back, each the stage that ended last before the next began.
	CriticalPath []string `json:"critical_path,omitempty"`
	// BaseCache says what a run with a base cache (kernel-gate run --base-cache) did with
	// it (absent without one, and in a merge).
	BaseCache *BaseCache `json:"base_cache,omitempty"`
}

// BaseCache is what one run did with its base cache.
type BaseCache struct {
	// Key is the SHA-256 of the key fields (the entry's name); empty when none could be
	// made (Note says why).
	Key string `json:"key,omitempty"`
	// Action is one of the BaseCache* constants.
	Action string `json:"action"`
	// Note says why an entry was ignored, not saved or not looked for ("" when nothing
	// went wrong).
	Note string `json:"note,omitempty"`
}

// What a run did with its base cache (BaseCache.Action).
const (
	// BaseCacheRestored: base's builds and first runs came from the entry; none ran.
	BaseCacheRestored = "restored"
	// BaseCacheSaved: base was built (no entry, or one refused: Note), then saved.
	BaseCacheSaved = "saved"
	// BaseCacheBuilt: base was built and not saved (read-only, or Note says why).
	BaseCacheBuilt = "built"
)

// Stage is one timed step of a run.
type Stage struct {
	// ID is the step's own name in the run's journal ("build/head/attention",
	// "sanitize/attention/memcheck").
	ID string `json:"id"`
	// Name is what it did: gpu, base, build, first run, check, cuobjdump, static gates,
	// sanitizer, memcheck (a sanitizer tool), timing, ncu.
	Name   string `json:"name"`
	Target string `json:"target,omitempty"`
	Side   string `json:"side,omitempty"` // base or head, where it matters
	// StartSeconds is when it began, in seconds from the run's start; WallSeconds how long.
	StartSeconds float64 `json:"start_s"`
	WallSeconds  float64 `json:"wall_s"`
}

// Device is a GPU as nvidia-smi names it.
type Device struct {
	Name   string `json:"name"`   // "NVIDIA H200"
	Arch   string `json:"arch"`   // "sm_90"
	Driver string `json:"driver"` // "580.159.04"
}

// Trigger is the GitHub event behind a run: a baseline update keeps its reason.
type Trigger struct {
	Event  string `json:"event"`
	Ref    string `json:"ref,omitempty"`
	SHA    string `json:"sha,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Shard says which part of a sharded run a result is, and of which run, so that kernel-gate
// merge can check that its parts are one run's and cover every target once.
type Shard struct {
	// Index of Count, 1-based.
	Index int `json:"index"`
	Count int `json:"count"`
	// Targets are the targets this shard gated, AllTargets those of the whole run (every
	// shard's), in the config's order.
	Targets    []string `json:"targets"`
	AllTargets []string `json:"all_targets"`
	// Commit is head's commit, Base the merge base built as base (empty without one),
	// Config "sha256:" and the config file's digest (empty for the built-in defaults).
	Commit string `json:"commit,omitempty"`
	Base   string `json:"base,omitempty"`
	Config string `json:"config,omitempty"`
}

// SetData stores v as the gate's data.
func (g *Gate) SetData(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // kernel names are full of '<' and '>'
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("gate %s: encoding data: %w", g.Name, err)
	}
	g.Data = bytes.TrimRight(b.Bytes(), "\n")
	return nil
}

// Decide sets the verdict from the findings: any error fails the gate. A gate that
// judged nothing must say so with skip reason set; it then skips rather than passes.
func (g *Gate) Decide(judged bool) {
	for _, f := range g.Findings {
		if f.Severity == Error {
			g.Verdict = Fail
			return
		}
	}
	if !judged {
		g.Verdict = Skip
		return
	}
	g.Verdict = Pass
}

// Count returns how many findings have severity s.
func (g *Gate) Count(s Severity) int {
	n := 0
	for _, f := range g.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// New returns a result over gates with the overall verdict computed: fail when any gate
// fails, skip when every gate skipped, pass otherwise.
func New(tool string, gates ...Gate) Result {
	for i := range gates {
		if gates[i].Findings == nil {
			gates[i].Findings = []Finding{} // the contract has a list, never null
		}
		if gates[i].Data == nil {
			gates[i].Data = json.RawMessage("{}")
		}
	}
	if gates == nil {
		gates = []Gate{}
	}
	r := Result{Schema: Schema, Tool: tool, Gates: gates}
	r.Verdict = Overall(gates)
	return r
}

// Overall combines gate verdicts.
func Overall(gates []Gate) Verdict {
	v := Skip
	for _, g := range gates {
		switch g.Verdict {
		case Fail:
			return Fail
		case Pass:
			v = Pass
		}
	}
	return v
}

// Write encodes r as indented JSON.
func Write(w io.Writer, r Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// ErrNotResult reports input that is not a kernel-gate result file.
var ErrNotResult = errors.New("not a kernel-gate result file")

// maxReadSize bounds a result file Read takes: far above any real one.
var maxReadSize int64 = 1 << 30

// Read decodes a saved result and checks it: its schema; exactly one JSON value with no
// key twice in any object (strictjson: encoding/json would keep the last); every verdict
// pass, fail or skip and every severity error, warning or notice; no gate that passes or
// skips with an error finding; and an overall verdict that is the one its gates give
// (Overall); and, for a merged result, a shards gate that does not fail only where its
// record holds every shard of every GPU (checkMerged). A file that fails any of these is
// not a result to trust: the error says why, with the line and column where the input
// shows it.
func Read(r io.Reader) (Result, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxReadSize+1))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrNotResult, err)
	}
	if int64(len(raw)) > maxReadSize {
		return Result{}, fmt.Errorf("%w: larger than %d MiB", ErrNotResult, maxReadSize>>20)
	}
	at := func(off int64, err error) error {
		line, col := strictjson.LineCol(raw, off)
		return fmt.Errorf("%w: line %d, column %d: %w", ErrNotResult, line, col, err)
	}
	var res Result
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&res); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return Result{}, at(se.Offset-1, err)
		case errors.As(err, &te):
			return Result{}, at(te.Offset, err)
		}
		return Result{}, fmt.Errorf("%w: %v", ErrNotResult, err)
	}
	if err := strictjson.Check(raw, strictjson.Options{Exact: []string{"data"}}); err != nil {
		var dup *strictjson.DuplicateKeyError
		var se *strictjson.SyntaxError
		switch {
		case errors.As(err, &dup):
			return Result{}, at(dup.Offset, err)
		case errors.As(err, &se):
			return Result{}, at(se.Offset, err)
		}
		return Result{}, fmt.Errorf("%w: %w", ErrNotResult, err)
	}
	if res.Schema != Schema {
		return Result{}, fmt.Errorf("%w: schema is %q, want %q", ErrNotResult, res.Schema, Schema)
	}
	for i, g := range res.Gates {
		if !validVerdict(g.Verdict) {
			return Result{}, fmt.Errorf("%w: gate %d (%q) has verdict %q", ErrNotResult, i, g.Name, g.Verdict)
		}
		for j, f := range g.Findings {
			switch f.Severity {
			case Error:
				if g.Verdict != Fail {
					return Result{}, fmt.Errorf("%w: gate %d (%q) has verdict %q but finding %d is an error: an error fails its gate", ErrNotResult, i, g.Name, g.Verdict, j)
				}
			case Warning, Notice:
			default:
				return Result{}, fmt.Errorf("%w: gate %d (%q), finding %d has severity %q (want error, warning or notice)", ErrNotResult, i, g.Name, j, f.Severity)
			}
		}
	}
	if !validVerdict(res.Verdict) {
		return Result{}, fmt.Errorf("%w: the verdict is %q (want pass, fail or skip)", ErrNotResult, res.Verdict)
	}
	if want := Overall(res.Gates); res.Verdict != want {
		return Result{}, fmt.Errorf("%w: the verdict is %q but its gates give %q", ErrNotResult, res.Verdict, want)
	}
	if err := checkMerged(res); err != nil {
		return Result{}, err
	}
	return res, nil
}

func validVerdict(v Verdict) bool { return v == Pass || v == Fail || v == Skip }

// Under returns file relative to root, slash-separated, when file lies inside root: a
// finding's path as the repository names it, however the tool that printed it spelled the
// checkout (an absolute path, a base worktree). ok is false for a file outside root, for
// root itself, and when root is empty.
func Under(root, file string) (rel string, ok bool) {
	if root == "" {
		return "", false
	}
	r, err := filepath.Rel(root, file)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// Num returns a pointer to v as float64, for the optional numeric fields of a Finding.
func Num[T ~int | ~int64 | ~float64](v T) *float64 {
	f := float64(v)
	return &f
}
