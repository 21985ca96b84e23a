package action

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
)

// runWithLimits is runAction with the API's limits shortened (a test must not wait
// githubapi.DefaultBudget).
func runWithLimits(t *testing.T, env map[string]string, api *fakegithub.Server, requestTimeout, budget time.Duration) (int, string, error) {
	t.Helper()
	var log bytes.Buffer
	o := Options{Getenv: func(k string) string { return env[k] }, Log: &log, Tool: "kernel-gate test",
		Sleep:      func(context.Context, time.Duration) error { return nil },
		HTTPClient: api.Client(), APIRequestTimeout: requestTimeout, APIBudget: budget}
	code, err := Run(context.Background(), o)
	return code, log.String(), err
}

// A GitHub that never answers, or answers 500 to everything, ends the reporting within
// the run's API budget and changes nothing of the verdict: the exit code is the gates',
// the log says the check run could not be posted, and the findings go to workflow
// commands, the job summary and the outputs instead.
func TestUnreachableAPIKeepsTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		name   string
		replay string
		fault  fakegithub.Fault
		code   int
		said   string
	}{
		{"never answers, a failing run", "race", fakegithub.Fault{Hang: true, Times: 100000}, 1,
			"no check run (githubapi: creating the check run: no answer from GitHub within"},
		{"never answers, a passing run", "clean", fakegithub.Fault{Hang: true, Times: 100000}, 0,
			"no check run (githubapi: creating the check run: no answer from GitHub within"},
		{"500 to everything, a failing run", "race", fakegithub.Fault{Status: 500, Times: 100000}, 1,
			"no check run (githubapi: creating the check run: 500 Internal Server Error (gave up after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			api.Inject(tc.fault)
			env, _ := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", tc.replay), "comment": "always"})
			code, log, err := runWithLimits(t, env, api, 50*time.Millisecond, time.Second)
			if err != nil || code != tc.code {
				t.Fatalf("exit %d, err %v, want the verdict's %d\n%s", code, err, tc.code, log)
			}
			if !strings.Contains(log, tc.said) || !strings.Contains(log, "the findings go to workflow-command annotations and the job summary") {
				t.Errorf("the log does not say the check run could not be posted (%q):\n%s", tc.said, log)
			}
			if tc.code == 1 && !strings.Contains(log, "::error ") {
				t.Errorf("no workflow-command annotations:\n%s", log)
			}
			out, _ := os.ReadFile(env["GITHUB_OUTPUT"])
			verdict := map[int]string{0: "\npass\n", 1: "\nfail\n"}[tc.code]
			if !strings.Contains(string(out), "verdict<<") || !strings.Contains(string(out), verdict) {
				t.Errorf("outputs:\n%s", out)
			}
			if sum, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"]); len(sum) == 0 {
				t.Error("no job summary")
			}
			if len(api.CheckRuns()) != 0 || len(api.Comments("Codertocat/Hello-World", 2)) != 0 {
				t.Error("something was posted")
			}
		})
	}
}

// Through the action: a comment by the pull request's author that carries kernel-gate's
// marker and a forged pass is never edited; kernel-gate makes its own, by the token's
// identity (the check run's app: github-actions[bot]), and edits that one the next time.
func TestStickyCommentIsOnlyEverTheTokens(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	const pr, repo = 2, "Codertocat/Hello-World"
	forged := githubapi.MarkerTag("summary") + "\n## kernel-gate: pass\nAll gates passed."
	planted := api.AddComment(repo, pr, "Codertocat", forged)
	env, _ := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "race"), "comment": "always"})
	for run := 1; run <= 2; run++ {
		code, log, err := runAction(t, env, api)
		if err != nil || code != 1 {
			t.Fatalf("run %d: exit %d, err %v\n%s", run, code, err, log)
		}
		if !strings.Contains(log, "is by \"Codertocat\", not by the token's \"github-actions[bot]\"") {
			t.Errorf("run %d: the log does not name the comment left alone:\n%s", run, log)
		}
	}
	if c, _ := api.Comment(planted); c.Edits != 0 || c.Body != forged {
		t.Fatalf("the planted comment was edited: %+v", c)
	}
	comments := api.Comments(repo, pr)
	if len(comments) != 2 {
		t.Fatalf("%d comments, want the planted one and kernel-gate's", len(comments))
	}
	ours := comments[1]
	if ours.User != fakegithub.BotLogin || ours.Edits != 0 && ours.Edits != 1 || !strings.Contains(ours.Body, "sanitizer") {
		t.Fatalf("kernel-gate's comment %+v", ours)
	}
}

// A check-run progress update that fails is the last one (one that got no answer may have
// spent much of the run's API budget, which is kept for completing the check run with the
// verdict; a refused one is not retried): the completion still happens.
func TestProgressStopsAfterAFailedUpdate(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	api.Inject(fakegithub.Fault{Method: "PATCH", Path: "/check-runs/", Status: 422, Times: 1})
	env, _ := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "race")})
	code, log, err := runWithLimits(t, env, api, 50*time.Millisecond, time.Minute)
	if err != nil || code != 1 {
		t.Fatalf("exit %d, err %v, want 1\n%s", code, err, log)
	}
	patches := 0
	for _, r := range api.Requests() {
		if r.Method == "PATCH" && strings.Contains(r.APIPath, "/check-runs/") {
			patches++
		}
	}
	if patches != 2 {
		t.Errorf("%d check-run updates, want 2 (the progress update that failed, then the completion)\n%s", patches, log)
	}
	runs := api.CheckRuns()
	if len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "failure" {
		t.Errorf("check runs %+v, want one completed failure", runs)
	}
	if !strings.Contains(log, "no more progress updates") {
		t.Errorf("the log does not say progress stopped:\n%s", log)
	}
}
