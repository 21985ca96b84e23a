//go:build unix

package abrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// fakeScript is the fake harness every test runs (see its header for its settings).
func fakeScript(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fake-harness.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakes are the two sides' fake harnesses sharing an order log.
type fakes struct {
	dir, order string
	base, head Command
}

// newFakes makes base and head commands; extra settings go to each side.
func newFakes(t *testing.T, baseArgs, headArgs []string) fakes {
	t.Helper()
	dir := t.TempDir()
	f := fakes{dir: dir, order: filepath.Join(dir, "order")}
	mk := func(side string, args []string) Command {
		argv := []string{"sh", fakeScript(t), "state=" + filepath.Join(dir, side+".count"), "side=" + side, "order=" + f.order}
		return Command{Argv: append(argv, args...)}
	}
	f.base, f.head = mk("base", append([]string{"seed=1"}, baseArgs...)), mk("head", append([]string{"seed=2"}, headArgs...))
	return f
}

// options are fast defaults: no nvidia-smi, short timeouts, the default judge.
func options(f fakes, artifacts string) Options {
	return Options{
		Base: f.base, Head: f.head,
		Settings:    Settings{Samples: 30, Timeout: 20 * time.Second, BuildTimeout: 20 * time.Second},
		ArtifactDir: artifacts,
		NvidiaSMI:   "/nonexistent/nvidia-smi",
	}
}

func decodeData(t *testing.T, g result.Gate) Data {
	t.Helper()
	var d Data
	if err := json.Unmarshal(g.Data, &d); err != nil {
		t.Fatalf("gate data: %v\n%s", err, g.Data)
	}
	return d
}

func verdicts(d Data) map[string]speedup.Verdict {
	m := map[string]speedup.Verdict{}
	for _, c := range d.Comparisons {
		m[c.Kernel+" × "+c.Shape] = c.Verdict
	}
	return m
}

func findings(g result.Gate, sev result.Severity, metric string) []string {
	var out []string
	for _, f := range g.Findings {
		if f.Severity == sev && (metric == "" || f.Metric == metric) {
			out = append(out, f.Message)
		}
	}
	return out
}

func dump(g result.Gate) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "verdict %s: %s\n", g.Verdict, g.Summary)
	for _, f := range g.Findings {
		fmt.Fprintf(&b, "  %s %s %s: %s\n", f.Severity, f.Metric, f.Kernel, f.Message)
	}
	return b.String()
}

func readBench(t *testing.T, path string) *benchfile.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := benchfile.Read(fh)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// Head's gemm 5% slower: the gate fails on gemm, softmax is the same; the rounds ran in
// ABBA order after a warm-up; the merged files re-judge to the same verdicts.
func TestSlowerHeadFails(t *testing.T) {
	f := newFakes(t, nil, []string{"factor=1.05"})
	art := t.TempDir()
	g, err := Run(context.Background(), options(f, art))
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	v := verdicts(d)
	if g.Verdict != result.Fail || v["gemm × small"] != speedup.Slower || v["softmax × small"] != speedup.Same {
		t.Fatalf("want gemm slower and softmax same, a failed gate; got %v\n%s", v, dump(g))
	}
	if d.Runner.Rounds < speedup.DefaultMinRounds || d.Runner.Rounds != d.Runner.RoundsRun || d.Runner.Stopped != StopDecided {
		t.Errorf("rounds %d of %d run, stopped %q", d.Runner.Rounds, d.Runner.RoundsRun, d.Runner.Stopped)
	}
	// The order: warm-up base, head; then round k base first when k (0-based) is even.
	raw, err := os.ReadFile(f.order)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2*(d.Runner.RoundsRun+1) {
		t.Fatalf("%d runs for %d rounds and a warm-up", len(lines), d.Runner.RoundsRun)
	}
	for k := 0; k <= d.Runner.RoundsRun; k++ {
		want := []string{"base", "head"}
		if k > 0 && (k-1)%2 == 1 {
			want = []string{"head", "base"}
		}
		for j, side := range want {
			if got := lines[2*k+j]; got != fmt.Sprintf("%s %d", side, k+1) {
				t.Fatalf("run %d of round %d: %q, want %s first (ABBA)\n%s", j, k, got, want[0], raw)
			}
		}
	}
	// The merged files: one round per kept round, re-judged alike by bench compare's judge.
	if d.Runner.BaseFile != filepath.Join(art, "base.json") || d.Runner.HeadFile != filepath.Join(art, "head.json") {
		t.Fatalf("merged files %q, %q", d.Runner.BaseFile, d.Runner.HeadFile)
	}
	base, head := readBench(t, d.Runner.BaseFile), readBench(t, d.Runner.HeadFile)
	for _, r := range append(base.Results, head.Results...) {
		if len(r.RoundsUs) != d.Runner.Rounds || len(r.RoundsUs[0]) != 30 {
			t.Fatalf("%s × %s: %d rounds of %d", r.Kernel, r.Shape, len(r.RoundsUs), len(r.RoundsUs[0]))
		}
	}
	if head.Device.Name != "NVIDIA H200" || head.Request == nil || head.Request.Rounds != d.Runner.Rounds {
		t.Errorf("merged head: device %+v, request %+v", head.Device, head.Request)
	}
	again, err := speedup.Compare(base, head, speedup.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := verdicts(decodeData(t, again)); fmt.Sprint(got) != fmt.Sprint(v) {
		t.Errorf("bench compare of the merged files says %v, the run %v", got, v)
	}
	for _, side := range []string{"base", "head"} {
		log, err := os.ReadFile(filepath.Join(art, side+"-harness.log"))
		if err != nil || !strings.Contains(string(log), "fake-harness: "+side+" run 2") {
			t.Errorf("%s log: %v\n%.300s", side, err, log)
		}
	}
	// nvidia-smi is missing: said, not silently skipped.
	if w := findings(g, result.Warning, MetricClocks); len(w) != 1 || !strings.Contains(w[0], "not found") {
		t.Errorf("clock warnings: %q", w)
	}
}

// A/A: the same harness twice is the same, and the gate passes.
func TestAAIsSame(t *testing.T) {
	f := newFakes(t, nil, nil)
	g, err := Run(context.Background(), options(f, ""))
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(decodeData(t, g))
	if g.Verdict != result.Pass || v["gemm × small"] != speedup.Same || v["softmax × small"] != speedup.Same {
		t.Fatalf("A/A: %v\n%s", v, dump(g))
	}
}

// A harness that fails on round 3 fails the gate, naming the side, the round and why,
// and quoting its output.
func TestCrashNamesSideAndRound(t *testing.T) {
	f := newFakes(t, nil, []string{"fail_on=4"}) // run 1 is the warm-up
	art := t.TempDir()
	g, err := Run(context.Background(), options(f, art))
	if err != nil {
		t.Fatal(err)
	}
	errs := findings(g, result.Error, MetricRun)
	if g.Verdict != result.Fail || len(errs) != 1 {
		t.Fatalf("want one run error\n%s", dump(g))
	}
	for _, want := range []string{"head harness, round 3 failed: the harness exited with status 1", "illegal memory access", filepath.Join(art, "head-harness.log")} {
		if !strings.Contains(errs[0], want) {
			t.Errorf("the finding does not say %q: %s", want, errs[0])
		}
	}
	d := decodeData(t, g)
	if fl := d.Runner.Failure; fl == nil || fl.Side != Head || fl.Round != 3 || d.Runner.Stopped != StopFailed || len(d.Comparisons) != 0 {
		t.Errorf("failure %+v, stopped %q, %d comparisons", fl, d.Runner.Stopped, len(d.Comparisons))
	}
}

// A harness that hangs is killed at its timeout with its process group.
func TestHangingHarnessIsKilled(t *testing.T) {
	f := newFakes(t, []string{"hang_on=2"}, nil)
	o := options(f, "")
	o.Settings.Timeout = 400 * time.Millisecond
	start := time.Now()
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s", took)
	}
	errs := findings(g, result.Error, MetricRun)
	if g.Verdict != result.Fail || len(errs) != 1 || !strings.Contains(errs[0], "base harness, round 1") || !strings.Contains(errs[0], "timed out after 400ms") {
		t.Fatalf("want a timeout of base round 1\n%s", dump(g))
	}
	raw, err := os.ReadFile(filepath.Join(f.dir, "base.count.child"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	deadline := time.Now().Add(2 * time.Second)
	for pid > 0 && alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the hung harness's child %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether a process runs; a zombie (killed, not yet reaped) does not.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// No file and a broken file are failures, never passes.
func TestMissingOrInvalidFileFails(t *testing.T) {
	for _, tc := range []struct{ setting, want string }{
		{"nofile_on=1", "base harness, warm-up round failed: it wrote no file at KG_OUT"},
		{"bad_on=3", "base harness, round 2 failed: it wrote an invalid file"},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			f := newFakes(t, []string{tc.setting}, nil)
			art := t.TempDir()
			g, err := Run(context.Background(), options(f, art))
			if err != nil {
				t.Fatal(err)
			}
			errs := findings(g, result.Error, MetricRun)
			if g.Verdict != result.Fail || len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
				t.Fatalf("want %q\n%s", tc.want, dump(g))
			}
			if tc.setting == "bad_on=3" {
				if _, err := os.Stat(filepath.Join(art, "failed-base-round2.json")); err != nil {
					t.Errorf("the broken file was not kept: %v", err)
				}
			}
		})
	}
}

