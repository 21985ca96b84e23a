package action

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// report hands the result to every reporter the inputs ask for (reporters): filtered for
// the annotations by filter-mode, rendered once. What a reporter could not do is said in
// the log; the verdict was decided before, and stands.
func (r *run) report(ctx context.Context, res result.Result) {
	r.trend = r.loadTrend(ctx, res)
	// filter-mode: the annotations show only what the change touched; the verdict, the
	// outputs and the summary are the whole result's.
	filter := r.diffFilter(ctx)
	shown, hidden, hiddenErrors := filter.apply(res, r.root)
	note := filter.note(hidden, hiddenErrors)
	if note != "" {
		r.logf("kernel-gate action: %s", strings.TrimSpace(note))
	}
	markdown := func(limit int) string { return r.summary(res, limit) }
	f := &Findings{Result: res, Shown: shown, Root: r.root, Untrusted: r.untrusted(), Title: r.checkTitle(res),
		Note: note, Markdown: markdown, Summary: note + markdown(workflowcmd.DefaultSummaryLimit-len(note))}
	_ = r.reporters().Report(ctx, f) // each failure is in the log already
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
