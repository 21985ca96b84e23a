package acttest

// The action end to end, under nektos/act in host mode. What was learned about act
// (v0.2.89, the version .ci/run installs), and what the tests below rely on:
//
//   - Host mode: `-P self-hosted=-self-hosted` maps the runs-on label self-hosted to "-self-hosted",
//     an image name beginning with "-", which act reads as "run on this machine": no
//     Docker, no container. Steps run as the user running act, with act's own
//     environment (os.Environ) under the job's env, so PATH, GOFLAGS, GOCACHE and
//     GOMODCACHE pass through to the action's steps as they are for the test. act warns
//     that it has no Docker connection, and goes on.
//   - The workspace: act copies the repository (honouring .gitignore) into
//     <--action-cache-path>/<hash>/hostexecutor only when the job has an actions/checkout
//     step (act does not fetch checkout: "Skipping local actions/checkout because
//     workdir was already copied"). Without that step the workspace is empty and `uses:
//     ./` finds no action.yml.
//   - Remote actions inside a composite action are resolved (git-fetched from
//     github.com) before the step's `if:` is evaluated: stepActionRemote.main runs
//     prepareActionExecutor, then runStepExecutor, which evaluates the `if:`. So the
//     actions/setup-go step that action.yml skips when a new enough Go is on PATH is
//     still fetched, and offline the fetch fails the job ("dial tcp: lookup github.com"),
//     although the step itself is skipped. --action-offline-mode does not help: it only
//     stops act re-fetching an action that is already in its cache. What works offline is
//     --local-repository actions/setup-go@<sha>=<dir>: act reads the action from <dir>.
//     The tests point it at a stub whose only step fails loudly, so the stub running would
//     show that the skip is broken. (GitHub's runner also downloads every action a
//     composite action names when the job is set up, skipped or not; a runner always
//     reaches github.com, so that costs nothing there.)
//   - Inputs: act exports INPUT_<NAME> (in capitals, hyphens kept) for every input of a
//     composite action into each of its steps' environment. GitHub's runner does not: a
//     composite action's steps see only what its env: passes. So the INPUT_* variables
//     that kernel-gate sees under act prove nothing about action.yml's env: mapping;
//     TestEnvPassesEveryInput checks the mapping itself, against the names that
//     action.ReadInputs asks go-githubactions' GetInput for.
//   - `--env NAME=VALUE` sets the job's environment and overrides act's defaults for
//     GITHUB_API_URL, GITHUB_SERVER_URL and GITHUB_REPOSITORY (act would otherwise take
//     the repository from the git remote, or "nektos/act" without one). `-s
//     GITHUB_TOKEN=...` becomes github.token, so the input github-token's default
//     `${{ github.token }}` resolves to it, and act masks it in the log.
//   - Offline Go: the action's build runs `go build` with the test's Go, GOCACHE and
//     GOMODCACHE; the tests add GOPROXY=off and GOTOOLCHAIN=local, so a module missing
//     from the module cache fails the build instead of reaching the network (the test
//     runs `go mod download` first, which is a no-op when the cache is warm).
//   - Isolation: act reads flags from ~/.actrc, $XDG_CONFIG_HOME/act/actrc and ./.actrc
//     and asks for a default image on a terminal when none exists; the tests give act a
//     temporary HOME and XDG directories (and pass -P, which skips the question) and the
//     Go variables explicitly (GOCACHE, GOMODCACHE, GOPATH and GOENV, where settings
//     such as GOFLAGS made with go env -w live: without them a new HOME moves them all). --no-cache-server: act's cache server (for actions/cache)
//     is not needed. GITHUB_*, RUNNER_*, ACTIONS_* and INPUT_* of the test's own
//     environment are dropped, in case the tests themselves run inside GitHub Actions.
//   - Exit codes: act exits 1 when a job failed, whatever the step's code; a failed host
//     step logs "exit status N", which is how the tests read kernel-gate's exit code.
//   - The job summary (GITHUB_STEP_SUMMARY) is printed by act as "Summary - ..." and
//     step outputs as "::set-output:: name=value".
//
// Runtime: each act run copies the temporary repository, builds kernel-gate (action.yml
// builds with -trimpath, so the build cache is shared by every directory the action is
// checked out in) and replays a recording: about 5-10 s each with a warm build cache, on
// two cores. On a cold cache the first run compiles kernel-gate's dependencies too (about
// 75 s of CPU time).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/action"
	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/needtool"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// actVersion is the act release these tests are written against (.ci/run installs it).
