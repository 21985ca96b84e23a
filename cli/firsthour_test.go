package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	cleanLog    = "testdata/replay/clean/head/attention/compile/2.log" // nvcc -Xptxas -v of flash_fwd.cu
	cleanResult = "testdata/replay/clean/result.json"
)

// Each command's -h names exactly the --format values it takes, and it takes them: every
// command that writes a result takes sarif; baseline show and diff text or json; trend html
// or text; baseline update and prune, and action, take no --format at all.
func TestFormatsPerCommand(t *testing.T) {
	results := "report `FORMAT`: text, json, markdown or sarif"
	for _, tc := range []struct {
		cmd  []string
		help string // what -h says of --format; "" when it must not offer one
	}{
		{[]string{"ptxas"}, results}, {[]string{"sass"}, results}, {[]string{"sanitize"}, results},
		{[]string{"ncu"}, results}, {[]string{"check"}, results}, {[]string{"speedup", "run"}, results},
		{[]string{"speedup", "compare"}, results}, {[]string{"run"}, results}, {[]string{"guard"}, results},
		{[]string{"report"}, results}, {[]string{"demo"}, results},
		{[]string{"merge"}, "report `FORMAT`: json, text, markdown or sarif"},
		{[]string{"baseline", "show"}, "report `FORMAT`: text or json"},
		{[]string{"baseline", "diff"}, "report `FORMAT`: text or json"},
		{[]string{"trend"}, "report `FORMAT`: html or text"},
		{[]string{"baseline", "update"}, ""}, {[]string{"baseline", "prune"}, ""}, {[]string{"action"}, ""},
	} {
		code, _, stderr := kg(t, "", append(tc.cmd, "-h")...)
		help := strings.ReplaceAll(stderr, "`", "")
		want := strings.ReplaceAll(tc.help, "`", "")
		switch {
		case code != exitPass:
			t.Errorf("%q -h: exit %d", tc.cmd, code)
		case tc.help == "" && strings.Contains(help, "\n  -format"):
			t.Errorf("%q -h offers --format, which it does not take:\n%s", tc.cmd, stderr)
		case tc.help != "" && !strings.Contains(help, strings.TrimPrefix(want, "report FORMAT: ")):
			t.Errorf("%q -h does not say %q:\n%s", tc.cmd, want, stderr)
		}
	}
	for _, args := range [][]string{
		{"ptxas", "--format", "sarif", cleanLog},
		{"sass", "--format", "sarif", "--sass", "testdata/replay/clean/head/attention/sass.txt.gz"},
		{"report", "--format", "sarif", cleanResult},
		{"guard", "--format", "sarif", "README.md"},
		{"merge", "--format", "sarif", cleanResult},
		{"demo", "--format", "sarif"},
	} {
		code, out, stderr := kg(t, "", args...)
		var log struct{ Version string }
		if code == exitUsage || json.Unmarshal([]byte(out), &log) != nil || log.Version != "2.1.0" {
			t.Errorf("%q: exit %d, not a SARIF 2.1.0 log: %.200s %s", args, code, out, stderr)
		}
	}
	store := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"baseline", "show", "--store", store, "--format", "sarif"}, "text or json"},
		{[]string{"trend", "--store", store, "--format", "sarif"}, "html (the default) or text"},
		{[]string{"baseline", "prune", "--store", store, "--format", "json"}, "unknown flag --format"},
		{[]string{"action", "--format", "json"}, "unknown flag --format"},
	} {
		if code, _, stderr := kg(t, "", tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, want %d saying %q: %s", tc.args, code, exitUsage, tc.want, stderr)
		}
	}
	// The command list says the same.
	if _, out, _ := kg(t, "", "help"); !strings.Contains(out, "text, json, markdown or sarif") || !strings.Contains(out, "trend --format html (default) or text") {
		t.Errorf("help does not say the formats per command:\n%s", out)
	}
}