// A harness that reports an error for a result (and exits 0) has it judged: an error in
// head fails the gate.
func TestHarnessErrorInHeadFails(t *testing.T) {
	f := newFakes(t, nil, []string{"errors_on=5"})
	g, err := Run(context.Background(), options(f, ""))
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail || len(findings(g, result.Error, speedup.MetricHarnessError)) != 1 {
		t.Fatalf("want the harness's error to fail the gate\n%s", dump(g))
	}
}

// smiStream says what the fake nvidia-smi prints when started with -lms (a stream): a line
// every 10 ms, line (default: the one-shot's), or throttled while the file mark holds
// markRound, or bad (default "garbage") as its badOn-th line. It exits with exitCode, after
// printing exitMsg on stderr, after exitAfter lines (0: never; -1: at once), or once mark
// holds exitRound. So that a slow machine cannot run a round between two of the stream's
// lines (or looks at mark), it leaves files in its directory that a fake harness can wait
// for (wait_on): once the runner has read its n-th line, printed<n> for n up to 3; once
// the runner has read the first line it printed while mark held R, or just before it exits
// for exitRound R, seen.R.
type smiStream struct {
	line                       string
	mark, markRound, throttled string
	bad                        string
	badOn, exitAfter, exitCode int
	exitRound, exitMsg         string
	huge                       bool // first 1 MiB without a newline, then nothing more
}

// readThroughBytes of empty lines, which the runner's reader passes over, follow each line
// the fake nvidia-smi's marker files speak of. The write returns only once all but a pipe's
// capacity (64 KiB on Linux and macOS) and the reader's buffer (maxClockLine) of them has
// been read, so by then the line before them has been read and kept: a marker file means
// that the runner has the line, not merely that the line was written into the pipe while
// the runner's reader was not yet scheduled (which failed TestClockStreamTrouble on a
// loaded machine: the round that waited for printed2 was judged before line 2 was read).
const readThroughBytes = 128 << 10