const actVersion = "v0.2.89"

// checkoutStep is the first step of every test workflow: act copies the repository into
// the workspace for it instead of fetching actions/checkout (see above).
const checkoutStep = `      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0
        with:
          persist-credentials: false
`

// eventFile is the payload act is given: a real pull_request synchronize event of
// Codertocat/Hello-World (testdata/events/README.md).
const eventFile = "testdata/events/pull_request_synchronize.json"

// eventRepo is the repository of eventFile's payload.
const eventRepo = "Codertocat/Hello-World"

// copied is what the temporary repository holds of this one: what action.yml builds
// kernel-gate from (every Go file: pathspec *.go matches at any depth), its config and
// kernels (the guard gate reads them), the recordings the workflows replay (race fails,
// clean passes) and the event.
var copied = []string{
	"go.mod", "go.sum", "action.yml", ".gitignore", "kernel-gate.yml", "*.go", "kernels",
	"testdata/replay/race", "testdata/replay/clean", eventFile,
}

// actTimeout bounds one act run.
const actTimeout = 4 * time.Minute

// actionFile is the part of action.yml the tests read.
type actionFile struct {
	Inputs  map[string]struct{ Default string } `yaml:"inputs"`
	Outputs map[string]struct{ Value string }   `yaml:"outputs"`
	Runs    struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID   string            `yaml:"id"`
			Name string            `yaml:"name"`
			If   string            `yaml:"if"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "action.yml")); err != nil {
		t.Fatalf("the repository root: %v", err)
	}
	return root
}

func readAction(t *testing.T, root string) actionFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// inputEnvName is the variable go-githubactions' GetInput reads for an input: INPUT_
// and the name in capitals, spaces as underscores, hyphens kept.
func inputEnvName(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
}

// The step that runs kernel-gate must pass every input kernel-gate action reads through
// env: under the name GetInput reads, with the input's value: a composite action's steps
// get no INPUT_* variables by themselves on GitHub's runner (act adds them, so the act
// runs below cannot show a missing one). The names are the ones action.ReadInputs asks
// for, so an input added there and forgotten here fails this test.
func TestEnvPassesEveryInput(t *testing.T) {
	a := readAction(t, repoRoot(t))
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using is %q: self-hosted GPU runners often have no Docker, the action must be composite", a.Runs.Using)
	}
	var asked []string
	if _, err := action.ReadInputs(func(name string) string { asked = append(asked, name); return "" }); err != nil {
		t.Fatalf("ReadInputs with every input empty: %v", err)
	}
	if len(asked) == 0 {
		t.Fatal("ReadInputs read no input")
	}
	var env map[string]string
	for _, s := range a.Runs.Steps {
		if s.ID == "gate" {
			env = s.Env
		}
	}
	if env == nil {
		t.Fatal("action.yml has no step with id gate (the outputs come from steps.gate)")
	}
	for _, name := range asked {
		if _, ok := a.Inputs[name]; !ok {
			t.Errorf("kernel-gate action reads input %q, which action.yml does not declare", name)
			continue
		}
		v, ok := env[inputEnvName(name)]
		if !ok {
			t.Errorf("the gate step's env has no %s: input %q would not reach kernel-gate action", inputEnvName(name), name)
			continue
		}
		if !regexp.MustCompile(`^\$\{\{.*\binputs\.` + regexp.QuoteMeta(name) + `\b.*\}\}$`).MatchString(v) {
			t.Errorf("env %s is %q, not the input %s", inputEnvName(name), v, name)
		}
	}
	// The step passes inputs through the environment only: no ${{ }} in its script.
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q splices an expression into its script; pass it through env:", s.Name+s.ID)
		}
	}
	for _, out := range []string{"verdict", "result-path", "check-run-id", "regressions", "summary-path"} {
		o, ok := a.Outputs[out]
		if !ok || !strings.Contains(o.Value, "steps.gate.outputs."+out) {
			t.Errorf("output %s: %q, want steps.gate.outputs.%s", out, o.Value, out)
		}
	}
}

// action.yml's scripts pass shellcheck (actionlint checks the workflows' run: scripts
// the same way, but not an action's). Skipped without shellcheck, except in CI
// (needtool).
func TestActionScriptsPassShellcheck(t *testing.T) {
	a := readAction(t, repoRoot(t))
	sc := needtool.Path(t, "apt-get install shellcheck (Debian; .ci/run does)", "shellcheck")
	dir := t.TempDir()
	n := 0
	for i, s := range a.Runs.Steps {
		if s.Run == "" {
			continue
		}
		n++
		// GitHub runs shell: bash as bash --noprofile --norc -eo pipefail {0}.
		path := filepath.Join(dir, fmt.Sprintf("step%d.sh", i))
		writeFile(t, path, "#!/usr/bin/env bash\nset -eo pipefail\n"+s.Run)
		if out, err := exec.Command(sc, "--shell=bash", "--severity=style", path).CombinedOutput(); err != nil {
			t.Errorf("step %q: shellcheck: %v\n%s", s.Name, err, out)
		}
	}
	if n == 0 {
		t.Fatal("action.yml has no run: step")
	}
}

// harness is a temporary repository with a workflow, and what act needs to run it.
type harness struct {
	root, repo, tmp string
	git             *gittest.Repo // the repository in repo
	act             string
	setupGo         string // the actions/setup-go@<sha> that action.yml names
	stub            string // a stand-in for it that fails if it runs
	// env is added to act's own environment (which host-mode steps inherit: a PATH with
	// fake tools first, what they read); actEnv are NAME=VALUE pairs act gets as --env
	// (the job's environment, as the runner sets it).
	env, actEnv []string
}

// findAct is act's path; without act on PATH the test skips, or fails in CI (needtool).
func findAct(t *testing.T) string {
	t.Helper()
	return needtool.Path(t, fmt.Sprintf("go install github.com/nektos/act@%s puts it in $(go env GOPATH)/bin (make tools, .ci/run do)", actVersion), "act")
}

// newHarness makes the temporary repository: a commit with the copy of this repository
// and workflow, then one commit per map of commits, which writes its files (path:
// content).
func newHarness(t *testing.T, workflow string, commits ...map[string]string) *harness {
	t.Helper()
	h := &harness{root: repoRoot(t), act: findAct(t), tmp: t.TempDir()}
	h.repo = filepath.Join(h.tmp, "repo")
	a := readAction(t, h.root)
	for _, s := range a.Runs.Steps {
		if strings.HasPrefix(s.Uses, "actions/setup-go@") {
			h.setupGo = s.Uses
			if s.If == "" {
				t.Errorf("action.yml's %s step has no if: it would set up Go even where Go is on PATH", s.Uses)
			}
		}
	}
	if h.setupGo == "" {
		t.Fatal("action.yml names no actions/setup-go step")
	}
	h.stub = filepath.Join(h.tmp, "setup-go-stub")
	writeFile(t, filepath.Join(h.stub, "action.yml"), `name: stand-in for actions/setup-go
description: fails when it runs; action.yml must skip setup-go when Go is on PATH
runs:
  using: composite
  steps:
    - shell: bash
      run: echo "SETUP-GO STUB RAN"; exit 1
`)
	copyRepo(t, h.root, h.repo)
	writeFile(t, filepath.Join(h.repo, ".github", "workflows", "e2e.yml"), workflow)
	h.git = gittest.Init(t, h.repo)
	h.git.Commit("the action under test")
	for i, files := range commits {
		h.git.Write(files)
		h.git.Commit(fmt.Sprintf("change %d", i+1))
	}
	return h
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyRepo copies the files of copied that git knows (tracked, or new and not ignored),
// regular files only: a symlink-free copy, without build outputs.
func copyRepo(t *testing.T, from, to string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"ls-files", "-z", "--cached", "--others", "--exclude-standard", "--"}, copied...)...)
	cmd.Dir = from
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", from, err)
	}
	n := 0
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" {
			continue
		}
		src := filepath.Join(from, rel)
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) { // deleted in the work tree, not yet in the index
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, raw, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("copied no file")
	}
}

// actResult is one act run.
type actResult struct {
	log  string
	code int // act's exit code
}

// run runs the workflow's pull_request event in host mode, with apiURL as GITHUB_API_URL
// and token as github.token.
func (h *harness) run(t *testing.T, apiURL, token string) actResult {
	t.Helper()
	return h.runEvent(t, "pull_request", filepath.Join(h.repo, eventFile), eventRepo, apiURL, token)
}

// runEvent runs the workflow's event with payload (a file) as GITHUB_EVENT_PATH and repo as
// GITHUB_REPOSITORY, as run does. A test that fails shows act's log.
func (h *harness) runEvent(t *testing.T, event, payload, repo, apiURL, token string) actResult {
	t.Helper()
	goEnv := map[string]string{}
	cmd := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV")
	cmd.Dir = h.root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	if err := json.Unmarshal(out, &goEnv); err != nil {
		t.Fatalf("go env -json: %v", err)
	}
	dl := exec.Command("go", "mod", "download")
	dl.Dir = h.root
	if out, err := dl.CombinedOutput(); err != nil {
		t.Fatalf("go mod download (the build under act has GOPROXY=off): %v\n%s", err, out)
	}

	home := filepath.Join(h.tmp, "home")
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GITHUB_"), strings.HasPrefix(k, "RUNNER_"), strings.HasPrefix(k, "ACTIONS_"),
			strings.HasPrefix(k, "INPUT_"), strings.HasPrefix(k, "XDG_"), k == "HOME", goEnv[k] != "":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
	for k, v := range goEnv {
		env = append(env, k+"="+v)
	}
	env = append(env, h.env...) // exec.Cmd takes the last of a name given twice

	args := []string{event,
		"-W", filepath.Join(".github", "workflows", "e2e.yml"),
		"-P", "self-hosted=-self-hosted",
		"-e", payload,
		"--action-cache-path", filepath.Join(h.tmp, "act-cache"),
		"--local-repository", h.setupGo + "=" + h.stub,
		"--no-cache-server",
		"--env", "GITHUB_API_URL=" + apiURL,
		"--env", "GITHUB_REPOSITORY=" + repo,
		"--env", "RUNNER_DEBUG=1",
		"--env", "GOPROXY=off",
		"--env", "GOTOOLCHAIN=local",
		"-s", "GITHUB_TOKEN=" + token,
	}
	for _, kv := range h.actEnv {
		args = append(args, "--env", kv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), actTimeout)
	defer cancel()
	act := exec.CommandContext(ctx, h.act, args...)
	act.Dir, act.Env = h.repo, env
	procgroup.KillOnCancel(act)
	act.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	act.Stdout, act.Stderr = &buf, &buf
	start := time.Now()
	err = act.Run()
	procgroup.KillRest(act)
	t.Logf("act %s (in %s, %s)", strings.Join(args, " "), h.repo, time.Since(start).Round(time.Millisecond))
	r := actResult{log: buf.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("act did not finish within %s:\n%s", actTimeout, r.log)
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("act: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("act's log:\n%s", r.log)
		}
	})
	if strings.Contains(r.log, "SETUP-GO STUB RAN") {
		t.Errorf("the actions/setup-go step ran although Go is on PATH: its if: is broken")
	}
	if strings.Contains(r.log, "LocalRepositoryCache matched") {
		t.Logf("as expected of act %s, it resolved %s before skipping the step", actVersion, h.setupGo)
	}
	return r
}

// stepExit is the exit code of the composite action's step named name: 0 when act
// logged its success, N when it logged its failure and "exit status N"; -1 when the step
// did not run.
func stepExit(log, name string) int {
	start := strings.Index(log, "⭐ Run Main "+name+"\n")
	if start < 0 {
		return -1
	}
	rest := log[start:]
	ok, failed := strings.Index(rest, "✅  Success - Main "+name+" ["), strings.Index(rest, "❌  Failure - Main "+name+" [")
	switch {
	case ok >= 0 && (failed < 0 || ok < failed):
		return 0
	case failed >= 0:
		m := regexp.MustCompile(`(?m)^\[[^\]]+\] exit status (\d+)$`).FindStringSubmatch(rest)
		if m == nil {
			return -2 // failed without an exit status: act's own error
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return -1
}

// outputs reads the line "outputs: k=v k=v ..." that the workflows' last step prints.
func outputs(log string) map[string]string {
	m := regexp.MustCompile(`(?m)\| outputs: (.*)$`).FindStringSubmatch(log)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for _, kv := range strings.Fields(m[1]) {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// showOutputs is the step that prints the action's outputs for outputs().
const showOutputs = `      - if: always()
        env:
          VERDICT: ${{ steps.kg.outputs.verdict }}
          FAILED: ${{ steps.kg.outputs.failed-gates }}
          RESULT: ${{ steps.kg.outputs.result-path }}
          CHECK_RUN: ${{ steps.kg.outputs.check-run-id }}
          SARIF: ${{ steps.kg.outputs.sarif-path }}
          OUTCOME: ${{ steps.kg.outcome }}
        run: |
          echo "outputs: outcome=$OUTCOME verdict=$VERDICT failed-gates=$FAILED result-path=$RESULT check-run-id=$CHECK_RUN result-present=$(test -s "$RESULT" && echo yes || echo no) sarif-path=$SARIF sarif-present=$(test -s "$SARIF" && grep -q '"version": *"2.1.0"' "$SARIF" && echo yes || echo no)"
