package action

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	github "github.com/google/go-github/v60/github"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The real workflow_run payloads' run (testdata/events/workflow_run_completed.json and the
// fork's, derived from it): its head commit and its page.
const (
	stageAHead = "3484a3fb816e0859fd6e1cea078d76385ff50625"
	stageAURL  = "https://github.com/octo-org/octo-repo/actions/runs/289782451"
	stageARepo = "octo-org/octo-repo"
	stageAFile = ".github/workflows/kernel-gate-pr.yml"
)

// stageAPayload writes a copy of testdata/events/file with the fields set names changed
// (dotted paths into the payload: "workflow_run.conclusion"; a nil value is JSON null).
// Unchanged, the same-repository payload is stage A's run of kernel-gate-pr.yml on a pull
// request; the tests change one thing at a time.
func stageAPayload(t *testing.T, file string, set map[string]any) string {
	t.Helper()
	if file == "workflow_run_completed.json" {
		// octokit's example is a repository_dispatch run of test.yml: make it stage A's.
		set = mergeMaps(map[string]any{"workflow_run.event": "pull_request", "workflow_run.path": stageAFile,
			"workflow_run.name": "kernel-gate pull request"}, set)
	}
	return editedPayload(t, file, func(p map[string]any) {
		for path, v := range set {
			keys := strings.Split(path, ".")
			m := p
			for _, k := range keys[:len(keys)-1] {
				next, ok := m[k].(map[string]any)
				if !ok {
					t.Fatalf("%s: no object %s in the payload", path, k)
				}
				m = next
			}
			m[keys[len(keys)-1]] = v
		}
	})
}

func mergeMaps(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// stageBEnv is stage B's step (kernel-gate-report.yml) on the payload: its inputs name
// stage A's workflow file, the check run and the GPU (an empty value in inputs removes
// one), and the result to read is res.
func stageBEnv(t *testing.T, api *fakegithub.Server, payload string, res *result.Result, inputs map[string]string) map[string]string {
	t.Helper()
	env, _ := actionEnv(t, api, nil)
	env["GITHUB_EVENT_NAME"], env["GITHUB_EVENT_PATH"], env["GITHUB_REPOSITORY"] = "workflow_run", payload, stageARepo
	env["INPUT_WORKFLOW"], env["INPUT_CHECK-NAME"], env["INPUT_EXPECT-GPU"] = stageAFile, "kernel-gate (L4)", "NVIDIA L4"
	for k, v := range inputs {
		env["INPUT_"+strings.ToUpper(k)] = v
	}
	if res != nil {
		if err := writeResult(env["INPUT_RESULTS-FILE"], *res); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// stageAResult is what stage A's gate job writes for the payloads' run: every gate passed
// on an L4, for the head commit, on pull_request.
func stageAResult(verdict result.Verdict) result.Result {
	g := result.Gate{Name: "correctness", Findings: []result.Finding{{Severity: result.Notice, Message: "max_err 1e-6"}}}
	if verdict == result.Fail {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Error, File: "kernels/flash_fwd.cu", Line: 12, Message: "max_err 0.5"})
	}
	g.Decide(true)
	r := result.New("kernel-gate test", g)
	r.Device = &result.Device{Name: "NVIDIA L4", Arch: "sm_89", Driver: "580.65.06"}
	r.Trigger = &result.Trigger{Event: "pull_request", Ref: "refs/pull/2/merge", SHA: stageAHead}
	return r
}

// oneCheckRun is the only check run the fake holds.
func oneCheckRun(t *testing.T, api *fakegithub.Server, log string) fakegithub.CheckRun {
	t.Helper()
	runs := api.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1: %+v\n%s", len(runs), runs, log)
	}
	return runs[0]
}

