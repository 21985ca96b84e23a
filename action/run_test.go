package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// repoRoot is this repository: the workspace the action gates (its kernels are the sources
// the recorded run built).
var repoRoot, _ = filepath.Abs(filepath.Join(".."))

// actionEnv is a runner's environment for one `kernel-gate action` step on a pull request,
// with the fake API as GITHUB_API_URL; inputs are INPUT_* as action.yml passes them.
func actionEnv(t *testing.T, api *fakegithub.Server, inputs map[string]string) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_EVENT_PATH": filepath.Join(repoRoot, "testdata", "events", "pull_request_synchronize.json"),
		"GITHUB_REPOSITORY": "Codertocat/Hello-World", "GITHUB_WORKSPACE": repoRoot,
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "7",
		"GITHUB_OUTPUT": filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
		"INPUT_CONFIG": filepath.Join(repoRoot, "kernel-gate.yml"), "INPUT_BASE-REF": "HEAD",
		"INPUT_RESULTS-FILE": filepath.Join(dir, "result.json"),
	}
	if api != nil {
		env["GITHUB_API_URL"], env["INPUT_GITHUB-TOKEN"] = api.URL(), api.Token()
	}
	for k, v := range inputs {
		env["INPUT_"+strings.ToUpper(k)] = v
	}
	return env, dir
}

func runAction(t *testing.T, env map[string]string, api *fakegithub.Server) (int, string, error) {
	t.Helper()
	var log bytes.Buffer
	o := Options{Getenv: func(k string) string { return env[k] }, Log: &log, Tool: "kernel-gate test",
		Sleep: func(context.Context, time.Duration) error { return nil }}
	if api != nil {
		o.HTTPClient = api.Client()
	}
	code, err := Run(context.Background(), o)
	return code, log.String(), err
}

// located are the findings of a result that sit on a source line of the repository.
func located(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range res.Gates {
		for _, x := range g.Findings {
			if x.File != "" && x.Line > 0 {
				out = append(out, fmt.Sprintf("%s:%d %s", x.File, x.Line, x.Severity))
			}
		}
	}
	return out
}

// The recorded race, gated on a pull request: one check run, concluded failure, on the
// commit checked out, named after the recording's GPU, with every finding that has a source
// line annotated on it; outputs and the job summary written; exit 1.
func TestRaceReplayPostsOneFailingCheckRun(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	env, dir := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "race")})
	code, log, err := runAction(t, env, api)
	if err != nil || code != 1 {
		t.Fatalf("exit %d, err %v\n%s", code, err, log)
	}
	runs := api.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1", len(runs))
	}
	cr := runs[0]
	if cr.Conclusion != "failure" || cr.Status != "completed" || cr.Name != "kernel-gate (H200, sm_90)" || cr.DetailsURL != "https://github.com/Codertocat/Hello-World/actions/runs/7" {
		t.Errorf("check run %+v", cr)
	}
	head, err := os.ReadFile(filepath.Join(repoRoot, ".git", "HEAD"))
	if err == nil && len(cr.HeadSHA) != 40 {
		t.Errorf("head sha %q (.git/HEAD %s)", cr.HeadSHA, head)
	}
	if !strings.Contains(cr.Title, "sanitizer") || !strings.Contains(cr.Summary, "sanitizer") {
		t.Errorf("title %q", cr.Title)
	}
	var got []string
	for _, a := range cr.Annotations {
		lvl := map[string]string{"failure": "error", "warning": "warning", "notice": "notice"}[a.AnnotationLevel]
		got = append(got, fmt.Sprintf("%s:%d %s", a.Path, a.StartLine, lvl))
	}
	want := located(t, filepath.Join(dir, "result.json"))
	if len(want) == 0 || !sameSet(got, want) {
		t.Errorf("annotations %q, want every located finding %q", got, want)
	}
	if !strings.Contains(strings.Join(got, " "), "kernels/flash_fwd.cu:190 error") {
		t.Errorf("the race is not annotated on its line: %q", got)
	}
	out, _ := os.ReadFile(env["GITHUB_OUTPUT"])
	for _, w := range []string{"verdict<<", "\nfail\n", "check-run-id<<", fmt.Sprintf("\n%d\n", cr.ID), "regressions<<", "summary-path<<"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("outputs lack %q:\n%s", w, out)
		}
	}
	if sum, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"]); !strings.Contains(string(sum), "sanitizer") {
		t.Errorf("job summary: %.300s", sum)
	}
	if strings.Count(log, api.Token()) != 1 || !strings.Contains(log, "::add-mask::"+api.Token()+"\n") {
		t.Errorf("the token reached the log beyond its ::add-mask::\n%s", log)
	}
}

