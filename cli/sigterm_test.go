//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
	"github.com/kernel-gate/kernel-gate/internal/signalstop"
)

// stopBound is how long a command may take to end after SIGTERM: far more than a healthy
// machine needs (milliseconds), so that a loaded CI machine passes, and far less than
// "never", which is what the cases below did before.
const stopBound = 20 * time.Second

// buildKernelGate builds the command into dir, for tests that need a real process (a
// signal, a blocking open).
func buildKernelGate(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "kernel-gate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/kernel-gate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// sleeper writes a fake tool into dir that says it started (the file its path +
// ".started") and then sleeps far longer than any test: a tool that hangs.
func sleeper(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n: > \"$0.started\"\nexec sleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// hangingAPI is a GitHub API that accepts every request and never answers it.
func hangingAPI(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL + "/"
}

// Every command ends promptly on SIGTERM, wherever it waits: on a FIFO given as an input,
// the event file or a file the runner names (refused at once, or read and written under
// the signal's context), on standard input that never closes, on a tool or harness that
// hangs, on a baseline store's lock held by another process, on a GitHub API that never
// answers. It exits 2 (internal/exitcode: a run stopped by a signal), and none needs the
// last-resort exit main keeps for a blocked system call (see stopGrace).
func TestSIGTERMStopsEveryCommand(t *testing.T) {
	tmp := t.TempDir()
	bin := buildKernelGate(t, tmp)
	// Each case runs in its own directory (what a command leaves in its working directory,
	// kernel-gate-artifacts/, stays there): repo names the repository's files.
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	repo := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	// Each case gets its own FIFO ({fifo} in its arguments and environment): two commands
	// opening one FIFO, one to read and one to write, would unblock each other.
	const fifo = "{fifo}"
	result := repo("testdata/replay/clean/result.json")
	const key = "nvidia-h200.sm_90.json" // result's GPU's file in a directory store

	// A directory store holding result's key, whose lock this test holds for ever.
	locked := filepath.Join(tmp, "locked-store")
	if code, _, stderr := kg(t, "", "baseline", "update", "--store", locked, "--commit", "0123456789abcdef", result); code != exitPass {
		t.Fatalf("filling the store: exit %d: %s", code, stderr)
	}
	lock, err := os.OpenFile(filepath.Join(locked, key+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() }) // after the parallel cases, which run after this function returns
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// A directory store whose key file is a FIFO.
	fifoStore := filepath.Join(tmp, "fifo-store")
	os.Mkdir(fifoStore, 0o755)
	hangtest.FIFO(t, filepath.Join(fifoStore, key))
	// A push event's payload.
	event := filepath.Join(tmp, "push.json")
	os.WriteFile(event, []byte(`{"ref":"refs/heads/main","before":"0000000000000000000000000000000000000000","after":"1111111111111111111111111111111111111111","repository":{"full_name":"o/r","default_branch":"main"}}`), 0o644)
	api := hangingAPI(t)
	gitStore := []string{"GITHUB_API_URL=" + api, "GITHUB_TOKEN=kg-test-token", "GITHUB_REPOSITORY=o/r"}
	actions := func(env ...string) []string {
		return append([]string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=push", "GITHUB_EVENT_PATH=" + event,
			"GITHUB_REPOSITORY=o/r", "GITHUB_SHA=1111111111111111111111111111111111111111", "GITHUB_REF=refs/heads/main",
			"INPUT_CONFIG=" + repo("kernel-gate.yml")}, env...)
	}

	// The fake toolchain's flags, with sanitizer as compute-sanitizer.
	fakeTools := func(sanitizer string) []string {
		f := repo("testdata/fakegpu")
		return []string{"--nvcc", filepath.Join(f, "nvcc"), "--cuobjdump", filepath.Join(f, "cuobjdump"), "--sanitizer", sanitizer,
			"--nvidia-smi", filepath.Join(f, "nvidia-smi"), "--ncu", filepath.Join(f, "ncu")}
	}

	for _, tc := range []struct {
		name string
		args []string
		env  []string
		// tool is a fake tool that hangs, whose start says the command is waiting on it.
		tool string
		// stdin is a pipe the test never writes to nor closes.
		stdin bool
		// done are the exit codes with which the command may end by itself before the signal
		// (an input refused at once); none: it must still be waiting when the signal comes.
		done []int
		// backstop: the command waits where no context reaches (a blocking system call in a
		// part of kernel-gate this test does not cover), so main's last-resort exit may end it.
		backstop bool
		// progress, when set, is what the command must have said it was doing (where it waits).
		progress string
	}{
		{name: "action/event FIFO", args: []string{"action"}, env: append(actions(), "GITHUB_EVENT_PATH="+fifo), done: []int{exitUsage}},
		{name: "action/summary FIFO", args: []string{"action"}, env: actions("INPUT_REPLAY="+repo("testdata/replay/clean"), "INPUT_ANNOTATIONS=none", "INPUT_GATES=ptxas,sass", // not the guard, which fails the FIFO in the directory it reads
			"INPUT_RESULTS-FILE="+filepath.Join(tmp, "action-summary", "kg-result.json"), "GITHUB_STEP_SUMMARY="+fifo), done: []int{exitPass}},
		{name: "action/output FIFO", args: []string{"action"}, env: actions("INPUT_REPLAY="+repo("testdata/replay/clean"), "INPUT_ANNOTATIONS=none", "INPUT_GATES=ptxas,sass", // not the guard, which fails the FIFO in the directory it reads
			"INPUT_RESULTS-FILE="+filepath.Join(tmp, "action-output", "kg-result.json"), "GITHUB_OUTPUT="+fifo), done: []int{exitPass}},
		{name: "action/nvidia-smi hangs", args: []string{"action", "--nvidia-smi", "{tool}"}, env: actions("INPUT_ANNOTATIONS=none",
			"INPUT_RESULTS-FILE="+filepath.Join(tmp, "action-smi", "kg-result.json")), tool: "nvidia-smi"},
		{name: "run/nvcc hangs", args: []string{"run", "-C", root, "--config", repo("kernel-gate.yml"), "--no-base", "--artifacts", filepath.Join(tmp, "run-art"),
			"--nvcc", "{tool}", "--nvidia-smi", repo("testdata/fakegpu/nvidia-smi")}, tool: "nvcc"},
		// The targets' sanitizers and checks at once (issue 22): every tool hangs, each holding
		// one of the GPU's places; with two places, the others wait for one.
		{name: "run/the targets' sanitizers hang at once", args: append([]string{"run", "-C", root, "--config", repo("kernel-gate.yml"), "--no-base", "--artifacts", filepath.Join(tmp, "run-san-art")},
			fakeTools("{tool}")...), tool: "compute-sanitizer", progress: "up to 15 of their processes at once"},
		{name: "run/the targets' sanitizers hang, two places", args: append([]string{"run", "-C", root, "--config", repo("kernel-gate.yml"), "--no-base", "--artifacts", filepath.Join(tmp, "run-san2-art")},
			fakeTools("{tool}")...), env: []string{"FAKE_SMI_FREE_MIB=16384"}, tool: "compute-sanitizer", progress: "up to 2 of their processes at once"},
		{name: "ptxas/stdin", args: []string{"ptxas"}, stdin: true},
		{name: "ptxas/FIFO", args: []string{"ptxas", fifo}, done: []int{exitUsage}},
		{name: "ptxas/output FIFO", args: []string{"ptxas", repo("testdata/replay/clean/head/attention/compile/2.log")},
			env: []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + fifo}, done: []int{exitPass, exitFail}},
		{name: "ptxas/summary FIFO", args: []string{"ptxas", repo("testdata/replay/clean/head/attention/compile/2.log")},
			env: []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + filepath.Join(tmp, "ptxas-output"), "GITHUB_STEP_SUMMARY=" + fifo}, done: []int{exitPass, exitFail}},
		{name: "sass/stdin", args: []string{"sass", "--sass", "-"}, stdin: true},
		{name: "sanitize/tool hangs", args: []string{"sanitize", "--tools", "memcheck", "--sanitizer", "{tool}", "--", "true"}, tool: "compute-sanitizer"},
		{name: "ncu/tool hangs", args: []string{"ncu", "--config", repo("kernel-gate.yml"), "--ncu", "{tool}", "--", "true"}, tool: "ncu"},
		{name: "check/stdin", args: []string{"check", "-"}, stdin: true},
		{name: "bench run/harness hangs", args: []string{"speedup", "run", "--base-cmd", "{tool}", "--head-cmd", "{tool}", "--nvidia-smi", "/nonexistent/nvidia-smi"}, tool: "harness"},
		{name: "bench compare/stdin", args: []string{"speedup", "compare", "-", repo("testdata/sanitizer-kernels-h200/harness_bench_clean.json")}, stdin: true},
		// gates/guard reads a path it is given with os.ReadFile: main's last resort ends it.
		// The guard fails a file it cannot read, a FIFO among them, without opening it.
		{name: "guard/FIFO", args: []string{"guard", fifo}, done: []int{exitFail}},
		{name: "guard --diff/git hangs", args: []string{"guard", "--diff", "HEAD~1..HEAD"}, env: []string{"PATH={tooldir}" + string(os.PathListSeparator) + os.Getenv("PATH")}, tool: "git"},
		{name: "merge/FIFO", args: []string{"merge", fifo}, done: []int{exitFail}}, // an unreadable shard fails the merge
		{name: "report/stdin", args: []string{"report", "-"}, stdin: true},
		{name: "baseline show/API hangs", args: []string{"baseline", "show", "--store", "git"}, env: gitStore},
		{name: "baseline update/lock held", args: []string{"baseline", "update", "--store", locked, "--commit", "fedcba9876543210", result}},
		{name: "baseline update/FIFO", args: []string{"baseline", "update", "--store", fifoStore, "--commit", "fedcba9876543210", result}, done: []int{exitUsage, exitInternal}},
		{name: "baseline update/API hangs", args: []string{"baseline", "update", "--store", "git", "--commit", "fedcba9876543210", result}, env: gitStore},
		{name: "baseline prune/lock held", args: []string{"baseline", "prune", "--store", locked, "--keep", "1"}},
		{name: "baseline diff/FIFO", args: []string{"baseline", "diff", "--store", fifoStore, result}, done: []int{exitUsage}},
		{name: "baseline diff/API hangs", args: []string{"baseline", "diff", "--store", "git", result}, env: gitStore},
		{name: "trend/API hangs", args: []string{"trend", "--store", "git", "--out", filepath.Join(tmp, "trend.html")}, env: gitStore},
		{name: "demo/output FIFO", args: []string{"demo", "--dir", repo("testdata/replay"), "--config", repo("kernel-gate.yml")}, env: []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + fifo}, done: []int{exitFail}}, // the demo's guard reads the directory it runs in, and fails the FIFO there
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fifo := filepath.Join(dir, "input.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			started, tool := "", ""
			if tc.tool != "" {
				tool = sleeper(t, dir, tc.tool)
				started = tool + ".started"
			}
			fill := strings.NewReplacer("{tool}", tool, "{fifo}", fifo, "{tooldir}", dir)
			var args, env []string
			for _, a := range tc.args {
				args = append(args, fill.Replace(a))
			}
			for _, v := range tc.env {
				env = append(env, fill.Replace(v))
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			// Nothing of the test's own environment (it may run under Actions itself).
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}, env...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			if tc.stdin {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer pw.Close()
				cmd.Stdin = pr
				defer pr.Close()
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the test's to clean up
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()

			// Wait until the command waits: its tool started, or a while for the others (it
			// must have installed its signal handler, a few milliseconds after it starts).
			ready := time.After(time.Second)
			if started != "" {
				ready = pollFile(started, stopBound)
			}
			select {
			case err := <-exited:
				code := hangtest.ExitCode(t, err)
				if len(tc.done) == 0 || !containsInt(tc.done, code) {
					t.Fatalf("ended by itself before the signal, exit %d (want it waiting, or one of %v): %s", code, tc.done, stderr.String())
				}
				return
			case <-ready:
			}
			if started != "" {
				if _, err := os.Stat(started); err != nil {
					t.Fatalf("the fake %s never started: %s", tc.tool, stderr.String())
				}
			}
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				code := hangtest.ExitCode(t, err)
				if code != exitUsage {
					t.Errorf("exit %d after SIGTERM, want %d: %s", code, exitUsage, stderr.String())
				}
				if !strings.Contains(stderr.String(), tc.progress) {
					t.Errorf("it did not wait where the case means it to (no %q): %s", tc.progress, stderr.String())
				}
				if !tc.backstop && strings.Contains(stderr.String(), signalstop.GraceMessage) {
					t.Errorf("it needed main's last-resort exit (%s after SIGTERM): something waits where the signal's context does not reach: %s",
						time.Since(sent).Round(time.Millisecond), stderr.String())
				}
			case <-time.After(stopBound):
				t.Fatalf("still running %s after SIGTERM: %s", stopBound, stderr.String())
			}
		})
	}
}

// pollFile returns a channel that is ready when path exists, or after max.
func pollFile(path string, max time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(max)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(path); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		ch <- time.Now()
	}()
	return ch
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