// A consistent result of a successful stage A is posted as it says, under the name the
// inputs give, on workflow_run.head_sha, its "Details" and its artifacts link leading to
// stage A's run (where the logs and artifacts are), not to stage B's own; a failed result
// of a failed run is posted as the failure it is.
func TestStageBPostsAConsistentResult(t *testing.T) {
	for _, tc := range []struct {
		name, conclusion string
		verdict          result.Verdict
		code             int
		want             string
	}{
		{"pass of a successful run", "success", result.Pass, 0, "success"},
		{"failure of a failed run", "failure", result.Fail, 1, "failure"},
		{"failure of a timed-out run", "timed_out", result.Fail, 1, "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			res := stageAResult(tc.verdict)
			env := stageBEnv(t, api, stageAPayload(t, "workflow_run_completed.json", map[string]any{"workflow_run.conclusion": tc.conclusion}), &res, nil)
			code, log, err := runAction(t, env, api)
			if err != nil || code != tc.code {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			cr := oneCheckRun(t, api, log)
			if cr.Conclusion != tc.want || cr.Name != "kernel-gate (L4)" || cr.HeadSHA != stageAHead {
				t.Errorf("check run %s %q on %s, want %s \"kernel-gate (L4)\" on %s", cr.Conclusion, cr.Name, cr.HeadSHA, tc.want, stageAHead)
			}
			if cr.DetailsURL != stageAURL {
				t.Errorf("details_url %q, want stage A's run %s", cr.DetailsURL, stageAURL)
			}
			sum, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
			for _, md := range []string{cr.Summary, string(sum)} {
				if !strings.Contains(md, "[artifacts]("+stageAURL+")") || !strings.Contains(md, "concluded `"+tc.conclusion+"`") {
					t.Errorf("the summary does not link stage A's artifacts or name its conclusion:\n%.1500s", md)
				}
				if strings.Contains(md, "actions/runs/7") || strings.Contains(md, "Untrusted") {
					t.Errorf("the summary links stage B's run or calls a same-repository run untrusted:\n%.1500s", md)
				}
			}
			if strings.Contains(cr.Title, "untrusted") {
				t.Errorf("title %q", cr.Title)
			}
		})
	}
}

