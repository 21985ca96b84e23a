package action

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/shard"
	"github.com/kernel-gate/kernel-gate/registry"
)

// Inputs are the action's inputs (action.yml). A composite action's steps get no INPUT_*
// variables of their own: action.yml passes each through env under the name
// go-githubactions reads (INPUT_ plus the name in capitals).
type Inputs struct {
	Config      string
	Mode        string // auto | gate | report | baseline-update
	Gates       []string
	BaseRef     string
	Token       string
	FailOn      string // error | warning
	Annotations string // check-run | workflow-commands | both | none
	ResultsFile string
	CheckName   string
	Comment     string // off | on-failure | always
	// Replay judges a recording (a kernel-gate run --artifacts directory) instead of
	// running the pipeline: for trying a workflow without a GPU.
	Replay string
	// Shard gates one shard of the targets (input shard, "i/n"): a matrix job's part,
	// which kernel-gate merge joins with the others.
	Shard shard.Spec
	// BaseCache is the base cache's directory (input base-cache, pipeline.Options.BaseCache);
	// empty: off.
	BaseCache string
	// Dispatch inputs (workflow_dispatch); the event's own inputs fill them when the
	// workflow does not pass them.
	Ref            string
	UpdateBaseline bool
	Reason         string
	// TrendURL links the baseline's trend page (kernel-gate trend) from the job summary,
	// which then shows the baseline's last points; empty leaves both out.
	TrendURL string
	// Report are mode report's inputs (stageb.go).
	Report ReportInputs
	// FilterMode limits the annotations to what the change touched (filter.go); the
	// verdict and the summary always count every finding.
	FilterMode string // added | diff_context | file | nofilter
	// Format is what is written beside the result file besides it: json (nothing more) or
	// sarif (a SARIF log for code scanning, output sarif-path).
	Format string
}

// The input values.
const (
	ModeAuto           = "auto"
	ModeGate           = "gate"
	ModeReport         = "report"
	ModeBaselineUpdate = "baseline-update"

	AnnotateCheckRun = "check-run"
	AnnotateCommands = "workflow-commands"
	AnnotateBoth     = "both"
	AnnotateNone     = "none"

	FormatJSON  = "json"
	FormatSARIF = "sarif"
)

// DefaultResultsFile is where the result is written (gate) or read (report).
const DefaultResultsFile = "kernel-gate-result.json"

// ReadInputs reads the inputs through get (go-githubactions' GetInput) and checks each.
func ReadInputs(get func(string) string) (Inputs, error) {
	in := Inputs{
		Config: get("config"), Mode: or(get("mode"), ModeAuto), BaseRef: get("base-ref"),
		Token: get("github-token"), FailOn: or(get("fail-on"), "error"),
		Annotations: or(get("annotations"), AnnotateCheckRun), ResultsFile: or(get("results-file"), DefaultResultsFile),
		CheckName: strings.TrimSpace(get("check-name")), Comment: or(get("comment"), "off"), Replay: get("replay"),
		BaseCache: strings.TrimSpace(get("base-cache")),
		Ref:       get("ref"), Reason: strings.TrimSpace(get("reason")), TrendURL: strings.TrimSpace(get("trend-url")),
		FilterMode: or(get("filter-mode"), FilterFile), Format: strings.ToLower(or(get("format"), FormatJSON)),
	}
	if err := checkTrendURL(in.TrendURL); err != nil {
		return in, err
	}
	for _, g := range strings.Split(get("gates"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			in.Gates = append(in.Gates, g)
		}
	}
	var err error
	if in.Report, err = readReportInputs(get); err != nil {
		return in, err
	}
	if in.UpdateBaseline, err = parseBool("update-baseline", get("update-baseline")); err != nil {
		return in, err
	}
	if s := strings.TrimSpace(get("shard")); s != "" {
		if in.Shard, err = shard.Parse(s); err != nil {
			return in, exitcode.BadInputf("input shard: %w", err)
		}
	}
	for _, c := range []struct {
		name, value string
		allowed     []string
	}{
		{"mode", in.Mode, []string{ModeAuto, ModeGate, ModeReport, ModeBaselineUpdate}},
		{"fail-on", in.FailOn, []string{"error", "warning"}},
		{"annotations", in.Annotations, []string{AnnotateCheckRun, AnnotateCommands, AnnotateBoth, AnnotateNone}},
		{"comment", in.Comment, []string{"off", "on-failure", "always"}},
		{"filter-mode", in.FilterMode, []string{FilterAdded, FilterDiffContext, FilterFile, FilterNone}},
		{"format", in.Format, []string{FormatJSON, FormatSARIF}},
	} {
		if !slices.Contains(c.allowed, c.value) {
			return in, exitcode.BadInputf("input %s: %q is not one of %s", c.name, c.value, strings.Join(c.allowed, ", "))
		}
	}
	if err := registry.Builtin().CheckNames("input gates", in.Gates); err != nil {
		return in, exitcode.BadInput(err)
	}
	return in, nil
}

