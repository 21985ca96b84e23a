package acttest

// Issue 20, tried again end to end: each attack on the GitHub path, under act against the
// fake API, as a workflow would meet it. None may give a success check run or a token.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/envdumptest"
	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shard"
)

// stageBWorkflow is kernel-gate-report.yml's step as the tests run it: stage A's result
// read from the repository (act has no artifacts to download), the inputs that say which
// result may be posted, then steps.
func stageBWorkflow(checkName, steps string) string {
	return `name: e2e
on:
  workflow_run:
    workflows: [kernel-gate pull request]
    types: [completed]
permissions:
  checks: write
  contents: read
jobs:
  report:
    runs-on: self-hosted
    steps:
` + checkoutStep + `      - id: kg
        uses: ./
        with:
          mode: report
          results-file: stage-a/kernel-gate-result.json
          workflow: .github/workflows/kernel-gate-pr.yml
          check-name: ` + checkName + `
          expect-gpu: NVIDIA L4
` + steps + showOutputs
}

// forkHead is workflow_run.head_sha of testdata/events/workflow_run_fork.json.
const forkHead = "3484a3fb816e0859fd6e1cea078d76385ff50625"

// forkRepo is the base repository of workflow_run_fork.json.
const forkRepo = "octo-org/octo-repo"

// forkEvent is testdata/events/workflow_run_fork.json, a fork's stage A run that
// concluded conclusion, as JSON.
func forkEvent(t *testing.T, root, conclusion string) string {
	t.Helper()
	return editedEvent(t, root, filepath.Join("testdata", "events", "workflow_run_fork.json"), func(payload map[string]any) {
		payload["workflow_run"].(map[string]any)["conclusion"] = conclusion
	})
}

// genuineResult is what stage A's kernel-gate action writes for the fork's run: every gate
// passed, on an L4, for the pull_request event of workflow_run.head_sha.
func genuineResult() result.Result {
	g := result.Gate{Name: "correctness", Findings: []result.Finding{{Severity: result.Notice, Message: "max_err 0.001"}}}
	g.Decide(true)
	r := result.New("kernel-gate test", g)
	r.Device = &result.Device{Name: "NVIDIA L4", Arch: "sm_89", Driver: "570.86.15"}
	r.Trigger = &result.Trigger{Event: "pull_request", SHA: forkHead}
	return r
}

// fakeCommit makes a commit in the fake API's repo with the given parents (each one a
// commit it holds) and returns its SHA.
func fakeCommit(t *testing.T, api *fakegithub.Server, repo, message string, parents ...string) string {
	t.Helper()
	post := func(path string, body any) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, err := http.NewRequest(http.MethodPost, api.URL()+"repos/"+repo+"/git/"+path, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+api.Token())
		resp, err := api.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST git/%s: %s\n%s", path, resp.Status, out)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	tree := post("trees", map[string]any{"tree": []map[string]any{{"path": "README.md", "mode": "100644", "type": "blob", "content": message}}})
	c := post("commits", map[string]any{"message": message, "tree": tree["sha"], "parents": parents})
	sha, _ := c["sha"].(string)
	if sha == "" {
		t.Fatalf("the fake's commit has no sha: %v", c)
	}
	return sha
}

