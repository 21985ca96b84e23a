package action

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	github "github.com/google/go-github/v60/github"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/repopath"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/pipeline"
)

// The filter-mode input's values, as reviewdog names them.
const (
	// FilterAdded annotates findings on the lines the change adds or modifies.
	FilterAdded = "added"
	// FilterDiffContext annotates findings on the lines the change's diff shows, its
	// context lines included (git's 3).
	FilterDiffContext = "diff_context"
	// FilterFile annotates findings in the files the change touches (the default).
	FilterFile = "file"
	// FilterNone annotates every finding.
	FilterNone = "nofilter"
)

// diffFilter decides which findings are annotated: only the annotations (check run and
// workflow commands) are filtered, never the verdict, the exit code or the summary.
type diffFilter struct {
	mode string
	// files are the files the change touches, by their path from the workspace, with the
	// lines it added and the lines its diff shows.
	files map[string]gitdiff.Change
	// whole are the files whose every finding is annotated (the API gave no patch).
	whole map[string]bool
}

// keep reports whether a finding is annotated. A finding with no file, or whose file is not
// one of the repository's (the diff says nothing of it), is kept; so is a finding on no
// particular line of a touched file, under every mode.
func (d *diffFilter) keep(f result.Finding, root string) bool {
	if d == nil || d.mode == FilterNone {
		return true
	}
	path := repoPath(f.File, root)
	if path == "" {
		return true
	}
	ch, ok := d.files[path]
	switch {
	case !ok:
		return false
	case d.mode == FilterFile || f.Line < 1 || d.whole[path]:
		return true
	case d.mode == FilterAdded:
		return ch.Touches(f.Line, f.Line)
	}
	for _, h := range ch.Hunks {
		if h.Start <= f.Line && f.Line <= h.End {
			return true
		}
	}
	return false
}

// apply returns res with only the findings to annotate (the gates' verdicts as they are),
// and how many findings, and of them errors, the filter left out.
func (d *diffFilter) apply(res result.Result, root string) (shown result.Result, hidden, hiddenErrors int) {
	if d == nil || d.mode == FilterNone {
		return res, 0, 0
	}
	shown = res
	shown.Gates = make([]result.Gate, len(res.Gates))
	for i, g := range res.Gates {
		kept := make([]result.Finding, 0, len(g.Findings))
		for _, f := range g.Findings {
			if d.keep(f, root) {
				kept = append(kept, f)
				continue
			}
			hidden++
			if f.Severity == result.Error {
				hiddenErrors++
			}
		}
		g.Findings = kept
		shown.Gates[i] = g
	}
	return shown, hidden, hiddenErrors
}

// note is the summary's line about what the filter left out ("" when nothing).
func (d *diffFilter) note(hidden, hiddenErrors int) string {
	if hidden == 0 {
		return ""
	}
	what := map[string]string{
		FilterAdded:       "on the lines the change adds or modifies",
		FilterDiffContext: "on the lines the change's diff shows",
		FilterFile:        "in the files the change touches",
	}[d.mode]
	errs := ""
	if hiddenErrors > 0 {
		errs = fmt.Sprintf(", %s among them,", numtext.Count(hiddenErrors, "error"))
	}
	return fmt.Sprintf("%s%s %s not annotated: filter-mode %s annotates only findings %s. Every finding counts in the verdict and is in the result file.\n\n",
		numtext.Count(hidden, "finding"), errs, map[bool]string{true: "is", false: "are"}[hidden == 1], d.mode, what)
}