// GitHub refusing the check run (403: a pull request's read-only token) changes neither the
// verdict nor the exit code: the findings become workflow-command annotations, worst first.
func TestForbiddenFallsBackToWorkflowCommands(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	api.FailNext(10, 403, nil)
	env, _ := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "race")})
	code, log, err := runAction(t, env, api)
	if err != nil || code != 1 {
		t.Fatalf("exit %d, err %v\n%s", code, err, log)
	}
	if n := len(api.CheckRuns()); n != 0 {
		t.Errorf("%d check runs", n)
	}
	for _, w := range []string{"no check run (", "403", "::error file=kernels/flash_fwd.cu,line=190"} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	if strings.Index(log, "::error ") > strings.Index(log, "::notice ") && strings.Contains(log, "::notice ") {
		t.Error("errors come first")
	}
}

// A clean recording passes: success, exit 0; with the guard alone no GPU is needed.
func TestCleanReplayAndGuardAlone(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	env, _ := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "clean")})
	if code, log, err := runAction(t, env, api); err != nil || code != 0 {
		t.Fatalf("clean: exit %d, err %v\n%s", code, err, log)
	}
	if runs := api.CheckRuns(); len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Errorf("clean: %+v", runs)
	}
	env, dir := actionEnv(t, nil, map[string]string{"gates": "guard", "annotations": "workflow-commands"})
	code, log, err := runAction(t, env, nil)
	if err != nil || code != 0 {
		t.Fatalf("guard: exit %d, err %v\n%s", code, err, log)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	if !strings.Contains(string(raw), `"name": "guard"`) || strings.Contains(string(raw), `"name": "ptxas"`) {
		t.Errorf("guard alone: %.400s", raw)
	}
}

// The reporting half of the two-stage design: a hostile result file made by the pull
// request's job (kernel names with newlines and workflow commands, huge messages, 100,000
// findings) is posted against workflow_run.head_sha without any of it reaching a workflow
// command, and a verdict the file says is fail stays fail.
func TestReportModeWithHostileResult(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	env, _ := actionEnv(t, api, nil)
	env["GITHUB_EVENT_NAME"] = "workflow_run"
	env["GITHUB_EVENT_PATH"] = filepath.Join(repoRoot, "testdata", "events", "workflow_run_completed.json")
	env["INPUT_COMMENT"], env["INPUT_WORKFLOW"] = "on-failure", ".github/workflows/test.yml"
	hostile := "flash\n::add-mask::x\n::error file=evil::owned ##[error]boom"
	var findings []result.Finding
	for i := range 100_000 {
		findings = append(findings, result.Finding{Severity: result.Error, Kernel: hostile, File: "kernels/flash_fwd.cu", Line: i%300 + 1,
			Message: strings.Repeat("m", 1<<20*(i/99_999)) + "\n::set-output name=verdict::pass"})
	}
	g := result.Gate{Name: "sanitizer\n::warning::x", Verdict: result.Fail, Findings: findings}
	res := result.New("kernel-gate", g)
	res.Trigger = &result.Trigger{Event: "repository_dispatch", SHA: "3484a3fb816e0859fd6e1cea078d76385ff50625"}
	f, _ := os.Create(env["INPUT_RESULTS-FILE"])
	result.Write(f, res)
	f.Close()
	code, log, err := runAction(t, env, api)
	if err != nil || code != 1 {
		t.Fatalf("exit %d, err %v\n%.2000s", code, err, log)
	}
	runs := api.CheckRuns()
	if len(runs) != 1 || runs[0].HeadSHA != "3484a3fb816e0859fd6e1cea078d76385ff50625" || runs[0].Conclusion != "failure" {
		t.Fatalf("check runs %+v", runs)
	}
	if n := len(runs[0].Annotations); n != MaxCheckAnnotations {
		t.Errorf("%d annotations, want the cap %d", n, MaxCheckAnnotations)
	}
	if !strings.Contains(runs[0].Summary, "more findings with a source line are not annotated") {
		t.Errorf("the summary does not say annotations were capped: %.300s", runs[0].Summary)
	}
	for _, line := range strings.Split(log, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "::") && !strings.HasPrefix(l, "::add-mask::") || strings.Contains(l, "##[") {
			t.Errorf("an untrusted line reached the log as a command: %q", l)
		}
	}
	if c := api.Comments("Codertocat/Hello-World", 2); len(c) != 1 {
		t.Errorf("comments %d, want one on the failing run's pull request", len(c))
	}
}