// Stage B (kernel-gate-report.yml's step, mode report, on a fork's workflow_run) given what
// a fork's stage A can upload: every result that does not match the event is refused, exit
// 2, with one failure check run under the input check-name, on workflow_run.head_sha; the
// genuine result passes under the same name, which shows that each refusal is the
// cross-check's and not the setup's. The shard case also tries to store the shard as the
// baseline with `kernel-gate baseline update` in a later step: refused, and nothing is
// written to the fake's git store.
func TestActStageBAttacks(t *testing.T) {
	t.Parallel()
	root := needsAction(t)
	// Not a name the result's device could give ("kernel-gate (NVIDIA L4, sm_89)"), so a
	// check run under it was named by the input.
	const checkName = "required / L4"
	const storeShard = `      - name: Store the shard as the baseline
        if: always()
        env:
          GITHUB_TOKEN: ${{ github.token }}
        run: '"$RUNNER_TEMP/kernel-gate" baseline update --store git stage-a/kernel-gate-result.json'
`
	for _, tc := range []struct {
		name       string
		conclusion string // workflow_run.conclusion
		// forge changes the genuine result; sha is a commit of the fake API whose parents
		// are not workflow_run.head_sha.
		forge     func(r *result.Result, sha string)
		steps     string
		wantExit  int
		wantCheck string // the check run's conclusion
		wantLog   []string
	}{
		{name: "the genuine result", conclusion: "success", forge: func(*result.Result, string) {},
			wantExit: 0, wantCheck: "success", wantLog: []string{"kernel-gate action: workflow_run event: "}},
		{name: "a pass of another commit", conclusion: "success",
			forge:    func(r *result.Result, sha string) { r.Trigger.SHA = sha },
			wantExit: 2, wantCheck: "failure",
			wantLog: []string{"refused: the result's commit (trigger.sha) is ", "not workflow_run.head_sha " + forkHead + " nor a merge commit of it (its parents: "}},
		{name: "a forged pass of a failed stage A", conclusion: "failure", forge: func(*result.Result, string) {},
			wantExit: 2, wantCheck: "failure",
			wantLog: []string{"refused: stage A's run 289782451 concluded failure: a step failed; its result says pass, but a run that did not succeed is never posted as pass"}},
		{name: "a forged pass of a timed-out stage A", conclusion: "timed_out", forge: func(*result.Result, string) {},
			wantExit: 2, wantCheck: "failure",
			wantLog: []string{"refused: stage A's run 289782451 concluded timed_out: a job ran out of its timeout-minutes; its result says pass"}},
		{name: "a pass renamed to another GPU's check", conclusion: "success",
			forge: func(r *result.Result, _ string) {
				r.Device = &result.Device{Name: "NVIDIA H100 80GB HBM3", Arch: "sm_90", Driver: "570.86.15"}
			},
			wantExit: 2, wantCheck: "failure",
			wantLog: []string{`refused: the result comes from "NVIDIA H100 80GB HBM3" ("sm_90"), not from the GPU the input expect-gpu names, "NVIDIA L4"`}},
		{name: "a shard", conclusion: "success",
			forge: func(r *result.Result, _ string) {
				all := []string{"attention", "gemm", "softmax"}
				r.Shard = &result.Shard{Index: 2, Count: 4, Targets: shard.Spec{Index: 2, Count: 4}.Select(all), AllTargets: all, Commit: forkHead}
			},
			steps: storeShard, wantExit: 2, wantCheck: "failure",
			wantLog: []string{"refused: the result is shard 2/4 of its run", "the result is not a whole run: it is shard 2/4 of its run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := fakegithub.New()
			defer api.Close()
			// A merge of two commits, neither the pull request's head: what a forger who
			// knows that a test merge commit is accepted by its parents would name.
			p1 := fakeCommit(t, api, forkRepo, "base")
			p2 := fakeCommit(t, api, forkRepo, "another head", p1)
			other := fakeCommit(t, api, forkRepo, "merge of another head", p1, p2)
			res := genuineResult()
			tc.forge(&res, other)
			var resJSON bytes.Buffer
			if err := result.Write(&resJSON, res); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, stageBWorkflow(checkName, tc.steps),
				map[string]string{"stage-a/kernel-gate-result.json": resJSON.String(), "stage-a/event.json": forkEvent(t, root, tc.conclusion)})
			setup := len(api.Requests()) // the commits made above
			r := h.runEvent(t, "workflow_run", filepath.Join(h.repo, "stage-a", "event.json"), forkRepo, api.URL(), api.Token())
			if c := stepExit(r.log, "Run kernel-gate"); c != tc.wantExit {
				t.Errorf("Run kernel-gate: exit %d, want %d", c, tc.wantExit)
			}
			runs := api.CheckRuns()
			for _, cr := range runs {
				if cr.Conclusion == "success" && tc.wantCheck != "success" {
					t.Errorf("a success check run %q on %s: %s", cr.Name, cr.HeadSHA, cr.Title)
				}
			}
			if len(runs) != 1 {
				t.Fatalf("%d check runs, want 1: %+v", len(runs), runs)
			}
			cr := runs[0]
			if cr.Status != "completed" || cr.Conclusion != tc.wantCheck || cr.Name != checkName || cr.HeadSHA != forkHead {
				t.Errorf("check run %q %s %s on %s; want %q completed %s on %s", cr.Name, cr.Status, cr.Conclusion, cr.HeadSHA, checkName, tc.wantCheck, forkHead)
			}
			if !strings.HasPrefix(cr.Title, "untrusted (fork's code): ") {
				t.Errorf("the fork's check run is not labelled untrusted: %q", cr.Title)
			}
			if tc.wantExit != 0 && !strings.Contains(cr.Summary, "kernel-gate refused to post stage A's result") {
				t.Errorf("the check run's summary does not say it was refused:\n%s", cr.Summary)
			}
			// kernel-gate says a refusal twice in the job's log: on its own line ("kernel-gate
			// action: refused: REASON") and in the job summary act prints ("- REASON"). act
			// v0.2.89 drops a failed step's last output lines now and then when the machine is
			// loaded (its host mode returns on a failed process before its terminal's output
			// is read), so either one shows the refusal; the reason must be in the log.
			for _, w := range tc.wantLog {
				reason, refusal := strings.CutPrefix(w, "refused: ")
				if refusal && !strings.Contains(r.log, w) && strings.Contains(r.log, "- "+reason) {
					continue
				}
				mustContain(t, r.log, w)
			}
			if tc.wantExit != 0 && !strings.Contains(r.log, "kernel-gate action: refused: ") && !strings.Contains(r.log, "kernel-gate refused to post stage A's result") {
				t.Error("the log says no refusal")
			}
			if tc.steps == storeShard {
				if c := stepExit(r.log, "Store the shard as the baseline"); c != 2 {
					t.Errorf("kernel-gate baseline update of a shard: exit %d, want 2", c)
				}
				if sha, ok := api.Ref(forkRepo, "heads/kernel-gate-baseline"); ok {
					t.Errorf("the shard was stored: the baseline branch is at %s", sha)
				}
			}
			for _, q := range api.Requests()[setup:] {
				if strings.Contains(q.APIPath, "/git/") && q.Method != http.MethodGet {
					t.Errorf("stage B wrote to the git store: %s %s", q.Method, q.Path)
				}
			}
		})
	}
}