// Every way a result can disagree with the event that says which run it is of is refused:
// exit 2, and one check run, concluded failure (never success), under the inputs' name,
// whose summary says why, naming what the event says and what the result says. On the
// code before stage B cross-checked, each of these was posted as the result said: a
// success (or a check named after the result's GPU).
func TestStageBRefuses(t *testing.T) {
	other := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name   string
		set    map[string]any // the payload's changes
		res    func(*result.Result)
		inputs map[string]string
		want   []string // in the check run's summary
	}{
		{"forged pass, stage A failed", map[string]any{"workflow_run.conclusion": "failure"}, nil, nil,
			[]string{"concluded failure: a step failed", "never posted as pass"}},
		{"forged pass, stage A timed out", map[string]any{"workflow_run.conclusion": "timed_out"}, nil, nil,
			[]string{"concluded timed_out"}},
		{"forged pass, stage A cancelled", map[string]any{"workflow_run.conclusion": "cancelled"}, nil, nil,
			[]string{"concluded cancelled: it was cancelled"}},
		{"stage A waits for approval", map[string]any{"workflow_run.conclusion": "action_required"}, nil, nil,
			[]string{"concluded action_required", "approval"}},
		{"stage A skipped", map[string]any{"workflow_run.conclusion": "skipped"}, nil, nil, []string{"concluded skipped"}},
		{"stage A neutral", map[string]any{"workflow_run.conclusion": "neutral"}, nil, nil, []string{"concluded neutral"}},
		{"stage A stale", map[string]any{"workflow_run.conclusion": "stale"}, nil, nil, []string{"concluded stale"}},
		{"stage A has no conclusion", map[string]any{"workflow_run.conclusion": nil}, nil, nil, []string{"has no conclusion"}},
		{"stage A still running", map[string]any{"workflow_run.conclusion": nil, "workflow_run.status": "in_progress"}, nil, nil,
			[]string{`is "in_progress", not completed`}},
		{"a skip of a failed run", map[string]any{"workflow_run.conclusion": "failure"},
			func(r *result.Result) { r.Gates[0].Verdict, r.Verdict = result.Skip, result.Skip }, nil, []string{"never posted as skip"}},
		{"another commit", map[string]any{"workflow_run.event": "push"},
			func(r *result.Result) { r.Trigger.Event, r.Trigger.SHA = "push", other }, nil,
			[]string{"commit (trigger.sha) is " + other + ", not workflow_run.head_sha " + stageAHead}},
		{"another commit on a pull request, unknown to GitHub", nil, func(r *result.Result) { r.Trigger.SHA = other }, nil,
			[]string{other, "not workflow_run.head_sha " + stageAHead, "test merge commit could not be asked"}},
		{"no commit", nil, func(r *result.Result) { r.Trigger = nil }, nil, []string{"names no commit", stageAHead}},
		{"a commit that is no SHA", nil, func(r *result.Result) { r.Trigger.SHA = "../../pulls" }, nil, []string{`"../../pulls" is not a commit SHA`}},
		{"a shard of another commit", nil, func(r *result.Result) { r.Shard = &result.Shard{Index: 1, Count: 1, Commit: other} }, nil,
			[]string{"shard commit (shard.commit) is " + other}},
		{"one shard of several", nil, func(r *result.Result) { r.Shard = &result.Shard{Index: 2, Count: 4, Commit: stageAHead} }, nil,
			[]string{"shard 2/4 of its run"}},
		{"another event", nil, func(r *result.Result) { r.Trigger.Event = "push" }, nil, []string{`gated on a "push" event`}},
		{"another workflow's run", map[string]any{"workflow_run.path": ".github/workflows/evil.yml"}, nil, nil,
			[]string{`workflow "kernel-gate pull request" (".github/workflows/evil.yml"), not of .github/workflows/kernel-gate-pr.yml`}},
		// A file name may hold '@': only a ref after it ("@refs/heads/main") is not the file's.
		{"another workflow file, named stage A's file and '@'", map[string]any{"workflow_run.path": stageAFile + "@evil.yml"}, nil, nil,
			[]string{`(".github/workflows/kernel-gate-pr.yml@evil.yml"), not of .github/workflows/kernel-gate-pr.yml`}},
		{"no workflow named", nil, nil, map[string]string{"workflow": ""}, []string{"input workflow is not set"}},
		{"another GPU", nil, func(r *result.Result) { r.Device = &result.Device{Name: "NVIDIA H100", Arch: "sm_90"} }, nil,
			[]string{`comes from "NVIDIA H100" ("sm_90"), not from the GPU the input expect-gpu names, "NVIDIA L4"`}},
		{"another arch", nil, func(r *result.Result) { r.Device.Arch = "sm_90" }, map[string]string{"expect-gpu": "NVIDIA L4, sm_89"},
			[]string{"expect-gpu names"}},
		{"no GPU", nil, func(r *result.Result) { r.Device = nil }, nil, []string{"names no GPU"}},
		{"no result file", nil, nil, nil, []string{"did the gate job upload it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			res := stageAResult(result.Pass)
			if tc.res != nil {
				tc.res(&res)
			}
			env := stageBEnv(t, api, stageAPayload(t, "workflow_run_completed.json", tc.set), &res, tc.inputs)
			if tc.name == "no result file" {
				os.Remove(env["INPUT_RESULTS-FILE"])
			}
			code, log, err := runAction(t, env, api)
			if code != exitcode.Usage || err == nil {
				t.Fatalf("exit %d, err %v, want a refusal (exit 2)\n%s", code, err, log)
			}
			cr := oneCheckRun(t, api, log)
			if cr.Conclusion != "failure" || cr.Status != "completed" || cr.Name != "kernel-gate (L4)" || cr.HeadSHA != stageAHead {
				t.Errorf("check run %s/%s %q on %s, want a completed failure \"kernel-gate (L4)\" on the head", cr.Status, cr.Conclusion, cr.Name, cr.HeadSHA)
			}
			if !strings.Contains(cr.Title, "refused") {
				t.Errorf("title %q", cr.Title)
			}
			sum, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
			for _, w := range tc.want {
				if !strings.Contains(cr.Summary, w) || !strings.Contains(string(sum), w) || !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal does not say %q:\ncheck run: %s\njob summary: %s\nerror: %v", w, cr.Summary, sum, err)
				}
			}
			if strings.Contains(log, "::error") || !strings.Contains(log, "kernel-gate action: refused: ") {
				t.Errorf("log:\n%s", log)
			}
		})
	}
}

// The check run's name is the inputs', or the fixed default: a result from another GPU,
// whatever its device field says, never names the check (which could be another required
// check's name). Before, a result naming "NVIDIA H100" posted "kernel-gate (H100, sm_90)".
func TestStageBCheckNameIsTheInputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs map[string]string
		want   string
	}{
		{"check-name", map[string]string{"expect-gpu": "", "check-name": "GPU gate / L4"}, "GPU gate / L4"},
		{"default", map[string]string{"expect-gpu": "", "check-name": ""}, DefaultReportCheckName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			res := stageAResult(result.Pass)
			res.Device = &result.Device{Name: "NVIDIA H100 80GB HBM3", Arch: "sm_90"}
			res.Shard = &result.Shard{Index: 1, Count: 1, Commit: stageAHead}
			env := stageBEnv(t, api, stageAPayload(t, "workflow_run_completed.json", nil), &res, tc.inputs)
			code, log, err := runAction(t, env, api)
			if err != nil || code != 0 {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			if cr := oneCheckRun(t, api, log); cr.Name != tc.want || cr.Conclusion != "success" {
				t.Errorf("check run %q %s, want %q success", cr.Name, cr.Conclusion, tc.want)
			}
		})
	}
}

