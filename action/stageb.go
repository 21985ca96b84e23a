package action

// Stage B of the two-stage design: kernel-gate action in mode report, started by
// workflow_run when stage A (the pull request's gate job) completed. Stage A ran the pull
// request's code on the GPU runner, and for a fork's pull request that code could have
// written anything into the result it uploaded. So stage B takes nothing from the result
// that the event itself can say: the check run's name comes from the inputs, its commit,
// its link and whether it is a fork's from the workflow_run payload (GitHub's), and the
// result is refused when it disagrees with the payload: another commit, another workflow,
// another GPU, one shard of several, or a pass from a run that did not succeed.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	github "github.com/google/go-github/v60/github"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/repopath"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// DefaultReportCheckName names stage B's check run when the input check-name does not:
// one fixed name, never one the result chooses.
const DefaultReportCheckName = "kernel-gate"

// ReportInputs are the inputs that say which result mode report may post: the report
// workflow's (the default branch's), never the artifact's.
type ReportInputs struct {
	// Workflows is input workflow: stage A's workflow, by its file
	// (".github/workflows/kernel-gate-pr.yml", compared with workflow_run.path) or its
	// name (compared with workflow_run.name); several are separated by commas or
	// newlines. Mode report refuses to run without it.
	Workflows []string
	// ExpectGPU is input expect-gpu: the GPU the result must come from, by its name as
	// nvidia-smi gives it ("NVIDIA L4"; "L4" is the same), its arch ("sm_89"), or both
	// ("NVIDIA L4, sm_89"); empty: any GPU, or none.
	ExpectGPU []string
}

var archPattern = regexp.MustCompile(`^sm_[0-9]+[a-z]?$`)

