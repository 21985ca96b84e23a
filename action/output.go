package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/kernel-gate/kernel-gate/action/config"
	"github.com/kernel-gate/kernel-gate/action/report"
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
// there, and returns the exit code of its verdict.
func emit(res result.Result, c common, f report.Format, e env) (int, error) {
	code, err := render(res, c, f, e)
	if err != nil {
		return code, err
	}
	if err := githubOutputs(res, e); err != nil {
		return exitInternal, exitcode.CouldNotRun(err)
	}
	return code, nil
}

// render writes the report and returns the exit code of the verdict.
func render(res result.Result, c common, f report.Format, e env) (int, error) {
	var buf bytes.Buffer
	opts := report.Options{}
	if c.out == "" && f == report.Text {
		if file, ok := e.stdout.(*os.File); ok {
			opts.Color = report.ColorWanted(file, e.getenv)
		}
	}
	if err := report.Render(&buf, res, f, opts); err != nil {
		return exitInternal, exitcode.CouldNotRun(err)
	}
	if c.out != "" {
		if err := os.WriteFile(c.out, buf.Bytes(), 0o644); err != nil {
			return exitInternal, exitcode.CouldNotRunf("writing the report: %v", err)
		}
	} else if _, err := e.stdout.Write(buf.Bytes()); err != nil {
		return exitInternal, exitcode.CouldNotRun(err)
	}
	if res.Verdict == result.Fail {
		return exitFail, nil
	}
	return exitPass, nil
}

// githubOutputs publishes the verdict as step outputs and the markdown report as the job
// summary when running inside GitHub Actions; elsewhere it does nothing.
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
