package action

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/repopath"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shard"
)

// A result file handed over from another job (the pull request's gate job, which ran the
// pull request's code) is untrusted: its strings reach a check run, annotations and the log.
// ReadUntrusted reads one within these limits and makes every string safe to show; its
// verdict is as trustworthy as the job that made it, and the report says whose it is.
//
// A result is judged from everything it holds: every gate and every finding, before
// anything is cut for display. One over a limit that a judgement needs whole (its size,
// its number of gates) is refused, never judged in part. The limits fit the largest result
// kernel-gate makes: a merge of shard.Max shards on each of result.MaxMergeGPUs GPUs.
const (
	// maxResultBytes bounds the file: a merged result of every GPU holds each GPU's gates
	// (what one unsharded run of all targets holds, a few hundred KiB for tens of targets)
	// and a shards gate of a few hundred bytes a shard.
	maxResultBytes = 128 << 20
	// maxGates bounds the gates of one result: a merged result has its shards gate and each
	// of a run's gates once per GPU (a run makes at most ten: shards, guard, toolkit, ptxas,
	// sass, sanitizer, correctness, speedup, ncu).
	maxGates        = 1 + result.MaxMergeGPUs*maxGatesPerRun
	maxGatesPerRun  = 32
	maxFindings     = 100_000 // over all gates, shown; the rest are counted, not shown
	maxMessageBytes = 16 << 10
	maxNameBytes    = 1 << 10 // gate names, kernels, files, metrics, table cells
	maxTableRows    = 10_000
	maxDataBytes    = 4 << 20 // per gate
	maxShardTargets = 10_000
)

// ReadUntrusted reads and checks a result file made elsewhere, for reporting: the verdict of
// each gate and of the whole is decided from all of it, then what is shown is cut to the
// limits (findings, table rows, data). notes say what was cut.
// Why: docs/threat-model.md, threat-model T1.
func ReadUntrusted(file string) (res result.Result, notes []string, err error) {
	res, err = readUntrusted(file)
	if err != nil {
		return res, nil, err
	}
	notes = sanitizeResult(&res)
	return res, notes, nil
}

// ReadUntrustedWhole reads a result file made elsewhere as ReadUntrusted does, with every
// string cleaned, but cuts none of its lists: kernel-gate merge makes a result of it, whose
// findings, rows and data must be all of the shard's (a baseline is stored from it), and
// which is cut only where it is shown.
func ReadUntrustedWhole(file string) (res result.Result, notes []string, err error) {
	res, err = readUntrusted(file)
	if err != nil {
		return res, nil, err
	}
	notes = cleanResult(&res)
	return res, notes, nil
}

// readUntrusted reads the file (result.Read checks that its verdicts agree with its
// findings and gates, and that a merged result's shards gate agrees with its own record
// of the shards) and refuses one that is over a limit a judgement needs whole.
func readUntrusted(file string) (res result.Result, err error) {
	st, err := os.Lstat(file)
	switch {
	case err != nil:
		return res, exitcode.BadInputf("the result to report: %w (did the gate job upload it, and was it downloaded here?)", err)
	case !st.Mode().IsRegular():
		return res, exitcode.BadInputf("the result to report, %s, is not a regular file", file)
	case st.Size() > maxResultBytes:
		return res, exitcode.BadInputf("the result to report, %s, is %d bytes: more than %d MiB is not a kernel-gate result (the limit fits a merge of %d shards on each of %d GPUs)", file, st.Size(), maxResultBytes>>20, shard.Max, result.MaxMergeGPUs)
	}
	// Without blocking, and the file the Lstat saw: a FIFO or a link swapped in since is
	// refused, not waited on or followed.
	f, err := input.Open(file)
	if err != nil {
		return res, exitcode.BadInput(err)
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return res, exitcode.BadInputf("the result to report, %s, changed while it was opened", file)
	}
	// One byte past the limit tells a file that grew after Lstat from one of the limit.
	res, err = result.Read(io.LimitReader(f, maxResultBytes+1))
	if err != nil {
		return res, exitcode.BadInputf("%s: %w", file, err)
	}
	if len(res.Gates) > maxGates {
		return result.Result{}, exitcode.BadInputf("%s: the result has %d gates, more than the %d of the largest kernel-gate result (a merge of %d GPUs, %d gates each): it is refused rather than judged from part of its gates",
			file, len(res.Gates), maxGates, result.MaxMergeGPUs, maxGatesPerRun)
	}
	return res, nil
}