// readReportInputs reads the inputs of ReportInputs through get.
func readReportInputs(get func(string) string) (ReportInputs, error) {
	var in ReportInputs
	split := func(s string) []string {
		var out []string
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	for _, w := range split(get("workflow")) {
		if strings.Contains(w, "/") && !strings.HasSuffix(w, ".yml") && !strings.HasSuffix(w, ".yaml") {
			return in, exitcode.BadInputf("input workflow: %q is not a workflow file (.github/workflows/NAME.yml) nor a workflow's name", w)
		}
		in.Workflows = append(in.Workflows, strings.TrimPrefix(w, "./"))
	}
	in.ExpectGPU = split(get("expect-gpu"))
	names := 0
	for _, g := range in.ExpectGPU {
		if !archPattern.MatchString(g) {
			names++
		}
	}
	if names > 1 || len(in.ExpectGPU)-names > 1 {
		return in, exitcode.BadInputf("input expect-gpu: %q names more than one GPU (give one name, one arch, or \"NAME, sm_XX\")", get("expect-gpu"))
	}
	return in, nil
}

// reportCheckName is stage B's check-run name: the input's, else the fixed default.
func (r *run) reportCheckName() string {
	return cmp.Or(strings.TrimSpace(r.in.CheckName), DefaultReportCheckName)
}

// runURL is where the check run's "Details" and the summary's artifacts link lead: this
// run, or in mode report stage A's run, where the logs and artifacts are.
func (r *run) runURL() string {
	if r.plan.Mode != ModeReport || r.ev.WorkflowRun == nil {
		return r.ev.RunURL
	}
	return r.stageAURL()
}

// stageAURL is stage A's run page: the payload's html_url when it is a page of the server
// the workflow runs on, else made from the server, the repository and the run's id.
func (r *run) stageAURL() string {
	wr := r.ev.WorkflowRun
	server := strings.TrimRight(r.o.Getenv("GITHUB_SERVER_URL"), "/")
	if u, err := url.Parse(wr.HTMLURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil {
		if s, err := url.Parse(server); server == "" || err == nil && strings.EqualFold(s.Host, u.Host) {
			return u.String()
		}
	}
	if server != "" && r.ev.Repository != "" && wr.ID > 0 {
		return fmt.Sprintf("%s/%s/actions/runs/%d", server, r.ev.Repository, wr.ID)
	}
	return ""
}

// fromFork reports whether mode report posts a fork's result: decided from the event.
func (r *run) fromFork() bool {
	return r.plan.Mode == ModeReport && r.ev.WorkflowRun != nil && r.ev.WorkflowRun.Fork(r.ev.Repository)
}

// untrusted starts every title of what a fork's result says (the check run's, each
// annotation's): "" for a result that is not a fork's.
func (r *run) untrusted() string {
	if r.fromFork() {
		return "untrusted (fork's code): "
	}
	return ""
}

// checkTitle is the check run's title; a fork's result says that it is one.
// Why: docs/threat-model.md, threat-model T7.
func (r *run) checkTitle(res result.Result) string {
	return r.untrusted() + title(res)
}

// stageB reads stage A's result and checks it against the event, for mode report. The
// check run is created first, under the inputs' name, so that a refusal is posted on it
// as a failure; the error is the refusal (exit 2), already reported.
func (r *run) stageB(ctx context.Context) (result.Result, error) {
	r.connect(ctx, r.reportCheckName())
	res, notes, err := ReadUntrusted(r.in.ResultsFile)
	if err != nil {
		return res, r.refuse(ctx, []string{msgtext.FirstLine(err.Error())})
	}
	for _, n := range notes {
		// A note names a gate, whose name the result's author chose.
		r.logf("kernel-gate action: the result file: %s", workflowcmd.Neutralize(n))
	}
	if problems := r.crossCheck(ctx, res); len(problems) > 0 {
		return res, r.refuse(ctx, problems)
	}
	if wr := r.ev.WorkflowRun; wr.Conclusion != githubapi.ConclusionSuccess {
		r.logf("kernel-gate action: stage A's run %d concluded %s: its failed result is reported as a failure", wr.ID, workflowcmd.Neutralize(wr.Conclusion))
	}
	r.findPullRequest(ctx, res)
	return res, nil
}

// crossCheck lists what makes res not stage A's result for this event: each problem is
// one sentence naming what the event says and what the result says.
// Why: docs/threat-model.md, threat-model T6.
func (r *run) crossCheck(ctx context.Context, res result.Result) []string {
	wr := r.ev.WorkflowRun
	var problems []string
	add := func(p string) {
		if p != "" {
			problems = append(problems, p)
		}
	}
	add(workflowProblem(r.in.Report.Workflows, *wr))
	add(conclusionProblem(*wr, res.Verdict))
	if res.Trigger == nil || res.Trigger.SHA == "" {
		add(fmt.Sprintf("the result names no commit (no trigger.sha): stage A's kernel-gate action writes the commit it gated, and a result without one cannot be matched with workflow_run.head_sha %s", wr.HeadSHA))
	} else {
		if !strings.EqualFold(res.Trigger.Event, wr.Event) {
			add(fmt.Sprintf("the result was gated on a %s event (trigger.event), but stage A's run %d ran on %s", orNone(res.Trigger.Event), wr.ID, orNone(wr.Event)))
		}
		add(r.commitProblem(ctx, "commit (trigger.sha)", res.Trigger.SHA))
	}
	if s := res.Shard; s != nil {
		if s.Count > 1 {
			add(fmt.Sprintf("the result is shard %d/%d of its run, which covers only its own targets: stage B posts whole runs (join the shards with kernel-gate merge in stage A)", s.Index, s.Count))
		}
		if s.Commit != "" {
			add(r.commitProblem(ctx, "shard commit (shard.commit)", s.Commit))
		}
	}
	add(gpuProblem(r.in.Report.ExpectGPU, res.Device))
	return problems
}

// workflowProblem says why the run's workflow is not one of want ("" when it is one).
func workflowProblem(want []string, wr WorkflowRun) string {
	if len(want) == 0 {
		return "the input workflow is not set: mode report posts only the result of the stage A workflow it names (its file, e.g. workflow: .github/workflows/kernel-gate-pr.yml)"
	}
	// A path may carry the ref it was read at ("...yml@refs/heads/main"). Only a ref is cut:
	// a workflow file's own name may hold '@' ("kernel-gate-pr.yml@x.yml" is another file),
	// but no '/', since GitHub runs no workflow from a directory below .github/workflows.
	path := wr.Path
	if i := strings.LastIndex(path, "@refs/"); i >= 0 {
		path = path[:i]
	}
	for _, w := range want {
		if strings.Contains(w, "/") && path != "" && w == path || !strings.Contains(w, "/") && wr.Name != "" && w == wr.Name {
			return ""
		}
	}
	return fmt.Sprintf("stage A's run %d is of workflow %s (%s), not of %s (input workflow)", wr.ID,
		orNone(wr.Name), orNone(wr.Path), strings.Join(want, ", "))
}

// whyConcluded explains a conclusion of a run that did not succeed ("" for one it does not
// know).
func whyConcluded(c string) string {
	switch c {
	case "failure":
		return "a step failed"
	case "timed_out":
		return "a job ran out of its timeout-minutes"
	case "cancelled":
		return "it was cancelled"
	case "action_required":
		return "it waits for a maintainer's approval, and ran nothing"
	case "skipped":
		return "its jobs were skipped"
	case "startup_failure":
		return "it could not start"
	case "stale":
		return "GitHub marked it stale"
	case "neutral":
		return "it concluded neither success nor failure"
	}
	return ""
}

// conclusionProblem refuses a result that is not a failure from a run that did not
// succeed: only a successful stage A can give a passing check, whatever its result says.
// A failed result of a failed run is reported as it is (it fails the check anyway).
func conclusionProblem(wr WorkflowRun, v result.Verdict) string {
	c := wr.Conclusion
	switch {
	case wr.Status != "" && wr.Status != "completed":
		return fmt.Sprintf("stage A's run %d is %s, not completed: there is no result to post yet", wr.ID, orNone(wr.Status))
	case c == githubapi.ConclusionSuccess, v == result.Fail:
		return ""
	case c == "":
		return fmt.Sprintf("stage A's run %d has no conclusion: a run that did not succeed is never posted as %s", wr.ID, v)
	}
	why := whyConcluded(c)
	if why != "" {
		why = ": " + why
	}
	return fmt.Sprintf("stage A's run %d concluded %s%s; its result says %s, but a run that did not succeed is never posted as %s", wr.ID, c, why, v, v)
}

// commitProblem says why sha (the result's what) is not the commit the check run is for,
// workflow_run.head_sha. On a pull request stage A checks out GitHub's test merge commit
// (refs/pull/N/merge, parents: the base and the head), so a commit whose second parent is
// head_sha, as GitHub's API says, is the head's too.
func (r *run) commitProblem(ctx context.Context, what, sha string) string {
	head := r.ev.WorkflowRun.HeadSHA
	switch {
	case strings.EqualFold(sha, head):
		return ""
	case !isCommitSHA(strings.ToLower(sha)):
		return fmt.Sprintf("the result's %s %q is not a commit SHA; workflow_run.head_sha is %s", what, sha, head)
	case !strings.HasPrefix(r.ev.WorkflowRun.Event, "pull_request"):
		return fmt.Sprintf("the result's %s is %s, not workflow_run.head_sha %s", what, sha, head)
	}
	parents, err := r.parents(ctx, strings.ToLower(sha))
	switch {
	case err != nil:
		return fmt.Sprintf("the result's %s is %s, not workflow_run.head_sha %s, and whether it is the pull request's test merge commit could not be asked: %s", what, sha, head, msgtext.FirstLine(err.Error()))
	case len(parents) != 2 || !strings.EqualFold(parents[1], head):
		return fmt.Sprintf("the result's %s is %s, not workflow_run.head_sha %s nor a merge commit of it (its parents: %s)", what, sha, head, orNone(strings.Join(parents, ", ")))
	}
	return ""
}

// parents asks GitHub for a commit's parents.
func (r *run) parents(ctx context.Context, sha string) ([]string, error) {
	c, err := r.apiClient(ctx)
	if err != nil {
		return nil, err
	}
	var parents []string
	err = c.Call(ctx, "reading commit "+abrun.ShortRev(sha), func(ctx context.Context, gh *github.Client) (*github.Response, error) {
		commit, resp, err := gh.Git.GetCommit(ctx, c.Owner(), c.Repo(), sha)
		parents = parents[:0]
		if commit != nil {
			for _, p := range commit.Parents {
				parents = append(parents, p.GetSHA())
			}
		}
		return resp, err
	})
	return parents, err
}

// apiClient is the check run's client, or one made for reading when there is no check run.
func (r *run) apiClient(ctx context.Context) (*githubapi.Client, error) {
	if r.client != nil {
		return r.client, nil
	}
	if r.in.Token == "" {
		return nil, fmt.Errorf("no github-token")
	}
	if r.reader == nil {
		// The run's one budget and request timeout (api), as every client of the run.
		c, err := githubapi.New(ctx, r.api())
		if err != nil {
			return nil, err
		}
		r.reader = c
	}
	return r.reader, nil
}

// gpuProblem says why d is not the GPU want names ("" when it is, or want is empty).
func gpuProblem(want []string, d *result.Device) string {
	if len(want) == 0 {
		return ""
	}
	if d == nil || d.Name == "" {
		return fmt.Sprintf("the result names no GPU, and the input expect-gpu is %q", strings.Join(want, ", "))
	}
	short := func(s string) string { return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "nvidia ") }
	for _, w := range want {
		if archPattern.MatchString(w) && !strings.EqualFold(w, d.Arch) || !archPattern.MatchString(w) && short(w) != short(d.Name) {
			return fmt.Sprintf("the result comes from %s (%s), not from the GPU the input expect-gpu names, %q", orNone(d.Name), orNone(d.Arch), strings.Join(want, ", "))
		}
	}
	return ""
}

// refuse reports why stage A's result is not posted: on the check run as a failure (never
// anything else), in the job summary, the log and, when the inputs ask for one on failure,
// the pull request's comment. It returns the refusal as an error that exits 2.
func (r *run) refuse(ctx context.Context, problems []string) error {
	for _, p := range problems {
		r.logf("kernel-gate action: refused: %s", workflowcmd.Neutralize(p))
	}
	var b strings.Builder
	r.stageBHeader(&b)
	listBlock(&b, "**kernel-gate refused to post stage A's result** (the check fails):", problems)
	md := b.String()
	if r.client != nil {
		t := r.untrusted() + "kernel-gate refused stage A's result"
		if _, err := r.client.CompleteCheck(ctx, r.checkID, githubapi.ConclusionFailure, githubapi.Output{Title: t, Summary: md}); err != nil {
			r.logf("kernel-gate action: completing the check run: %s", workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
		}
	}
	appendSummary(r.o.Getenv, r.o.Log, md)
	// A refusal fails the check: the pull request's comment, when asked for on failure,
	// says why.
	refused := result.Result{Verdict: result.Fail}
	r.findPullRequest(ctx, refused)
	r.comment(ctx, refused, md)
	return exitcode.BadInputf("refusing to post stage A's result: %s", strings.Join(problems, "; "))
}

// stageBHeader heads mode report's summary: whose result it is, how its run concluded,
// and, for a fork's pull request, that it was made by untrusted code.
func (r *run) stageBHeader(b io.Writer) {
	wr := r.ev.WorkflowRun
	if r.plan.Mode != ModeReport || wr == nil {
		return
	}
	run := fmt.Sprintf("workflow run %d", wr.ID)
	if u := r.stageAURL(); u != "" {
		run = fmt.Sprintf("[%s](%s)", run, mdLinkURL(u))
	}
	fmt.Fprintf(b, "> The result of stage A's %s (%s, %s on %s), which concluded %s.\n\n",
		run, mdCode(cmp.Or(wr.Path, wr.Name)), mdCode(wr.Event), abrun.ShortRev(r.plan.HeadSHA), mdCode(cmp.Or(wr.Conclusion, "nothing")))
	if r.fromFork() {
		fmt.Fprintf(b, "> [!WARNING]\n> **Untrusted: from a fork (%s).** Stage A ran this pull request's own code on the GPU runner, and that code could have written any verdict, finding or timing below. kernel-gate checked only that the result is of this commit, of the workflow and GPU expected, and that a failed run is not shown as a pass. Judge the change itself.\n\n",
			mdCode(cmp.Or(wr.HeadRepo, "a repository GitHub no longer names")))
	}
}

// mdCode shows untrusted text as a code span: one line, no backquotes, bounded, and no
// character that could reorder or hide the text around it (escaped, repopath.Quote).
func mdCode(s string) string {
	return "`" + strings.ReplaceAll(clean(repopath.Quote(s), 200, false), "`", "'") + "`"
}

// mdLinkURL makes u safe as a markdown link's destination.
func mdLinkURL(u string) string {
	return strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E", "[", "%5B", "]", "%5D",
		"`", "%60", "\"", "%22", "\n", "", "\r", "").Replace(u)
}

// orNone quotes s, or says "none" for an empty one.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return strconv.Quote(s)
}