func parseBool(name, s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "false", "no", "0":
		return false, nil
	case "true", "yes", "1":
		return true, nil
	}
	return false, exitcode.BadInputf("input %s: %q is not true or false", name, s)
}

func or(s, def string) string {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return def
}

// Plan is what one invocation does, decided from the inputs and the event.
type Plan struct {
	// Mode is ModeGate, ModeReport or ModeBaselineUpdate (never auto).
	Mode string
	// HeadSHA is the commit the check run is attached to.
	HeadSHA string
	// BaseRef is what head is compared with (gate).
	BaseRef string
	// PullRequest is the pull request to comment on (0: none).
	PullRequest int
	// UpdateBaseline: after gating, the result goes to the baseline store.
	UpdateBaseline bool
	Reason         string
	// Gates limits the gates run and reported (empty: all).
	Gates []string
	// BaseMayBeGone is set when BaseRef is a push's "before", which a force-push may have
	// removed from the repository: head is then gated alone (pipeline.Options).
	BaseMayBeGone bool
}

// Decide makes the plan. headRev is the commit checked out in the workspace (git
// rev-parse HEAD), which pull_request_target must not be the pull request's.
func Decide(in Inputs, ev Event, headRev string) (Plan, error) {
	p := Plan{Mode: in.Mode, HeadSHA: or(headRev, ev.SHA), BaseRef: in.BaseRef, Gates: in.Gates,
		UpdateBaseline: in.UpdateBaseline, Reason: in.Reason}
	if ev.Inputs != nil { // workflow_dispatch: the form's values where the workflow passed none
		if len(p.Gates) == 0 {
			for _, g := range strings.Split(ev.Inputs["gates"], ",") {
				if g = strings.TrimSpace(g); g != "" {
					if err := registry.Builtin().CheckNames("workflow_dispatch input gates", []string{g}); err != nil {
						return p, exitcode.BadInput(err)
					}
					p.Gates = append(p.Gates, g)
				}
			}
		}
		if !p.UpdateBaseline {
			b, err := parseBool("update-baseline", ev.Inputs["update-baseline"])
			if err != nil {
				return p, err
			}
			p.UpdateBaseline = b
		}
		p.Reason = or(p.Reason, ev.Inputs["reason"])
	}
	if pr := ev.PullRequest; pr != nil {
		p.PullRequest = pr.Number
		if p.BaseRef == "" && pr.BaseRef != "" {
			p.BaseRef = "origin/" + pr.BaseRef
		}
	}
	if ev.Name == "pull_request_target" && ev.PullRequest != nil && headRev != "" &&
		(strings.EqualFold(headRev, ev.PullRequest.HeadSHA) || strings.EqualFold(headRev, ev.PullRequest.MergeSHA)) {
		return p, exitcode.BadInputf("refusing to run under pull_request_target: the workflow has a write token and secrets, and the checked-out commit %s is the pull request's; %s", abrun.ShortRev(headRev), prHint)
	}
	if p.Mode == ModeAuto {
		switch ev.Name {
		case "pull_request", "pull_request_target":
			p.Mode = ModeGate
			if pr := ev.PullRequest; pr != nil && (headRev == "" || isTestMerge(headRev, ev)) {
				// A pull request's checks are shown for its head commit: one attached to
				// GitHub's test merge commit (what actions/checkout checks out on
				// pull_request) would never appear on the pull request.
				p.HeadSHA = pr.HeadSHA
			}
		case "push":
			p.Mode = ModeGate
			p.UpdateBaseline = ev.DefaultBranch != "" && ev.Ref == "refs/heads/"+ev.DefaultBranch
			// The pushed commits against the tip they replaced: the merged change gets its
			// live A/B, and the stored entry gets head's own timings. A new branch has no
			// "before" and falls back to speedup.base_ref.
			if p.BaseRef == "" && isCommitSHA(ev.Before) && strings.Trim(ev.Before, "0") != "" {
				p.BaseRef, p.BaseMayBeGone = ev.Before, true
			}
		case "workflow_dispatch":
			p.Mode = ModeGate
		case "workflow_run":
			p.Mode = ModeReport
		default:
			return p, exitcode.BadInputf("kernel-gate action decides what to do on pull_request, push, workflow_dispatch and workflow_run; on %q set the input mode (gate or report)", ev.Name)
		}
	}
	if p.Mode == ModeReport {
		if ev.WorkflowRun == nil || ev.WorkflowRun.HeadSHA == "" {
			return p, exitcode.BadInputf("mode report posts the result of a workflow_run event's run, but the %s event has none", ev.Name)
		}
		p.HeadSHA = ev.WorkflowRun.HeadSHA
		if len(ev.WorkflowRun.PullRequests) == 1 {
			p.PullRequest = ev.WorkflowRun.PullRequests[0]
		}
		p.UpdateBaseline = false
	}
	if p.Mode == ModeBaselineUpdate {
		p.UpdateBaseline = true
	}
	if p.UpdateBaseline {
		switch {
		case ev.Name == "workflow_dispatch" && p.Reason == "":
			return p, exitcode.BadInputf("update-baseline on workflow_dispatch needs a reason: it is recorded with the baseline")
		case ev.Name == "push" && ev.Ref == "refs/heads/"+ev.DefaultBranch, ev.Name == "workflow_dispatch":
		default:
			if p.Mode == ModeBaselineUpdate {
				return p, exitcode.BadInputf("the baseline is written only on a push to the default branch or a workflow_dispatch with a reason, not on %s", ev.Name)
			}
			p.UpdateBaseline = false
		}
	}
	return p, nil
}