// fakeSMIPrinting puts an nvidia-smi on PATH that prints line, and special on its on-th
// one-shot call; started with -lms it streams as st says (nil: line every 10 ms). It logs
// its arguments, one call a line, to argsLog, and a stream its pid to dir/stream.pid.
func fakeSMIPrinting(t *testing.T, line, special string, on int, st *smiStream) (argsLog, dir string) {
	t.Helper()
	dir = t.TempDir()
	argsLog = filepath.Join(dir, "args")
	if st == nil {
		st = &smiStream{}
	}
	huge := ":"
	if st.huge {
		huge = `head -c 1048576 /dev/zero | tr '\0' x; exec sleep 60`
	}
	q := procgroup.ShellQuote
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	script := strings.NewReplacer(
		"@DIR@", q(dir), "@ON@", strconv.Itoa(on), "@SPECIAL@", q(special), "@LINE@", q(line),
		"@STREAM@", q(def(st.line, line)), "@MARK@", q(st.mark), "@THROTTLEDON@", q(st.markRound),
		"@THROTTLED@", q(st.throttled), "@BADON@", strconv.Itoa(st.badOn), "@BAD@", q(def(st.bad, "garbage")),
		"@EXITAFTER@", strconv.Itoa(st.exitAfter), "@EXITCODE@", strconv.Itoa(st.exitCode),
		"@EXITROUND@", q(st.exitRound), "@EXITMSG@", q(st.exitMsg), "@HUGE@", huge,
		"@READTHROUGH@", fmt.Sprintf(`head -c %d /dev/zero | tr '\0' '\n'`, readThroughBytes),
	).Replace(`#!/bin/sh
echo "$@" >>@DIR@/args
bye() { [ -n @EXITMSG@ ] && echo @EXITMSG@ >&2; exit @EXITCODE@; }
read_through() { @READTHROUGH@; }
case " $* " in
*" -lms "*)
  echo $$ >@DIR@/stream.pid
  [ @EXITAFTER@ -lt 0 ] && bye
  @HUGE@
  n=0
  while :; do
    n=$((n + 1))
    m=
    [ -n @MARK@ ] && m=$(cat @MARK@ 2>/dev/null)
    if [ -n @EXITROUND@ ] && [ "$m" = @EXITROUND@ ]; then : >@DIR@/seen.$m; bye
    elif [ -n @THROTTLEDON@ ] && [ "$m" = @THROTTLEDON@ ]; then echo @THROTTLED@
    elif [ $n -eq @BADON@ ]; then echo @BAD@
    else echo @STREAM@; fi
    if [ -n "$m" ] && [ ! -e @DIR@/seen.$m ]; then read_through; : >@DIR@/seen.$m; fi
    [ $n -le 3 ] && { read_through; : >@DIR@/printed$n; }
    [ @EXITAFTER@ -gt 0 ] && [ $n -ge @EXITAFTER@ ] && bye
    sleep 0.01
  done ;;
esac
n=$(( $(cat @DIR@/count 2>/dev/null || echo 0) + 1 )); echo $n >@DIR@/count
if [ $n -eq @ON@ ]; then echo @SPECIAL@; else echo @LINE@; fi
`)
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	return argsLog, dir
}

const (
	smiCool      = "1980, 45, 0x0000000000000000"
	smiWarm      = "1755, 50, 0x0000000000000000"
	smiThrottled = "1410, 88, 0x0000000000000020"
	smiQuery     = "--query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,nounits"
)

// checkReadOnly: every call of the fake nvidia-smi was the query (one-shot, or the stream of
// the first GPU every 100 ms), nothing else.
func checkReadOnly(t *testing.T, argsLog string) (oneShots, streams int) {
	t.Helper()
	raw, err := os.ReadFile(argsLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		switch line {
		case smiQuery:
			oneShots++
		case smiQuery + " --id=0 -lms 100":
			streams++
		default:
			t.Errorf("nvidia-smi was called with %q", line)
		}
	}
	return oneShots, streams
}

// streamGone fails when the stream's nvidia-smi, or anything in its process group (a
// shell's sleep), outlived the run.
func streamGone(t *testing.T, dir string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "stream.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if pid <= 0 {
		t.Fatalf("stream.pid: %q", raw)
	}
	// SIGKILL is delivered, not waited for: on a loaded machine a killed process may take a
	// moment to go.
	var left []int
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left = groupMembers(pid)
		if (!alive(pid) && len(left) == 0) || time.Now().After(end) {
			break
		}
	}
	if alive(pid) {
		t.Errorf("the stream's nvidia-smi (pid %d) outlived the run", pid)
	}
	if len(left) > 0 {
		t.Errorf("the stream's process group %d outlived the run: pids %v", pid, left)
	}
}

// groupMembers lists the live (not zombie) processes of process group pgid, from /proc
// (none where there is no /proc).
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold ") ".
		i := bytes.LastIndex(stat, []byte(") "))
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+2:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A round during which nvidia-smi's stream reports a throttle reason is dropped and
// reported; the stream is asked once (after one query that learns the reasons field) and is
// gone, with its process group, when the run is.
func TestThrottledRoundIsDropped(t *testing.T) {
	fs := newServeFakes(t, nil, nil)
	mark := filepath.Join(t.TempDir(), "round")
	args, dir := fakeSMIPrinting(t, smiCool, "", 0, &smiStream{mark: mark, markRound: "2", throttled: smiThrottled})
	for _, c := range []*Command{&fs.base, &fs.head} {
		// Every round (the warm-up too) has a line of the stream of its own: the one printed
		// throttled for round 2, and one for round 3 after it, which leaves round 4 clear.
		c.Argv = append(c.Argv, "round_ms=40", "mark="+mark, "wait_on=*:"+filepath.Join(dir, "seen.{round}"))
	}
	o := serveOptions(fs, "")
	o.NvidiaSMI = ""
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	var dropped []int
	for _, c := range d.Runner.DroppedRounds {
		dropped = append(dropped, c.Round)
		if fmt.Sprint(c.ReasonNames) != "[SwThermalSlowdown]" || *c.SMClockMHz != 1410 || *c.TemperatureC != 88 {
			t.Errorf("dropped round %+v", c)
		}
	}
	// Round 2's readings are throttled; round 3's too, as a rule: the newest reading before
	// it began, which stands for its start, came while round 2 ran.
	if len(dropped) == 0 || dropped[0] != 2 || len(dropped) > 2 || (len(dropped) == 2 && dropped[1] != 3) {
		t.Fatalf("dropped rounds %v, want 2 (and perhaps 3)\n%s", dropped, dump(g))
	}
	if d.Runner.Rounds != d.Runner.RoundsRun-len(dropped) || len(d.Runner.Clocks) != d.Runner.RoundsRun+1 {
		t.Errorf("%d rounds kept of %d run, %d clock readings", d.Runner.Rounds, d.Runner.RoundsRun, len(d.Runner.Clocks))
	}
	for i, c := range d.Runner.Clocks {
		if c.Round != i {
			t.Errorf("clock reading %d is round %d's", i, c.Round)
		}
	}
	for _, c := range d.Comparisons {
		if c.DroppedRounds != len(dropped) || c.Rounds != d.Runner.Rounds {
			t.Errorf("%s: %d rounds, %d dropped", c.Kernel, c.Rounds, c.DroppedRounds)
		}
	}
	if w := findings(g, result.Warning, MetricThrottled); len(w) != 1 {
		t.Errorf("throttle warnings: %q", w)
	}
	if n := findings(g, result.Notice, MetricClocks); len(n) != 1 || !strings.Contains(n[0], "SM clock 1980 MHz, temperature 45 °C") {
		t.Errorf("clock notices: %q", n)
	}
	if w := findings(g, result.Warning, MetricClocks); len(w) != 0 {
		t.Errorf("clock warnings: %q", w)
	}
	if g.Verdict != result.Pass {
		t.Errorf("an A/A run with a dropped round: %s\n%s", g.Verdict, dump(g))
	}
	if one, streams := checkReadOnly(t, args); one != 1 || streams != 1 {
		t.Errorf("nvidia-smi asked %d times once and started %d streams, want 1 and 1", one, streams)
	}
	streamGone(t, dir)
}

