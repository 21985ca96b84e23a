package sanitizer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// ErrSanitizerMissing reports a compute-sanitizer binary that cannot be found or started.
// The gate fails on it: a missing sanitizer must never read as a clean run.
var ErrSanitizerMissing = errors.New("compute-sanitizer not found")

// ErrorExitCode is the --error-exitcode RunTools passes, so that an exit status says
// "errors found" apart from the target's own failures.
const ErrorExitCode = 86

// Defaults of RunOptions.
const (
	DefaultTimeout    = 2 * time.Minute
	DefaultPrintLimit = 10000
	DefaultPadding    = 4096
)

// RunOptions configure RunTools.
type RunOptions struct {
	// Sanitizer is the path or name (looked up on PATH) of compute-sanitizer; empty means
	// "compute-sanitizer".
	Sanitizer string
	// Tools to run, in order; empty means all four.
	Tools []string
	// Timeout bounds each tool's run; zero means DefaultTimeout. A run past it is killed
	// with its whole process group and the remaining tools are not run.
	Timeout time.Duration
	// ArtifactDir keeps <tool>.log (compute-sanitizer's report), <tool>.out (what the
	// program printed) and <tool>.xml (the record file);
	// empty means a temporary directory that is removed afterwards.
	ArtifactDir string
	// PrintLimit is --print-limit; zero means DefaultPrintLimit. Errors past it are counted
	// by the summary but have no site.
	PrintLimit int
	// Padding is memcheck's --padding in bytes, so that an out-of-bounds access lands in
	// padding instead of the next allocation (where memcheck cannot see it); zero means
	// DefaultPadding, a negative value no padding.
	Padding int
	// ExtraEnv is added to the environment of the command (KG_MODE=sanitize, ...).
	ExtraEnv []string
	// AtOnce is how many tools RunGate runs at the same time, each its own process
	// (atonce.go); 0 or 1: one after the other. The caller decides from the GPU's free
	// memory.
	AtOnce int
	// Slots, when set, is shared with other GPU processes that run at the same time (other
	// targets' tools and checks): each tool holds one of its places while it runs, instead
	// of the AtOnce places RunGate would make for itself.
	Slots chan struct{}
	// Label, when set, starts each tool's progress line: several harnesses' tools at once
	// may run one command line.
	Label string
	// OnTool, when set, is told when each of RunGate's tools started and how long it ran;
	// with AtOnce above 1 it is called from several goroutines at once.
	OnTool func(tool string, start time.Time, took time.Duration)
}

// Args returns the compute-sanitizer arguments RunTools uses for tool, before the command.
//
//   - --xml --save FILE: the records as XML, read first (full source paths, the launched
//     kernel's mangled name from the host stack);
//   - --log-file LOG: compute-sanitizer's own report in a file of its own, apart from the
//     program's output. A program that prints a line without a newline (a PyTorch
//     extension's progress output does) would otherwise glue the "========= ERROR SUMMARY"
//     line behind its text;
//   - --error-exitcode 86: an exit status that says "errors found", apart from the
//     target's own exit status, which compute-sanitizer passes through otherwise;
//   - --print-limit N: the default of 100 leaves most errors of a bad kernel without a site;
//   - --demangle no: kernel names as the other gates print them, so that one glob matches
//     everywhere (the text log then shows mangled names; findings show them demangled);
//   - memcheck: --leak-check full (leaks count as errors) and --padding P (see RunOptions);
//   - racecheck: --racecheck-report analysis, the default, named so that a changed default
//     cannot change the gate: one report per racing pair of source lines with its hazard
//     count ("[264 hazards]"), and its XML records carry the error/warning level; hazard
//     mode prints every hazard (358 for one racy line, cut by the print limit) and its XML
//     records have no level, so a warp-level warning would count as an error.
func Args(tool, xmlPath, logPath string, o RunOptions) []string {
	o = o.withDefaults()
	// Both names are patterns to compute-sanitizer (%p, %q{VAR}): a literal % is doubled.
	a := []string{"--tool", tool, "--xml", "--save", strings.ReplaceAll(xmlPath, "%", "%%"),
		"--log-file", strings.ReplaceAll(logPath, "%", "%%"),
		"--error-exitcode", strconv.Itoa(ErrorExitCode), "--print-limit", strconv.Itoa(o.PrintLimit), "--demangle", "no"}
	switch tool {
	case ToolMemcheck:
		a = append(a, "--leak-check", "full")
		if o.Padding > 0 {
			a = append(a, "--padding", strconv.Itoa(o.Padding))
		}
	case ToolRacecheck:
		a = append(a, "--racecheck-report", "analysis")
	}
	return a
}