// isTestMerge reports whether headRev is GitHub's test merge commit of the event's pull
// request (refs/pull/N/merge): GITHUB_SHA on pull_request, or the payload's
// merge_commit_sha. Both are GitHub's, not the pull request author's.
func isTestMerge(headRev string, ev Event) bool {
	return ev.PullRequest != nil && (strings.EqualFold(headRev, ev.SHA) && ev.Name == "pull_request" ||
		ev.PullRequest.MergeSHA != "" && strings.EqualFold(headRev, ev.PullRequest.MergeSHA))
}

// String says the plan in one line for the log.
func (p Plan) String() string {
	s := fmt.Sprintf("mode %s, head %s", p.Mode, abrun.ShortRev(p.HeadSHA))
	if p.BaseRef != "" {
		s += ", base " + p.BaseRef
	}
	if p.PullRequest > 0 {
		s += fmt.Sprintf(", pull request #%d", p.PullRequest)
	}
	if len(p.Gates) > 0 {
		s += ", gates " + strings.Join(p.Gates, ",")
	}
	if p.UpdateBaseline {
		s += ", baseline update"
		if p.Reason != "" {
			s += fmt.Sprintf(" (reason: %q)", p.Reason)
		}
	}
	return s
}

// isCommitSHA reports whether s is a full commit hash (40 hex digits, or 64 under SHA-256).
func isCommitSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
