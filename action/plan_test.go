package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

// event reads a real payload (testdata/events, from octokit/webhooks) as the runner
// presents it.
func event(t *testing.T, name, file string, vars map[string]string) Event {
	t.Helper()
	env := map[string]string{
		"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": filepath.Join("..", "testdata", "events", file),
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "42", "GITHUB_SHA": "f00df00df00df00df00df00df00df00df00df00d",
	}
	for k, v := range vars {
		env[k] = v
	}
	ev, err := ReadEvent(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func inputs(t *testing.T, kv ...string) Inputs {
	t.Helper()
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	in, err := ReadInputs(func(k string) string { return m[k] })
	if err != nil {
		t.Fatal(err)
	}
	return in
}

const prHead = "ec26c3e57ca3a959ca5aad62de7213c562f8c821" // the payloads' pull request head

func TestDecideEveryEvent(t *testing.T) {
	tests := []struct {
		name    string
		ev      Event
		in      Inputs
		headRev string
		want    string // Plan.String()
	}{
		{"pull_request: gate head against the merge base", event(t, "pull_request", "pull_request_synchronize.json", nil), inputs(t), prHead,
			"mode gate, head ec26c3e57ca3, base origin/master, pull request #2"},
		{"pull_request: the payload's head when git is not asked", event(t, "pull_request", "pull_request_opened.json", nil), inputs(t), "",
			"mode gate, head ec26c3e57ca3, base origin/master, pull request #2"},
		{"pull_request: GitHub's test merge commit checked out reports on the head", event(t, "pull_request", "pull_request_synchronize.json", nil), inputs(t), "f00df00df00df00df00df00df00df00df00df00d",
			"mode gate, head ec26c3e57ca3, base origin/master, pull request #2"},
		{"pull_request: another commit checked out is what is reported", event(t, "pull_request", "pull_request_synchronize.json", nil), inputs(t), "abc",
			"mode gate, head abc, base origin/master, pull request #2"},
		{"push of a tag: gate, no baseline", event(t, "push", "push.json", map[string]string{"GITHUB_REF": "refs/tags/simple-tag"}), inputs(t), "abc",
			"mode gate, head abc, base 6113728f27ae82c7b1a177c8d03f9e96e0adf246"},
		{"push to the default branch: gate, then the baseline", event(t, "push", "push.json", map[string]string{"GITHUB_REF": "refs/heads/master"}), inputs(t), "abc",
			"mode gate, head abc, base 6113728f27ae82c7b1a177c8d03f9e96e0adf246, baseline update"},
		{"workflow_dispatch: rerun chosen gates", event(t, "workflow_dispatch", "workflow_dispatch.json", nil), inputs(t, "gates", "sanitizer,speedup"), "abc",
			"mode gate, head abc, gates sanitizer,speedup"},
		{"workflow_dispatch with update-baseline and a reason", event(t, "workflow_dispatch", "workflow_dispatch.json", nil), inputs(t, "update-baseline", "true", "reason", "new driver 580"), "abc",
			`mode gate, head abc, baseline update (reason: "new driver 580")`},
		{"workflow_run: report the run's result on its head", event(t, "workflow_run", "workflow_run_completed.json", map[string]string{"GITHUB_REPOSITORY": "Codertocat/Hello-World"}), inputs(t), "",
			"mode report, head 3484a3fb816e, pull request #2"},
		// The payload lists a pull request of Codertocat/Hello-World while the event is
		// octo-org/octo-repo's: its number means another pull request here.
		{"workflow_run: another repository's pull request is not commented on", event(t, "workflow_run", "workflow_run_completed.json", nil), inputs(t), "",
			"mode report, head 3484a3fb816e"},
		{"explicit gate on another event", event(t, "workflow_run", "workflow_run_completed.json", nil), inputs(t, "mode", "gate"), "abc",
			"mode gate, head abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Decide(tt.in, tt.ev, tt.headRev)
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != tt.want {
				t.Errorf("plan %q, want %q", p.String(), tt.want)
			}
		})
	}
}

func TestDecideRefuses(t *testing.T) {
	tests := []struct {
		name    string
		ev      Event
		in      Inputs
		headRev string
		want    string
	}{
		{"pull_request_target with the pull request's head checked out", event(t, "pull_request_target", "pull_request_synchronize.json", nil), inputs(t), prHead, "refusing to run"},
		{"update-baseline without a reason", event(t, "workflow_dispatch", "workflow_dispatch.json", nil), inputs(t, "update-baseline", "true"), "abc", "needs a reason"},
		{"a baseline update from a pull request", event(t, "pull_request", "pull_request_synchronize.json", nil), inputs(t, "mode", "baseline-update"), prHead, "only on a push to the default branch"},
		{"an event auto does not know", event(t, "issues", "push.json", nil), inputs(t), "abc", `on "issues" set the input mode`},
		{"report without a workflow run", event(t, "push", "push.json", nil), inputs(t, "mode", "report"), "abc", "has none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decide(tt.in, tt.ev, tt.headRev)
			if err == nil || !strings.Contains(err.Error(), tt.want) || exitcode.Of(err) != exitcode.Usage {
				t.Errorf("err %v (exit %d), want one saying %q", err, exitcode.Of(err), tt.want)
			}
		})
	}
	// GitHub's merge commit of the pull request (merge_commit_sha) is the pull request's code.
	prt := event(t, "pull_request_target", "pull_request_synchronize.json", nil)
	prt.PullRequest.MergeSHA = "0123456789abcdef0123456789abcdef01234567"
	if _, err := Decide(inputs(t), prt, prt.PullRequest.MergeSHA); err == nil || !strings.Contains(err.Error(), "refusing to run under pull_request_target") {
		t.Errorf("pull_request_target on the merge commit: %v", err)
	}
	// The dispatch form's own inputs count when the workflow passes none.
	ev := event(t, "workflow_dispatch", "workflow_dispatch.json", nil)
	ev.Inputs = map[string]string{"update-baseline": "true", "reason": "", "gates": "ptxas"}
	if _, err := Decide(inputs(t), ev, "abc"); err == nil || !strings.Contains(err.Error(), "needs a reason") {
		t.Errorf("the form's update-baseline without a reason: %v", err)
	}
}

