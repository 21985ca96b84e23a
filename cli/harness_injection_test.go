//go:build unix

package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// A harness is sh -c of the config's line, and the config is the pull request's: a line
// written to speak to the runner (a newline, then ::error:: or ::add-mask::, and %0A for
// the runner's own escape) runs as the shell makes of it (here: the harness, then a command
// that is not found), and wherever kernel-gate shows it or what it printed (the progress
// under GitHub Actions, the annotations, the job summary), no line of it starts a workflow
// command. The annotations and the summary held before this round; the progress did not:
// the sanitizer's line "kernel-gate sanitize: TOOL COMMAND" printed the command as it is,
// its line breaks included, so its second line was a workflow command. The gates'
// progress now goes through workflowcmd.NeutralWriter under Actions.
func TestHarnessLineCannotSpeakToTheRunner(t *testing.T) {
	const evil = `::error title=pwned::forged%0A::add-mask::kernel-gate`
	harness := `sh ` + fakeDir(t) + `/jit-harness.sh\n` + evil + ` %0A::warning::pwned '[md](https://evil.example/x)' '<img src=x>'`
	cfg := strings.Replace(jitConfig(t, ""), `harness: "sh `+fakeDir(t)+`/jit-harness.sh"`, `harness: "`+harness+`"`, 1)
	if !strings.Contains(cfg, evil) {
		t.Fatal("the config does not hold the attack")
	}
	repo := commandRepo(t, cfg)
	art := filepath.Join(t.TempDir(), "art")
	vars := map[string]string{"GITHUB_ACTIONS": "true"}
	var out, errb bytes.Buffer
	code := run(context.Background(), runArgs(t, repo, art, "--base", "main", "--all"), env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return vars[k] }})
	if code == exitPass {
		t.Fatalf("a harness that runs a missing command passed\n%s", errb.String())
	}
	// Under GitHub Actions the JSON on stdout is between ::stop-commands::TOKEN and ::TOKEN::.
	stdout := strings.TrimSpace(out.String())
	first, rest, _ := strings.Cut(stdout, "\n")
	token, ok := strings.CutPrefix(first, "::stop-commands::")
	if !ok || !strings.HasSuffix(rest, "::"+token+"::") {
		t.Fatalf("stdout is not between stop-commands:\n%.300s", stdout)
	}
	res := decode(t, strings.TrimSuffix(rest, "::"+token+"::"))
	if !strings.Contains(errb.String()+out.String(), "pwned") {
		t.Fatalf("the attack's text is shown nowhere, so this test shows nothing:\n%s", errb.String())
	}
	var ann bytes.Buffer
	workflowcmd.Annotate(&ann, workflowcmd.FromResult(res), workflowcmd.AnnotateOptions{Root: repo})
	var md bytes.Buffer
	if err := report.Render(&md, res, report.Markdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	// The runner reads a line as a command when it starts "::" (after white space): its
	// name and properties end at the next "::", its data (escaped) runs to the line's end.
	allowed := map[string][]string{"the progress": {"group", "endgroup"}, "the annotations": {"error", "warning", "notice"}, "the job summary": nil}
	for what, text := range map[string]string{"the progress": errb.String(), "the annotations": ann.String(), "the job summary": md.String()} {
		for line := range strings.SplitSeq(strings.ReplaceAll(text, "\r", "\n"), "\n") {
			l, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), "::")
			if !ok {
				continue
			}
			head, _, _ := strings.Cut(l, "::")
			name, _, _ := strings.Cut(head, " ")
			if !slices.Contains(allowed[what], name) || strings.Contains(head, "pwned") {
				t.Errorf("%s has a workflow command kernel-gate did not write: %q", what, line)
			}
		}
	}
	// The summary is markdown: the command's text is shown, never a link or HTML of it.
	if summary := md.String(); !strings.Contains(summary, "evil") || strings.Contains(summary, "](https://evil.example") || strings.Contains(summary, "<img") {
		t.Errorf("the job summary renders the harness's markdown or HTML:\n%s", summary)
	}
	if !strings.Contains(ann.String(), "%250A::add-mask::") {
		t.Errorf("the annotation's data does not escape the harness's %%0A:\n%s", ann.String())
	}
}