func sameSet(a, b []string) bool {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// workflow_dispatch with update-baseline and a reason reruns the chosen gates on the
// checked-out ref, records the reason in the result and stores an entry on the baseline
// branch; push to the default branch does the same without a reason.
func TestDispatchAndPushRecordTheirTrigger(t *testing.T) {
	for _, tc := range []struct {
		event, payload, ref, reason string
	}{
		{"workflow_dispatch", "workflow_dispatch.json", "refs/heads/master", "driver 580 on the L4 runner"},
		{"push", "push.json", "refs/heads/master", ""},
	} {
		api := fakegithub.New()
		defer api.Close()
		env, dir := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "clean"),
			"gates": "ptxas,sass", "annotations": "none"})
		env["GITHUB_EVENT_NAME"], env["GITHUB_REF"] = tc.event, tc.ref
		env["GITHUB_EVENT_PATH"] = filepath.Join(repoRoot, "testdata", "events", tc.payload)
		if tc.reason != "" {
			env["INPUT_UPDATE-BASELINE"], env["INPUT_REASON"] = "true", tc.reason
		}
		code, log, err := runAction(t, env, api)
		if err != nil || code != 0 {
			t.Fatalf("%s: exit %d, err %v\n%s", tc.event, code, err, log)
		}
		f, _ := os.Open(filepath.Join(dir, "result.json"))
		res, err := result.Read(f)
		f.Close()
		if err != nil || res.Trigger == nil || res.Trigger.Event != tc.event || res.Trigger.Reason != tc.reason || len(res.Gates) != 2 {
			t.Errorf("%s: trigger %+v, %d gates, err %v", tc.event, res.Trigger, len(res.Gates), err)
		}
		if !strings.Contains(log, "baseline stored on branch kernel-gate-baseline") {
			t.Errorf("%s: the log does not say the baseline was stored:\n%s", tc.event, log)
		}
		store, err := baseline.NewGit(context.Background(), baseline.GitOptions{Options: githubapi.Options{APIURL: api.URL(),
			Token: api.Token(), Repository: "Codertocat/Hello-World", HTTPClient: api.Client()}})
		if err != nil {
			t.Fatal(err)
		}
		keys, err := store.Keys(context.Background())
		if err != nil || len(keys) != 1 {
			t.Fatalf("%s: keys %v, err %v", tc.event, keys, err)
		}
		e, ok, err := store.Latest(context.Background(), keys[0])
		if err != nil || !ok || e.Fingerprint.GPU != "NVIDIA H200" || e.Commit == "" || (e.Trigger != nil && e.Trigger.Reason != tc.reason) {
			t.Errorf("%s: stored %+v %v %v", tc.event, e.Fingerprint, ok, err)
		}
		// The head's timings come from the run's artifacts (here the recording's bench files).
		timed := 0
		for _, tm := range e.Timings {
			if tm.MedianUs != nil && len(tm.RoundMediansUs) > 0 {
				timed++
			}
		}
		if timed == 0 {
			t.Errorf("%s: the stored entry has no timings: %+v", tc.event, e.Timings)
		}
	}
}

// noBaseRecording copies a recorded run as if it had had no base build (base-ref: none).
func noBaseRecording(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "testdata", "replay", name))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "journal.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	delete(j, "base_rev")
	j["base_ref"], j["no_base"] = "", "--base none"
	raw, _ = json.Marshal(j)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A pull request with no base build reads the git store's branch, read only, through the