func TestReadInputsRejectsWhatItDoesNotKnow(t *testing.T) {
	for _, kv := range [][2]string{{"mode", "yolo"}, {"fail-on", "notice"}, {"annotations", "all"}, {"comment", "sometimes"}, {"gates", "ptxas,nope"}, {"update-baseline", "maybe"}, {"shard", "0/2"}, {"shard", "3"}, {"filter-mode", "changed"}} {
		_, err := ReadInputs(func(k string) string {
			if k == kv[0] {
				return kv[1]
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("%s=%s: %v", kv[0], kv[1], err)
		}
	}
}

func TestReadEvent(t *testing.T) {
	ev := event(t, "workflow_run", "workflow_run_completed.json", map[string]string{"GITHUB_REPOSITORY": "octo-org/octo-repo"})
	if ev.RunURL != "https://github.com/octo-org/octo-repo/actions/runs/42" || ev.WorkflowRun.Conclusion != "success" {
		t.Errorf("%+v %+v", ev, ev.WorkflowRun)
	}
	pr := event(t, "pull_request", "pull_request_synchronize.json", map[string]string{"GITHUB_REPOSITORY": "someone/Hello-World"}).PullRequest
	if !pr.Fork("someone/Hello-World") || pr.Fork("Codertocat/Hello-World") {
		t.Errorf("fork: %+v", pr)
	}
	for _, env := range []map[string]string{
		{},
		{"GITHUB_EVENT_NAME": "push"},
		{"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": "/nonexistent.json"},
	} {
		if _, err := ReadEvent(func(k string) string { return env[k] }); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%v: %v", env, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "e.json")
	os.WriteFile(bad, []byte("{not json"), 0o644)
	if _, err := ReadEvent(func(k string) string {
		return map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": bad}[k]
	}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a broken payload: %v", err)
	}
}

// A push compares with the tip it replaced; a new branch's push (before is all zeros) and a
// base-ref input keep their own base.
func TestPushBase(t *testing.T) {
	ev := event(t, "push", "push.json", map[string]string{"GITHUB_REF": "refs/heads/master"})
	for _, tc := range []struct {
		before, input, want string
	}{
		{"6113728f27ae82c7b1a177c8d03f9e96e0adf246", "", "6113728f27ae82c7b1a177c8d03f9e96e0adf246"},
		{"0000000000000000000000000000000000000000", "", ""},
		{"not-a-sha", "", ""},
		{"6113728f27ae82c7b1a177c8d03f9e96e0adf246", "origin/release", "origin/release"},
	} {
		ev.Before = tc.before
		in := inputs(t)
		if tc.input != "" {
			in = inputs(t, "base-ref", tc.input)
		}
		p, err := Decide(in, ev, "abc")
		if err != nil || p.BaseRef != tc.want {
			t.Errorf("before %q, base-ref %q: base %q (err %v), want %q", tc.before, tc.input, p.BaseRef, err, tc.want)
		}
	}
}