`

func mustContain(t *testing.T, log string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(log, w) {
			t.Errorf("act's log lacks %q", w)
		}
	}
}

// The action's mechanics under act, with a command that exists today: Go found on PATH
// (setup-go skipped), kernel-gate built from the action's source, run with the inputs
// in its environment (RUNNER_DEBUG=1 makes the step list them), github-token defaulting
// to github.token.
func TestActVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `name: e2e
on: pull_request
permissions:
  contents: read
jobs:
  gate:
    runs-on: self-hosted
    steps:
`+checkoutStep+`      - id: kg
        uses: ./
        with:
          command: version
          mode: gate
          replay: testdata/replay/race
          results-file: kg-result.json
          annotations: workflow-commands
`)
	token := fakegithub.DefaultToken
	r := h.run(t, "http://127.0.0.1:9/", token)
	if r.code != 0 {
		t.Errorf("act exited %d, want 0", r.code)
	}
	for _, step := range []string{"Look for Go", "Build kernel-gate", "Run kernel-gate"} {
		if c := stepExit(r.log, step); c != 0 {
			t.Errorf("step %q: exit %d, want 0 (-1: it did not run)", step, c)
		}
	}
	mustContain(t, r.log,
		"not setting up Go",
		"kernel-gate v",
		"command 'version'; inputs as kernel-gate action reads them:",
		"INPUT_MODE=gate\n",
		"INPUT_REPLAY=testdata/replay/race\n",
		"INPUT_RESULTS-FILE=kg-result.json\n",
		"INPUT_ANNOTATIONS=workflow-commands\n",
		"INPUT_FAIL-ON=error\n", // defaults arrive too
		"INPUT_COMMENT=off\n",
		"INPUT_UPDATE-BASELINE=false\n",
		// A single command (here version) is not handed the token: its shell's children
		// could read it in the shell's environment. kernel-gate action gets github.token
		// (TestActKernelGateAction posts its check run with it).
		"INPUT_GITHUB-TOKEN: 0 characters",
	)
	if strings.Contains(r.log, token) {
		t.Error("the token appears in act's log")
	}
}

// One of the single commands through the action: kernel-gate run --replay of the race
// recording fails the sanitizer gate, exit 1; the step fails with that code and the
// action's outputs say why.
func TestActRunReplayFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `name: e2e
on: pull_request
permissions:
  contents: read