// sanitizeResult cleans res (cleanResult), then cuts what is shown to the limits: findings
// (over all gates, keeping errors first, then warnings, then notices, so that a gate's
// verdict and fail-on: warning read the same from what is shown), table rows and data. The
// verdicts are decided before anything is cut and kept after: a cut never changes one.
func sanitizeResult(res *result.Result) []string {
	notes := cleanResult(res)
	verdicts := make([]result.Verdict, len(res.Gates))
	for i := range res.Gates {
		verdicts[i] = res.Gates[i].Verdict
	}
	overall := res.Verdict

	notes = append(notes, cutFindings(res.Gates)...)
	cleanStages(res)
	for i := range res.Gates {
		g := &res.Gates[i]
		if len(g.Data) > maxDataBytes {
			g.Data = []byte("{}")
			notes = append(notes, fmt.Sprintf("gate %s: its data is larger than %d MiB and is not reported", g.Name, maxDataBytes>>20))
		}
		if t := g.Table; t != nil && len(t.Rows) > maxTableRows {
			t.Rows = t.Rows[:maxTableRows]
			notes = append(notes, fmt.Sprintf("gate %s: its table is cut to %d rows", g.Name, maxTableRows))
		}
		g.Verdict = verdicts[i]
	}
	res.Verdict = overall
	return notes
}

// cleanResult cuts every string of res to its limit, removes control characters (but
// newlines and tabs in messages) and drops paths that leave the repository; it cuts no list
// but a shard record's (kept only to compare shards). It then decides each gate's verdict
// and the whole's from all findings and gates: the file's verdict where it is a fail, a
// fail where any finding is an error (an unknown severity is one).
func cleanResult(res *result.Result) []string {
	var notes []string
	res.Tool = clean(res.Tool, maxNameBytes, false)
	res.Replay = clean(res.Replay, maxMessageBytes, false)
	if bc := res.BaseCache; bc != nil {
		bc.Key, bc.Action, bc.Note = clean(bc.Key, 64, false), clean(bc.Action, 16, false), clean(bc.Note, maxMessageBytes, false)
	}
	if d := res.Device; d != nil {
		d.Name, d.Arch, d.Driver = clean(d.Name, maxNameBytes, false), clean(d.Arch, 32, false), clean(d.Driver, 64, false)
	}
	if t := res.Trigger; t != nil {
		t.Event, t.Ref, t.SHA, t.Reason = clean(t.Event, 64, false), clean(t.Ref, maxNameBytes, false), clean(t.SHA, 64, false), clean(t.Reason, maxMessageBytes, false)
	}
	if sh := res.Shard; sh != nil {
		// kernel-gate merge compares these; a list cut here no longer matches its run's,
		// which fails the merge rather than passing part of it.
		sh.Commit, sh.Base, sh.Config = clean(sh.Commit, 100, false), clean(sh.Base, 100, false), clean(sh.Config, 100, false)
		for _, list := range []*[]string{&sh.Targets, &sh.AllTargets} {
			if len(*list) > maxShardTargets {
				notes = append(notes, fmt.Sprintf("its shard record names %d targets: only the first %d are kept", len(*list), maxShardTargets))
				*list = (*list)[:maxShardTargets]
			}
			for i := range *list {
				(*list)[i] = clean((*list)[i], maxNameBytes, false)
			}
		}
	}
	for i := range res.Gates {
		g := &res.Gates[i]
		failed := g.Verdict == result.Fail
		g.Name = clean(g.Name, 64, false)
		g.Summary = clean(g.Summary, maxMessageBytes, false)
		for j := range g.Findings {
			f := &g.Findings[j]
			f.Kernel, f.Arch, f.Metric = clean(f.Kernel, maxNameBytes, false), clean(f.Arch, 32, false), clean(f.Metric, 64, false)
			f.File = safePath(clean(f.File, maxNameBytes, false))
			if f.File == "" || f.Line < 0 {
				f.Line, f.Column = 0, 0
			}
			f.Column = max(f.Column, 0)
			f.Message = clean(f.Message, maxMessageBytes, true)
			cleanExplanation(f.Explain)
			switch f.Severity {
			case result.Error, result.Warning, result.Notice:
			default:
				f.Severity = result.Error // an unknown severity is not a reason to pass
			}
		}
		if t := g.Table; t != nil {
			for c := range t.Columns {
				t.Columns[c] = clean(t.Columns[c], maxNameBytes, false)
			}
			for r := range t.Rows {
				for c := range t.Rows[r].Cells {
					t.Rows[r].Cells[c] = clean(t.Rows[r].Cells[c], maxNameBytes, false)
				}
			}
		}
		g.Decide(g.Verdict != result.Skip)
		if failed {
			// The file said fail; no relabelled finding can change that.
			g.Verdict = result.Fail
		}
	}
	res.Verdict = result.Overall(res.Gates)
	return notes
}