// A stream that ends, or prints what is not a reading, is said once; rounds it gives no
// reading for are read by one query each after the round, and one that query finds
// throttled is still dropped: a line that is not a reading never passes as unthrottled.
func TestClockStreamTrouble(t *testing.T) {
	for _, tc := range []struct {
		name   string
		st     smiStream
		on     int      // the one-shot call that reports throttling (1 is the probe, 3 round 1)
		warns  []string // the clock warnings, in order
		drop   bool     // round 1 is dropped
		stream bool     // the stream's readings are used
		// hold is the fake harness's setting that holds the warm-up round (run 1) until the
		// stream has done what it must have done by then, in the stream's directory: a slow
		// machine may run the round before the stream's first line (or its end)
		hold string
	}{
		{"ends at once", smiStream{exitAfter: -1}, 3,
			[]string{"nvidia-smi's stream of readings ended (nvidia-smi exited with status 0): from then on the clocks were read once after each round"}, true, false,
			"wait_gone=1:stream.pid"},
		{"fails at once", smiStream{exitAfter: -1, exitCode: 15, exitMsg: "Unable to determine the device handle for GPU0000:18:00.0: Unknown Error"}, 3,
			[]string{"nvidia-smi's stream of readings ended (nvidia-smi exited: exit status 15: Unable to determine the device handle for GPU0000:18:00.0: Unknown Error)"}, true, false,
			"wait_gone=1:stream.pid"},
		{"a garbage line", smiStream{badOn: 1}, 0,
			[]string{`nvidia-smi's stream printed "garbage", which is not a reading: such lines were not taken as unthrottled`}, false, true,
			"wait_on=1:printed2"},
		{"a line whose reasons are not a mask", smiStream{badOn: 2, bad: "1980, 45, throttled"}, 0,
			[]string{`nvidia-smi's stream printed "1980, 45, throttled", which is not a reading`}, false, true,
			"wait_on=1:printed2"},
		{"only lines that are not readings", smiStream{line: "1980, 45, 0x00000000000000zz"}, 3,
			[]string{`nvidia-smi's stream printed "1980, 45, 0x00000000000000zz", which is not a reading`,
				"nvidia-smi's stream of readings had no recent one after round 0 (it printed lines that were not readings): such rounds' clocks were read once after the round"}, true, false,
			"wait_on=1:printed1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, dir := fakeSMIPrinting(t, smiCool, smiThrottled, tc.on, &tc.st)
			k, file, _ := strings.Cut(tc.hold, ":")
			hold := k + ":" + filepath.Join(dir, file)
			f := newFakes(t, []string{hold}, []string{hold})
			o := options(f, "")
			o.NvidiaSMI = ""
			g, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			d := decodeData(t, g)
			w := findings(g, result.Warning, MetricClocks)
			if len(w) != len(tc.warns) {
				t.Errorf("clock warnings %q, want %q", w, tc.warns)
			} else {
				for i := range w {
					if !strings.Contains(w[i], tc.warns[i]) {
						t.Errorf("clock warning %q, want %q", w[i], tc.warns[i])
					}
				}
			}
			if tc.drop && (len(d.Runner.DroppedRounds) != 1 || d.Runner.DroppedRounds[0].Round != 1) {
				t.Errorf("dropped %+v, want round 1 (the query after it reported throttling)", d.Runner.DroppedRounds)
			}
			if !tc.drop && len(d.Runner.DroppedRounds) != 0 {
				t.Errorf("dropped %+v", d.Runner.DroppedRounds)
			}
			if len(d.Runner.Clocks) != d.Runner.RoundsRun+1 {
				t.Errorf("%d readings for %d rounds and the warm-up", len(d.Runner.Clocks), d.Runner.RoundsRun)
			}
			one, streams := checkReadOnly(t, args)
			if streams != 1 {
				t.Errorf("%d streams started", streams)
			}
			if tc.stream && one != 1 {
				t.Errorf("%d one-shot queries, want only the first", one)
			}
			if !tc.stream && one != d.Runner.RoundsRun+2 {
				t.Errorf("%d one-shot queries, want the first and one per round (%d)", one, d.Runner.RoundsRun+1)
			}
			if n := findings(g, result.Warning, MetricClocks); tc.drop && len(findings(g, result.Warning, MetricThrottled)) != 1 {
				t.Errorf("no throttle warning; clock warnings %q", n)
			}
			streamGone(t, dir)
		})
	}
}

