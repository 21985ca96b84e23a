package action

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// fakeReporter records that it ran, in ran, and answers err.
type fakeReporter struct {
	name string
	err  error
	ran  *[]string
}

func (f fakeReporter) Name() string { return f.name }

func (f fakeReporter) Report(context.Context, *Findings) error {
	*f.ran = append(*f.ran, f.name)
	return f.err
}

// For every value of the input annotations, and whatever became of the check run, the
// findings on source lines go where they went before the reporters: the check run, else
// workflow commands (check-run); both, whatever became of the check run (both); workflow
// commands alone; nowhere. A check run that was never had (errUnavailable: no token, or
// connect said why) is not said again; one GitHub refused is said once, before the
// workflow commands are written.
func TestAnnotatorsFallBack(t *testing.T) {
	refused := errors.New("completing the check run failed (403 Resource not accessible by integration)")
	for _, tc := range []struct {
		mode     string
		checkRun error
		ran      []string
		said     string
	}{
		{AnnotateCheckRun, nil, []string{"check run"}, ""},
		{AnnotateCheckRun, errUnavailable, []string{"check run", "commands"}, ""},
		{AnnotateCheckRun, refused, []string{"check run", "commands"}, "kernel-gate action: completing the check run failed (403"},
		{AnnotateBoth, nil, []string{"check run", "commands"}, ""},
		{AnnotateBoth, errUnavailable, []string{"check run", "commands"}, ""},
		{AnnotateBoth, refused, []string{"check run", "commands"}, "kernel-gate action: completing the check run failed (403"},
		{AnnotateCommands, nil, []string{"commands"}, ""},
		{AnnotateNone, nil, nil, ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var ran []string
			var log bytes.Buffer
			list := annotators(tc.mode, fakeReporter{"check run", tc.checkRun, &ran},
				fakeReporter{"commands", nil, &ran}, &log)
			// The commands write to the same log: the refusal must come first.
			list = append(list, fakeReporter{"summary", nil, &ran})
			err := Reporters{List: list, Log: &log}.Report(t.Context(), &Findings{})
			// Only both, whose check run has no fallback, answers the refusal.
			if want := tc.mode == AnnotateBoth && tc.checkRun == refused; errors.Is(err, refused) != want || !want && err != nil {
				t.Errorf("Report: %v", err)
			}
			if want := append(slices.Clone(tc.ran), "summary"); !slices.Equal(ran, want) {
				t.Errorf("ran %q, want %q", ran, want)
			}
			if got := log.String(); tc.said == "" && got != "" || tc.said != "" && (strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, tc.said)) {
				t.Errorf("log %q, want it to say %q", got, tc.said)
			}
			if got := wantsCheckRun(tc.mode); got != slices.Contains(tc.ran, "check run") {
				t.Errorf("wantsCheckRun(%q) = %v", tc.mode, got)
			}
		})
	}
}

// A reporter that fails does not stop the next one; its failure is said once, with the
// workflow commands in it made inert (it may quote GitHub's answer or a path), and
// Reporters returns it.
func TestReportersGoOnAfterAFailure(t *testing.T) {
	var ran []string
	var log bytes.Buffer
	bad := errors.New("the job summary: GitHub said\n::error::x")
	err := Reporters{List: []Reporter{
		fakeReporter{"job summary", bad, &ran}, fakeReporter{"comment", nil, &ran}, fakeReporter{"outputs", errUnavailable, &ran},
	}, Log: &log}.Report(t.Context(), &Findings{Result: result.New("kernel-gate test")})
	if !slices.Equal(ran, []string{"job summary", "comment", "outputs"}) || !errors.Is(err, bad) || errors.Is(err, errUnavailable) {
		t.Errorf("ran %q, err %v", ran, err)
	}
	if got := log.String(); got != "kernel-gate action: the job summary: GitHub said\n\u2236:error::x\n" {
		t.Errorf("log %q", got)
	}
}

// Every backend names itself, and the combined reporters list their names in order.
func TestReporterNames(t *testing.T) {
	r := &run{in: Inputs{Annotations: AnnotateCheckRun, Format: FormatSARIF, ResultsFile: "kg.json"}}
	rs := r.reporters()
	want := "check run, else workflow-command annotations, job summary, summary file, SARIF log, pull-request comment, step outputs"
	if got := rs.Name(); got != want {
		t.Errorf("reporters: %q, want %q", got, want)
	}
}
