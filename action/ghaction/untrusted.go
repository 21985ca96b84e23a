package ghaction

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/repopath"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A result file handed over from another job (the pull request's gate job, which ran the
// pull request's code) is untrusted: its strings reach a check run, annotations and the log.
// ReadUntrusted reads one within these limits and makes every string safe to show; its
// verdict is as trustworthy as the job that made it, and the report says whose it is.
const (
	maxResultBytes  = 32 << 20
	maxGates        = 64
	maxFindings     = 100_000 // over all gates; the rest are counted, not kept
	maxMessageBytes = 16 << 10
	maxNameBytes    = 1 << 10 // gate names, kernels, files, metrics, table cells
	maxTableRows    = 10_000
	maxDataBytes    = 4 << 20 // per gate
	maxShardTargets = 10_000
)

// ReadUntrusted reads and checks a result file made elsewhere. notes say what was cut.
func ReadUntrusted(file string) (res result.Result, notes []string, err error) {
	st, err := os.Lstat(file)
	switch {
	case err != nil:
		return res, nil, exitcode.BadInputf("the result to report: %w (did the gate job upload it, and was it downloaded here?)", err)
	case !st.Mode().IsRegular():
		return res, nil, exitcode.BadInputf("the result to report, %s, is not a regular file", file)
	case st.Size() > maxResultBytes:
		return res, nil, exitcode.BadInputf("the result to report, %s, is %d bytes: more than %d MiB is not a kernel-gate result", file, st.Size(), maxResultBytes>>20)
	}
	// Without blocking, and the file the Lstat saw: a FIFO or a link swapped in since is
	// refused, not waited on or followed.
	f, err := input.Open(file)
	if err != nil {
		return res, nil, exitcode.BadInput(err)
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return res, nil, exitcode.BadInputf("the result to report, %s, changed while it was opened", file)
	}
	res, err = result.Read(io.LimitReader(f, maxResultBytes))
	if err != nil {
		return res, nil, exitcode.BadInputf("%s: %w", file, err)
	}
	notes = sanitizeResult(&res)
	return res, notes, nil
}

// sanitizeResult cuts every string of res to its limit, removes control characters (but
// newlines and tabs in messages), drops paths that leave the repository, and keeps at most
// the limits' numbers of gates, findings and rows. The verdicts are recomputed from the
// findings left, so a cut can never turn a failure into a pass.
func sanitizeResult(res *result.Result) []string {
	var notes []string
	res.Tool = clean(res.Tool, maxNameBytes, false)
	res.Replay = clean(res.Replay, maxMessageBytes, false)
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
	if len(res.Gates) > maxGates {
		notes = append(notes, fmt.Sprintf("the result has %d gates: only the first %d are reported", len(res.Gates), maxGates))
		res.Gates = res.Gates[:maxGates]
	}
	kept, dropped := 0, 0
	for i := range res.Gates {
		g := &res.Gates[i]
		failed := g.Verdict == result.Fail
		g.Name = clean(g.Name, 64, false)
		g.Summary = clean(g.Summary, maxMessageBytes, false)
		if len(g.Data) > maxDataBytes {
			g.Data = []byte("{}")
			notes = append(notes, fmt.Sprintf("gate %s: its data is larger than %d MiB and is not reported", g.Name, maxDataBytes>>20))
		}
		if room := maxFindings - kept; len(g.Findings) > room {
			dropped += len(g.Findings) - max(room, 0)
			g.Findings = g.Findings[:max(room, 0)]
		}
		kept += len(g.Findings)
		for j := range g.Findings {
			f := &g.Findings[j]
			f.Kernel, f.Arch, f.Metric = clean(f.Kernel, maxNameBytes, false), clean(f.Arch, 32, false), clean(f.Metric, 64, false)
			f.File = safePath(clean(f.File, maxNameBytes, false))
			if f.File == "" || f.Line < 0 {
				f.Line, f.Column = 0, 0
			}
			f.Column = max(f.Column, 0)
			f.Message = clean(f.Message, maxMessageBytes, true)
			switch f.Severity {
			case result.Error, result.Warning, result.Notice:
			default:
				f.Severity = result.Error // an unknown severity is not a reason to pass
			}
		}
		if t := g.Table; t != nil {
			if len(t.Rows) > maxTableRows {
				t.Rows = t.Rows[:maxTableRows]
				notes = append(notes, fmt.Sprintf("gate %s: its table is cut to %d rows", g.Name, maxTableRows))
			}
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
		if failed && g.Verdict != result.Fail {
			// The file said fail, and a cut or a relabelled finding must not change that.
			g.Verdict = result.Fail
		}
	}
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("the result has %d more findings than the %d reported", dropped, maxFindings))
	}
	res.Verdict = result.Overall(res.Gates)
	return notes
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