// --key is written the same three ways in trend and in baseline diff: GPU/arch, as baseline
// show prints it, and its file's name.
func TestKeyOneSyntax(t *testing.T) {
	store := storeOf(t, "clean", "spill")
	for _, key := range []string{"NVIDIA H200/sm_90", "NVIDIA H200/9.0", "NVIDIA H200 (sm_90)", "nvidia-h200.sm_90"} {
		if code, out, stderr := kg(t, "", "trend", "--store", store, "--format", "text", "--key", key); code != exitPass || !strings.HasPrefix(out, "NVIDIA H200 (sm_90): 2 commits") {
			t.Errorf("trend --key %q: exit %d: %s%s", key, code, out, stderr)
		}
		if code, out, stderr := kg(t, "", "baseline", "diff", "--store", store, "--key", key); code != exitPass || !strings.Contains(out, "spill012345") {
			t.Errorf("baseline diff --key %q: exit %d: %s%s", key, code, out, stderr)
		}
	}
	for _, cmd := range [][]string{{"trend", "--format", "text"}, {"baseline", "diff"}} {
		args := append(cmd, "--store", store, "--key", "NVIDIA H200")
		if code, _, stderr := kg(t, "", args...); code != exitUsage || !strings.Contains(stderr, "write it GPU/arch") {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
	}
}

// baseline prune without --keep keeps what the config's baseline.keep says, whether the
// store comes from the config or from --store; with neither it refuses rather than prune to
// the built-in default.
func TestPruneKeepsTheConfigsKeep(t *testing.T) {
	store := storeOf(t, "clean", "spill", "slow5")
	cfg := filepath.Join(t.TempDir(), "kg.yml")
	os.WriteFile(cfg, []byte("baseline:\n  keep: 2\n"), 0o644)
	if code, _, stderr := kg(t, "", "baseline", "prune", "--config", cfg, "--store", store); code != exitPass {
		t.Fatalf("prune with the config's keep: exit %d: %s", code, stderr)
	}
	if _, out, _ := kg(t, "", "baseline", "show", "--store", store); !strings.Contains(out, "2 entries shown") {
		t.Errorf("after prune to the config's 2: %s", out)
	}
	if code, _, stderr := kg(t, "", "baseline", "prune", "--store", store); code != exitUsage || !strings.Contains(stderr, "--keep N (or baseline.keep in the config)") {
		t.Errorf("prune with no keep anywhere: exit %d: %s", code, stderr)
	}
}

// A flag that the mode it is given in would not use is an error naming both.
func TestIgnoredFlagIsAnError(t *testing.T) {
	rec := filepath.Join("testdata", "replay", "clean")
	for _, tc := range []struct {
		args       []string
		flag, mode string
	}{
		{[]string{"run", "--replay", rec, "--shard", "1/2"}, "--shard", "--replay"},
		{[]string{"run", "--replay", rec, "--targets", "attention"}, "--targets", "--replay"},
		{[]string{"run", "--replay", rec, "--no-base"}, "--no-base", "--replay"},
		{[]string{"sanitize", "--log", "x.log", "--timeout", "1m"}, "--timeout", "--log/--xml"},
		{[]string{"ncu", "--csv", "x.csv", "--ncu", "/opt/ncu"}, "--ncu", "--csv"},
		{[]string{"guard", "--repo", "..", "README.md"}, "--repo", "no --diff"},
		{[]string{"demo", "--trend", "--config", "kernel-gate.yml"}, "--config", "--trend"},
		{[]string{"baseline", "show", "--store", t.TempDir(), "--branch", "other"}, "--branch", "directory"},
		{[]string{"baseline", "diff", "--store", t.TempDir(), "--commit", "abc"}, "--commit", "RESULT.json"},
		{[]string{"baseline", "diff", "--store", t.TempDir(), "--key", "NVIDIA H200/sm_90", cleanResult}, "--key", "RESULT.json"},
	} {
		code, _, stderr := kg(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.flag) || !strings.Contains(stderr, tc.mode) {
			t.Errorf("%q: exit %d, want %d naming %s and %s: %s", tc.args, code, exitUsage, tc.flag, tc.mode, stderr)
		}
	}
}

// An unknown flag is said once, as "unknown flag", by the command or before any command.
func TestUnknownFlagSaidOnce(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"ptxas", "--bogus", cleanLog}, {"baseline", "show", "--bogus"}, {"trend", "--bogus"}} {
		code, out, stderr := kg(t, "", args...)
		if code != exitUsage || out != "" || strings.Count(stderr, "bogus") != 1 || !strings.Contains(stderr, `unknown flag`) ||
			strings.Contains(stderr, "unknown command") || strings.Contains(stderr, "provided but not defined") {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
	}
	if code, _, stderr := kg(t, "", "ptxas", "--out"); code != exitUsage || stderr != "kernel-gate ptxas: --out needs a value (kernel-gate ptxas -h lists its flags)\n" {
		t.Errorf("a flag without its value: exit %d: %q", code, stderr)
	}
	// A command with subcommands prints theirs.
	for _, args := range [][]string{{"speedup", "-h"}, {"baseline", "--help"}} {
		if code, _, stderr := kg(t, "", args...); code != exitPass || !strings.HasPrefix(stderr, "Usage: kernel-gate "+args[0]) {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
	}
	if code, _, stderr := kg(t, "", "ptxas", "-h"); code != exitPass || !strings.HasPrefix(stderr, "Usage: kernel-gate ptxas") || !strings.Contains(stderr, "-format FORMAT") {
		t.Errorf("-h: exit %d: %s", code, stderr)
	}
}

// Messages name the file and what went wrong, in words, not the Go call that failed.
func TestMessagesSayNoGoInternals(t *testing.T) {
	cases := t.TempDir()
	os.MkdirAll(filepath.Join(cases, "clean"), 0o755)
	os.WriteFile(filepath.Join(cases, "clean", "journal.json"), []byte("{}"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ptxas", "nope.log"}, "nope.log: no such file or directory"},
		{[]string{"report", "nope.json"}, "nope.json: no such file or directory"},
		{[]string{"check", "nope.json"}, "nope.json: no such file or directory"},
		{[]string{"ptxas", "--out", filepath.Join(cases, "none", "r.txt"), cleanLog}, "no such file or directory"},
		{[]string{"demo", "--trend", "--dir", cases, "--out", filepath.Join(t.TempDir(), "t.html")}, "result.json: no such file or directory"},
	} {
		_, _, stderr := kg(t, "", tc.args...)
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: %q does not say %q", tc.args, stderr, tc.want)
		}
		for _, internal := range []string{"stat ", "statat", "open ", "openat", "context canceled", "exec:"} {
			if strings.Contains(stderr, internal) {
				t.Errorf("%q: %q says %q", tc.args, stderr, internal)
			}
		}
	}
}

// kernel-gate run with a tool that is not there ends with a report (exit 1) whose first
// finding names the tool and that it is missing, not with a bare error.
func TestRunWithoutNVCCReportsIt(t *testing.T) {
	code, out, stderr := kg(t, "", "run", "--no-base", "--nvcc", "kernel-gate-no-such-nvcc", "--artifacts", t.TempDir(), "--format", "json")
	if code != exitFail {
		t.Fatalf("exit %d, want %d: %s", code, exitFail, stderr)
	}
	res := decode(t, out)
	for _, g := range res.Gates {
		if len(g.Findings) == 0 {
			continue
		}
		if msg := g.Findings[0].Message; !strings.Contains(msg, "kernel-gate-no-such-nvcc is not on PATH") || strings.Contains(msg, "exec:") {
			t.Errorf("the first finding (%s): %q, want it to name the missing nvcc", g.Name, msg)
		}
		return
	}
	t.Errorf("no finding: %s", out)
}

// storeOf is a directory store of the recorded cases' results, one commit each.
func storeOf(t *testing.T, cases ...string) string {
	t.Helper()
	store := filepath.Join(t.TempDir(), "store")
	for _, c := range cases {
		if code, _, stderr := kg(t, "", "baseline", "update", "--store", store, "--commit", c+"0123456789abcdef", filepath.Join("testdata", "replay", c, "result.json")); code != exitPass {
			t.Fatalf("baseline update %s: exit %d: %s", c, code, stderr)
		}
	}
	return store
}
