//go:build unix

package ncu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// fakeNCU writes an executable ncu stand-in into a fresh directory. It writes its
// arguments, one a line, to DIR/args and the harness variables to DIR/env, then runs body.
func fakeNCU(t *testing.T, body string) (bin, dir string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "ncu")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + filepath.Join(dir, "args") + "\n" +
		"echo \"KG_MODE=$KG_MODE KG_SHAPES=$KG_SHAPES KG_ROUNDS=$KG_ROUNDS KG_OUT=$KG_OUT KG_KERNELS=$KG_KERNELS\" > " + filepath.Join(dir, "env") + "\n" + body
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
}

func capturePath(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "ncu-h200", name))
	return p
}

func TestArgsAlwaysLeaveClocksAlone(t *testing.T) {
	for _, o := range []Options{{}, {Metrics: []string{"a__b"}, KernelFilter: "regex:k", Launches: 3}} {
		a := Args(o)
		i := slices.Index(a, "--clock-control")
		if i < 0 || i+1 >= len(a) || a[i+1] != "none" || a[0] != "--csv" {
			t.Errorf("Args(%+v) = %q: --clock-control none must always be passed", o, a)
		}
	}
	a := strings.Join(Args(Options{Metrics: []string{"a__b", "c__d.sum"}}), " ")
	if a != "--csv --clock-control none --print-units base --print-kernel-base mangled --metrics a__b,c__d.sum -c 32" {
		t.Errorf("Args = %s", a)
	}
	a = strings.Join(Args(Options{Metrics: []string{"a__b"}, KernelFilter: "regex:flash_fwd|row_softmax", Launches: 6}), " ")
	if !strings.HasSuffix(a, "--metrics a__b -k regex:flash_fwd|row_softmax -c 6") {
		t.Errorf("Args = %s", a)
	}
}

func TestRunReplaysCapture(t *testing.T) {
	bin, dir := fakeNCU(t, "cat "+capturePath("ncu-metrics.csv")+"\n")
	cfg := config(t, issueConfig)
	o, err := cfg.Options([]string{"./h", "--fast"})
	if err != nil {
		t.Fatal(err)
	}
	o.NCU, o.ArtifactDir = bin, filepath.Join(t.TempDir(), "artifacts")
	o.ExtraEnv = []string{"KG_MODE=bench", "KG_KERNELS=flash_fwd"} // the runner's KG_MODE wins
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Launches) != 6 || len(rep.Problems) != 0 || rep.ExitCode == nil || *rep.ExitCode != 0 || rep.TimedOut || rep.Limit != 16 {
		t.Fatalf("report: %d launches, problems %q, exit %v", len(rep.Launches), rep.Problems, rep.ExitCode)
	}
	args := readLines(t, filepath.Join(dir, "args"))
	want := []string{"--csv", "--clock-control", "none", "--print-units", "base", "--print-kernel-base", "mangled",
		"--metrics", "dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
		"-k", "regex:flash_fwd|row_softmax", "-c", "16", "./h", "--fast"}
	if !slices.Equal(args, want) || !slices.Equal(rep.Args[1:], want) {
		t.Errorf("ncu got %q\nwant %q", args, want)
	}
	out := filepath.Join(o.ArtifactDir, HarnessFile)
	if env := readLines(t, filepath.Join(dir, "env"))[0]; env != "KG_MODE=check KG_SHAPES=mission KG_ROUNDS=1 KG_OUT="+out+" KG_KERNELS=flash_fwd" {
		t.Errorf("harness env: %s", env)
	}
	if rep.Log != filepath.Join(o.ArtifactDir, LogFile) {
		t.Errorf("log %q", rep.Log)
	}
	if raw, err := os.ReadFile(rep.Log); err != nil || string(raw) != readFileString(t, capturePath("ncu-metrics.csv")) {
		t.Errorf("the log must keep what ncu printed: %v", err)
	}
	g, err := Evaluate(rep, cfg)
	if err != nil || g.Verdict != result.Fail { // row_softmax was not in the capture's -c 6 launches
		t.Fatalf("%v %s %s", err, g.Verdict, messages(g))
	}
	if es := errorsOf(g); len(es) != 1 || es[0].Metric != MetricMatch {
		t.Errorf("%s", messages(g))
	}
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// ncu's errors and its exit status both fail the gate and are both named.
func TestRunNonzeroExit(t *testing.T) {
	bin, _ := fakeNCU(t, "cat "+capturePath("ncu-badmetric.csv")+"\nexit 9\n")
	cfg := config(t, issueConfig)
	o, _ := cfg.Options([]string{"./h"})
	o.NCU = bin
	g, err := RunGate(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	es := errorsOf(g)
	if g.Verdict != result.Fail || len(es) < 2 || !strings.Contains(es[0].Message, "ncu exited with status 9") ||
		!strings.Contains(es[1].Message, "ncu reported errors: Failed to find metric") {
		t.Errorf("%s %s", g.Verdict, messages(g))
	}
}

func TestRunPrintsNothing(t *testing.T) {
	bin, _ := fakeNCU(t, "exit 0\n")
	o := Options{NCU: bin, Command: []string{"./h"}, Metrics: []string{"a__b"}}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "ncu printed no table and no message of its own: ncu output: not Nsight Compute output: the input is empty") {
		t.Errorf("problems %q", rep.Problems)
	}
}