// diffFilter reads the change's diff for the filter-mode input: in gate mode base...HEAD
// from git, with the base the pipeline and the guard use; in report mode (which runs on
// the base branch, without the pull request's commits) the pull request's files from the
// API (pullRequestFilter). Without a diff to go by (no base, no pull request, git or the
// API failing, a change that touches no file) every finding is annotated, and the log
// says why once.
func (r *run) diffFilter(ctx context.Context) *diffFilter {
	mode := cmp.Or(r.in.FilterMode, FilterFile)
	if mode == FilterNone {
		return nil
	}
	none := func(why string) *diffFilter {
		r.logf("kernel-gate action: filter-mode %s: every finding is annotated: %s", mode, workflowcmd.Neutralize(msgtext.FirstLine(why)))
		return nil
	}
	if r.plan.Mode == ModeReport {
		d, why := r.pullRequestFilter(ctx, mode)
		if d == nil {
			return none(why)
		}
		return d
	}
	base := r.plan.BaseRef
	if set, err := r.cfg.Speedup.ABRun.Settings(); err == nil {
		base = cmp.Or(base, set.BaseRef)
	}
	if base == "" || base == pipeline.NoBaseRef {
		return none("there is no base to diff against")
	}
	spec, err := gitdiff.ParseSpec(base + "...HEAD")
	if err != nil {
		return none(err.Error())
	}
	files, err := gitdiff.Files(ctx, r.root, spec)
	if err != nil {
		return none("the change's diff: " + err.Error())
	}
	if len(files) == 0 {
		return none(fmt.Sprintf("the change (%s...HEAD) touches no file", base))
	}
	var changes []gitdiff.Change
	if mode != FilterFile {
		if changes, err = gitdiff.ChangesWithContext(ctx, r.root, spec, gitdiff.DefaultContext); err != nil {
			return none("the change's diff: " + err.Error())
		}
	}
	// git names files from the repository's top; findings are named from the workspace.
	prefix, err := abrun.Git(ctx, r.root, "rev-parse", "--show-prefix")
	if err != nil {
		return none(err.Error())
	}
	d := &diffFilter{mode: mode, files: map[string]gitdiff.Change{}}
	for _, f := range files {
		if p, ok := strings.CutPrefix(f, prefix); ok {
			d.files[p] = gitdiff.Change{Path: p}
		}
	}
	for _, c := range changes {
		if p, ok := strings.CutPrefix(c.Path, prefix); ok {
			c.Path = p
			d.files[p] = c
		}
	}
	return d
}

// maxPullFiles is how many files GitHub lists of a pull request (its limit is 3,000): a
// pull request that may hold more is not filtered.
const maxPullFiles = 3000

// pullRequestFilter is the filter of stage A's pull request from GitHub's API (report
// mode): its files and their patches (three lines of context, as git's). It is nil, with
// why, when the pull request is not known, its head is no longer the run's (pushed again:
// the files would be another commit's), or the API does not answer. A file GitHub gives
// no patch for (binary, or too large) keeps every finding in it.
func (r *run) pullRequestFilter(ctx context.Context, mode string) (*diffFilter, string) {
	c, err := r.apiClient(ctx)
	if err != nil {
		return nil, "the pull request's files: " + err.Error()
	}
	if why := r.lookupPullRequest(ctx, c, "no API client"); why != "" {
		return nil, "stage A's pull request is not known: " + why
	}
	n := r.plan.PullRequest
	var head string
	err = c.Call(ctx, fmt.Sprintf("reading pull request #%d", n), func(ctx context.Context, gh *github.Client) (*github.Response, error) {
		pr, resp, err := gh.PullRequests.Get(ctx, c.Owner(), c.Repo(), n)
		head = pr.GetHead().GetSHA()
		return resp, err
	})
	switch {
	case err != nil:
		return nil, fmt.Sprintf("reading pull request #%d (pull-requests: read): %s", n, msgtext.FirstLine(err.Error()))
	case !strings.EqualFold(head, r.plan.HeadSHA):
		return nil, fmt.Sprintf("pull request #%d's head is %s now, not stage A's %s (pushed again since): its files are another commit's", n, abrun.ShortRev(head), abrun.ShortRev(r.plan.HeadSHA))
	}
	d := &diffFilter{mode: mode, files: map[string]gitdiff.Change{}, whole: map[string]bool{}}
	opts := &github.ListOptions{PerPage: 100}
	for listed := 0; ; {
		var files []*github.CommitFile
		var next int
		err := c.Call(ctx, fmt.Sprintf("listing pull request #%d's files", n), func(ctx context.Context, gh *github.Client) (*github.Response, error) {
			var resp *github.Response
			var err error
			files, resp, err = gh.PullRequests.ListFiles(ctx, c.Owner(), c.Repo(), n, opts)
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return nil, fmt.Sprintf("listing pull request #%d's files (pull-requests: read): %s", n, msgtext.FirstLine(err.Error()))
		}
		for _, f := range files {
			path, ok := repopath.Rel(f.GetFilename())
			if !ok || f.GetStatus() == "removed" {
				continue
			}
			if f.Patch == nil || mode == FilterFile {
				d.files[path], d.whole[path] = gitdiff.Change{Path: path}, f.Patch == nil
				continue
			}
			ch, err := gitdiff.ParsePatch(path, f.GetPatch())
			if err != nil {
				return nil, fmt.Sprintf("pull request #%d's patch of %s: %s", n, path, err)
			}
			d.files[path] = ch
		}
		if listed += len(files); next == 0 {
			break
		}
		if listed >= maxPullFiles {
			return nil, fmt.Sprintf("pull request #%d changes %d files or more, past what GitHub lists", n, maxPullFiles)
		}
		opts.Page = next
	}
	if len(d.files) == 0 {
		return nil, fmt.Sprintf("pull request #%d touches no file GitHub lists", n)
	}
	return d, ""
}
