package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/kernel-gate/kernel-gate/action"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// setup loads the config, checks the format, and checks --out against what the command
// reads (outfile.Check), its config included.
func setup(c common, e env, r outfile.Reads) (config.Config, report.Format, error) {
	f, err := report.ParseFormat(c.format)
	if err != nil {
		return config.Config{}, "", exitcode.BadInput(err)
	}
	cfg, err := findConfig(c.config, e)
	if err != nil {
		return config.Config{}, "", exitcode.BadInput(err)
	}
	r.Files = append(r.Files, cfg.Path)
	if err := outfile.Check(c.out, r); err != nil {
		return config.Config{}, "", err
	}
	return cfg, f, nil
}

// findConfig loads the config (config.Find) and says its notices (a deprecated spelling)
// on standard error.
func findConfig(path string, e env) (config.Config, error) {
	cfg, err := config.Find(path)
	for _, n := range cfg.Notices {
		if underActions(e) {
			n = workflowcmd.Neutralize(n)
		}
		fmt.Fprintf(e.stderr, "kernel-gate: notice: %s\n", n)
	}
	return cfg, err
}

// emit renders the result where --out says, publishes it to GitHub Actions when running
// there, and returns the exit code of its verdict. Publishing that fails is said once on
// standard error and leaves the exit code the verdict's.
func emit(res result.Result, c common, f report.Format, e env) (int, error) {
	code, err := render(res, c, f, e)
	if err != nil {
		return code, err
	}
	if err := action.PublishStep(e.getenv, res); err != nil {
		fmt.Fprintf(e.stderr, "kernel-gate: the step's outputs and summary were not written: %s\n", workflowcmd.Neutralize(err.Error()))
	}
	return code, nil
}

// underActions reports whether kernel-gate runs as a GitHub Actions step, where a line of
// its output can be a workflow command.
func underActions(e env) bool { return e.getenv("GITHUB_ACTIONS") == "true" }

// progressOf is where a gate's progress goes: standard error, neutralized under Actions
// (the progress names the harness's command, which the config may break over lines that
// start "::").
func progressOf(e env) io.Writer {
	if underActions(e) {
		return workflowcmd.NeutralWriter{W: e.stderr}
	}
	return e.stderr
}

// render writes the report and returns the exit code of the verdict.
func render(res result.Result, c common, f report.Format, e env) (int, error) {
	var buf bytes.Buffer
	// A finding without a file is located in SARIF at the config the run was given.
	opts := report.Options{Root: e.getenv("GITHUB_WORKSPACE"), Fallback: c.config}
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
	if err := deliver(c.out, buf.Bytes(), e); err != nil {
		return exitcode.Of(err), err
	}
	if res.Verdict == result.Fail {
		return exitFail, nil
	}
	return exitPass, nil
}

// deliver writes what a command made to --out, else to standard output; inside Actions
// between stop-commands markers, as it quotes tool output and names from the repository,
// none of which may act as a workflow command.
func deliver(out string, data []byte, e env) error {
	switch {
	case out != "":
		return outfile.Write(e.ctx, e.getenv("GITHUB_WORKSPACE"), out, data)
	case underActions(e):
		return exitcode.CouldNotRun(workflowcmd.StopCommands(e.stdout, func(w io.Writer) error { _, err := w.Write(data); return err }))
	}
	_, err := e.stdout.Write(data)
	return exitcode.CouldNotRun(err)
}
