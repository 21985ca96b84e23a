// Package cli is kernel-gate's command line: each command's flags, and the wiring from them
// to the libraries that do the work (pipeline, the gates under gates/, baseline, report, and
// action for GitHub). cmd/kernel-gate calls Main; the tests call run with a fake env.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/cli/help"
	"github.com/kernel-gate/kernel-gate/internal/childenv"
	"github.com/kernel-gate/kernel-gate/internal/errtext"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/signalstop"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// Exit codes, as internal/exitcode defines them.
const (
	exitPass     = exitcode.Pass
	exitFail     = exitcode.Fail
	exitUsage    = exitcode.Usage
	exitInternal = exitcode.Internal
)

// Main is the whole command: kernel-gate's arguments (without the program's name) in, its
// exit code out. cmd/kernel-gate calls it and nothing else.
func Main(args []string) int {
	// First of all: the tokens leave the process's environment, so that no process it
	// starts can inherit one, nor read it in the environment this process was started
	// with (Linux: it starts itself again without them); the commands that need one
	// (action, trend, baseline with the git store) read it from getenv, which keeps their
	// values (internal/childenv).
	getenv, sealed := childenv.SealSecrets()
	if sealed != nil {
		fmt.Fprintf(os.Stderr, "kernel-gate: the credentials stay in the environment it was started with: %s\n", workflowcmd.Neutralize(sealed.Error()))
	}
	ctx, exit := signalstop.Stop(os.Stderr, signalstop.Grace)
	code := run(ctx, args, env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: getenv,
	})
	return exit(code)
}

// env is what a command may touch of the outside world, so tests can run it in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// ctx is run's context (SIGINT, SIGTERM), for the writes that could wait on a reader.
	ctx context.Context
}

// usagef is bad usage or unreadable input: exit 2.
func usagef(format string, a ...any) error { return exitcode.BadInputf(format, a...) }

func run(ctx context.Context, args []string, e env) int {
	// Standard input is read under ctx (a pipe that never closes cannot outlast a signal),
	// and so, through it, is every file the command reads (internal/input).
	e.ctx, e.stdin = ctx, input.Stdin(ctx, e.stdin)
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usageText("kernel-gate"))
		return exitUsage
	}
	name := args[0]
	cmd := command(name)
	switch {
	case name == "help" || name == "-h" || name == "--help" || name == "-help":
		fmt.Fprint(e.stdout, usageText("kernel-gate"))
		return exitPass
	case cmd == nil && strings.HasPrefix(name, "-"):
		fmt.Fprintf(e.stderr, "kernel-gate: unknown flag %q: the command comes first, its flags after it (kernel-gate COMMAND [flags]; kernel-gate help lists the commands)\n", name)
		return exitUsage
	case cmd == nil:
		fmt.Fprintf(e.stderr, "kernel-gate: unknown command %q\n\n%s", name, usageText("kernel-gate"))
		return exitUsage
	}
	code, err := cmd(ctx, args[1:], e)
	if err == nil {
		return code
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	msg := errtext.Say(err)
	if underActions(e) {
		// Errors quote input lines (a log that begins ::add-mask::...): under Actions
		// no line of them may be read as a workflow command.
		msg = workflowcmd.Neutralize(msg)
	}
	fmt.Fprintf(e.stderr, "kernel-gate %s: %s\n", name, msg)
	return exitcode.Of(err)
}

// command is the function of the command name, nil for none.
func command(name string) func(context.Context, []string, env) (int, error) {
	switch name {
	case "ptxas":
		return runPtxas
	case "sass":
		return runSass
	case "check":
		return runCheck
	case "sanitize":
		return runSanitize
	case "ncu":
		return runNCU
	case "guard":
		return runGuard
	case "speedup", "bench": // bench: its old name
		return runSpeedup
	case "run":
		return runRun
	case "action":
		return runAction
	case "baseline":
		return runBaseline
	case "trend":
		return runTrend
	case "merge":
		return runMerge
	case "report":
		return runReport
	case "explain":
		return runExplain
	case "demo":
		return runDemo
	case "version", "--version", "-version":
		return runVersion
	}
	return nil
}