// A hung run is killed at its timeout with its whole process group: the harness's
// children too.
func TestRunHangIsKilled(t *testing.T) {
	childFile := filepath.Join(t.TempDir(), "child")
	bin, _ := fakeNCU(t, "echo '==PROF== Connected to process 1 (/x/h)'\nsleep 60 &\necho $! > "+childFile+"\nwait\n")
	// 2 s: on a loaded 2-core machine the fake's shell could be killed at 300 ms before it
	// had started the child and written its pid.
	o := Options{NCU: bin, Command: []string{"./h"}, Metrics: []string{"a__b"}, Timeout: 2 * time.Second}
	start := time.Now()
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s to return", d)
	}
	if !rep.TimedOut || rep.ExitCode != nil || len(rep.Problems) == 0 ||
		!strings.Contains(rep.Problems[0], "the run hung: ncu and the harness were killed after 2s with their process group") {
		t.Fatalf("report %+v", rep)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFileString(t, childFile)))
	if err != nil {
		t.Fatal(err)
	}
	// SIGKILL is sent, not waited for, and a killed child whose shell died too stays a
	// zombie until init reaps it, which a loaded machine's init can take seconds to do: a
	// zombie is dead, and the poll (which ends as soon as the child is) waits up to 30 s.
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the harness's child %d outlived the kill", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	g, err := Evaluate(rep, config(t, issueConfig))
	if err != nil || g.Verdict != result.Fail {
		t.Errorf("%v %s", err, g.Verdict)
	}
}

func TestRunMissingNCU(t *testing.T) {
	o := Options{NCU: filepath.Join(t.TempDir(), "ncu"), Command: []string{"./h"}, Metrics: []string{"a__b"}}
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrNCUMissing) || !strings.Contains(err.Error(), o.NCU) {
		t.Errorf("Run = %v, want ErrNCUMissing naming the binary", err)
	}
	// Found but not startable: not a program.
	garbage := filepath.Join(t.TempDir(), "ncu")
	if err := os.WriteFile(garbage, []byte("\x7fELF not really\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Options{NCU: garbage, Command: []string{"./h"}, Metrics: []string{"a__b"}}); !errors.Is(err, ErrNCUMissing) ||
		!strings.Contains(err.Error(), "could not be started") {
		t.Errorf("Run of a file that is not a program = %v", err)
	}
	cfg := config(t, issueConfig)
	g, err := RunGate(context.Background(), cfg, o)
	if err != nil || g.Verdict != result.Fail || len(g.Findings) != 1 || g.Findings[0].Metric != MetricRun ||
		!strings.Contains(g.Findings[0].Message, "ncu (Nsight Compute CLI) not found") {
		t.Errorf("%v %s %s", err, g.Verdict, messages(g))
	}
}

func TestRunGateWithoutRulesRunsNothing(t *testing.T) {
	g, err := RunGate(context.Background(), Config{}, Options{NCU: "/nonexistent/ncu", Command: []string{"./h"}})
	if err != nil || g.Verdict != result.Skip || !strings.Contains(g.Findings[0].Message, "ncu was not run") {
		t.Errorf("%v %s %s", err, g.Verdict, messages(g))
	}
}

func TestRunRefusesBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Metrics: []string{"a__b"}},
		{Command: []string{"./h"}},
		{Command: []string{"./h"}, Metrics: []string{"DRAM Throughput"}},
	} {
		if _, err := Run(context.Background(), o); err == nil || errors.Is(err, ErrNCUMissing) {
			t.Errorf("Run(%+v) = %v", o, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	bin, _ := fakeNCU(t, "exit 0\n")
	if _, err := Run(ctx, Options{NCU: bin, Command: []string{"./h"}, Metrics: []string{"a__b"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
}

// zombie reports whether pid has exited and waits to be reaped (Linux's /proc; false
// elsewhere).
func zombie(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis: "123 (sh) Z ...".
	i := strings.LastIndexByte(string(raw), ')')
	return i >= 0 && i+2 < len(raw) && raw[i+2] == 'Z'
}