// The token stays with kernel-gate, under act: a pull request's gate job (mode gate, a
// live run: base and head built and checked with the fake toolchain of
// testdata/fakegpu first on PATH) with every credential a job may hold in its
// environment: github.token as the input github-token (and so INPUT_GITHUB-TOKEN) and as
// the job's GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN and ACTIONS_ID_TOKEN_REQUEST_*. nvcc,
// cuobjdump, nvidia-smi, compute-sanitizer and the harness (the pull request's code)
// write down their environments: none holds a token, by name or by value. A step before
// the action writes its own, which shows that the job's steps held them all. The token
// reached the fake API (the check run), and act's log never shows it.
func TestActGateLeaksNoToken(t *testing.T) {
	t.Parallel()
	root := needsAction(t)
	api := fakegithub.New()
	defer api.Close()
	token := "ghs_kgacttest_github_token_5b1e7c"
	api.SetToken(token)
	runtime := map[string]string{
		"ACTIONS_RUNTIME_TOKEN":          "kgacttest-runtime-token-2f8d",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "kgacttest-oidc-request-token-a61c",
		"ACTIONS_ID_TOKEN_REQUEST_URL":   "https://pipelines.example/kgacttest-oidc-url-0d37",
	}
	h := newHarness(t, `name: e2e
on: pull_request
permissions:
  contents: read
  checks: write
jobs:
  gate:
    runs-on: self-hosted
    env:
      GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
    steps:
`+checkoutStep+`      - name: What the job's steps hold
        run: env > "$KG_STEP_ENV"
      - id: kg
        uses: ./
        with:
          mode: gate
          base-ref: HEAD~1
          results-file: kg-result.json
`+showOutputs, map[string]string{"kernels/harness.cpp": "// the pull request's change\n"})
	dumps, stepEnv := filepath.Join(h.tmp, "dumps"), filepath.Join(h.tmp, "step.env")
	if err := os.Mkdir(dumps, 0o755); err != nil {
		t.Fatal(err)
	}
	h.env = []string{"PATH=" + filepath.Join(root, "testdata", "fakegpu") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"FAKE_ENV_DUMP=" + dumps, "KG_STEP_ENV=" + stepEnv, "KG_TOKEN_TEST_CANARY=the-canary-is-seen"}
	for k, v := range runtime {
		h.actEnv = append(h.actEnv, k+"="+v)
	}
	r := h.run(t, api.URL(), token)
	if c := stepExit(r.log, "Run kernel-gate"); c != 0 {
		t.Errorf("Run kernel-gate: exit %d, want 0 (the fake toolchain's run passes)", c)
	}
	secrets := map[string]string{"GITHUB_TOKEN": token, "INPUT_GITHUB-TOKEN": token}
	for k, v := range runtime {
		secrets[k] = v
	}
	raw, err := os.ReadFile(stepEnv)
	if err != nil {
		t.Fatalf("the job's step wrote no environment: %v", err)
	}
	for name, value := range secrets {
		if name != "INPUT_GITHUB-TOKEN" && !strings.Contains(string(raw), name+"="+value+"\n") {
			t.Errorf("the job's steps do not hold %s: the test proves nothing about it", name)
		}
	}
	mustContain(t, r.log, fmt.Sprintf("INPUT_GITHUB-TOKEN: %d characters", len(token))) // and so kernel-gate's environment
	envdumptest.Check(t, dumps, "KG_TOKEN_TEST_CANARY=the-canary-is-seen", secrets,
		func(name string) bool { return strings.HasPrefix(name, "ACTIONS_ID_TOKEN_REQUEST_") },
		"nvcc", "nvidia-smi", "cuobjdump", "harness")
	for name, value := range secrets {
		if strings.Contains(r.log, value) {
			t.Errorf("act's log shows the value of %s", name)
		}
	}
	runs := api.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1 (the token reaches the API): %+v", len(runs), runs)
	}
	for _, q := range api.Requests() {
		if q.Status == http.StatusUnauthorized {
			t.Errorf("%s %s went to the API without the token", q.Method, q.Path)
		}
	}
}

