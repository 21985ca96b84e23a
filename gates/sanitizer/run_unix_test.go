//go:build unix

package sanitizer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// fakeSanitizer writes an executable compute-sanitizer stand-in into a fresh directory.
// body runs after the options are parsed: $tool, $save (the --save path) and $args (the
// whole command line) are set, and "$@" is the program and its arguments.
func fakeSanitizer(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "compute-sanitizer")
	script := `#!/bin/sh
args="$*"
tool=memcheck
save=
log=
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool=$2; shift 2 ;;
    --save) save=$2; shift 2 ;;
    --log-file) log=$2; shift 2 ;;
    --xml) shift ;;
    --*) shift 2 ;;
    *) break ;;
  esac
done
# compute-sanitizer's report goes to --log-file; fd 3 keeps the program's stdout.
exec 3>&1
[ -n "$log" ] && exec >"$log"
` + body
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// printed returns what compute-sanitizer itself printed in a capture: without the "+"
// echo and the exit= line that the capture script added.
func printed(t *testing.T, name string) string {
	t.Helper()
	var out []string
	for _, l := range strings.SplitAfter(string(readCapture(t, name)), "\n") {
		if strings.HasPrefix(l, "+ ") || strings.HasPrefix(l, "exit=") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

// replayScript makes a fake that prints, per tool, the text a real --xml run printed, copies
// its record file to the --save path and exits with the given status. It appends its command
// line and $KG_MODE to the returned args file.
func replayScript(t *testing.T, cases map[string][3]string) (bin, argsFile string) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("echo \"$args KG_MODE=$KG_MODE\" >> " + filepath.Join(dir, "args") + "\n")
	// The program's own output, cut without a newline as a PyTorch extension's build line
	// is: it must not glue itself to the report's first line.
	b.WriteString("printf 'Loading extension module flash_fwd_ext...' >&3\ncase $tool in\n")
	for tool, c := range cases {
		text := filepath.Join(dir, tool+".txt")
		if err := os.WriteFile(text, []byte(printed(t, c[0])), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  %s) cat %s\n", tool, text)
		if c[1] != "" {
			fmt.Fprintf(&b, "    cp %s \"$save\"\n", capturePath(c[1]))
		}
		fmt.Fprintf(&b, "    exit %s ;;\n", c[2])
	}
	b.WriteString("esac\nexit 99\n")
	return fakeSanitizer(t, b.String()), filepath.Join(dir, "args")
}

func TestRunToolsReplay(t *testing.T) {
	bin, argsFile := replayScript(t, map[string][3]string{
		ToolMemcheck:  {"sanitizer-h200-cuda13.0/xmlrun_memcheck_oobpad.txt", "sanitizer-h200-cuda13.0/xml_memcheck_oobpad.xml", "86"},
		ToolRacecheck: {"sanitizer-h200-cuda13.0/xmlrun_racecheck_race.txt", "sanitizer-h200-cuda13.0/xml_racecheck_race.xml", "86"},
		ToolInitcheck: {"sanitizer-h200-cuda13.0/xmlrun_initcheck_uninit.txt", "sanitizer-h200-cuda13.0/xml_initcheck_uninit.xml", "86"},
		ToolSynccheck: {"sanitizer-h200-cuda13.0/xmlrun_synccheck_race.txt", "sanitizer-h200-cuda13.0/xml_synccheck_race.xml", "0"},
	})
	art := filepath.Join(t.TempDir(), "artifacts")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runs, err := RunTools(ctx, []string{"./harness", "--flag"}, RunOptions{Sanitizer: bin, ArtifactDir: art, ExtraEnv: []string{"KG_MODE=sanitize"}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{
		"memcheck xml summary errors=257 warnings=0 not_printed=157 exit=86 launch",
		"  out-of-bounds error x100 /src/probe/bugs.cu:10 (0,0,0)/(1,0,0) _Z9oob_writePfi | __global__ write of size 4 bytes",
	}, {
		"racecheck xml summary errors=1 warnings=0 not_printed=0 exit=86 launch",
		// The analysis record's XML has no host stack: the name is the text's.
		"  race error x1 h358 /src/probe/bugs.cu:14 - smem_race(float *) | Write access at bugs.cu:14 and Write access at bugs.cu:14 [94 hazards], Read access at bugs.cu:15 [264 hazards]",
	}, {
		"initcheck xml summary errors=64 warnings=0 not_printed=0 exit=86 launch",
		"  uninitialized-read error x64 /src/probe/bugs.cu:20 (0,0,0)/(0,0,0) _Z11uninit_readPKfPf | __global__ read of size 4 bytes",
	}, {
		"synccheck xml summary errors=0 warnings=0 not_printed=0 exit=0",
	}}
	if len(runs) != 4 {
		t.Fatalf("%d runs", len(runs))
	}
	for i, r := range runs {
		if err := matchLines(render(r), want[i]); err != nil {
			t.Errorf("%s: %v", r.Tool, err)
		}
		if r.Log != filepath.Join(art, r.Tool+".log") || r.XML != filepath.Join(art, r.Tool+".xml") {
			t.Errorf("%s: artifacts %q %q", r.Tool, r.Log, r.XML)
		}
		if _, err := os.Stat(r.Log); err != nil {
			t.Error(err)
		}
		if out, err := os.ReadFile(filepath.Join(art, ProgramOut(r.Tool))); err != nil || string(out) != "Loading extension module flash_fwd_ext..." {
			t.Errorf("%s: the program's output kept apart = %q, %v", r.Tool, out, err)
		}
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	wantArgs := []string{
		"--tool memcheck --xml --save " + art + "/memcheck.xml --log-file " + art + "/memcheck.log --error-exitcode 86 --print-limit 10000 --demangle no --leak-check full --padding 4096 ./harness --flag KG_MODE=sanitize",
		"--tool racecheck --xml --save " + art + "/racecheck.xml --log-file " + art + "/racecheck.log --error-exitcode 86 --print-limit 10000 --demangle no --racecheck-report analysis ./harness --flag KG_MODE=sanitize",
		"--tool initcheck --xml --save " + art + "/initcheck.xml --log-file " + art + "/initcheck.log --error-exitcode 86 --print-limit 10000 --demangle no ./harness --flag KG_MODE=sanitize",
		"--tool synccheck --xml --save " + art + "/synccheck.xml --log-file " + art + "/synccheck.log --error-exitcode 86 --print-limit 10000 --demangle no ./harness --flag KG_MODE=sanitize",
	}
	if strings.Join(lines, "\n") != strings.Join(wantArgs, "\n") {
		t.Errorf("arguments\n got %q\nwant %q", lines, wantArgs)
	}
}

func TestArgs(t *testing.T) {
	got := strings.Join(Args(ToolMemcheck, "/a%p/m.xml", "/a%p/m.log", RunOptions{Padding: -1, PrintLimit: 7}), " ")
	if got != "--tool memcheck --xml --save /a%%p/m.xml --log-file /a%%p/m.log --error-exitcode 86 --print-limit 7 --demangle no --leak-check full" {
		t.Errorf("Args = %q", got)
	}
}

// TestRunToolsHang: a run that never ends is killed at its timeout with its whole process
// group (the fake and a child standing in for the target), promptly, and the tools after it
// are not run.
func TestRunToolsHang(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	bin := fakeSanitizer(t, `echo "========= COMPUTE-SANITIZER"
sleep 300 &
echo $$ $! > `+pids+`.tmp
mv `+pids+`.tmp `+pids+`
wait
`)
	start := time.Now()
	runs, err := RunTools(context.Background(), []string{"./harness"}, RunOptions{Sanitizer: bin, Timeout: 300 * time.Millisecond})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed > 3*time.Second {
		t.Errorf("RunTools returned after %v", elapsed)
	}
	hangtest.WaitGone(t, pids)
	if len(runs) != 4 {
		t.Fatalf("%d runs", len(runs))
	}
	r := runs[0]
	if !r.TimedOut || r.ExitCode != nil || len(r.Problems) != 1 || r.Problems[0] != "the kernel hung: killed after 300ms with its process group" {
		t.Errorf("hung run: timed out %v exit %v problems %q", r.TimedOut, r.ExitCode, r.Problems)
	}
	if r.Log != "" || r.XML != "" {
		t.Errorf("artifacts of a temporary directory kept: %q %q", r.Log, r.XML)
	}
	for _, r := range runs[1:] {
		if len(r.Problems) != 1 || r.Problems[0] != "not run: the memcheck run before it hung, and so would this one" || r.TimedOut {
			t.Errorf("%s: %q", r.Tool, r.Problems)
		}
	}
}

// TestRunToolsLeftovers: what a run leaves behind in its process group is killed when it
// ends (a target the sanitizer did not wait for).
func TestRunToolsLeftovers(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	clean := printed(t, "sanitizer-h200-cuda13.0/cs_synccheck_clean.txt")
	bin := fakeSanitizer(t, `sleep 300 >/dev/null 2>&1 &
echo $! > `+pids+`
cat <<'EOF'
`+clean+`EOF
echo '<ComputeSanitizerOutput/>' > "$save"
exit 0
`)
	runs, err := RunTools(context.Background(), []string{"./harness"}, RunOptions{Sanitizer: bin, Tools: []string{ToolSynccheck}})
	if err != nil || len(runs) != 1 || len(runs[0].Problems) != 0 || !runs[0].Summary {
		t.Fatalf("%v %+v", err, runs)
	}
	hangtest.WaitGone(t, pids)
}

func TestRunToolsCancelled(t *testing.T) {
	bin := fakeSanitizer(t, "exec sleep 300\n")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	runs, err := RunTools(ctx, []string{"./harness"}, RunOptions{Sanitizer: bin})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "memcheck") {
		t.Errorf("error = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("returned after %v", d)
	}
	if len(runs) != 1 || runs[0].TimedOut || len(runs[0].Problems) == 0 || !strings.HasPrefix(runs[0].Problems[0], "cancelled") {
		t.Errorf("runs %+v", runs)
	}
	if _, err := RunTools(ctx, []string{"./harness"}, RunOptions{Sanitizer: bin}); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v", err)
	}
}

func TestRunToolsMissing(t *testing.T) {
	t.Run("path", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "cuda", "bin", "compute-sanitizer")
		_, err := RunTools(context.Background(), []string{"./h"}, RunOptions{Sanitizer: missing})
		if !errors.Is(err, ErrSanitizerMissing) || !strings.Contains(err.Error(), missing) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("name", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := RunTools(context.Background(), []string{"./h"}, RunOptions{})
		if !errors.Is(err, ErrSanitizerMissing) || !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), `"compute-sanitizer"`) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("not executable", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "compute-sanitizer")
		if err := os.WriteFile(path, []byte("not a program"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := RunTools(context.Background(), []string{"./h"}, RunOptions{Sanitizer: path})
		if !errors.Is(err, ErrSanitizerMissing) || !strings.Contains(err.Error(), path) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("usage", func(t *testing.T) {
		for _, tt := range []struct {
			cmd  []string
			o    RunOptions
			want string
		}{
			{nil, RunOptions{}, "no command"},
			{[]string{"./h"}, RunOptions{Tools: []string{"memchek"}}, `unknown tool "memchek"`},
		} {
			if _, err := RunTools(context.Background(), tt.cmd, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		}
	})
}

// TestRunToolsFailures: what compute-sanitizer says when the target fails, when it cannot
// run, and when its exit status contradicts its summary.
func TestRunToolsFailures(t *testing.T) {
	emptyXML := `echo '<ComputeSanitizerOutput/>' > "$save"` + "\n"
	tests := []struct {
		name, capture, xml, exit string
		want                     []string
	}{
		{"target exit 3", "probe/h200-cuda13.0/mc_exit3.txt", emptyXML, "3", []string{
			"memcheck xml summary errors=0 warnings=0 not_printed=0 exit=3",
			"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 3",
		}},
		{"no CUDA", "probe/h200-cuda13.0/mc_nocuda.txt", "", "255", []string{
			"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=255",
			"  problem: the target application exited before its first CUDA call",
		}},
		{"bad option", "probe/h200-cuda13.0/cs_badtool.txt", "", "255", []string{
			"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=255",
			"  problem: compute-sanitizer ran nothing: sanitizer: ",
		}},
		{"XML without the text's records", "sanitizer-h200-cuda13.0/cs_memcheck_clean.txt", emptyXML, "86", []string{
			"memcheck text summary errors=4 warnings=0 not_printed=0 exit=86",
			"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
			"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
			"  leak error x1 - - - | 512 bytes allocated at main+0x8d7d",
			"  leak error x1 - - - | 512 bytes allocated at main+0x8dc7",
			"  problem: the XML record file holds 0 records but the text output printed 4",
		}},
		{"exit 86 and a clean summary", "sanitizer-h200-cuda13.0/cs_synccheck_clean.txt", emptyXML, "86", []string{
			"memcheck xml summary errors=0 warnings=0 not_printed=0 exit=86",
			"  problem: compute-sanitizer exited 86 (its --error-exitcode) although the summary says 0 errors",
		}},
		{"exit 0 with errors", "probe/h200-cuda13.0/mc_leak.txt", "", "0", []string{
			"memcheck text summary errors=1 warnings=0 not_printed=0 exit=0",
			"  leak error x1 - - - | 4096 bytes allocated at main+0x9b6e",
			"  problem: compute-sanitizer exited 0 although it found 1 errors and was run with --error-exitcode 86",
			"  problem: compute-sanitizer finished but wrote no XML record file",
		}},
		// A record file left by an earlier run is removed first, never read as this run's.
		{"stale XML", "sanitizer-h200-cuda13.0/cs_synccheck_clean.txt", "", "0", []string{
			"memcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
			"  problem: compute-sanitizer finished but wrote no XML record file",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := fakeSanitizer(t, "cat <<'EOF'\n"+printed(t, tt.capture)+"EOF\n"+tt.xml+"exit "+tt.exit+"\n")
			art := t.TempDir()
			if err := os.WriteFile(filepath.Join(art, "memcheck.xml"), readCapture(t, "sanitizer-h200-cuda13.0/xml_memcheck_oobpad.xml"), 0o644); err != nil {
				t.Fatal(err)
			}
			runs, err := RunTools(context.Background(), []string{"./h"}, RunOptions{Sanitizer: bin, Tools: []string{ToolMemcheck}, ArtifactDir: art})
			if err != nil || len(runs) != 1 {
				t.Fatalf("%v, %d runs", err, len(runs))
			}
			if err := matchLines(render(runs[0]), tt.want); err != nil {
				t.Error(err)
			}
			// The kept log alone says how the run ended (kernel-gate run --replay reads it).
			raw, err := os.ReadFile(filepath.Join(art, "memcheck.log"))
			if err != nil || !strings.HasSuffix(string(raw), "\nexit="+tt.exit+"\n") {
				t.Fatalf("the log does not end with exit=%s: %v", tt.exit, err)
			}
			again, err := ParseTextWith(bytes.NewReader(raw), "memcheck.log", ParseOptions{Tool: ToolMemcheck})
			if err == nil && (len(again) != 1 || again[0].ExitCode == nil || strconv.Itoa(*again[0].ExitCode) != tt.exit) {
				t.Errorf("the kept log reads back as %+v", again)
			}
		})
	}
}

// TestRunToolsTempDir: without an artifact directory the logs go to a temporary one that
// is removed.
func TestRunToolsTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	bin, _ := replayScript(t, map[string][3]string{
		ToolSynccheck: {"sanitizer-h200-cuda13.0/xmlrun_synccheck_sync.txt", "sanitizer-h200-cuda13.0/xml_synccheck_sync.xml", "86"},
	})
	runs, err := RunTools(context.Background(), []string{"./h"}, RunOptions{Sanitizer: bin, Tools: []string{ToolSynccheck}})
	if err != nil || len(runs) != 1 || runs[0].Errors != 16 || runs[0].Source != SourceXML || len(runs[0].Problems) != 0 || runs[0].Log != "" {
		t.Fatalf("%v %+v", err, runs)
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
