package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kernel-gate/kernel-gate/action/config"
	"github.com/kernel-gate/kernel-gate/action/report"
	"github.com/kernel-gate/kernel-gate/action/workflowcmd"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// usage is a flag set's Usage: the command's text, then its flags.
func usage(e env, fs *flag.FlagSet, text string) func() {
	return func() {
		fmt.Fprint(e.stderr, text)
		fs.PrintDefaults()
	}
}

// setup loads the config and checks the format.
func setup(c common) (config.Config, report.Format, error) {
	f, err := report.ParseFormat(c.format)
	if err != nil {
		return config.Config{}, "", exitcode.BadInput(err)
	}
	cfg, err := config.Find(c.config)
	if err != nil {
		return config.Config{}, "", exitcode.BadInput(err)
	}
	return cfg, f, nil
}

// emit renders the result where --out says, publishes it to GitHub Actions when running
// there, and returns the exit code of its verdict. Publishing that fails is said once on
// standard error and leaves the exit code the verdict's.
func emit(res result.Result, c common, f report.Format, e env) (int, error) {
	code, err := render(res, c, f, e)
	if err != nil {
		return code, err
	}
	if err := githubOutputs(res, e); err != nil {
		fmt.Fprintf(e.stderr, "kernel-gate: the step's outputs and summary were not written: %s\n", workflowcmd.Neutralize(err.Error()))
	}
	return code, nil
}

// underActions reports whether kernel-gate runs as a GitHub Actions step, where a line of
// its output can be a workflow command.
func underActions(e env) bool { return e.getenv("GITHUB_ACTIONS") == "true" }

// render writes the report and returns the exit code of the verdict.
func render(res result.Result, c common, f report.Format, e env) (int, error) {
	var buf bytes.Buffer
	opts := report.Options{Root: e.getenv("GITHUB_WORKSPACE")}
	if opts.Root == "" {
		opts.Root, _ = os.Getwd() // absolute paths under the checkout become relative in SARIF
	}
	if c.out == "" && f == report.Text {
		if file, ok := e.stdout.(*os.File); ok {
			opts.Color = report.ColorWanted(file, e.getenv)
		}
	}
	if err := report.Render(&buf, res, f, opts); err != nil {
		return exitInternal, exitcode.CouldNotRun(err)
	}
	switch {
	case c.out != "":
		if err := os.WriteFile(c.out, buf.Bytes(), 0o644); err != nil {
			return exitInternal, exitcode.CouldNotRunf("writing the report: %v", err)
		}
	case underActions(e):
		// The report quotes tool output and names from the repository: none of it may
		// act as a workflow command.
		err := workflowcmd.StopCommands(e.stdout, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
		if err != nil {
			return exitInternal, exitcode.CouldNotRun(err)
		}
	default:
		if _, err := e.stdout.Write(buf.Bytes()); err != nil {
			return exitInternal, exitcode.CouldNotRun(err)
		}
	}
	if res.Verdict == result.Fail {
		return exitFail, nil
	}
	return exitPass, nil
}

// githubOutputs publishes the verdict as step outputs and the markdown report as the job
// summary when running inside GitHub Actions; elsewhere it does nothing.
func githubOutputs(res result.Result, e env) error {
	if !underActions(e) {
		return nil
	}
	var failed []string
	for _, g := range res.Gates {
		if g.Verdict == result.Fail {
			failed = append(failed, g.Name)
		}
	}
	if err := workflowcmd.SetOutput(e.getenv, "verdict", string(res.Verdict)); err != nil {
		return err
	}
	if err := workflowcmd.SetOutput(e.getenv, "failed-gates", strings.Join(failed, ",")); err != nil {
		return err
	}
	if e.getenv("GITHUB_STEP_SUMMARY") == "" {
		return nil
	}
	var b strings.Builder
	if err := report.Render(&b, res, report.Markdown, report.Options{Limit: workflowcmd.DefaultSummaryLimit}); err != nil {
		return err
	}
	return workflowcmd.AppendSummary(e.getenv, b.String(), workflowcmd.DefaultSummaryLimit)
}
