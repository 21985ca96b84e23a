package action

import (
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// PublishStep publishes the verdict as step outputs and the markdown report as the job
// summary when running inside GitHub Actions; elsewhere it does nothing.
func PublishStep(getenv func(string) string, res result.Result) error {
	if getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	var failed []string
	for _, g := range res.Gates {
		if g.Verdict == result.Fail {
			failed = append(failed, g.Name)
		}
	}
	if err := workflowcmd.SetOutput(getenv, "verdict", string(res.Verdict)); err != nil {
		return err
	}
	if err := workflowcmd.SetOutput(getenv, "failed-gates", strings.Join(failed, ",")); err != nil {
		return err
	}
	if getenv("GITHUB_STEP_SUMMARY") == "" {
		return nil
	}
	var b strings.Builder
	if err := report.Render(&b, res, report.Markdown, report.Options{Limit: workflowcmd.DefaultSummaryLimit}); err != nil {
		return err
	}
	return workflowcmd.AppendSummary(getenv, b.String(), workflowcmd.DefaultSummaryLimit)
}