// cutFindings keeps at most maxFindings findings over all gates, in their order: every
// error before any warning, every warning before any notice, so that what is shown still
// holds an error wherever the whole held one, and a warning wherever it held warnings and
// no error. A gate that lost findings gets a notice that counts them.
func cutFindings(gates []result.Gate) []string {
	var count [3]int // by Severity.Rank
	total := 0
	for _, g := range gates {
		for _, f := range g.Findings {
			count[min(f.Severity.Rank(), 2)]++
			total++
		}
	}
	if total <= maxFindings {
		return nil
	}
	var room [3]int
	left := maxFindings
	for r := range room {
		room[r] = min(count[r], left)
		left -= room[r]
	}
	for i := range gates {
		g := &gates[i]
		kept := make([]result.Finding, 0, len(g.Findings))
		var lost [3]int
		for _, f := range g.Findings {
			r := min(f.Severity.Rank(), 2)
			if room[r] > 0 {
				room[r]--
				kept = append(kept, f)
				continue
			}
			lost[r]++
		}
		if n := lost[0] + lost[1] + lost[2]; n > 0 {
			kept = append(kept, result.Finding{Severity: result.Notice, Metric: "findings", Message: fmt.Sprintf(
				"%d more finding(s) of this gate (%d error(s), %d warning(s), %d notice(s)) are not shown: the result holds %d findings, more than the %d a report shows; the verdict is from all of them",
				n, lost[0], lost[1], lost[2], total, maxFindings)})
		}
		g.Findings = kept
	}
	return []string{fmt.Sprintf("the result has %d findings: %d are reported (errors first, then warnings, then notices), the verdicts are from all of them", total, maxFindings)}
}

// clean keeps s to valid UTF-8 of at most n bytes without control characters (newlines and
// tabs stay when multiline).
func clean(s string, n int, multiline bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		switch {
		case multiline && (r == '\n' || r == '\t'):
			return r
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return -1
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// safePath keeps a repository-relative, slash-separated path; anything else is dropped
// (an annotation must not point outside the repository, nor show a name that displays as
// another's): repopath.Rel decides, as for SARIF and workflow commands.
func safePath(p string) string {
	c, _ := repopath.Rel(p)
	return c
}

// maxExplained bounds each list of an untrusted explanation: explain.Build makes a few
// clauses and a few dozen changes.
const maxExplained = 64

// cleanExplanation makes an untrusted finding's explanation as safe to show as its message:
// every text cleaned and cut, every list cut.
// Why: docs/threat-model.md, threat-model T14.
func cleanExplanation(e *result.Explanation) {
	if e == nil {
		return
	}
	e.Sentence = clean(e.Sentence, maxMessageBytes, false)
	if len(e.Clauses) > maxExplained {
		e.Clauses = e.Clauses[:maxExplained]
	}
	for i := range e.Clauses {
		c := &e.Clauses[i]
		c.Text, c.Source = clean(c.Text, maxMessageBytes, false), clean(c.Source, 32, false)
	}
	for _, list := range []*[]result.Change{&e.Resources, &e.Mix, &e.Profile} {
		if len(*list) > maxExplained {
			*list = (*list)[:maxExplained]
		}
		for i := range *list {
			c := &(*list)[i]
			c.Name, c.Unit = clean(c.Name, maxNameBytes, false), clean(c.Unit, 32, false)
		}
	}
	if o := e.Occupancy; o != nil {
		o.GPU, o.BlockSizeFrom = clean(o.GPU, 32, false), clean(o.BlockSizeFrom, 32, false)
		o.Base.Limiter, o.Head.Limiter = clean(o.Base.Limiter, 32, false), clean(o.Head.Limiter, 32, false)
	}
}

// maxStages bounds an untrusted result's stage timings: a run has a few per target.
const maxStages = 1024

// cleanStages makes an untrusted result's stage timings as safe to show as its messages:
// names cleaned and cut, the lists cut, times that are not finite and non-negative zeroed.
// Why: docs/threat-model.md, threat-model T14.
func cleanStages(res *result.Result) {
	if len(res.Stages) > maxStages {
		res.Stages = res.Stages[:maxStages]
	}
	for i := range res.Stages {
		st := &res.Stages[i]
		st.ID, st.Name = clean(st.ID, maxNameBytes, false), clean(st.Name, 64, false)
		st.Target, st.Side = clean(st.Target, maxNameBytes, false), clean(st.Side, 16, false)
		for _, v := range []*float64{&st.StartSeconds, &st.WallSeconds} {
			if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 {
				*v = 0
			}
		}
	}
	if len(res.CriticalPath) > maxStages {
		res.CriticalPath = res.CriticalPath[:maxStages]
	}
	for i := range res.CriticalPath {
		res.CriticalPath[i] = clean(res.CriticalPath[i], maxNameBytes, false)
	}
}