// A stream that exits in the middle of a run (the GPU lost) is said once; the rounds
// before read from it, every round after by one query of its own.
func TestClockStreamEndsMidway(t *testing.T) {
	fs := newServeFakes(t, nil, nil)
	mark := filepath.Join(t.TempDir(), "round")
	// The stream prints smiCool until round 2 begins; one-shot queries print smiWarm.
	args, dir := fakeSMIPrinting(t, smiWarm, "", 0, &smiStream{line: smiCool, mark: mark, exitRound: "2", exitCode: 15, exitMsg: "GPU is lost"})
	for _, c := range []*Command{&fs.base, &fs.head} {
		// Rounds 0 and 1 have lines of the stream of their own; round 2 holds until the
		// stream has seen it begin (and is going).
		c.Argv = append(c.Argv, "round_ms=20", "mark="+mark)
		for _, r := range []string{"0", "1", "2"} {
			c.Argv = append(c.Argv, "wait_on="+r+":"+filepath.Join(dir, "seen."+r))
		}
	}
	o := serveOptions(fs, "")
	o.NvidiaSMI = ""
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	if d.Runner.RoundsRun < 4 || len(d.Runner.Clocks) != d.Runner.RoundsRun+1 {
		t.Fatalf("%d readings for %d rounds and the warm-up\n%s", len(d.Runner.Clocks), d.Runner.RoundsRun, dump(g))
	}
	// Rounds 0 and 1 end before the stream does (round 2 holds until the stream has seen it
	// begin); round 2, and a round or two after it on a slow machine, may still be read from
	// the stream before its end is noticed; from the first queried round on, every round is
	// queried, and the last one is.
	queried, firstQueried := 0, -1
	for i, c := range d.Runner.Clocks {
		fromStream := *c.SMClockMHz == 1980
		if !fromStream {
			queried++
			if firstQueried < 0 {
				firstQueried = i
			}
		}
		if (i <= 1 && !fromStream) || (firstQueried >= 0 && fromStream) || (i == len(d.Runner.Clocks)-1 && fromStream) {
			t.Errorf("round %d's reading: SM clock %g MHz (1980 is the stream's, 1755 a query's)", i, *c.SMClockMHz)
		}
	}
	w := findings(g, result.Warning, MetricClocks)
	if len(w) != 1 || !strings.Contains(w[0], "nvidia-smi's stream of readings ended (nvidia-smi exited: exit status 15: GPU is lost): from then on the clocks were read once after each round") {
		t.Errorf("clock warnings %q", w)
	}
	if one, streams := checkReadOnly(t, args); one != 1+queried || streams != 1 {
		t.Errorf("%d one-shot queries and %d streams, want %d and 1", one, streams, 1+queried)
	}
	streamGone(t, dir)
}

// A stream line past the cap (1 MiB without a newline) ends the stream, its nvidia-smi
// killed, instead of growing memory; rounds are then read once each.
func TestClockStreamLineCap(t *testing.T) {
	_, dir := fakeSMIPrinting(t, smiCool, "", 0, &smiStream{huge: true})
	s, err := newSMI("nvidia-smi", nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.watch(context.Background(), 10*time.Millisecond, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	select {
	case <-w.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the stream did not end")
	}
	if ended, _ := w.trouble(); !strings.Contains(ended, "a line longer than 4096 bytes") {
		t.Errorf("ended: %q", ended)
	}
	if len(w.samples) != 0 {
		t.Errorf("%d readings kept", len(w.samples))
	}
	if _, ok := w.reading(1, time.Now().Add(-time.Second), time.Now()); ok {
		t.Error("a reading from a stream that printed none")
	}
	streamGone(t, dir)
}

// A round's reading folds the readings that arrived while it ran and the newest one before
// it began (the worst of each); a stale or ended stream gives none.
func TestClockReadingFolds(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := &clockWatch{interval: 100 * time.Millisecond}
	w.add(at(0), "1980, 40, 0x0000000000000000")
	w.add(at(100), "1980, 41, 0x0000000000000001")
	w.add(at(200), "1755, 44, 0x0000000000000004")
	w.add(at(300), "not a reading")
	w.add(at(350), "1995, 99, [N/A]x")
	w.add(at(400), "1980, 43, 0x0000000000000000")
	w.add(at(500), "1980, 42, 0x0000000000000000")
	for _, tc := range []struct {
		name     string
		from, to int
		ok       bool
		want     string // clock, temperature, reasons, names, throttled
	}{
		{"one reading and the one before", 90, 150, true, "1980 41 0x0000000000000001 [] false"},
		{"several: the worst", 50, 450, true, "1755 44 0x0000000000000005 [SwPowerCap] true"},
		{"none of its own: the newest before", 410, 450, true, "1980 43 0x0000000000000000 [] false"},
		{"the newest before counts, throttled", 210, 450, true, "1755 44 0x0000000000000004 [SwPowerCap] true"},
		{"only the newest before", 450, 550, true, "1980 43 0x0000000000000000 [] false"},
		{"bad lines are not readings", 290, 390, true, "1755 44 0x0000000000000004 [SwPowerCap] true"},
		{"a reading that arrived after the round is not its", 150, 190, true, "1980 41 0x0000000000000001 [] false"},
		{"stale", 2000, 2100, false, ""},
		{"fresh enough", 1700, 1800, true, "1980 42 0x0000000000000000 [] false"},
		{"before any", -100, -50, false, ""},
	} {
		c, ok := w.reading(7, at(tc.from), at(tc.to))
		if ok != tc.ok || c.Round != 7 {
			t.Errorf("%s: ok %v round %d", tc.name, ok, c.Round)
			continue
		}
		if !ok {
			continue
		}
		if got := fmt.Sprintf("%g %g %s %v %v", *c.SMClockMHz, *c.TemperatureC, c.Reasons, c.ReasonNames, c.Throttled); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if _, bad := w.trouble(); bad != "not a reading" {
		t.Errorf("bad line %q", bad)
	}
	// An ended stream gives no reading, even for readings it had.
	w.ended = "nvidia-smi exited with status 0"
	if _, ok := w.reading(7, at(50), at(450)); ok {
		t.Error("a reading from an ended stream")
	}
	// [N/A] reasons stay unchecked, as for one reading.
	c := foldClocks(1, []Clock{{Reasons: "[N/A]"}, {Reasons: "0x0000000000000000"}})
	if c.Reasons != "[N/A]" || c.Throttled {
		t.Errorf("folded %+v", c)
	}
}

// The readings kept are the newest maxClockSamples, read oldest first across the ring's
// wrap.
func TestClockRing(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }
	w := &clockWatch{interval: 100 * time.Millisecond}
	const extra = 10
	for i := range maxClockSamples + extra {
		reasons := "0x0000000000000000"
		if i < extra {
			reasons = "0x0000000000000004" // gone once the ring wraps
		}
		w.add(at(i), fmt.Sprintf("1980, %d, %s", i, reasons))
	}
	if len(w.samples) != maxClockSamples {
		t.Fatalf("%d readings kept", len(w.samples))
	}
	for _, tc := range []struct {
		name      string
		from, to  time.Time
		throttled bool
		hottest   int
	}{
		{"all kept", at(-1), at(maxClockSamples + extra), false, maxClockSamples + extra - 1},
		{"the newest before, across the wrap", at(maxClockSamples + 5).Add(time.Microsecond), at(maxClockSamples + 5).Add(time.Microsecond), false, maxClockSamples + 5},
		{"the newest before, before the wrap", at(maxClockSamples - 1).Add(time.Microsecond), at(maxClockSamples - 1).Add(time.Microsecond), false, maxClockSamples - 1},
	} {
		c, ok := w.reading(1, tc.from, tc.to)
		if !ok || c.Throttled != tc.throttled || *c.TemperatureC != float64(tc.hottest) {
			t.Errorf("%s: ok %v, %+v, want temperature %d", tc.name, ok, c, tc.hottest)
		}
	}
}

// Which lines of the stream are readings: numbers, or nvidia-smi's bracketed words.
func TestParseReading(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"1980, 34, 0x0000000000000000", true},
		{"345, 39, 0x0000000000000001", true},
		{" 1980 , 40 , 0x2", true},
		{"[N/A], [N/A], [N/A]", true},
		{"1980, [Not Supported], 0x0000000000000004", true},
		{"1980, 45, [Unknown Error]", true},
		{"garbage", false},
		{"No devices were found", false},
		{"1980, 45", false},
		{"1980, 45, 0x1, 4", false},
		{"1980, 45, throttled", false},
		{"1980, 45, 0x00000000000000zz", false},
		{"1980 MHz, 45, 0x0", false},
		{"NaN, 45, 0x0", false},
		{"1980, +Inf, 0x0", false},
		{"1980, 45, -1", false},
		{"1980, 45, 0x10000000000000000", false},
		{"1980, 45, [N/A", false},
		{"1980, 45, [[N/A]]", false},
		{", , ", false},
	} {
		c, err := parseReading(tc.line)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok %v", tc.line, err, tc.ok)
		}
		if err == nil {
			if want, _ := parseClock(tc.line, 0); !reflect.DeepEqual(want, c) {
				t.Errorf("%q: %+v, parseClock %+v", tc.line, c, want)
			}
		}
	}
}

