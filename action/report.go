package action

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// MaxCheckAnnotations is how many findings a check run annotates, failures first; the rest
// are in the summary (GitHub takes them 50 per request: 1,000 is 20 requests).
const MaxCheckAnnotations = 1000

// annotations turns the findings that sit on a source line into check-run annotations,
// worst first, at most limit of them; omitted counts the rest that had a line.
func annotations(res result.Result, root string, limit int) (out []githubapi.Annotation, omitted int) {
	found := workflowcmd.FromResult(res)
	slices.SortStableFunc(found, func(a, b workflowcmd.GateFinding) int {
		return cmp.Compare(a.Severity.Rank(), b.Severity.Rank())
	})
	for _, f := range found {
		path := repoPath(f.File, root)
		if path == "" || f.Line < 1 {
			continue
		}
		if len(out) == limit {
			omitted++
			continue
		}
		a := githubapi.Annotation{Path: path, StartLine: f.Line, EndLine: f.Line, StartColumn: f.Column, EndColumn: f.Column,
			Level: level(f.Severity), Title: annotationTitle(f), Message: f.Message}
		if a.Validate() != nil {
			continue
		}
		out = append(out, a)
	}
	return out, omitted
}

func level(s result.Severity) string {
	switch s {
	case result.Error:
		return githubapi.LevelFailure
	case result.Warning:
		return githubapi.LevelWarning
	}
	return githubapi.LevelNotice
}

// annotationTitle names the gate, the kernel and the arch: "sanitizer: flash_fwd".
func annotationTitle(f workflowcmd.GateFinding) string {
	t := "kernel-gate " + f.Gate
	if f.Kernel != "" {
		t += ": " + f.Kernel
	}
	if f.Arch != "" {
		t += " (" + f.Arch + ")"
	}
	return t
}

// repoPath is a finding's file relative to the repository root, or "" when it is not a
// file of the repository (an absolute path elsewhere, a path that leaves it).
func repoPath(file, root string) string {
	if file == "" {
		return ""
	}
	if filepath.IsAbs(file) {
		rel, ok := result.Under(root, file)
		if !ok {
			return ""
		}
		file = rel
	}
	return safePath(file)
}

// checkName is the check run's name: what ran and where, so that a matrix of GPUs gives
// one check per GPU and branch protection can require each. One shard of several says
// so ("kernel-gate (L4, sm_89, shard 2/4)"): its pass covers only its targets, and must
// never stand in for the check of the whole run.
func checkName(d *result.Device, s *result.Shard) string {
	var parts []string
	if d != nil && d.Name != "" {
		parts = append(parts, strings.TrimPrefix(d.Name, "NVIDIA "))
		if d.Arch != "" {
			parts = append(parts, d.Arch)
		}
	}
	if s != nil && s.Count > 1 {
		parts = append(parts, fmt.Sprintf("shard %d/%d", s.Index, s.Count))
	}
	if len(parts) == 0 {
		return "kernel-gate"
	}
	return fmt.Sprintf("kernel-gate (%s)", strings.Join(parts, ", "))
}

// conclusion is the check run's conclusion for a verdict.
func conclusion(v result.Verdict) string {
	switch v {
	case result.Fail:
		return githubapi.ConclusionFailure
	case result.Pass:
		return githubapi.ConclusionSuccess
	}
	return githubapi.ConclusionNeutral
}

// title is the check run's one-line title: "3 gates failed: sanitizer, speedup".
func title(res result.Result) string {
	var failed, passed []string
	for _, g := range res.Gates {
		switch g.Verdict {
		case result.Fail:
			failed = append(failed, g.Name)
		case result.Pass:
			passed = append(passed, g.Name)
		}
	}
	switch {
	case len(failed) > 0:
		return fmt.Sprintf("%s failed: %s", numtext.Count(len(failed), "gate"), strings.Join(failed, ", "))
	case len(passed) > 0:
		return fmt.Sprintf("%s passed", numtext.Count(len(passed), "gate"))
	}
	return "nothing was judged"
}

// regressions counts the error findings: what the change broke.
func regressions(res result.Result) int {
	n := 0
	for _, g := range res.Gates {
		n += g.Count(result.Error)
	}
	return n
}

// checkTrendURL refuses a trend-url input that the summary could not link: only an
// absolute http or https URL is one.
func checkTrendURL(u string) error {
	if u == "" {
		return nil
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return exitcode.BadInputf("trend-url %q is not an absolute http or https URL (the trend page, e.g. on GitHub Pages)", u)
	}
	return nil
}

// loadTrend reads the last points of the run's GPU's history from the baseline branch,
// for the summary's trend section: only when the trend-url input links a trend page. It
// only reads (the token needs contents: read). Whatever keeps it from reading (no token,
// no GPU in the result, no history yet, the API) is said in the log and leaves the
// section out; the verdict does not depend on it.
func (r *run) loadTrend(ctx context.Context, res result.Result) *report.Trend {
	if r.in.TrendURL == "" {
		return nil
	}
	skip := func(why string) *report.Trend {
		r.logf("kernel-gate action: no trend in the summary: %s", workflowcmd.Neutralize(msgtext.FirstLine(why)))
		return nil
	}
	if r.in.Token == "" {
		return skip("no github-token to read the baseline branch with")
	}
	fp, err := baseline.FingerprintOf(res)
	if err != nil {
		return skip(err.Error())
	}
	k, err := fp.Key()
	if err != nil {
		return skip(err.Error())
	}
	store, err := baseline.NewGit(ctx, baseline.GitOptions{Options: r.api()})
	if err != nil {
		return skip(err.Error())
	}
	entries, err := store.History(ctx, k, report.DefaultTrendPoints)
	if err != nil {
		return skip(err.Error())
	}
	if len(entries) == 0 {
		return skip(fmt.Sprintf("the baseline holds no history for %s yet", k))
	}
	return &report.Trend{History: trend.FromEntries(k, entries), URL: r.in.TrendURL}
}
