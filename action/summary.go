package action

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// jobSummary appends the summary to the job's summary ($GITHUB_STEP_SUMMARY), cut to what
// GitHub shows.
type jobSummary struct{ Getenv func(string) string }

func (jobSummary) Name() string { return "job summary" }

func (j jobSummary) Report(_ context.Context, f *Findings) error {
	if err := workflowcmd.AppendSummary(j.Getenv, f.Summary, workflowcmd.DefaultSummaryLimit); err != nil {
		return fmt.Errorf("the job summary: %s", msgtext.FirstLine(err.Error()))
	}
	return nil
}

// notRunSummary says in the job summary why kernel-gate did not judge the change (a refusal,
// bad inputs, a step it could not run), as stage B's refusals do: where the log is not read,
// the summary page shows it, each line of the cause under "- " in a code block. Writing it
// is best effort: a failure is said in the log.
func notRunSummary(getenv func(string) string, log io.Writer, cause error) {
	if getenv("GITHUB_STEP_SUMMARY") == "" {
		return
	}
	var b strings.Builder
	listBlock(&b, "**kernel-gate could not run** (the step fails):", strings.Split(strings.TrimRight(cause.Error(), "\n"), "\n"))
	appendSummary(getenv, log, b.String())
}

// listBlock writes lead, then items in a code block, each under "- ", with every run of
// three backticks in them made three apostrophes, so that no item closes the block.
func listBlock(b *strings.Builder, lead string, items []string) {
	b.WriteString(lead + "\n\n```\n")
	for _, it := range items {
		b.WriteString("- " + strings.ReplaceAll(it, "```", "'''") + "\n")
	}
	b.WriteString("```\n")
}

// appendSummary appends md to the job summary, saying in the log why it could not.
func appendSummary(getenv func(string) string, log io.Writer, md string) {
	if err := workflowcmd.AppendSummary(getenv, md, workflowcmd.DefaultSummaryLimit); err != nil {
		logf(log, "kernel-gate action: the job summary: %s", workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
	}
}

// summaryFile keeps the summary's markdown beside the result file, for the summary-path
// output: RESULT-summary.md.
type summaryFile struct {
	// Workspace is the pull request's checkout, which the file is never written out of.
	Workspace, ResultsFile string
}

func (r *run) summaryFile() summaryFile {
	return summaryFile{Workspace: r.root, ResultsFile: r.in.ResultsFile}
}

func (summaryFile) Name() string { return "summary file" }

func (s summaryFile) Report(_ context.Context, f *Findings) error {
	p := strings.TrimSuffix(s.ResultsFile, filepath.Ext(s.ResultsFile)) + "-summary.md"
	// As the result beside it: never through a link (the workspace is the pull request's).
	if err := writeOut(s.Workspace, p, []byte(f.Summary)); err != nil {
		return fmt.Errorf("writing %s: %s", p, msgtext.FirstLine(err.Error()))
	}
	f.SummaryPath = p
	return nil
}

// summary is the markdown report within limit bytes (failures first, the rest cut with a
// note pointing at the run's artifacts), headed by whose result it is when it came from
// another job (stageBHeader).
func (r *run) summary(res result.Result, limit int) string {
	var b bytes.Buffer
	r.stageBHeader(&b)
	head := b.Len()
	if err := report.Render(&b, res, report.Markdown, report.Options{ArtifactsURL: r.runURL(), Limit: limit - head, Trend: r.trend}); err != nil {
		fmt.Fprintf(&b, "\n(the report could not be rendered: %v)\n", err)
	}
	return b.String()
}