func (o RunOptions) withDefaults() RunOptions {
	if o.Sanitizer == "" {
		o.Sanitizer = "compute-sanitizer"
	}
	if len(o.Tools) == 0 {
		o.Tools = AllTools()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.PrintLimit <= 0 {
		o.PrintLimit = DefaultPrintLimit
	}
	if o.Padding == 0 {
		o.Padding = DefaultPadding
	}
	return o
}

// ProgramOut names the file that keeps what the program under a tool printed, apart from
// compute-sanitizer's report (<tool>.log).
func ProgramOut(tool string) string { return tool + ".out" }

// RunTools runs each tool of o over cmd (the program and its arguments), one after the
// other, and returns one Run per tool: its XML records combined with its text output
// (Combine), the exit code, and Problems for anything that makes the run prove less than
// it seems (no summary, a crashed or hung target, counts that disagree).
//
// compute-sanitizer's report goes to <ArtifactDir>/<tool>.log (--log-file) and the
// program's own output to <tool>.out, both straight to disk, never into memory. Each run is its own
// process group; at its timeout, or when ctx is done, the whole group is killed
// (compute-sanitizer starts the target under a helper process, and killing only the
// sanitizer leaves a hung target running on the GPU). A run that hung marks TimedOut with
// the Problem "the kernel hung: killed after 2m0s with its process group", and the tools
// after it are not run (each gets a Problem saying so). A cancelled ctx returns the runs so
// far and ctx's error, wrapped.
//
// The error is nil unless cmd is empty, a tool is unknown, the artifact directory cannot
// be written, ctx is done, or compute-sanitizer cannot be found or started: then it wraps
// ErrSanitizerMissing and names the binary.
func RunTools(ctx context.Context, cmd []string, o RunOptions) ([]Run, error) {
	o = o.withDefaults()
	if len(cmd) == 0 || cmd[0] == "" {
		return nil, errors.New("sanitizer: no command to run under compute-sanitizer")
	}
	for _, t := range o.Tools {
		if !validTool(t) {
			return nil, fmt.Errorf("sanitizer: unknown tool %q (want one of %s)", t, strings.Join(AllTools(), ", "))
		}
	}
	st, err := procgroup.FindTool(ctx, o.Sanitizer, ErrSanitizerMissing, o.ArtifactDir, "kernel-gate-sanitizer-")
	if err != nil {
		return nil, fmt.Errorf("sanitizer: %w", err)
	}
	defer st.Close()
	bin, dir, keep := st.Bin, st.Dir, st.Keep
	var runs []Run
	hung := ""
	for _, tool := range o.Tools {
		if hung != "" {
			runs = append(runs, Run{Tool: tool, Source: SourceText, Records: []Record{},
				Problems: []string{fmt.Sprintf("not run: the %s run before it hung, and so would this one", hung)}})
			continue
		}
		run, err := runOne(ctx, bin, tool, cmd, dir, o)
		if !keep {
			run.Log, run.XML = "", ""
		}
		runs = append(runs, run)
		if err != nil {
			return runs, err
		}
		if run.TimedOut {
			hung = tool
		}
	}
	return runs, nil
}

// runOne runs one tool and reads what it left.
func runOne(ctx context.Context, bin, tool string, cmd []string, dir string, o RunOptions) (Run, error) {
	logPath := filepath.Join(dir, tool+".log")
	xmlPath := filepath.Join(dir, tool+".xml")
	failed := func(err error) (Run, error) {
		return Run{Tool: tool, Source: SourceText, Records: []Record{}, Problems: []string{err.Error()}}, err
	}
	// A record file or report left by an earlier run must not be read as this run's; no
	// file is written through a link of its name (procgroup.CreateArtifact): the report is
	// made here, empty, for compute-sanitizer to write into.
	if err := procgroup.ClearArtifact(dir, tool+".xml"); err != nil {
		return failed(fmt.Errorf("sanitizer: %w", err))
	}
	report, err := procgroup.CreateArtifact(dir, tool+".log", 0o644)
	if err != nil {
		return failed(fmt.Errorf("sanitizer: creating the %s report: %w", tool, err))
	}
	report.Close()
	out, err := procgroup.CreateArtifact(dir, ProgramOut(tool), 0o644)
	if err != nil {
		return failed(fmt.Errorf("sanitizer: creating the %s program output: %w", tool, err))
	}
	tctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	c := procgroup.Command(tctx, append(os.Environ(), o.ExtraEnv...), bin, append(Args(tool, xmlPath, logPath, o), cmd...)...)
	c.Stdout, c.Stderr = out, out
	runErr := c.Run()
	procgroup.KillRest(c) // whatever the run left behind
	if cerr := out.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	if c.ProcessState != nil && c.ProcessState.ExitCode() >= 0 && ctx.Err() == nil && tctx.Err() == nil {
		// The exit status goes into the report as the "exit=N" line ParseTextWith reads, so
		// that the kept report alone (kernel-gate run --replay, sanitize --log) says how the
		// run ended.
		f, err := procgroup.AppendArtifact(dir, tool+".log")
		if err != nil {
			return failed(fmt.Errorf("sanitizer: the %s report: %w", tool, err))
		}
		fmt.Fprintf(f, "exit=%d\n", c.ProcessState.ExitCode())
		if cerr := f.Close(); cerr != nil && runErr == nil {
			runErr = cerr
		}
	}
	if c.ProcessState == nil {
		// It never started: not executable, not a program.
		if ctx.Err() != nil {
			return failed(fmt.Errorf("sanitizer: %s run: %w", tool, ctx.Err()))
		}
		return failed(fmt.Errorf("sanitizer: %w: starting %s: %w", ErrSanitizerMissing, bin, runErr))
	}
	cancelled := ctx.Err() != nil
	timedOut := !cancelled && errors.Is(tctx.Err(), context.DeadlineExceeded)
	var exit *int
	if code := c.ProcessState.ExitCode(); code >= 0 && !timedOut && !cancelled {
		exit = &code
	}
	topts := textOptions{ParseOptions: ParseOptions{Tool: tool}, errorExitCode: ErrorExitCode, exit: exit}
	if timedOut || cancelled {
		topts.killedAfter = o.Timeout
	}
	t := readLog(logPath, tool, topts)
	t.ExitCode = exit
	run := t
	// input.Open: the harness ran in there and may have left a FIFO in the record's place,
	// whose open would block past every timeout.
	if xf, err := input.Open(xmlPath); err == nil {
		x, xerr := ParseXMLWith(xf, xmlPath, ParseOptions{Tool: tool})
		xf.Close()
		switch {
		case xerr == nil:
			x.XML = xmlPath
			run = Combine(x, t)
		case t.Summary:
			run.Problems = append(run.Problems, "XML: "+xerr.Error())
		}
	} else if t.Summary {
		run.Problems = append(run.Problems, fmt.Sprintf("compute-sanitizer finished but wrote no XML record file (%v)", err))
	}
	run.Tool = tool
	run.Log, run.XML = logPath, xmlPath
	run.ExitCode = exit
	switch {
	case timedOut:
		run.TimedOut = true
		msg := fmt.Sprintf("the kernel hung: killed after %s with its process group", o.Timeout)
		if n := run.Printed(); n > 0 {
			msg += fmt.Sprintf(" (it had printed %d records)", n)
		}
		run.Problems = append([]string{msg}, run.Problems...)
	case cancelled:
		run.TimedOut = false
		run.Problems = append([]string{"cancelled: the run was killed with its process group before it finished"}, run.Problems...)
		return run, fmt.Errorf("sanitizer: %s run: %w", tool, ctx.Err())
	}
	return run, nil
}

// readLog parses a run's log; a log that holds no run becomes a Run with a Problem.
func readLog(path, tool string, o textOptions) Run {
	empty := Run{Tool: tool, Source: SourceText, Input: path, Records: []Record{}}
	f, err := input.Open(path) // never a FIFO the harness left there
	if err != nil {
		empty.Problems = []string{fmt.Sprintf("reading the %s log: %v", tool, err)}
		return empty
	}
	defer f.Close()
	runs, err := parseText(f, path, o)
	switch {
	case err != nil && o.killedAfter > 0:
		return empty // the hang is the problem
	case err != nil:
		empty.Problems = []string{"compute-sanitizer ran nothing: " + err.Error()}
		if o.exit != nil {
			empty.Problems[0] += "; " + exitMeaning(*o.exit)
		}
		return empty
	case len(runs) == 0:
		return empty
	case len(runs) > 1:
		r := runs[len(runs)-1]
		r.Problems = append(r.Problems, fmt.Sprintf("the %s log holds %d runs, want 1", tool, len(runs)))
		return r
	}
	return runs[0]
}