jobs:
  gate:
    runs-on: self-hosted
    steps:
`+checkoutStep+`      - id: kg
        uses: ./
        with:
          command: run
          replay: testdata/replay/race
          results-file: kg-result.json
          format: sarif
`+showOutputs)
	r := h.run(t, "http://127.0.0.1:9/", fakegithub.DefaultToken)
	if r.code == 0 {
		t.Error("act exited 0 for a failed gate")
	}
	if c := stepExit(r.log, "Build kernel-gate"); c != 0 {
		t.Errorf("Build kernel-gate: exit %d, want 0", c)
	}
	if c := stepExit(r.log, "Run kernel-gate"); c != 1 {
		t.Errorf("Run kernel-gate: exit %d, want 1 (a gate failed)", c)
	}
	got := outputs(r.log)
	for k, want := range map[string]string{"outcome": "failure", "verdict": "fail", "failed-gates": "sanitizer",
		"result-path": "kg-result.json", "result-present": "yes", "sarif-path": "kg-result.sarif", "sarif-present": "yes"} {
		if got[k] != want {
			t.Errorf("output %s = %q, want %q", k, got[k], want)
		}
	}
	// The text report's banner, or the job summary's (act prints it after the step): the
	// step failed, and act v0.2.89 may drop a failed step's last output lines.
	mustContain(t, r.log, "racecheck")
	if !strings.Contains(r.log, "REPLAY of a recorded run") && !strings.Contains(r.log, "**Replay** of a recorded run") {
		t.Error("act's log does not say the result is a replay")
	}
}

// The guard job of kernel-gate-pr.yml: command guard with the input diff judges only
// what BASE...HEAD adds. The base already has a script that reboots the machine; the
// change adds one that powers it off: the guard refuses the new one only, exit 1.
func TestActGuardDiff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `name: e2e
on: pull_request
permissions:
  contents: read