// makeCommit creates a commit in the fake's repository with the given parents.
func makeCommit(t *testing.T, api *fakegithub.Server, msg string, parents ...string) string {
	t.Helper()
	ctx := context.Background()
	gh, err := github.NewClient(api.Client()).WithAuthToken(api.Token()).WithEnterpriseURLs(api.URL(), api.URL())
	if err != nil {
		t.Fatal(err)
	}
	owner, repo, _ := strings.Cut(stageARepo, "/")
	tree, _, err := gh.Git.CreateTree(ctx, owner, repo, "", []*github.TreeEntry{{Path: github.String("f"), Mode: github.String("100644"),
		Type: github.String("blob"), Content: github.String(msg)}})
	if err != nil {
		t.Fatal(err)
	}
	var ps []*github.Commit
	for _, p := range parents {
		ps = append(ps, &github.Commit{SHA: github.String(p)})
	}
	c, _, err := gh.Git.CreateCommit(ctx, owner, repo, &github.Commit{Message: github.String(msg), Tree: tree, Parents: ps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.GetSHA()
}

// On a pull request stage A's checkout is GitHub's test merge commit (refs/pull/N/merge),
// whose second parent is the head: a result of it is the head's, as GitHub's API says.
// A commit that merges something else is refused, naming its parents.
func TestStageBTestMergeCommit(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	base := makeCommit(t, api, "base")
	head := makeCommit(t, api, "head", base)
	merge := makeCommit(t, api, "merge", base, head)
	elsewhere := makeCommit(t, api, "merge of another head", base, makeCommit(t, api, "other", base))
	for _, tc := range []struct {
		name, sha string
		code      int
		want      string
	}{
		{"the test merge", merge, 0, "success"},
		{"another merge", elsewhere, exitcode.Usage, "failure"},
		{"the base", base, exitcode.Usage, "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(api.CheckRuns())
			res := stageAResult(result.Pass)
			res.Trigger.SHA = tc.sha
			env := stageBEnv(t, api, stageAPayload(t, "workflow_run_completed.json", map[string]any{"workflow_run.head_sha": head}), &res, nil)
			code, log, err := runAction(t, env, api)
			if code != tc.code {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			runs := api.CheckRuns()[before:]
			if len(runs) != 1 || runs[0].Conclusion != tc.want || runs[0].HeadSHA != head {
				t.Fatalf("check runs %+v", runs)
			}
			if tc.code != 0 && !strings.Contains(runs[0].Summary, "nor a merge commit of it (its parents: ") {
				t.Errorf("summary: %s", runs[0].Summary)
			}
		})
	}
}

// A fork's pull request (decided from the event: workflow_run.head_repository is not the
// repository) is labelled as untrusted code in the check run's title and summary, the
// job summary and the comment, whatever the result says; the comment goes to the pull
// request found through the API (GitHub lists none in a fork's workflow_run), the one from
// the fork's branch whose head is the run's. Without one, the log says why, once.
func TestStageBForkPullRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pulls []fakegithub.PullRequest
		want  int    // the pull request commented on; 0: none
		why   string // the log's reason when none
	}{
		{"found", []fakegithub.PullRequest{
			{Number: 5, Repo: stageARepo, HeadRef: "kernel-tweak", HeadSHA: "1111111111111111111111111111111111111111", HeadRepo: "Codertocat/octo-repo"},
			{Number: 6, Repo: stageARepo, HeadRef: "kernel-tweak", HeadSHA: stageAHead, HeadRepo: "someone/octo-repo"},
			{Number: 7, Repo: stageARepo, HeadRef: "kernel-tweak", HeadSHA: stageAHead, HeadRepo: "Codertocat/octo-repo"},
			{Number: 8, Repo: stageARepo, HeadRef: "kernel-tweak", HeadSHA: stageAHead, HeadRepo: "Codertocat/octo-repo", State: "closed"},
		}, 7, ""},
		{"pushed again since", []fakegithub.PullRequest{
			{Number: 7, Repo: stageARepo, HeadRef: "kernel-tweak", HeadSHA: "2222222222222222222222222222222222222222", HeadRepo: "Codertocat/octo-repo"},
		}, 0, "no open pull request from Codertocat:kernel-tweak has head 3484a3fb816e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			for _, p := range tc.pulls {
				api.AddPullRequest(p)
			}
			res := stageAResult(result.Pass)
			env := stageBEnv(t, api, filepath.Join(repoRoot, "testdata", "events", "workflow_run_fork.json"), &res, map[string]string{"comment": "always"})
			code, log, err := runAction(t, env, api)
			if err != nil || code != 0 {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			cr := oneCheckRun(t, api, log)
			sum, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
			if !strings.HasPrefix(cr.Title, "untrusted (fork's code): ") || cr.DetailsURL != stageAURL {
				t.Errorf("title %q, details %q", cr.Title, cr.DetailsURL)
			}
			for _, md := range []string{cr.Summary, string(sum)} {
				if !strings.Contains(md, "**Untrusted: from a fork (`Codertocat/octo-repo`).**") {
					t.Errorf("not labelled as a fork's:\n%.1500s", md)
				}
			}
			for n := 5; n <= 8; n++ {
				c := api.Comments(stageARepo, n)
				if n == tc.want && (len(c) != 1 || !strings.Contains(c[0].Body, "Untrusted: from a fork")) || n != tc.want && len(c) != 0 {
					t.Errorf("pull request #%d: %d comments %+v (want one on #%d)", n, len(c), c, tc.want)
				}
			}
			if n := strings.Count(log, "no pull-request comment"); tc.want == 0 && (n != 1 || !strings.Contains(log, tc.why)) || tc.want != 0 && n != 0 {
				t.Errorf("the log says %d times why there is no comment (want %q):\n%s", n, tc.why, log)
			}
		})
	}
}

