package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// usage is a flag set's Usage: the command's text, then its flags.
func usage(e env, fs *flag.FlagSet, text string) func() {
	return func() {
		fmt.Fprint(e.stderr, text)
		fs.PrintDefaults()
	}
}

// reads are what a command reads, so that its --out cannot overwrite them: files, and
// directories it reads whole (a recording).
type reads struct {
	files, dirs []string
}

// setup loads the config, checks the format, and checks --out against what the command
// reads (checkOut), its config included.
func setup(c common, r reads) (config.Config, report.Format, error) {
	f, err := report.ParseFormat(c.format)
	if err != nil {
		return config.Config{}, "", exitcode.BadInput(err)
	}
	cfg, err := config.Find(c.config)
	if err != nil {
		return config.Config{}, "", exitcode.BadInput(err)
	}
	r.files = append(r.files, cfg.Path)
	if err := checkOut(c.out, r); err != nil {
		return config.Config{}, "", err
	}
	return cfg, f, nil
}

// checkOut refuses (exit 2) an --out that names a directory, something a report cannot be
// written to (a FIFO, a socket), a symbolic link that leads out of its directory (a
// workspace file the pull request made a link to ~/.bashrc), one of the files the command
// reads (by any name: a link or a hard link to it is the same file), or a path inside a
// directory it reads. It runs before anything is read, so a refused --out has written
// nothing.
func checkOut(out string, r reads) error {
	if out == "" {
		return nil
	}
	st, err := os.Stat(out) // what writing would open, through any link
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return usagef("--out %s: %v", out, err)
	case st.IsDir():
		return usagef("--out %s is a directory: name the report's file", out)
	case !st.Mode().IsRegular() && st.Mode()&fs.ModeCharDevice == 0:
		return usagef("--out %s is %s: name a file (or leave --out out for standard output)", out, input.KindOf(st.Mode()))
	}
	if err == nil && st.Mode().IsRegular() {
		for _, f := range r.files {
			if f == "" || f == "-" {
				continue
			}
			if fst, ferr := os.Stat(f); ferr == nil && os.SameFile(st, fst) {
				return usagef("--out %s is %s, which this command reads: the report would overwrite its own input", out, f)
			}
		}
	}
	for _, d := range r.dirs {
		if d != "" && within(out, d) {
			return usagef("--out %s is inside %s, which this command reads: write the report elsewhere", out, d)
		}
	}
	return linkOut(out)
}

// linkOut refuses (exit 2) an --out that is a symbolic link leading out of its directory,
// dangling or not: writing would create or overwrite its target, wherever that is. As
// os.Root, which writeOut opens it through, a link that names its target by an absolute
// path is taken to lead out.
func linkOut(out string) error {
	st, err := os.Lstat(out)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	dir, name := splitOut(out)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return usagef("--out %s: %v", out, err)
	}
	defer root.Close()
	if _, err := root.Stat(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return usagef("--out %s is a symbolic link that leads out of its directory, or names its target by an absolute path: refusing to write through it (name the file itself)", out)
	}
	return nil
}

// splitOut is an --out path's directory ("." for a bare name) and file name.
func splitOut(out string) (dir, name string) {
	dir, name = filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	return dir, name
}

// within reports whether path, its links resolved as far as they exist, lies inside dir.
func within(path, dir string) bool {
	d, err := resolved(dir)
	if err != nil {
		return false
	}
	p, err := resolved(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolved is path made absolute with the links of its longest existing prefix resolved.
func resolved(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
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
	switch {
	case c.out != "":
		if err := writeOut(e.ctx, e.getenv("GITHUB_WORKSPACE"), c.out, buf.Bytes()); err != nil {
			return exitcode.Of(err), err
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

// writeOut writes the report to path, opened through an os.Root of its directory (a link
// that leads out of it is refused, even one that appeared since checkOut) and without
// blocking (a FIFO nobody reads is an error, not a hang); a write that waits on its reader
// ends when ctx does.
func writeOut(ctx context.Context, ws, path string, data []byte) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var root *os.Root
	var name string
	var err error
	if ws != "" {
		// Inside GitHub Actions the workspace is the pull request's checkout: no directory
		// on the path may lead out of it through a link it committed.
		if root, name, err = procgroup.OpenOutDir(ws, path); err != nil {
			return err
		}
	} else {
		var dir string
		dir, name = splitOut(path)
		if root, err = os.OpenRoot(dir); err != nil {
			return exitcode.CouldNotRunf("writing the report: %v", err)
		}
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|input.NonBlock, 0o644)
	if err != nil {
		if lerr := linkOut(path); lerr != nil {
			return lerr
		}
		return exitcode.CouldNotRunf("writing the report: %v", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Now()) })
	_, err = f.Write(data)
	stop()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("writing the report to %s: %w", path, cerr)
	}
	if err != nil {
		return exitcode.CouldNotRunf("writing the report: %v", err)
	}
	return nil
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