// findPullRequest finds the pull request to comment on when the event names none: GitHub
// lists no pull requests in a fork's workflow_run (lookupPullRequest). When none is found,
// the log says why, once.
func (r *run) findPullRequest(ctx context.Context, res result.Result) {
	if r.plan.PullRequest != 0 || r.in.Comment == "off" || r.in.Comment == "on-failure" && res.Verdict != result.Fail {
		return
	}
	// comment says nothing without a pull request: said here, as it would.
	if why := r.lookupPullRequest(ctx, r.client, cmp.Or(r.fallback, "check runs are off, and so is the API client")); why != "" {
		r.logf("kernel-gate action: no pull-request comment: %s", workflowcmd.Neutralize(why))
	}
}

// lookupPullRequest sets r.plan.PullRequest to stage A's pull request when the event names
// none: it asks c for the open pull requests whose head is the fork's branch and takes the
// one whose head commit is the run's. It returns why none was found ("" when one was, or
// the event named one); noClient is the reason when c is nil. It asks once a run.
func (r *run) lookupPullRequest(ctx context.Context, c *githubapi.Client, noClient string) string {
	if r.plan.PullRequest != 0 {
		return ""
	}
	if r.prLookup != "" {
		return r.prLookup
	}
	why := r.lookupPullRequestOnce(ctx, c, noClient)
	if why != "" && c != nil {
		r.prLookup = why // an answer of the API's (a missing client may come later)
	}
	return why
}

