package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// CheckCheckout looks at what is checked out in root (GITHUB_WORKSPACE) before anything is
// gated, and refuses (exit 2, naming the cause) what the event must not run on:
//
//   - Under an event that runs with the base repository's write token and secrets while a
//     pull request is at hand (privileged), only the base branch's commit that the event
//     names may be gated, unmodified, with a config and a recording that are files of it:
//     the pull request's code would otherwise build and run with them. Whatever cannot be
//     told (no git repository, git failing) is refused too.
//   - A ref input (workflow_dispatch's revision to gate) must name the commit checked out.
//
// A report (mode report) runs nothing of the checkout and is not checked.
// Why: docs/threat-model.md, threat-model T10.
func CheckCheckout(ctx context.Context, root string, in Inputs, ev Event, p Plan) error {
	if p.Mode == ModeReport {
		return nil
	}
	if why := privileged(ev); why != "" {
		if err := checkBaseCheckout(ctx, root, in, ev, why); err != nil {
			return err
		}
	}
	return checkRefInput(ctx, root, in, ev)
}

// privileged says why the event's workflow holds the base repository's write token and
// secrets while someone else's change is at hand ("" when it does not): such a workflow
// must never build or run that change.
func privileged(ev Event) string {
	switch {
	case ev.Name == "pull_request_target":
		return "under pull_request_target"
	case ev.Name == "workflow_run" && ev.WorkflowRun != nil && strings.HasPrefix(ev.WorkflowRun.Event, "pull_request"):
		return "under workflow_run (of a " + workflowcmd.Neutralize(ev.WorkflowRun.Event) + " run)"
	case ev.Name == "issue_comment" && ev.CommentedPullRequest > 0:
		return "under issue_comment (on a pull request)"
	case ev.Name == "check_suite" || ev.Name == "check_run" || ev.Name == "status":
		// GitHub makes check suites, check runs and commit statuses (another app's, an
		// outside CI's) for a fork's pull request's head commit too, which the payload names.
		return "under " + ev.Name + " (whose commit may be a fork's pull request's)"
	}
	return ""
}

// prHint is how to run kernel-gate on pull requests instead.
const prHint = "gate pull requests on pull_request, and post their results with workflow_run (docs/workflows.md)"

// checkBaseCheckout is the privileged events' rule: root is the top of a git checkout whose
// HEAD is the commit the event runs on (GITHUB_SHA, or the pull request's base commit),
// with no file changed or added, and the config and the recording read are tracked files
// of it. When HEAD is not that commit, the refusal says what it is when it can tell (the
// pull request's head, its merge commit, a commit that contains it).
func checkBaseCheckout(ctx context.Context, root string, in Inputs, ev Event, why string) error {
	refuse := func(format string, a ...any) error {
		return exitcode.BadInputf("refusing to run %s: the workflow has a write token and secrets, and %s; %s", why, fmt.Sprintf(format, a...), prHint)
	}
	top, err := abrun.Git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return refuse("what is checked out in %s cannot be told (%s): it has to be the base branch's commit, checked out by actions/checkout", root, gitWhy(err))
	}
	if !sameDir(root, top) {
		return refuse("the workspace %s is not the top of its git checkout (%s): only the checkout itself can be told to be the base branch's commit", root, top)
	}
	head, err := abrun.Git(ctx, top, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return refuse("the checkout in %s has no commit checked out (%s)", top, gitWhy(err))
	}
	trusted := []string{ev.SHA}
	if ev.PullRequest != nil {
		trusted = append(trusted, ev.PullRequest.BaseSHA)
	}
	if !slices.ContainsFunc(trusted, func(s string) bool { return s != "" && strings.EqualFold(s, head) }) {
		what := untrustedHead(ctx, top, head, ev)
		if ev.SHA == "" {
			return refuse("GITHUB_SHA is not set, so the checked-out commit %s cannot be told to be the base branch's%s", abrun.ShortRev(head), what)
		}
		return refuse("the checked-out commit %s is not the one the event runs on (GITHUB_SHA %s)%s", abrun.ShortRev(head), abrun.ShortRev(ev.SHA), what)
	}
	status, err := abrun.Git(ctx, top, "status", "--porcelain=v1", "--untracked-files=all")
	if err != nil {
		return refuse("whether the checkout in %s was changed cannot be told (%s)", top, gitWhy(err))
	}
	if status != "" {
		return refuse("files of the checkout were changed or added after it was checked out (%s)", firstLines(status, 5))
	}
	files := []struct{ what, path string }{{"the config", configPath(in.Config)}, {"the replay input", in.Replay}}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if err := tracked(ctx, top, f.path); err != nil {
			return refuse("%s %s is not a file of the checked-out commit (%v)", f.what, f.path, err)
		}
	}
	return nil
}

