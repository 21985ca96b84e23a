//go:build unix

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

const (
	ncuMetrics   = "testdata/ncu-h200/ncu-metrics.csv"
	ncuBaseUnits = "testdata/ncu-h200/ncu-base-units.csv"
	ncuSOL       = "testdata/ncu-h200/ncu-sol.csv"
	ncuBadMetric = "testdata/ncu-h200/ncu-badmetric.csv"
)

func ncuGate(t *testing.T, out string) result.Gate {
	t.Helper()
	r := decode(t, out)
	if len(r.Gates) != 1 || r.Gates[0].Name != "ncu" {
		t.Fatalf("gates %+v", r.Gates)
	}
	return r.Gates[0]
}

// The repository's kernel-gate.yml on the H200 captures: flash_fwd passes the any
// rule through its DRAM branch, row_softmax keeps DRAM busy.
func TestNCUReadsCaptures(t *testing.T) {
	code, out, stderr := kg(t, "", "ncu", "--config", "kernel-gate.yml", "--format", "json", "--csv", ncuMetrics, ncuBaseUnits)
	if code != exitPass {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	g := ncuGate(t, out)
	if g.Verdict != result.Pass || g.Summary != "3 rule checks passed on 3 kernels (7 launches profiled)" {
		t.Errorf("%s: %s", g.Verdict, g.Summary)
	}
	var cells []string
	for _, r := range g.Table.Rows {
		cells = append(cells, strings.Join(r.Cells, "|"))
	}
	all := strings.Join(cells, "\n")
	for _, want := range []string{
		"flash_fwd<64, 64, 0>|dram__throughput.avg.pct_of_peak_sustained_elapsed|1.8 %|1.78..1.8 (4)|any <= 50|yes|line ",
		"flash_fwd<64, 64, 0>|sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active|5.405 %|5.32..5.43 (4)|any >= 50|no|line ",
		"row_softmax<256>|dram__throughput.avg.pct_of_peak_sustained_elapsed|42.93 %|42.93..42.93 (1)|all >= 30|yes|line ",
		"row_softmax<256>|sm__warps_active.avg.pct_of_peak_sustained_active|89.99 %|89.99..89.99 (1)|all >= 50|yes|line ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no table row has %q:\n%s", want, all)
		}
	}
	// One capture alone: the other kernel's rule matches nothing and fails.
	code, out, _ = kg(t, "", "ncu", "--config", "kernel-gate.yml", "--format", "json", "--csv", ncuMetrics)
	if g := ncuGate(t, out); code != exitFail || !strings.Contains(g.Findings[0].Message, "(row_softmax<*>) matched no profiled kernel") {
		t.Errorf("exit %d, findings %+v", code, g.Findings)
	}
}

func TestNCUExitCodes(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.csv")
	os.WriteFile(empty, nil, 0o644)
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string
	}{
		{"ncu's error output fails the gate", "", []string{"ncu", "--csv", ncuBadMetric}, exitFail, ""},
		{"a section CSV names labels, not metrics", "", []string{"ncu", "--csv", ncuSOL}, exitFail, ""},
		{"stdin", "==WARNING== No kernels were profiled.\n", []string{"ncu", "--csv", "-"}, exitFail, ""},
		{"an empty file", "", []string{"ncu", "--csv", empty}, exitUsage, "the input is empty"},
		{"another tool's output", "", []string{"ncu", "--csv", "testdata/replay/clean/head/attention/compile/2.log"}, exitUsage, "not Nsight Compute output"},
		{"a missing file", "", []string{"ncu", "--csv", "nope.csv"}, exitUsage, "nope.csv"},
		{"nothing to do", "", []string{"ncu"}, exitUsage, "nothing to profile"},
		{"both", "", []string{"ncu", "--csv", ncuMetrics, "--", "./h"}, exitUsage, "not both"},
		{"run flags with --csv", "", []string{"ncu", "--csv", ncuMetrics, "--launches", "3"}, exitUsage, "go with a run"},
		{"bad timeout", "", []string{"ncu", "--timeout", "soon", "--", "./h"}, exitUsage, "--timeout"},
		{"two shapes", "", []string{"ncu", "--shape", "a,b", "--", "./h"}, exitUsage, "one shape"},
		{"missing ncu fails the gate", "", []string{"ncu", "--ncu", "/nonexistent/ncu", "--", "./h"}, exitFail, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := kg(t, tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, want %d; stderr %q should mention %q\n%s", code, tt.code, stderr, tt.stderr, out)
			}
		})
	}
}