// parse parses a command's flags (parseInterspersed). -h prints the command's help text
// (cli/help) and its flags; a flag that is not the command's is one usage error (exit 2), said
// once.
func parse(fs *flag.FlagSet, args []string, e env) ([]string, error) {
	rest, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		name := strings.TrimPrefix(fs.Name(), "kernel-gate ")
		if strings.HasPrefix(name, "baseline ") {
			name = "baseline" // one text for its four subcommands
		}
		fmt.Fprint(e.stderr, usageText(strings.ReplaceAll(name, " ", "-")))
		fs.SetOutput(e.stderr)
		fs.PrintDefaults()
	}
	return rest, err
}

// usageText is the usage text of a command ("bench-run"), or kernel-gate's own ("kernel-gate").
func usageText(name string) string {
	text := help.Text(name)
	if text == "" {
		panic("cli: no help text for " + name) // a command without its text is a build mistake
	}
	return text
}

// parseInterspersed parses flags that may come after positional arguments
// ("kernel-gate ptxas build.log --format json"); "--" ends the flags, and everything after
// it is positional as it is ("kernel-gate sanitize -- ./harness --fast").
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var after []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, after = args[:i], args[i+1:]
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, flagError(fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			if after != nil {
				return append(positional, after...), nil
			}
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// flagError is the flag package's error said as a user reads it, pointing at -h.
func flagError(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	for _, r := range []struct{ prefix, say string }{
		{"flag provided but not defined: ", "unknown flag %s"},
		{"flag needs an argument: ", "%s needs a value"},
	} {
		if name, ok := strings.CutPrefix(msg, r.prefix); ok {
			msg = fmt.Sprintf(r.say, flagName(strings.TrimLeft(name, "-")))
		}
	}
	msg = strings.Replace(msg, ": parse error", ": not a valid value", 1)
	return usagef("%s (%s -h lists its flags)", msg, fs.Name())
}

// resultFormats are the --format values of the commands that write a result: report.Format.
var resultFormats = []string{"text", "json", "markdown", "sarif"}

// newFlagSet makes the flag set of a command that writes a result, with the flags every
// such command takes.
func newFlagSet(name string, e env, c *common) *flag.FlagSet {
	return flagSet(name, e, c, resultFormats)
}

// flagSet makes a command's flag set: --config when c is not nil, and --format (formats,
// the first the default) and --out when formats are given. The flag package prints
// nothing: parse says a bad flag once and prints the usage for -h.
func flagSet(name string, e env, c *common, formats []string) *flag.FlagSet {
	fs := flag.NewFlagSet("kernel-gate "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if c == nil {
		return fs
	}
	fs.StringVar(&c.config, "config", "", "config `FILE` (default: kernel-gate.yml, then .github/kernel-gate.yml)")
	if len(formats) > 0 {
		fs.StringVar(&c.format, "format", formats[0], "report `FORMAT`: "+orList(formats))
		fs.StringVar(&c.out, "out", "", "write the report to `FILE` instead of standard output")
	}
	return fs
}

// orList is "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// ignored refuses (exit 2) each of the flags named that was given in a mode that does not
// use it: a flag that would do nothing is a mistake to say, not to pass over.
func ignored(fs *flag.FlagSet, mode string, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(names, f.Name) {
			err = usagef("%s does not apply with %s: leave out %s", flagName(f.Name), mode, flagName(f.Name))
		}
	})
	return err
}

// flagName is how usage names a flag: -n, -C, --format.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// common holds the flags every command takes.
type common struct {
	config, format, out string
}

// failed ends a command with err, whose mark says the exit code (internal/exitcode).
func failed(err error) (int, error) { return exitcode.Of(err), err }