// Clock event reasons nvidia-smi cannot give are said to be unchecked, not taken as none.
func TestUnknownReasonsAreReported(t *testing.T) {
	_, dir := fakeSMIPrinting(t, "1980, 45, [N/A]", "", 0, nil)
	// The warm-up round holds until the stream has printed a line.
	hold := "wait_on=1:" + filepath.Join(dir, "printed1")
	f := newFakes(t, []string{hold}, []string{hold})
	o := options(f, "")
	o.NvidiaSMI = ""
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	w := findings(g, result.Warning, MetricClocks)
	if len(w) != 1 || !strings.Contains(w[0], `no clock event reasons ("[N/A]")`) || len(decodeData(t, g).Runner.DroppedRounds) != 0 {
		t.Fatalf("warnings %q\n%s", w, dump(g))
	}
}

// Base and head on different devices: no comparison, after the warm-up only.
func TestDifferentDevicesCompareNothing(t *testing.T) {
	f := newFakes(t, nil, []string{"device=NVIDIA H100 80GB HBM3"})
	g, err := Run(context.Background(), options(f, ""))
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	if g.Verdict != result.Fail || len(findings(g, result.Error, speedup.MetricDevice)) != 1 || d.Runner.Stopped != StopDevices || d.Runner.RoundsRun != 0 {
		t.Fatalf("stopped %q after %d rounds\n%s", d.Runner.Stopped, d.Runner.RoundsRun, dump(g))
	}
	if d.BaseDevice.Name != "NVIDIA H200" || d.HeadDevice.Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("devices %+v / %+v", d.BaseDevice, d.HeadDevice)
	}
}

// The rounds budget stops the loop: what is left undecided is a warning, not a pass
// silently.
func TestRoundsBudgetStops(t *testing.T) {
	f := newFakes(t, nil, []string{"factor=1.05"})
	o := options(f, "")
	o.Settings.RoundsBudget = 4
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	if d.Runner.RoundsRun != 4 || d.Runner.Stopped != StopRounds || len(findings(g, result.Warning, MetricRounds)) != 1 {
		t.Fatalf("ran %d, stopped %q\n%s", d.Runner.RoundsRun, d.Runner.Stopped, dump(g))
	}
	for _, c := range d.Comparisons {
		if c.Verdict != speedup.Inconclusive {
			t.Errorf("%s after 4 rounds: %s", c.Kernel, c.Verdict)
		}
	}
}

