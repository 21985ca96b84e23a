package guard

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/repopath"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Name is the gate's name in results.
const Name = "guard"

// Data is the guard gate's machine-readable output.
type Data struct {
	Findings []Finding `json:"findings"`
	Warnings []Warning `json:"warnings"`
	Files    int       `json:"files"`
	// Skipped are files and directories (ending in '/') named or found that the guard did
	// not read, with why: at most MaxSkippedData of them, those named on the command line
	// first; SkippedTotal counts them all.
	Skipped      []Skipped `json:"skipped,omitempty"`
	SkippedTotal int       `json:"skipped_total,omitempty"`
}

// Skipped is a file or directory the guard did not read.
type Skipped struct {
	Path string `json:"path"`
	Why  string `json:"why"`
	// Given is true for a path named on the command line.
	Given bool `json:"given,omitempty"`
}

// MaxSkippedData is the most skipped paths Data lists; maxSkippedNames the most a notice
// names for each reason.
const (
	MaxSkippedData  = 200
	maxSkippedNames = 10
)

// Evaluate turns a scan into the "guard" gate: every finding not allowed is an error,
// an allowed one a notice naming its reason, every warning a warning. files is how many
// files were analysed; with none the gate skips.
func Evaluate(findings []Finding, warnings []Warning, files int, cfg Config) (result.Gate, error) {
	return evaluate(treeOut{findings: findings, warnings: warnings, files: files}, cfg)
}

// evaluate is Evaluate that also names, in a notice for each reason, the files the scan did
// not read.
func evaluate(scan treeOut, cfg Config) (result.Gate, error) {
	findings, warnings, files := scan.findings, scan.warnings, scan.files
	g := result.Gate{Name: Name, Findings: []result.Finding{}}
	fs := slices.Clone(findings)
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(boolRank(a.Allowed), boolRank(b.Allowed)), cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	table := &result.Table{Columns: []string{"path:line", "rule", "command"}, Rows: []result.Row{}}
	blocked, allowed, warned, unjudged := 0, 0, 0, 0
	for i, f := range fs {
		via := ""
		if f.Via != "" {
			via = " (via " + f.Via + ")"
		}
		rf := result.Finding{File: f.Path, Line: f.Line, Column: f.Column, Metric: f.Rule}
		row := result.Row{Cells: []string{f.Path + ":" + strconv.Itoa(f.Line), f.Rule, f.Command}}
		switch {
		case f.Allowed:
			allowed++
			rf.Severity = result.Notice
			rf.Message = fmt.Sprintf("allowed (%s): `%s` %s%s", f.AllowReason, f.Command, f.What, via)
			row.Status = result.Pass
		case cfg.warns(f.Rule):
			warned++
			rf.Severity = result.Warning
			rf.Message = fmt.Sprintf("`%s` %s%s: %s (a warning: %s; to refuse it, add %s to guard.block)",
				f.Command, f.What, via, f.Why, warnSource(cfg, f.Rule), f.Rule)
			row.Status = result.Pass
		default:
			blocked++
			rf.Severity = result.Error
			rf.Message = fmt.Sprintf("`%s` %s%s: %s (if it is intended, add `# kernel-gate: allow %s <reason>` on the line above)",
				f.Command, f.What, via, f.Why, f.Rule)
			row.Status = result.Fail
		}
		fs[i].Severity = string(rf.Severity)
		g.Findings = append(g.Findings, rf)
		table.Rows = append(table.Rows, row)
	}
	for _, w := range warnings {
		rf := result.Finding{Severity: result.Warning, File: w.Path, Line: w.Line, Message: w.Message}
		if w.Unjudged && !w.Skipped {
			if cfg.Unjudged == "warn" {
				rf.Message += fmt.Sprintf(" (%s: guard.unjudged: warn lets it pass)", cfg.KeyWhere("unjudged"))
			} else {
				unjudged++
				rf.Severity = result.Error
				rf.Message = "the guard cannot judge this file: " + rf.Message + " (a file the guard cannot judge fails it: " +
					"if it is vendored or generated, list it in guard.skip, or set guard.unjudged: warn)"
			}
		}
		g.Findings = append(g.Findings, rf)
	}
	if len(table.Rows) > 0 {
		g.Table = table
	}
	skips := sortSkipped(scan.skipped)
	for _, n := range scan.notes {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, Message: n})
	}
	g.Findings = append(g.Findings, skippedNotices(skips)...)
	data := Data{Findings: fs, Warnings: slices.Clone(warnings), Files: files, SkippedTotal: len(skips)}
	for _, s := range skips[:min(len(skips), MaxSkippedData)] {
		data.Skipped = append(data.Skipped, Skipped{Path: s.path, Why: s.why, Given: s.given})
	}
	if data.Findings == nil {
		data.Findings = []Finding{}
	}
	if data.Warnings == nil {
		data.Warnings = []Warning{}
	}
	if err := g.SetData(data); err != nil {
		return g, err
	}
	g.Decide(files > 0 || blocked > 0)
	if files == 0 && blocked == 0 {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Notice,
			Message: "no shell scripts, workflows, Makefiles, Dockerfiles or Python files to scan"})
	}
	g.Summary = fmt.Sprintf("%d file(s) scanned: %d command(s) that stop, reboot or reset the GPU machine refused, %d allowed, %d warning(s)",
		files, blocked, allowed, len(warnings)+warned-unjudged)
	if unjudged > 0 {
		g.Summary += fmt.Sprintf("; %d file(s) or parts the guard could not judge", unjudged)
	}
	if len(cfg.Disable) > 0 {
		g.Summary += fmt.Sprintf("; rules disabled in %s: %v", cfg.FileName(), cfg.Disable)
	}
	return g, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// warnSource says why a rule's findings are warnings.
