package action

// Where the findings go. Every destination (the check run and its annotations, workflow-
// command annotations, the job summary and its file, the SARIF log, the pull request's
// comment, the step outputs) is a Reporter in a file of its own. The run builds one
// Findings from the result (filtered and rendered once), chooses its reporters from the
// inputs in one place (reporters), and hands the Findings to Reporters, which runs each in
// order and says a failure in the log without stopping the next. A check run that cannot
// be posted falls back to workflow-command annotations (Fallback). The verdict and the exit
// code are decided before any reporter runs and never depend on one. The pattern is
// reviewdog's CommentService and MultiCommentService.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// A Reporter is one place the findings go.
type Reporter interface {
	// Name says where, in words ("check run", "job summary").
	Name() string
	// Report posts or writes f. An error says, with the context a user needs, what could
	// not be reported; the caller says it in the log, and it changes no verdict.
	Report(ctx context.Context, f *Findings) error
}

// Findings is one result made ready for the reporters: filtered and rendered once, so that
// every destination shows the same thing. The reporters fill its last fields, which the
// step outputs read.
type Findings struct {
	// Result is the whole result: the verdict, the summaries, the SARIF log and the outputs
	// count every finding.
	Result result.Result
	// Shown is what the annotations show: Result less what filter-mode hides.
	Shown result.Result
	// Root is the checkout whose absolute paths the annotations make relative.
	Root string
	// Untrusted heads every title a fork's result gives (run.untrusted); "" otherwise.
	Untrusted string
	// Title is the check run's one-line title.
	Title string
	// Note heads every summary: what filter-mode left out of the annotations ("" when
	// nothing).
	Note string
	// Markdown renders the report within limit bytes (Note not included).
	Markdown func(limit int) string
	// Summary is Note and the report within the job summary's limit: the text of the job
	// summary, of its file and of the pull request's comment.
	Summary string

	// CheckRunID, SummaryPath and SARIFPath are what was posted and written, for the step
	// outputs: "" when it was not.
	CheckRunID, SummaryPath, SARIFPath string
}

// errUnavailable is a reporter's answer when its destination was never to be had (no check
// run: no token, or GitHub refused to create one, which connect said already): it is not
// said again, and a Fallback turns to its next reporter.
var errUnavailable = errors.New("not available")

// Reporters is the combined reporter: it runs every reporter of List in order, and a
// reporter's failure is said in Log and does not stop the next one. It returns the
// failures, joined.
type Reporters struct {
	List []Reporter
	Log  io.Writer
}

// Name lists the reporters' names.
func (rs Reporters) Name() string {
	names := make([]string, len(rs.List))
	for i, r := range rs.List {
		names[i] = r.Name()
	}
	return strings.Join(names, ", ")
}

// Report hands f to each reporter in turn.
func (rs Reporters) Report(ctx context.Context, f *Findings) error {
	var errs []error
	for _, r := range rs.List {
		if err := r.Report(ctx, f); err != nil && !errors.Is(err, errUnavailable) {
			sayFailure(rs.Log, err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Fallback reports with Primary and, when Primary cannot (no token, a fork's read-only
// token, GitHub's refusal), with Then. Primary's failure is said in Log first, so that the
// log reads in the order things happened.
type Fallback struct {
	Primary, Then Reporter
	Log           io.Writer
}

// Name says which reporter stands in for which.
func (fb Fallback) Name() string {
	return fmt.Sprintf("%s, else %s", fb.Primary.Name(), fb.Then.Name())
}

// Report hands f to Primary, and to Then when Primary fails.
func (fb Fallback) Report(ctx context.Context, f *Findings) error {
	err := fb.Primary.Report(ctx, f)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errUnavailable) {
		sayFailure(fb.Log, err)
	}
	return fb.Then.Report(ctx, f)
}

// sayFailure says a reporter's failure in the log. Its text may quote GitHub's answer or
// a file's path: the workflow commands in it are made inert.
func sayFailure(log io.Writer, err error) {
	logf(log, "kernel-gate action: %s", workflowcmd.Neutralize(err.Error()))
}

// logf writes one line to the step's log.
func logf(w io.Writer, format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }

// reporters are where this run's findings go, in this order: the annotations the input
// annotations asks for, the job summary and its file, the SARIF log (format: sarif), the
// pull request's comment, and last the step outputs, which say what the others posted.
func (r *run) reporters() Reporters {
	list := annotators(r.in.Annotations, checkRunReporter{&r.checkRun}, workflowCommands{Log: r.o.Log}, r.o.Log)
	list = append(list, jobSummary{Getenv: r.o.Getenv}, r.summaryFile())
	if r.in.Format == FormatSARIF {
		list = append(list, r.sarifFile())
	}
	list = append(list, r.prComment(), stepOutputs{Getenv: r.o.Getenv, ResultsFile: r.in.ResultsFile})
	return Reporters{List: list, Log: r.o.Log}
}

// annotators are the reporters of the findings on source lines for a value of the input
// annotations: the check run, which falls back to workflow commands when it cannot be
// posted; workflow commands; both (workflow commands whatever became of the check run); or
// none.
func annotators(mode string, checkRun, commands Reporter, log io.Writer) []Reporter {
	switch mode {
	case AnnotateCheckRun:
		return []Reporter{Fallback{Primary: checkRun, Then: commands, Log: log}}
	case AnnotateBoth:
		return []Reporter{checkRun, commands}
	case AnnotateCommands:
		return []Reporter{commands}
	}
	return nil
}

// wantsCheckRun reports whether the input annotations asks for a check run (annotators).
func wantsCheckRun(mode string) bool { return mode == AnnotateCheckRun || mode == AnnotateBoth }