// A cancelled run returns the context's error and leaves no harness running.
func TestCancel(t *testing.T) {
	f := newFakes(t, []string{"hang_on=3"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Run(ctx, options(f, "")); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("want a cancelled run, got %v", err)
	}
}

func TestParseClock(t *testing.T) {
	for _, tc := range []struct {
		line      string
		throttled bool
		names     string
		clock     string
	}{
		{"1980, 34, 0x0000000000000000", false, "[]", "1980"},
		{"345, 31, 0x0000000000000001", false, "[]", "345"},
		{"1755, 61, 0x0000000000000004", true, "[SwPowerCap]", "1755"},
		{"1410, 88, 0x0000000000000061", true, "[SwThermalSlowdown HwThermalSlowdown]", "1410"},
		{"[N/A], [N/A], [N/A]", false, "[]", "<nil>"},
		{" 1980 , 40 , 0x2", true, "[ApplicationsClocksSetting]", "1980"},
	} {
		c, err := parseClock(tc.line, 1)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		clock := "<nil>"
		if c.SMClockMHz != nil {
			clock = fmt.Sprint(*c.SMClockMHz)
		}
		if c.Throttled != tc.throttled || fmt.Sprint(c.ReasonNames) != tc.names || clock != tc.clock {
			t.Errorf("%q: throttled %v %v clock %s", tc.line, c.Throttled, c.ReasonNames, clock)
		}
	}
	if _, err := parseClock("No devices were found", 1); err == nil {
		t.Error("want an error for output that is not the query's")
	}
}

// Some git, for the worktree tests.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=kg", "-c", "user.email=kg@example.invalid", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// tempRepo makes a repository whose origin/main has factor 1 and whose HEAD (a branch) has
// headFactor; its build command writes the fake harness with the tree's factor.
func tempRepo(t *testing.T, headFactor string) (repo, baseRev, buildCmd string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo = t.TempDir()
	state := t.TempDir()
	gitT(t, repo, "init", "-q")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("factor", "1\n")
	write(".gitignore", "out/\n")
	gitT(t, repo, "add", ".")
	gitT(t, repo, "commit", "-q", "-m", "base")
	baseRev = gitT(t, repo, "rev-parse", "HEAD")
	gitT(t, repo, "update-ref", "refs/remotes/origin/main", baseRev)
	gitT(t, repo, "checkout", "-q", "-b", "change")
	write("factor", headFactor+"\n")
	gitT(t, repo, "commit", "-q", "--allow-empty", "-am", "head")
	// The build writes out/harness: the fake with this tree's factor and its own counter
	// (the trees differ only in their factor file).
	buildCmd = fmt.Sprintf(`mkdir -p out && side=$(basename "$PWD") && printf '#!/bin/sh\nexec sh %s state=%s/%%s.count side=%%s factor=%%s "$@"\n' "$side" "$side" "$(cat factor)" >out/harness && chmod +x out/harness`,
		fakeScript(t), state)
	return repo, baseRev, buildCmd
}

// worktreeOptions are the fast defaults of a run that builds base and head from git.
func worktreeOptions(w Worktree) Options {
	return Options{Worktree: &w, NvidiaSMI: "/nonexistent/nvidia-smi",
		Settings: Settings{Samples: 20, Timeout: 20 * time.Second, BuildTimeout: 20 * time.Second}}
}

// The worktree path: base built from the merge base in a temporary worktree, head from the
// working tree; the worktree is gone afterwards.
func TestWorktreeBuildsBaseAndHead(t *testing.T) {
	repo, baseRev, buildCmd := tempRepo(t, "1.10")
	o := worktreeOptions(Worktree{Dir: repo, Build: buildCmd, Harness: "./out/harness seed=3"})
	art := t.TempDir()
	o.ArtifactDir = art
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	v := verdicts(d)
	if g.Verdict != result.Fail || v["gemm × small"] != speedup.Slower || v["softmax × small"] != speedup.Same {
		t.Fatalf("head 10%% slower built from git: %v\n%s", v, dump(g))
	}
	if d.Runner.Mode != "worktree" || d.Runner.BaseRev != baseRev || d.Runner.BaseRef != DefaultBaseRef {
		t.Errorf("runner data %+v", d.Runner)
	}
	if _, err := os.Stat(d.Runner.BaseDir); err == nil {
		t.Errorf("the base worktree %s is still there", d.Runner.BaseDir)
	}
	if list := gitT(t, repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
	for _, side := range []string{"base", "head"} {
		if _, err := os.Stat(filepath.Join(art, "build-"+side+".log")); err != nil {
			t.Errorf("no %s build log: %v", side, err)
		}
	}
}

// A harness command is a shell command (sh -c), as run.targets' harness is: a pipe and an
// && list run in the worktree's harness and in the two given commands alike, and the A/B
// run judges what they wrote.
func TestShellHarnessCommands(t *testing.T) {
	repo, _, buildCmd := tempRepo(t, "1")
	o := worktreeOptions(Worktree{Dir: repo, Build: buildCmd, Harness: "test -x ./out/harness && ./out/harness seed=3 2>&1 | cat >&2"})
	f := newFakes(t, nil, nil)
	given := options(f, "")
	if err := (Sides{BaseCmd: "true && " + procgroup.ShellJoin(f.base.Argv) + " | cat", HeadCmd: procgroup.ShellJoin(f.head.Argv) + " 2>&1 | tee " + filepath.Join(f.dir, "head.out")}).Apply(&given, Settings{}); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{"worktree": o, "commands": given} {
		g, err := Run(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := decodeData(t, g)
		if g.Verdict != result.Pass || d.Runner.Rounds == 0 || len(d.Comparisons) == 0 {
			t.Errorf("%s: the same harness on both sides through a pipe:\n%s", name, dump(g))
		}
		if !strings.Contains(d.Runner.HeadCommand, "| ") {
			t.Errorf("%s: the head command is shown as %q, not as written", name, d.Runner.HeadCommand)
		}
	}
}

// A build that fails fails the gate, and the worktree is still removed.
func TestWorktreeBuildFailure(t *testing.T) {
	repo, _, _ := tempRepo(t, "1")
	o := Options{
		Worktree:  &Worktree{Dir: repo, Build: `if [ -e .git ] && [ -d .git ]; then echo "make: *** [harness] Error 2" >&2; exit 2; fi; true`, Harness: "./out/harness"},
		Settings:  Settings{Timeout: 20 * time.Second, BuildTimeout: 20 * time.Second},
		NvidiaSMI: "/nonexistent/nvidia-smi",
	}
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	errs := findings(g, result.Error, MetricBuild)
	// Only the working tree has a .git directory (a worktree has a .git file): head fails.
	if g.Verdict != result.Fail || len(errs) != 1 || !strings.Contains(errs[0], "head build failed") || !strings.Contains(errs[0], "Error 2") {
		t.Fatalf("want the head build to fail the gate\n%s", dump(g))
	}
	if list := gitT(t, repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
}

// No merge base: an error (the run cannot start), not a gate.
func TestWorktreeNoBase(t *testing.T) {
	repo, _, _ := tempRepo(t, "1")
	_, err := Run(context.Background(), Options{Worktree: &Worktree{Dir: repo, BaseRef: "origin/nope", Harness: "./x"}, NvidiaSMI: "/nonexistent"})
	if err == nil || !strings.Contains(err.Error(), "origin/nope") || !strings.Contains(err.Error(), "fetch-depth") {
		t.Fatalf("got %v", err)
	}
}

// A reference command runs once per round after base and head; its timings become head's
// reference timings (in the merged head file and the judge's speedup over the reference),
// and a reference that crashes fails the gate like any harness.
func TestReferenceTimedBesideHead(t *testing.T) {
	f := newFakes(t, nil, nil)
	art := t.TempDir()
	o := options(f, art)
	// The "reference" is the fake harness with every timing twice as long: head is 2× faster.
	o.Reference = Command{Argv: []string{"sh", fakeScript(t), "state=" + filepath.Join(f.dir, "ref.count"), "side=reference", "order=" + f.order, "seed=3", "factor=2", "slow=gemm"}}
	o.ReferenceName = "torch.sdpa"
	goal := 1.5
	o.Speedup = speedup.Config{Kernels: []speedup.Rule{{Match: "gemm", MinSpeedupVsReference: &goal}}}
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	if d.Runner.ReferenceCommand == "" {
		t.Error("the runner data does not name the reference command")
	}
	var gemm *speedup.Record
	for i := range d.Comparisons {
		if d.Comparisons[i].Kernel == "gemm" {
			gemm = &d.Comparisons[i]
		}
	}
	if gemm == nil || gemm.SpeedupVsReference == nil || gemm.SpeedupVsReference.Name != "torch.sdpa" || gemm.SpeedupVsReference.Speedup == nil {
		t.Fatalf("gemm's speedup over the reference: %+v\n%s", gemm, dump(g))
	}
	// The fake's factor=2 doubles only the gemm timings of the reference.
	if s := *gemm.SpeedupVsReference.Speedup; s < 1.8 || s > 2.2 {
		t.Errorf("gemm is %.3f× the reference, want about 2", s)
	}
	head := readBench(t, filepath.Join(art, "head.json"))
	for _, r := range head.Results {
		if r.Reference == nil || len(r.Reference.RoundsUs) != d.Runner.Rounds {
			t.Errorf("merged head %s × %s: reference %+v", r.Kernel, r.Shape, r.Reference)
		}
	}
	raw, _ := os.ReadFile(f.order)
	if got := strings.Count(string(raw), "reference "); got != d.Runner.RoundsRun+1 {
		t.Errorf("the reference ran %d times for %d rounds and a warm-up", got, d.Runner.RoundsRun)
	}

	// A reference that crashes in round 2 fails the gate and names itself.
	f2 := newFakes(t, nil, nil)
	o2 := options(f2, t.TempDir())
	o2.Reference = Command{Argv: []string{"sh", fakeScript(t), "state=" + filepath.Join(f2.dir, "ref.count"), "side=reference", "fail_on=3"}}
	g2, err := Run(context.Background(), o2)
	if err != nil {
		t.Fatal(err)
	}
	if errs := findings(g2, result.Error, MetricRun); g2.Verdict != result.Fail || len(errs) != 1 || !strings.Contains(errs[0], "reference harness, round 2") {
		t.Errorf("a crashing reference: %s", dump(g2))
	}
}

// Each side's Command.Env reaches its own harness runs only (base and head each have their
// own cache directories in kernel-gate run), and the runner's KG_ variables still win.
func TestCommandEnvPerSide(t *testing.T) {
	f := newFakes(t, nil, nil)
	seen := filepath.Join(f.dir, "seen")
	wrap := func(c Command, cache string) Command {
		script := `echo "$0 $SIDE_CACHE $KG_MODE" >>` + seen + `; exec sh "$@"`
		return Command{Argv: append([]string{"sh", "-c", script, cache}, c.Argv[1:]...),
			Env: []string{"SIDE_CACHE=" + cache, "KG_MODE=check"}}
	}
	o := options(f, t.TempDir())
	o.Base, o.Head = wrap(f.base, "base-cache"), wrap(f.head, "head-cache")
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) < 4 {
		t.Fatalf("runs seen: %q", lines)
	}
	for _, l := range lines {
		side := strings.TrimSuffix(strings.TrimSuffix(l, " bench"), " serve")
		if side == l || side != "base-cache base-cache" && side != "head-cache head-cache" {
			t.Errorf("a run saw %q (want its own side's cache, and KG_MODE=bench or serve: the serve handshake)", l)
		}
	}
}

// The stream as a real nvidia-smi printed it (testdata/smi-stream-h100.txt: the runner's
// query with --id=0 -lms 100 on an idle H100, driver 580.159.04, stopped after 1.5 s): every
// line is a reading, and a round over them reads the idle clock, its temperature and the
// GpuIdle bit, which is not a throttle.
func TestClockStreamRealLines(t *testing.T) {
	raw, err := os.ReadFile("testdata/smi-stream-h100.txt")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	w := &clockWatch{interval: clockInterval}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := parseReading(line); err != nil {
			t.Errorf("line %q: %v", line, err)
		}
		w.add(t0.Add(time.Duration(n)*clockInterval), line)
		n++
	}
	if n < 10 {
		t.Fatalf("%d readings in the capture", n)
	}
	if _, bad := w.trouble(); bad != "" {
		t.Errorf("a real line taken for a bad one: %q", bad)
	}
	c, ok := w.reading(3, t0, t0.Add(time.Duration(n-1)*clockInterval))
	if !ok {
		t.Fatal("no reading")
	}
	if got := fmt.Sprintf("%g %g %s %v %v", *c.SMClockMHz, *c.TemperatureC, c.Reasons, c.ReasonNames, c.Throttled); got != "345 40 0x0000000000000001 [] false" {
		t.Errorf("reading %s", got)
	}
}