// untrustedHead says what HEAD is when it is the pull request's code (" : it is ...", or ""
// when that cannot be told): its head, GitHub's merge commit of it (refs/pull/N/merge), a
// merge whose parent is its head (read from HEAD's own parent lines, which a depth-1
// checkout has even without the parents), a commit that contains its head, or one with its
// head's tree.
func untrustedHead(ctx context.Context, top, head string, ev Event) string {
	var prHead, label string
	switch {
	case ev.PullRequest != nil:
		prHead, label = ev.PullRequest.HeadSHA, fmt.Sprintf("pull request #%d", ev.PullRequest.Number)
		if m := ev.PullRequest.MergeSHA; m != "" && strings.EqualFold(m, head) {
			return fmt.Sprintf(": it is the %s's merge commit (refs/pull/%d/merge)", label, ev.PullRequest.Number)
		}
	case ev.WorkflowRun != nil:
		prHead, label = ev.WorkflowRun.HeadSHA, "workflow run's pull request"
	}
	if !isCommitSHA(strings.ToLower(prHead)) {
		return ""
	}
	if strings.EqualFold(prHead, head) {
		return fmt.Sprintf(": it is the %s's head", label)
	}
	if raw, err := abrun.Git(ctx, top, "cat-file", "commit", head); err == nil {
		var parents []string
		for _, line := range strings.Split(raw, "\n") {
			if line == "" {
				break // the headers end at the first empty line
			}
			if p, ok := strings.CutPrefix(line, "parent "); ok {
				parents = append(parents, p)
			}
		}
		if slices.ContainsFunc(parents, func(p string) bool { return strings.EqualFold(p, prHead) }) {
			if len(parents) > 1 {
				return fmt.Sprintf(": it is a merge of the %s's head %s (refs/pull/N/merge)", label, abrun.ShortRev(prHead))
			}
			return fmt.Sprintf(": it contains the %s's head %s (its parent)", label, abrun.ShortRev(prHead))
		}
	}
	if _, err := abrun.Git(ctx, top, "cat-file", "-e", prHead+"^{commit}"); err != nil {
		return "" // the head's object is not here: nothing more can be told
	}
	if _, err := abrun.Git(ctx, top, "merge-base", "--is-ancestor", prHead, head); err == nil {
		return fmt.Sprintf(": it contains the %s's head %s", label, abrun.ShortRev(prHead))
	}
	t1, err1 := abrun.Git(ctx, top, "rev-parse", "--verify", head+"^{tree}")
	t2, err2 := abrun.Git(ctx, top, "rev-parse", "--verify", prHead+"^{tree}")
	if err1 == nil && err2 == nil && t1 == t2 {
		return fmt.Sprintf(": it holds the same files as the %s's head %s", label, abrun.ShortRev(prHead))
	}
	return ""
}

// configPath is the config file kernel-gate reads (config.Find): the explicit one, else
// the first default path that exists ("" when none does).
func configPath(explicit string) string {
	if explicit != "" {
		return explicit
	}
	for _, p := range config.DefaultPaths {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
	}
	return ""
}

// tracked checks that path (relative to the working directory, as kernel-gate reads it)
// lies in the checkout top, through any link, and that git tracks it there unchanged: a
// file, or a directory with tracked files and nothing else (no untracked or ignored file).
func tracked(ctx context.Context, top, path string) error {
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return err
	}
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(realTop, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("it is outside the checkout %s", top)
	}
	files, err := abrun.Git(ctx, top, "ls-files", "--full-name", "-z", "--", ":(literal)"+filepath.ToSlash(rel))
	if err != nil {
		return errors.New(gitWhy(err))
	}
	if files == "" {
		return errors.New("git does not track it")
	}
	extra, err := abrun.Git(ctx, top, "status", "--porcelain=v1", "--untracked-files=all", "--ignored=matching", "--", ":(literal)"+filepath.ToSlash(rel))
	if err != nil {
		return errors.New(gitWhy(err))
	}
	if extra != "" {
		return fmt.Errorf("it holds files the commit does not: %s", firstLines(extra, 3))
	}
	return nil
}

// checkRefInput refuses a ref input (the input, else a workflow_dispatch form's "ref") that
// does not name the commit checked out: the result and the baseline would be recorded for
// a revision that was never gated.
// Why: docs/threat-model.md, threat-model T12.
func checkRefInput(ctx context.Context, root string, in Inputs, ev Event) error {
	ref := strings.TrimSpace(in.Ref)
	if ref == "" {
		ref = strings.TrimSpace(ev.Inputs["ref"])
	}
	if ref == "" {
		return nil
	}
	if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\x00\n") {
		return exitcode.BadInputf("input ref %q is not a git revision", ref)
	}
	head, err := abrun.Git(ctx, root, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return exitcode.BadInputf("input ref %q: what is checked out in %s cannot be told (%s)", ref, root, gitWhy(err))
	}
	want, err := abrun.Git(ctx, root, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil && !strings.HasPrefix(ref, "refs/") {
		// actions/checkout of another branch leaves it as a remote-tracking branch.
		want, err = abrun.Git(ctx, root, "rev-parse", "--verify", "--end-of-options", "refs/remotes/origin/"+ref+"^{commit}")
	}
	if err != nil {
		return exitcode.BadInputf("input ref %q names no commit of the checkout in %s: check it out (actions/checkout with ref: and fetch-depth: 0), or leave ref empty to gate what is checked out", ref, root)
	}
	if !strings.EqualFold(want, head) {
		return exitcode.BadInputf("input ref %q is commit %s, but the checkout's HEAD is %s: check the ref out (actions/checkout with ref:) or leave ref empty to gate what is checked out", ref, abrun.ShortRev(want), abrun.ShortRev(head))
	}
	return nil
}

// gitWhy is a git error in one line, or that git could not be started.
func gitWhy(err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		return "git is not on PATH"
	}
	return msgtext.FirstLine(err.Error())
}

// sameDir reports whether a and b are the same directory, through links.
func sameDir(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// firstLines is git's listing cut to n entries, on one line.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	more := ""
	if len(lines) > n {
		more = fmt.Sprintf(" and %d more", len(lines)-n)
		lines = lines[:n]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return cmp.Or(strings.Join(lines, "; ")+more, "(none)")
}