func (r *run) lookupPullRequestOnce(ctx context.Context, c *githubapi.Client, noClient string) string {
	wr := r.ev.WorkflowRun
	switch {
	case !strings.HasPrefix(wr.Event, "pull_request"):
		return fmt.Sprintf("stage A ran on %s, not on a pull request", orNone(wr.Event))
	case len(wr.PullRequests) > 1:
		return fmt.Sprintf("stage A's run belongs to %d pull requests, and kernel-gate does not choose one", len(wr.PullRequests))
	case wr.HeadOwner == "" || wr.HeadBranch == "":
		return "the event names no head repository or branch to find the pull request by"
	case c == nil:
		return noClient
	}
	var found []int
	opts := &github.PullRequestListOptions{State: "open", Head: wr.HeadOwner + ":" + wr.HeadBranch, ListOptions: github.ListOptions{PerPage: 100}}
	err := c.Call(ctx, "listing the pull requests of "+wr.HeadOwner, func(ctx context.Context, gh *github.Client) (*github.Response, error) {
		prs, resp, err := gh.PullRequests.List(ctx, c.Owner(), c.Repo(), opts)
		found = found[:0]
		for _, pr := range prs {
			if strings.EqualFold(pr.GetHead().GetSHA(), wr.HeadSHA) && strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), wr.HeadRepo) {
				found = append(found, pr.GetNumber())
			}
		}
		return resp, err
	})
	switch {
	case err != nil:
		return fmt.Sprintf("finding the fork's pull request (pull-requests: read): %s", msgtext.FirstLine(err.Error()))
	case len(found) == 0:
		return fmt.Sprintf("no open pull request from %s:%s has head %s (pushed again since, or closed)", wr.HeadOwner, wr.HeadBranch, abrun.ShortRev(wr.HeadSHA))
	case len(found) > 1:
		return fmt.Sprintf("%d open pull requests have head %s, and kernel-gate does not choose one", len(found), abrun.ShortRev(wr.HeadSHA))
	}
	r.plan.PullRequest = found[0]
	r.logf("kernel-gate action: stage A's pull request is #%s (found from %s:%s)", strconv.Itoa(found[0]), workflowcmd.Neutralize(wr.HeadOwner), workflowcmd.Neutralize(wr.HeadBranch))
	return ""
}