// Without a token (or with check runs off) there is no API client: the log says once why
// there is no comment.
func TestStageBNoCommentSaidOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		token  bool
		inputs map[string]string
		why    string
	}{
		{"no token", false, map[string]string{"comment": "always"}, "no github-token was given"},
		{"check runs off", true, map[string]string{"comment": "always", "annotations": "workflow-commands"}, "check runs are off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			res := stageAResult(result.Pass)
			env := stageBEnv(t, api, filepath.Join(repoRoot, "testdata", "events", "workflow_run_fork.json"), &res, tc.inputs)
			if !tc.token {
				delete(env, "INPUT_GITHUB-TOKEN")
			}
			code, log, err := runAction(t, env, api)
			if err != nil || code != 0 {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			if n := strings.Count(log, "no pull-request comment"); n != 1 || !strings.Contains(log, tc.why) {
				t.Errorf("said %d times why there is no comment, want once (%q):\n%s", n, tc.why, log)
			}
		})
	}
}

// A refusal fails the check, so comment: on-failure says why on the pull request (a fork's,
// found through the API).
func TestStageBRefusalIsCommented(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	api.AddPullRequest(fakegithub.PullRequest{Number: 7, Repo: stageARepo, HeadRef: "kernel-tweak", HeadSHA: stageAHead, HeadRepo: "Codertocat/octo-repo"})
	res := stageAResult(result.Pass)
	env := stageBEnv(t, api, stageAPayload(t, "workflow_run_fork.json", map[string]any{"workflow_run.conclusion": "cancelled"}), &res,
		map[string]string{"comment": "on-failure"})
	code, log, _ := runAction(t, env, api)
	if code != exitcode.Usage {
		t.Fatalf("exit %d\n%s", code, log)
	}
	if c := api.Comments(stageARepo, 7); len(c) != 1 || !strings.Contains(c[0].Body, "refused to post stage A's result") || !strings.Contains(c[0].Body, "concluded cancelled") {
		t.Errorf("comments %+v\n%s", c, log)
	}
}

// A fork's refused result is labelled too; a run whose head repository GitHub no longer
// names (a deleted fork) is taken for a fork's.
func TestStageBForkRefusalAndDeletedFork(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]any
		code int
	}{
		{"refused", map[string]any{"workflow_run.conclusion": "failure"}, exitcode.Usage},
		{"deleted fork", map[string]any{"workflow_run.head_repository": nil}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			res := stageAResult(result.Pass)
			env := stageBEnv(t, api, stageAPayload(t, "workflow_run_fork.json", tc.set), &res, nil)
			code, log, _ := runAction(t, env, api)
			if code != tc.code {
				t.Fatalf("exit %d\n%s", code, log)
			}
			if cr := oneCheckRun(t, api, log); !strings.HasPrefix(cr.Title, "untrusted (fork's code): ") || !strings.Contains(cr.Summary, "Untrusted: from a fork") {
				t.Errorf("title %q summary %.600s", cr.Title, cr.Summary)
			}
		})
	}
}