jobs:
  gate:
    runs-on: self-hosted
    steps:
      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0
        with:
          fetch-depth: 0
          persist-credentials: false
      - id: kg
        uses: ./
        with:
          command: guard
          diff: HEAD~1...HEAD
          results-file: kernel-gate-guard.json
`+showOutputs,
		map[string]string{"scripts/old.sh": "#!/bin/sh\nsudo reboot\n"},
		map[string]string{"scripts/cleanup.sh": "#!/bin/sh\nrm -rf build\nsudo shutdown -h now\n"},
	)
	r := h.run(t, "http://127.0.0.1:9/", fakegithub.DefaultToken)
	if c := stepExit(r.log, "Run kernel-gate"); c != 1 {
		t.Errorf("Run kernel-gate: exit %d, want 1 (the guard refuses the change)", c)
	}
	got := outputs(r.log)
	if got["verdict"] != "fail" || got["failed-gates"] != "guard" || got["result-present"] != "yes" {
		t.Errorf("outputs %v: want verdict fail, failed-gates guard and the result file", got)
	}
	mustContain(t, r.log, "command 'guard'", "scripts/cleanup.sh", "shutdown")
	if strings.Contains(r.log, "scripts/old.sh") {
		t.Error("the guard judged scripts/old.sh, which the diff does not touch: the input diff did not arrive")
	}
}

// needsAction skips the test unless act is on PATH (findAct); it returns the repository's
// root.
func needsAction(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	findAct(t)
	return root
}

// editedEvent is the payload of file (a path in the repository root) with edit applied,
// as JSON.
func editedEvent(t *testing.T, root, file string, edit func(payload map[string]any)) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		t.Fatal(err)
	}
	edit(payload)
	raw, err = json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// The whole path of a pull request's gate job: kernel-gate action in mode gate judges the
// race recording and posts one check run, conclusion failure, to the (fake) GitHub API
// named by GITHUB_API_URL, with the token the action got from github.token; the step
// exits 1.
func TestActKernelGateAction(t *testing.T) {
	t.Parallel()
	needsAction(t)
	api := fakegithub.New()
	defer api.Close()
	h := newHarness(t, `name: e2e
on: pull_request
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
          mode: gate
          replay: testdata/replay/race
          results-file: kg-result.json
`+showOutputs)
	r := h.run(t, api.URL(), api.Token())
	if c := stepExit(r.log, "Run kernel-gate"); c != 1 {
		t.Errorf("Run kernel-gate: exit %d, want 1 (a gate failed)", c)
	}
	runs := api.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1: %+v", len(runs), runs)
	}
	cr := runs[0]
	if cr.Status != "completed" || cr.Conclusion != "failure" {
		t.Errorf("check run: status %q, conclusion %q; want completed, failure", cr.Status, cr.Conclusion)
	}
	if cr.Repo != eventRepo {
		t.Errorf("check run on %q, want %q (GITHUB_REPOSITORY)", cr.Repo, eventRepo)
	}
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(cr.HeadSHA) {
		t.Errorf("check run's head_sha %q is not a commit", cr.HeadSHA)
	}
	got := outputs(r.log)
	if got["verdict"] != "fail" || got["check-run-id"] != strconv.FormatInt(cr.ID, 10) {
		t.Errorf("outputs %v: want verdict fail and check-run-id %d", got, cr.ID)
	}
}