// fakeNCUOnPath puts an ncu stand-in first on PATH. It writes its arguments, one a line,
// to the returned args file, then runs body.
func fakeNCUOnPath(t *testing.T, body string) (argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\necho \"$KG_MODE $KG_SHAPES $KG_ROUNDS\" >> " + argsFile + "\n" + body
	if err := os.WriteFile(filepath.Join(dir, "ncu"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return argsFile
}

func TestNCURunsNCUWithoutTouchingClocks(t *testing.T) {
	metrics, _ := filepath.Abs(ncuMetrics)
	base, _ := filepath.Abs(ncuBaseUnits)
	argsFile := fakeNCUOnPath(t, "cat "+metrics+" "+base+"\n")
	artifacts := filepath.Join(t.TempDir(), "a")
	code, out, stderr := kg(t, "", "ncu", "--config", "kernel-gate.yml", "--format", "json", "--artifacts", artifacts, "--", "./build/harness", "--flag-of-the-harness")
	if code != exitPass {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	raw, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	i := slices.Index(args, "--clock-control")
	if i < 0 || args[i+1] != "none" {
		t.Errorf("ncu was not told --clock-control none: %q", args)
	}
	n := len(args)
	if !slices.Equal(args[n-3:], []string{"./build/harness", "--flag-of-the-harness", "check mission 1"}) ||
		!slices.Contains(args, "regex:flash_fwd|row_softmax") || !slices.Contains(args, "--metrics") {
		t.Errorf("ncu args and harness env: %q", args)
	}
	if _, err := os.Stat(filepath.Join(artifacts, "ncu.log")); err != nil {
		t.Errorf("the log is not kept: %v", err)
	}
	if !strings.Contains(stderr, "kernel-gate ncu: ncu --csv --clock-control none") {
		t.Errorf("progress: %s", stderr)
	}
	if g := ncuGate(t, out); g.Verdict != result.Pass {
		t.Errorf("%+v", g)
	}
}

func TestNCUHungIsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	fakeNCUOnPath(t, "sleep 60 &\necho $! > "+pidFile+"\nwait\n")
	start := time.Now()
	code, out, stderr := kg(t, "", "ncu", "--config", "kernel-gate.yml", "--format", "json", "--timeout", "2s", "--", "./h")
	if code != exitFail {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("took %s", d)
	}
	g := ncuGate(t, out)
	if !strings.Contains(g.Findings[0].Message, "the run hung: ncu and the harness were killed after 2s with their process group") {
		t.Errorf("%+v", g.Findings)
	}
	// 2 s, not less: on a loaded machine the fake must have started its child (and said
	// its pid) before the timeout kills it, or there is no child to check.
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	deadline := time.Now().Add(2 * time.Second)
	// A killed child stays a zombie until init reaps it, which a loaded machine's init can
	// take seconds to do: a zombie is dead.
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the harness's child %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reports whether pid has exited and waits to be reaped (Linux's /proc; false elsewhere).
func zombie(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis: "123 (sh) Z ...".
	i := strings.LastIndexByte(string(raw), ')')
	return i >= 0 && i+2 < len(raw) && raw[i+2] == 'Z'
}

// A missing ncu is a failed gate (exit 1), never a pass: the default "ncu" not on PATH.
func TestNCUMissingFailsClosed(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, out, _ := kg(t, "", "ncu", "--config", "kernel-gate.yml", "--format", "json", "--", "./h")
	g := ncuGate(t, out)
	if code != exitFail || g.Verdict != result.Fail || !strings.Contains(g.Findings[0].Message, `ncu (Nsight Compute CLI) not found: "ncu"`) {
		t.Errorf("exit %d, %+v", code, g)
	}
}

// Without ncu rules nothing is profiled: the gate skips and says why.
func TestNCUWithoutRules(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "k.yml")
	os.WriteFile(cfg, []byte("cuda: '>=12'\n"), 0o644)
	code, out, _ := kg(t, "", "ncu", "--config", cfg, "--format", "json", "--ncu", "/nonexistent/ncu", "--", "./h")
	if g := ncuGate(t, out); code != exitPass || g.Verdict != result.Skip || !strings.Contains(g.Findings[0].Message, "ncu was not run") {
		t.Errorf("exit %d, %+v", code, g)
	}
}

// The ncu section is strict like every other: unknown keys and bad thresholds name their line.
func TestNCUConfigErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"ncu:\n  kernels:\n    - match: a\n      any:\n        - mtric: a__b\n          min: 1\n", `k.yml:5: unknown key "mtric" in ncu.kernels[0].any[0] (did you mean "metric"?)`},
		{"ncu:\n  launch: 3\n", `k.yml:2: unknown key "launch" in ncu (did you mean "launches"?)`},
		{"ncu:\n  kernels:\n    - match: a\n      all:\n        - {metric: DRAM Throughput, max: 50}\n", `k.yml:5: ncu.kernels[0].all[0]: metric "DRAM Throughput" is not an ncu metric name`},
		{"ncu:\n  kernels:\n    - match: a\n", `k.yml:3: ncu.kernels[0] (match "a"): the rule has neither any nor all`},
	}
	for _, tt := range tests {
		_, err := config.Parse([]byte(tt.yaml), "k.yml")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse error = %v\nwant it to contain %q", err, tt.want)
		}
	}
	c, err := config.Load("kernel-gate.yml")
	if err != nil || len(c.NCU.Kernels) != 2 || c.NCU.File != "kernel-gate.yml" || c.NCU.Kernels[0].Line == 0 {
		t.Errorf("kernel-gate.yml's ncu section: %v %+v", err, c.NCU)
	}
}