func TestReadReportInputs(t *testing.T) {
	for _, tc := range []struct {
		workflow, gpu string
		ok            bool
	}{
		{".github/workflows/kernel-gate-pr.yml, kernel-gate GPU matrix", "NVIDIA L4, sm_89", true},
		{"./.github/workflows/a.yaml\n.github/workflows/b.yml", "sm_90a", true},
		{".github/workflows/", "", false},
		{"", "NVIDIA L4, NVIDIA H100", false},
		{"", "sm_89, sm_90", false},
	} {
		in, err := readReportInputs(func(k string) string { return map[string]string{"workflow": tc.workflow, "expect-gpu": tc.gpu}[k] })
		if (err == nil) != tc.ok || err != nil && exitcode.Of(err) != exitcode.Usage {
			t.Errorf("workflow %q, expect-gpu %q: %+v, %v", tc.workflow, tc.gpu, in, err)
		}
	}
	ev := event(t, "workflow_run", "workflow_run_fork.json", map[string]string{"GITHUB_REPOSITORY": stageARepo})
	wr := ev.WorkflowRun
	if wr.Path != stageAFile || wr.HTMLURL != stageAURL || wr.HeadRepo != "Codertocat/octo-repo" || wr.HeadOwner != "Codertocat" ||
		wr.Status != "completed" || !wr.Fork(ev.Repository) || len(wr.PullRequests) != 0 {
		t.Errorf("%+v", wr)
	}
	// octokit's own payload leaves workflow_run.name empty: the top-level workflow's is used.
	if wr := event(t, "workflow_run", "workflow_run_completed.json", nil).WorkflowRun; wr.Name != "test" || wr.Fork(stageARepo) {
		t.Errorf("%+v", wr)
	}
}

// logCommands lists the lines of a step's log that the runner would take for a workflow
// command: a line (split at LF and CR, as the runner splits) that starts with "::" after
// white space, or that holds the legacy "##[" anywhere. kernel-gate's own "::add-mask::"
// for the token is left out.
func logCommands(log string) []string {
	var out []string
	for _, line := range strings.FieldsFunc(log, func(r rune) bool { return r == '\n' || r == '\r' }) {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "::") && !strings.HasPrefix(l, "::add-mask::") || strings.Contains(l, "##[") {
			out = append(out, l)
		}
	}
	return out
}

// What stage B says in its log about the result file it read (a gate's table or data cut
// to the limits) names the gate, whose name the pull request's code wrote: a name holding
// the legacy "##[" command form, which the runner finds anywhere in a line, reached the
// log as it was ("##[error]" an annotation, "##[stop-commands]" silencing every later
// command of the step, "##[set-output]" an output).
func TestStageBNotesRelayNoCommand(t *testing.T) {
	for _, name := range []string{"##[error]spoofed", "x ##[stop-commands]tok", "##[set-output name=verdict;]pass"} {
		t.Run(name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			res := stageAResult(result.Pass)
			rows := make([]result.Row, maxTableRows+1)
			for i := range rows {
				rows[i] = result.Row{Status: result.Pass, Cells: []string{"k"}}
			}
			res.Gates[0].Name = name
			res.Gates[0].Table = &result.Table{Columns: []string{"kernel"}, Rows: rows}
			env := stageBEnv(t, api, stageAPayload(t, "workflow_run_completed.json", nil), &res, nil)
			code, log, err := runAction(t, env, api)
			if err != nil || code != 0 {
				t.Fatalf("exit %d, err %v\n%.2000s", code, err, log)
			}
			if !strings.Contains(log, "its table is cut to") {
				t.Fatalf("the log does not note the cut table:\n%.2000s", log)
			}
			if cmds := logCommands(log); len(cmds) > 0 {
				t.Errorf("untrusted text reached the log as a workflow command: %q", cmds)
			}
		})
	}
}