// API: the stored spill run's registers make the clean head's growth a failure, and the
// ptxas gate says which entry it judged against; under a constraint the entry does not
// meet, it is reported as incomparable and not used.
func TestPullRequestReadsTheStoredBaseline(t *testing.T) {
	ctx := context.Background()
	rec := noBaseRecording(t, "clean")
	f, err := os.Open(filepath.Join(repoRoot, "testdata", "replay", "spill", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	spillRes, err := result.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	spill, err := baseline.EntryFromResult(spillRes, "5b111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	cfgRaw, err := os.ReadFile(filepath.Join(repoRoot, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, section string
		code          int
		conclusion    string
		want          []string
	}{
		{"comparable", "baseline:\n  branch: kg-base\n  compatible_cuda: \"~13.0\"\n", 1, "failure",
			[]string{"registers grew by 121 (32 → 153)", "against the stored baseline NVIDIA H200 (sm_90) at 5b111aaaaaaa"}},
		{"incomparable", "baseline:\n  branch: kg-base\n  compatible_cuda: \"~12.8\"\n", 0, "success",
			[]string{"none of the 1 stored entries of NVIDIA H200 (sm_90) is comparable", "outside baseline.compatible_cuda \"~12.8\""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			store, err := baseline.NewGit(ctx, baseline.GitOptions{Options: githubapi.Options{APIURL: api.URL(),
				Token: api.Token(), Repository: "Codertocat/Hello-World", HTTPClient: api.Client()}, Branch: "kg-base"})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Update(ctx, spill); err != nil {
				t.Fatal(err)
			}
			before, _ := api.Ref("Codertocat/Hello-World", "heads/kg-base")
			writes := len(api.Requests())
			cfg := filepath.Join(t.TempDir(), "kernel-gate.yml")
			if err := os.WriteFile(cfg, append(cfgRaw, "\n"+c.section...), 0o644); err != nil {
				t.Fatal(err)
			}
			env, dir := actionEnv(t, api, map[string]string{"replay": rec, "config": cfg, "base-ref": "none", "gates": "ptxas"})
			code, log, err := runAction(t, env, api)
			if err != nil || code != c.code {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			runs := api.CheckRuns()
			if len(runs) != 1 || runs[0].Conclusion != c.conclusion {
				t.Fatalf("check runs %+v", runs)
			}
			f, err := os.Open(filepath.Join(dir, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := result.Read(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, g := range res.Gates {
				for _, x := range g.Findings {
					msgs = append(msgs, x.Message)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(strings.Join(msgs, "\n"), w) {
					t.Errorf("the result lacks %q:\n%s", w, strings.Join(msgs, "\n"))
				}
			}
			read := false
			for _, r := range api.Requests()[writes:] {
				if strings.Contains(r.APIPath, "/git/") {
					read = read || r.Method == "GET"
					if r.Method != "GET" {
						t.Errorf("a pull request wrote to the store: %s %s", r.Method, r.APIPath)
					}
				}
			}
			if after, _ := api.Ref("Codertocat/Hello-World", "heads/kg-base"); !read || after != before {
				t.Errorf("the branch was read %v, moved from %s to %s", read, before, after)
			}
		})
	}
}

// A push stores its entry where the config's baseline section says: its branch, keeping
// its number of entries.
func TestPushStoresOnTheConfiguredBranch(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	cfgRaw, err := os.ReadFile(filepath.Join(repoRoot, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "kernel-gate.yml")
	if err := os.WriteFile(cfg, append(cfgRaw, "\nbaseline:\n  branch: perf/baseline\n  keep: 1\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		env, _ := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "clean"),
			"gates": "ptxas,sass", "annotations": "none", "config": cfg})
		env["GITHUB_EVENT_NAME"], env["GITHUB_REF"] = "push", "refs/heads/master"
		env["GITHUB_EVENT_PATH"] = filepath.Join(repoRoot, "testdata", "events", "push.json")
		code, log, err := runAction(t, env, api)
		if err != nil || code != 0 || !strings.Contains(log, "baseline stored on branch perf/baseline") {
			t.Fatalf("push %d: exit %d, err %v\n%s", i, code, err, log)
		}
	}
	if _, ok := api.Ref("Codertocat/Hello-World", "heads/"+baseline.DefaultBranch); ok {
		t.Error("the default branch was written")
	}
	store, err := baseline.NewGit(context.Background(), baseline.GitOptions{Options: githubapi.Options{APIURL: api.URL(),
		Token: api.Token(), Repository: "Codertocat/Hello-World", HTTPClient: api.Client()}, Branch: "perf/baseline"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := baseline.List(context.Background(), store, 0)
	if err != nil || len(l.Keys) != 1 || len(l.Keys[0].Entries) != 1 {
		t.Fatalf("listing %+v, err %v", l, err)
	}
	if d := l.Keys[0].Entries[0]; len(d.Kernels) == 0 || d.Kernels[0].SASS == nil || len(d.Kernels[0].SASS.Digest) != 64 {
		t.Errorf("the stored entry's SASS has no digest: %+v", d.Kernels[0].SASS)
	}
}

// What keeps kernel-gate from judging the change (here an input it refuses, and a mode
// quoting a code fence) is said in the job summary too, where a reader of the summary page
// looks: each line of the cause under "- " in a code block no input can close.
func TestNotRunSaidInTheSummary(t *testing.T) {
	env, dir := actionEnv(t, nil, map[string]string{"mode": "gate```\n**bold**"})
	code, _, err := runAction(t, env, nil)
	if code != exitcode.Usage || err == nil {
		t.Fatalf("exit %d (%v), want %d", code, err, exitcode.Usage)
	}
	raw, rerr := os.ReadFile(filepath.Join(dir, "summary"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	s := string(raw)
	first, _, _ := strings.Cut(strings.ReplaceAll(err.Error(), "```", "'''"), "\n")
	if !strings.HasPrefix(s, "**kernel-gate could not run** (the step fails):\n\n```\n- "+first) || strings.Count(s, "```") != 2 || !strings.HasSuffix(s, "```\n") {
		t.Errorf("summary:\n%s", s)
	}
}
