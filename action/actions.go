package main

import (
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/kernel-gate/kernel-gate/action/report"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// githubOutputs publishes the verdict as step outputs and the markdown report as the job
// summary when running inside GitHub Actions; elsewhere it does nothing. The check run and
// annotations come with the GitHub integration.
func githubOutputs(res result.Result, e env) error {
	if e.getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	gh := githubactions.New(githubactions.WithGetenv(e.getenv), githubactions.WithWriter(e.stderr))
	gh.SetOutput("verdict", string(res.Verdict))
	var failed []string
	for _, g := range res.Gates {
		if g.Verdict == result.Fail {
			failed = append(failed, g.Name)
		}
	}
	gh.SetOutput("failed-gates", strings.Join(failed, ","))
	if path := e.getenv("GITHUB_STEP_SUMMARY"); path != "" {
		var b strings.Builder
		if err := report.Render(&b, res, report.Markdown, report.Options{}); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.WriteString(b.String()); err != nil {
			return err
		}
	}
	return nil
}