// When GitHub refuses the check run, the comment's "no pull-request comment" line says
// why in GitHub's own words: an answer holding a CR or the legacy "##[" form reached the
// log as it was.
func TestNoCommentReasonRelaysNoCommand(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	api.Inject(fakegithub.Fault{Method: "POST", Path: "/check-runs", Status: 403, Headers: map[string]string{"Content-Type": "application/json"},
		Body: `{"message":"no\r::add-mask::fail ##[error]spoofed"}`})
	res := stageAResult(result.Fail)
	pr := map[string]any{"number": 2, "base": map[string]any{"repo": map[string]any{"url": "https://api.github.com/repos/" + stageARepo}}}
	env := stageBEnv(t, api, stageAPayload(t, "workflow_run_completed.json", map[string]any{"workflow_run.conclusion": "failure",
		"workflow_run.pull_requests": []any{pr}}), &res, map[string]string{"comment": "always"})
	code, log, _ := runAction(t, env, api)
	if code != 1 || !strings.Contains(log, "no pull-request comment") {
		t.Fatalf("exit %d\n%s", code, log)
	}
	// The findings go to workflow commands instead of the check run: those are kernel-gate's.
	for _, c := range logCommands(log) {
		if strings.Contains(c, "spoofed") || strings.Contains(c, "add-mask::fail") {
			t.Errorf("the API's answer reached the log as a workflow command: %q", c)
		}
	}
}

// workflowProblem matches the run's workflow file exactly: a ref the path carries is not
// part of it, but nothing else is cut or folded.
func TestWorkflowProblem(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{stageAFile, true},
		{stageAFile + "@refs/heads/main", true},
		{stageAFile + "@refs/pull/7/merge", true},
		{stageAFile + "@evil.yml", false},
		{stageAFile + "@refs", false},
		{".github/workflows/Kernel-gate-pr.yml", false},
		{"./" + stageAFile, false},
		{stageAFile + " ", false},
		{"", false},
	} {
		got := workflowProblem([]string{stageAFile}, WorkflowRun{ID: 1, Name: "kernel-gate pull request", Path: tc.path})
		if (got == "") != tc.ok {
			t.Errorf("path %q: problem %q, want accepted %v", tc.path, got, tc.ok)
		}
	}
}

// A fork's result is labelled as its own code's word wherever it is shown: its findings'
// annotations too, which GitHub shows on the pull request's lines as kernel-gate's. The
// check run's title and summary said so; each annotation, titled "kernel-gate GATE:
// KERNEL", did not, and could say anything on any line of the change.
func TestStageBForkAnnotationsAreLabelled(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		untrusted     bool
	}{
		{"fork", "workflow_run_fork.json", true},
		{"same repository", "workflow_run_completed.json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			res := stageAResult(result.Pass)
			res.Gates[0].Findings = append(res.Gates[0].Findings, result.Finding{Severity: result.Warning, Kernel: "flash_fwd",
				File: "kernels/flash_fwd.cu", Line: 3, Message: "reviewed and approved by the maintainers"})
			env := stageBEnv(t, api, stageAPayload(t, tc.payload, nil), &res, map[string]string{"annotations": "both"})
			code, log, err := runAction(t, env, api)
			if err != nil || code != 0 {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			cr := oneCheckRun(t, api, log)
			if len(cr.Annotations) != 1 {
				t.Fatalf("annotations %+v", cr.Annotations)
			}
			var commands []string
			for _, l := range strings.Split(log, "\n") {
				if strings.HasPrefix(l, "::warning ") {
					commands = append(commands, l)
				}
			}
			if len(commands) != 1 {
				t.Fatalf("workflow-command annotations %q\n%s", commands, log)
			}
			labelled := strings.HasPrefix(cr.Annotations[0].Title, "untrusted (fork's code): kernel-gate correctness") &&
				strings.Contains(commands[0], "title=untrusted (fork's code)%3A kernel-gate correctness")
			plain := strings.HasPrefix(cr.Annotations[0].Title, "kernel-gate correctness") && strings.Contains(commands[0], "title=kernel-gate correctness")
			if tc.untrusted && !labelled || !tc.untrusted && !plain {
				t.Errorf("check-run annotation titled %q, workflow command %q", cr.Annotations[0].Title, commands[0])
			}
		})
	}
}