// pull_request_target with the pull request's merge ref checked out: the workspace's HEAD
// is a merge of the base and the pull request's head (what refs/pull/N/merge is), which
// neither GITHUB_SHA (the base, as act and GitHub set it on pull_request_target) nor the
// payload's head.sha names, nor its merge_commit_sha (null in this synchronize payload). The recording replayed passes, so a gate
// that ran would post a success. kernel-gate action refuses from what is checked out (its
// parents), exit 2, before any API call: no check run, nothing written or read with the
// token.
func TestActPullRequestTargetMergeRef(t *testing.T) {
	t.Parallel()
	root := needsAction(t)
	api := fakegithub.New()
	defer api.Close()
	h := newHarness(t, `name: e2e
on: pull_request_target
permissions:
  contents: read
  checks: write
jobs:
  gate:
    runs-on: self-hosted
    steps:
`+checkoutStep+`      - id: kg
        uses: ./
        with:
          replay: testdata/replay/clean
          results-file: kg-result.json
`+showOutputs)
	base := h.git.Git("rev-parse", "HEAD")
	h.git.Git("checkout", "-q", "-b", "pr")
	h.git.Write(map[string]string{"kernels/harness.cpp": "// the pull request's code\n"})
	prHead := h.git.Commit("the pull request")
	h.git.Git("checkout", "-q", "main")
	h.git.Git("merge", "-q", "--no-ff", "-m", "Merge "+prHead+" into "+base, "pr")
	merge := h.git.Git("rev-parse", "HEAD")

	raw := editedEvent(t, root, eventFile, func(payload map[string]any) {
		pr := payload["pull_request"].(map[string]any)
		pr["head"].(map[string]any)["sha"] = prHead
		pr["base"].(map[string]any)["sha"] = base
		if m, _ := pr["merge_commit_sha"].(string); m == merge {
			t.Fatalf("the payload's merge_commit_sha %q: the test wants one that does not name the merge", m)
		}
	})
	event := filepath.Join(h.tmp, "pull_request_target.json") // outside the checkout: it stays clean
	writeFile(t, event, raw)

	r := h.runEvent(t, "pull_request_target", event, eventRepo, api.URL(), api.Token())
	if c := stepExit(r.log, "Run kernel-gate"); c != 2 {
		t.Errorf("Run kernel-gate: exit %d, want 2 (refused)", c)
	}
	if runs := api.CheckRuns(); len(runs) != 0 {
		t.Errorf("%d check runs, want none: %+v", len(runs), runs)
	}
	for _, q := range api.Requests() { // not even a read: the token is not used at all
		t.Errorf("an API call under a refused pull_request_target: %s %s", q.Method, q.Path)
	}
	// In the job summary as well as on the step's last line, which act v0.2.89 may drop
	// when the step fails (it returns on a failed process before its terminal's output is
	// read; CI saw it once): the summary, which act prints after the step, says it whole.
	mustContain(t, r.log, "refusing to run under pull_request_target: the workflow has a write token and secrets",
		fmt.Sprintf("the checked-out commit %s is not the one the event runs on (GITHUB_SHA %s): it is a merge of the pull request #", merge[:12], base[:12]),
		fmt.Sprintf("'s head %s (refs/pull/N/merge)", prHead[:12]))
	if got := outputs(r.log); got["verdict"] == "pass" {
		t.Errorf("outputs %v: a refused run set verdict pass", got)
	}
}