func warnSource(cfg Config, id string) string {
	if i := slices.Index(cfg.Warn, id); i >= 0 {
		return cfg.Where(cmp.Or(cfg.KeyLine("warn["+strconv.Itoa(i)+"]"), cfg.KeyLine("warn"))) + " guard.warn lists it"
	}
	return id + " warns by default"
}

// sortSkipped orders skipped paths, those named on the command line first, then by path,
// and drops repeats.
func sortSkipped(in []skipped) []skipped {
	out := slices.Clone(in)
	slices.SortStableFunc(out, func(a, b skipped) int {
		return cmp.Or(cmp.Compare(boolRank(!a.given), boolRank(!b.given)), strings.Compare(a.path, b.path))
	})
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(s skipped) bool {
		dup := seen[s.path]
		seen[s.path] = true
		return dup
	})
}

// skippedNotices names what was not read, one notice per reason: at most maxSkippedNames
// paths each (those named on the command line first), and how many more.
func skippedNotices(skips []skipped) []result.Finding {
	var whys []string
	byWhy := map[string][]skipped{}
	for _, s := range skips {
		if byWhy[s.why] == nil {
			whys = append(whys, s.why)
		}
		byWhy[s.why] = append(byWhy[s.why], s)
	}
	slices.Sort(whys)
	var out []result.Finding
	for _, why := range whys {
		list := byWhy[why]
		names := make([]string, 0, maxSkippedNames)
		for _, s := range list[:min(len(list), maxSkippedNames)] {
			names = append(names, repopath.Quote(s.path)) // a name that could hide or reorder the text is escaped
		}
		msg := fmt.Sprintf("%d path(s) not read, %s: %s", len(list), why, strings.Join(names, ", "))
		if n := len(list) - len(names); n > 0 {
			msg += fmt.Sprintf(" and %d more", n)
		}
		if given := len(slices.DeleteFunc(slices.Clone(list), func(s skipped) bool { return !s.given })); given > 0 {
			msg += fmt.Sprintf(" (%d of them named on the command line)", given)
		}
		out = append(out, result.Finding{Severity: result.Notice, Message: msg})
	}
	return out
}

// AddNotice adds a notice about the gate's input (the config file it names, "" for none)
// to g; an empty note adds nothing. A notice changes no verdict.
func AddNotice(g *result.Gate, file, note string) {
	if note == "" {
		return
	}
	g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, File: file, Message: note})
}