// Stage B's summary heads with stage A's workflow file, which a pull request can add with
// any name: a bidirectional control in it (U+202E) reordered the words around it in the
// check run, the job summary and the comment, so that the file named is not the file
// read. It is shown escaped, as every posted path is.
func TestStageBHeaderShowsNoBidi(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	res := stageAResult(result.Pass)
	path := ".github/workflows/\u202elmy.rp-etag-lenrek.yml"
	env := stageBEnv(t, api, stageAPayload(t, "workflow_run_completed.json", map[string]any{"workflow_run.path": path}), &res, nil)
	code, log, _ := runAction(t, env, api)
	if code != exitcode.Usage {
		t.Fatalf("exit %d, want the other workflow refused\n%s", code, log)
	}
	cr := oneCheckRun(t, api, log)
	sum, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	for _, md := range []string{cr.Summary, string(sum)} {
		if strings.ContainsRune(md, '\u202e') || !strings.Contains(md, `\u202elmy.rp-etag-lenrek.yml`) {
			t.Errorf("the workflow's path is not shown escaped:\n%s", md)
		}
	}
}

// filter-mode in stage B: the check run (posted here, not in stage A) annotates what the
// pull request touched, read from GitHub's list of its files and their patches, for a
// fork's pull request too; the verdict is the whole result's in every mode. A pull request
// pushed again since stage A (its files are another commit's) annotates every finding.
func TestStageBFilterMode(t *testing.T) {
	patch := "@@ -8,6 +8,7 @@ __global__ void k()\n a\n b\n c\n+d\n e\n f\n g"
	pr := fakegithub.PullRequest{Number: 7, Repo: stageARepo, HeadRef: "kernel-tweak", HeadSHA: stageAHead, HeadRepo: "Codertocat/octo-repo",
		Files: []fakegithub.PullFile{{Filename: "kernels/a.cu", Patch: patch}, {Filename: "kernels/big.bin"}}}
	for _, tc := range []struct {
		mode, head string
		want       []string // annotated path:line
	}{
		{"added", stageAHead, []string{"kernels/a.cu:11", "kernels/big.bin:5"}},
		{"diff_context", stageAHead, []string{"kernels/a.cu:11", "kernels/a.cu:13", "kernels/big.bin:5"}},
		{"file", stageAHead, []string{"kernels/a.cu:11", "kernels/a.cu:13", "kernels/a.cu:40", "kernels/big.bin:5"}},
		{"nofilter", stageAHead, []string{"kernels/a.cu:11", "kernels/a.cu:13", "kernels/a.cu:40", "kernels/b.cu:3", "kernels/big.bin:5"}},
		{"added", "2222222222222222222222222222222222222222", []string{"kernels/a.cu:11", "kernels/a.cu:13", "kernels/a.cu:40", "kernels/b.cu:3", "kernels/big.bin:5"}},
	} {
		t.Run(tc.mode+" "+tc.head[:4], func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			p := pr
			api.AddPullRequest(p)
			res := stageAResult(result.Fail)
			g := &res.Gates[0]
			g.Findings = []result.Finding{
				{Severity: result.Error, File: "kernels/a.cu", Line: 11, Message: "on the added line"},
				{Severity: result.Warning, File: "kernels/a.cu", Line: 13, Message: "in the hunk's context"},
				{Severity: result.Error, File: "kernels/a.cu", Line: 40, Message: "elsewhere in a touched file"},
				{Severity: result.Error, File: "kernels/b.cu", Line: 3, Message: "in an untouched file"},
				{Severity: result.Warning, File: "kernels/big.bin", Line: 5, Message: "in a file without a patch"},
			}
			g.Decide(true)
			res.Verdict = result.Overall(res.Gates)
			payload := stageAPayload(t, "workflow_run_fork.json", map[string]any{"workflow_run.conclusion": "failure"})
			env := stageBEnv(t, api, payload, &res, map[string]string{"filter-mode": tc.mode})
			if tc.head != stageAHead {
				api.SetPullRequestHead(stageARepo, 7, tc.head)
			}
			code, log, err := runAction(t, env, api)
			if err != nil || code != 1 {
				t.Fatalf("exit %d, err %v: the verdict is the whole result's in every mode\n%s", code, err, log)
			}
			cr := oneCheckRun(t, api, log)
			var got []string
			for _, a := range cr.Annotations {
				got = append(got, a.Path+":"+strconv.Itoa(a.StartLine))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("annotated %q, want %q\n%s", got, tc.want, log)
			}
			if cr.Conclusion != "failure" {
				t.Errorf("conclusion %s", cr.Conclusion)
			}
			if tc.head != stageAHead && !strings.Contains(log, "pushed again since") {
				t.Errorf("the log does not say why every finding is annotated:\n%s", log)
			}
		})
	}
}
