package action

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// MaxCheckAnnotations is how many findings a check run annotates, failures first; the rest
// are in the summary (GitHub takes them 50 per request: 1,000 is 20 requests).
const MaxCheckAnnotations = 1000

// elsewhere is where the findings go when there is no check run.
const elsewhere = "the findings go to workflow-command annotations and the job summary"

// checkRun is the run's check run: created in progress before the gates run (connect),
// showing each stage (progress), and completed with the verdict and the annotations
// (checkRunReporter) or, when the gates could not run, as a failure (abandon).
type checkRun struct {
	// client posts the check run; nil when there is no token, check runs are not wanted,
	// or GitHub refused (fallback says why).
	client   *githubapi.Client
	checkID  int64
	fallback string
	// noProgress is set when a progress update failed: later stages are not shown.
	noProgress bool
	log        io.Writer
}

// connect creates the check run, in progress. Any failure leaves the run without one: the
// report then falls back to workflow commands and the job summary.
func (r *run) connect(ctx context.Context, defaultName string) {
	if !wantsCheckRun(r.in.Annotations) {
		return
	}
	if r.in.Token == "" {
		r.fallback = "no github-token was given"
		return
	}
	c, err := githubapi.New(ctx, r.api())
	var id int64
	if err == nil {
		id, err = c.StartCheck(ctx, cmp.Or(r.in.CheckName, defaultName), r.plan.HeadSHA, r.runURL())
	}
	if err != nil {
		r.fallback = msgtext.FirstLine(err.Error())
		r.logf("kernel-gate action: no check run (%s): %s", workflowcmd.Neutralize(r.fallback), elsewhere)
		return
	}
	r.checkRun = checkRun{client: c, checkID: id, log: r.o.Log}
}

// progress shows a stage on the check run.
func (c *checkRun) progress(ctx context.Context, stage string) {
	if c.client == nil || c.noProgress {
		return
	}
	if _, err := c.client.UpdateCheck(ctx, c.checkID, githubapi.Output{Title: "running: " + stage,
		Summary: "kernel-gate is running: " + stage}); err != nil {
		// Progress is a courtesy: after one failure the API's budget is kept for
		// completing the check run with the verdict.
		c.noProgress = true
		logf(c.log, "kernel-gate action: updating the check run: %s (no more progress updates)", workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
	}
}

// abandon completes the check run when the gates could not run at all.
func (c *checkRun) abandon(ctx context.Context, cause error) {
	if c.client == nil {
		return
	}
	msg := "kernel-gate could not run: " + cause.Error()
	if _, err := c.client.CompleteCheck(ctx, c.checkID, githubapi.ConclusionFailure, githubapi.Output{
		Title: "kernel-gate could not run", Summary: "```\n" + strings.ReplaceAll(msg, "```", "'''") + "\n```"}); err != nil {
		logf(c.log, "kernel-gate action: completing the check run: %s", workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
	}
}

// checkRunReporter completes the check run with the verdict, the summary and an annotation
// on each finding's source line (at most MaxCheckAnnotations, worst first). Without a check
// run it is unavailable; when GitHub refuses the completion, it fails, and the findings go
// elsewhere.
type checkRunReporter struct{ *checkRun }

func (checkRunReporter) Name() string { return "check run" }

func (c checkRunReporter) Report(ctx context.Context, f *Findings) error {
	if c.client == nil {
		return errUnavailable
	}
	annots, omitted := annotations(f.Shown, f.Root, MaxCheckAnnotations)
	for i := range annots {
		// GitHub shows them on the change's lines as kernel-gate's own word.
		annots[i].Title = f.Untrusted + annots[i].Title
	}
	note := f.Note
	if omitted > 0 {
		note += fmt.Sprintf("%d more findings with a source line are not annotated (GitHub shows at most %d here); every finding is in the job summary and the result file.\n\n", omitted, MaxCheckAnnotations)
	}
	summary := note + f.Markdown(githubapi.MaxOutputBytes-len(note))
	if _, err := c.client.CompleteCheck(ctx, c.checkID, conclusion(f.Result.Verdict), githubapi.Output{Title: f.Title, Summary: summary, Annotations: annots}); err != nil {
		c.fallback = msgtext.FirstLine(err.Error())
		return fmt.Errorf("completing the check run failed (%s): %s", c.fallback, elsewhere)
	}
	f.CheckRunID = fmt.Sprint(c.checkID)
	logf(c.log, "kernel-gate action: check run %d: %s, %d annotation(s)", c.checkID, conclusion(f.Result.Verdict), len(annots))
	return nil
}

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
			Level: level(f.Severity), Title: annotationTitle(f), Message: f.MessageWhy(false)}
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
