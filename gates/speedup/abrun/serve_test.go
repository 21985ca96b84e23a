//go:build unix

package abrun

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// serveFakes are base, head and a reference run as the fake harness of fakeserve_test.go,
// logging to one shared file.
type serveFakes struct {
	log                  string
	base, head, referent Command
}

func newServeFakes(t *testing.T, baseArgs, headArgs []string) serveFakes {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := serveFakes{log: filepath.Join(t.TempDir(), "log")}
	mk := func(side string, args []string) Command {
		return Command{Argv: append([]string{exe, "side=" + side, "log=" + f.log}, args...)}
	}
	f.base = mk("base", append([]string{"seed=1"}, baseArgs...))
	f.head = mk("head", append([]string{"seed=2"}, headArgs...))
	f.referent = mk("reference", []string{"seed=3", "factor=2"})
	return f
}

// serveOptions: fast, no nvidia-smi, serving allowed, restarts every 4 rounds.
func serveOptions(f serveFakes, artifacts string) Options {
	return Options{
		Base: f.base, Head: f.head,
		Settings: Settings{Samples: 20, Timeout: 20 * time.Second, BuildTimeout: 20 * time.Second, Serve: ServeAuto,
			RestartEvery: 4, RoundTimeout: 10 * time.Second, WallBudget: time.Minute},
		ArtifactDir: artifacts,
		NvidiaSMI:   "/nonexistent/nvidia-smi",
		Environ:     append(os.Environ(), "KG_ABRUN_FAKE_HARNESS=1"),
	}
}

// entry is one line of the fakes' log: "start base serve 123", "round head 4 123".
type entry struct {
	kind, side, mode string
	n, pid           int
}

func readLog(t *testing.T, path string) []entry {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []entry
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		w := strings.Fields(l)
		if len(w) < 3 {
			continue
		}
		e := entry{kind: w[0], side: w[1]}
		switch w[0] {
		case "start":
			e.mode = w[2]
			e.n, _ = strconv.Atoi(w[3])
			e.pid = e.n
		case "exit":
			e.n, _ = strconv.Atoi(w[2])
			e.pid = e.n
		default:
			e.n, _ = strconv.Atoi(w[2])
			if len(w) > 3 {
				e.pid, _ = strconv.Atoi(w[3])
			}
		}
		out = append(out, e)
	}
	return out
}

func count(es []entry, kind, side, mode string) int {
	n := 0
	for _, e := range es {
		if e.kind == kind && e.side == side && (mode == "" || e.mode == mode) {
			n++
		}
	}
	return n
}

// lifetimes is how many serving processes a side starts for rounds run, p at a time, each
// answering its own warm-up round and then at most k rounds.
func lifetimes(roundsRun, p, k int) int { return p * max(1, (roundsRun+p*k-1)/(p*k)) }

// Served rounds: base, head and the reference each start 2 processes side by side per 8
// rounds, each process answers its own warm-up round and then every other round, at most 4,
// in ABBA order by request, and the judge finds head's 5% slower gemm; what the harnesses
// print on stdout (answer-like JSON included) goes to their logs, never into the answers. The
// merged files and the runner's record judge again (Judge, as a replay does) to the same gate.
func TestServedRoundsABBA(t *testing.T) {
	const p, k = 2, 4
	f := newServeFakes(t, []string{"noise=1"}, []string{"factor=1.05", "noise=1"})
	art := t.TempDir()
	o := serveOptions(f, art)
	o.Settings.Servers = p
	o.Reference = f.referent
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeData(t, g)
	v := verdicts(d)
	if g.Verdict != result.Fail || v["gemm × small"] != speedup.Slower || v["softmax × small"] != speedup.Same {
		t.Fatalf("want gemm slower, softmax same\n%s", dump(g))
	}
	sd := d.Runner.Serve
	if sd == nil || !sd.Serving || sd.RestartEvery != k || sd.Servers != p || len(sd.Sides) != 3 {
		t.Fatalf("serve data %+v", sd)
	}
	es := readLog(t, f.log)
	rounds := d.Runner.RoundsRun
	want := lifetimes(rounds, p, k)
	for i, side := range []string{"base", "head", "reference"} {
		if got := count(es, "start", side, "serve"); got != want || count(es, "start", side, "bench") != 0 {
			t.Errorf("%s: %d serving processes for %d rounds (want %d), %d bench runs", side, got, rounds, want, count(es, "start", side, "bench"))
		}
		if got := count(es, "exit", side, ""); got != want {
			t.Errorf("%s: %d processes ended at the end of their input, want %d", side, got, want)
		}
		if s := sd.Sides[i]; s.Side != Side(side) || !s.Serving || s.Starts != want || s.SetupSeconds <= 0 || s.RoundSeconds <= 0 || len(s.Setups) != want {
			t.Errorf("side record %+v", s)
		}
	}
	// Every process answers round 0 (its warm-up) first, then at most k rounds, each of
	// them p rounds after its previous one.
	byPid := map[int][]int{}
	for _, e := range es {
		if e.kind == "round" {
			byPid[e.pid] = append(byPid[e.pid], e.n)
		}
	}
	if len(byPid) != 3*want {
		t.Errorf("%d processes answered, want %d", len(byPid), 3*want)
	}
	for pid, ns := range byPid {
		if ns[0] != 0 || len(ns) > k+1 {
			t.Errorf("process %d answered rounds %v: want its warm-up (0) first, then at most %d", pid, ns, k)
		}
		for j := 2; j < len(ns); j++ {
			if ns[j] != ns[j-1]+p {
				t.Errorf("process %d answered rounds %v: want every %dth round", pid, ns, p)
			}
		}
	}
	// ABBA by request: round n (1-based) is the w-th of its set of processes (w = n-1 mod
	// p·k), answered by process w mod p of the set, base first when that process's number
	// in the set, its rounds so far (w div p) and the sets before add up to an even number.
	var order []string
	firstSide := map[int]map[string]int{} // pid → which side it was first in its rounds
	var last string
	for _, e := range es {
		if e.kind != "round" || e.side == "reference" || e.n == 0 {
			continue
		}
		order = append(order, e.side+" "+strconv.Itoa(e.n))
		if e.side == "base" {
			if firstSide[e.pid] == nil {
				firstSide[e.pid] = map[string]int{}
			}
			if last == "head "+strconv.Itoa(e.n) {
				firstSide[e.pid]["head"]++
			} else {
				firstSide[e.pid]["base"]++
			}
		}
		last = e.side + " " + strconv.Itoa(e.n)
	}
	if len(order) != 2*rounds {
		t.Fatalf("%d timed answers for %d rounds", len(order), rounds)
	}
	for n := 1; n <= rounds; n++ {
		set, w := (n-1)/(p*k), (n-1)%(p*k)
		first, second := "base", "head"
		if (w%p+w/p+set)%2 == 1 {
			first, second = "head", "base"
		}
		if order[2*(n-1)] != first+" "+strconv.Itoa(n) || order[2*(n-1)+1] != second+" "+strconv.Itoa(n) {
			t.Fatalf("round %d answered as %q, %q; want %s first", n, order[2*(n-1)], order[2*(n-1)+1], first)
		}
	}
	for pid, firsts := range firstSide {
		if len(byPid[pid]) > 2 && (firsts["base"] == 0 || firsts["head"] == 0) {
			t.Errorf("base's process %d answered %v, always with the same side first (%v)", pid, byPid[pid], firsts)
		}
	}
	for _, c := range d.Comparisons {
		if c.SpeedupVsReference == nil || c.WallSeconds == nil || *c.WallSeconds <= 0 || *c.WallSeconds > d.Runner.TimingSeconds {
			t.Errorf("%s × %s: reference %v, wall %v (timing %g s)", c.Kernel, c.Shape, c.SpeedupVsReference, c.WallSeconds, d.Runner.TimingSeconds)
		}
	}
	if len(d.Runner.Pairs) != 2 || d.Runner.Pairs[0].DecidedRounds == 0 {
		t.Errorf("pairs %+v", d.Runner.Pairs)
	}
	if !strings.Contains(g.Summary, "served (2 processes a side, each 4 rounds)") || !strings.Contains(g.Summary, "of wall time") {
		t.Errorf("summary %q", g.Summary)
	}
	log, err := os.ReadFile(filepath.Join(art, "base-harness.log"))
	if err != nil || !strings.Contains(string(log), "stdout is not where answers go") || !strings.Contains(string(log), "serving process 2") {
		t.Errorf("base log: %v\n%.500s", err, log)
	}
	if n := findings(g, result.Notice, MetricServe); len(n) != 1 || !strings.Contains(n[0], "base serves its rounds") {
		t.Errorf("serve notices %q", n)
	}

	// The replay's judgement: the merged files and the record, through Judge.
	var rec []result.Finding
	for _, fd := range g.Findings {
		if slices.Contains(Metrics(), fd.Metric) {
			rec = append(rec, fd)
		}
	}
	again, err := Judge(readBench(t, d.Runner.BaseFile), readBench(t, d.Runner.HeadFile), speedup.Config{}, d.Runner, rec)
	if err != nil {
		t.Fatal(err)
	}
	if again.Verdict != g.Verdict || again.Summary != g.Summary || string(again.Data) != string(g.Data) || len(again.Findings) != len(g.Findings) {
		t.Errorf("judged again: %s\nlive: %s", dump(again), dump(g))
	}
}

// P processes per side, each at most K rounds: an A/A pair is the same, each side's
// processes number P · ceil(rounds / (P·K)), and each ended at the end of its input.
func TestServedRestartsEveryK(t *testing.T) {
	for _, c := range []struct{ p, k int }{{1, 1}, {1, 3}, {3, 2}, {4, 4}} {
		f := newServeFakes(t, nil, nil)
		o := serveOptions(f, "")
		o.Settings.Servers, o.Settings.RestartEvery = c.p, c.k
		g, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		d := decodeData(t, g)
		if g.Verdict != result.Pass || verdicts(d)["gemm × small"] != speedup.Same {
			t.Fatalf("P=%d K=%d: A/A\n%s", c.p, c.k, dump(g))
		}
		es := readLog(t, f.log)
		want := lifetimes(d.Runner.RoundsRun, c.p, c.k)
		for _, side := range []string{"base", "head"} {
			if got := count(es, "start", side, "serve"); got != want || count(es, "exit", side, "") != want {
				t.Errorf("P=%d K=%d, %d rounds: %s started %d serving processes (want %d), %d ended", c.p, c.k, d.Runner.RoundsRun, side, got, want, count(es, "exit", side, ""))
			}
			// Each answered its warm-up and the rest in turn: rounds + one per process.
			if got := count(es, "round", side, ""); got != d.Runner.RoundsRun+want {
				t.Errorf("P=%d K=%d: %s answered %d requests for %d rounds and %d warm-ups", c.p, c.k, side, got, d.Runner.RoundsRun, want)
			}
		}
		if d.Runner.Serve.RestartEvery != c.k || d.Runner.Serve.Servers != c.p {
			t.Errorf("restart_every %d, servers %d", d.Runner.Serve.RestartEvery, d.Runner.Serve.Servers)
		}
	}
}

// At a restart the ending processes tear down while the next ones set up: each side's next
// process has started before its previous one has finished ending (a teardown slower than a
// start shows it), and every ending process is waited for.
func TestServedRestartOverlapsTeardown(t *testing.T) {
	slow := []string{"teardown_ms=1500"}
	f := newServeFakes(t, slow, slow)
	o := serveOptions(f, "")
	o.Settings.RestartEvery = 8
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Pass {
		t.Fatalf("A/A:\n%s", dump(g))
	}
	es := readLog(t, f.log)
	for _, side := range []string{"base", "head"} {
		starts, exits := 0, 0
		overlapped := 0
		for _, e := range es {
			if e.side != side {
				continue
			}
			switch {
			case e.kind == "start" && e.mode == "serve":
				starts++
				if starts > 1 && exits < starts-1 {
					overlapped++ // this start came before the previous process's exit
				}
			case e.kind == "exit":
				exits++
			}
		}
		if starts < 2 || exits != starts {
			t.Fatalf("%s: %d serving processes started, %d ended", side, starts, exits)
		}
		if overlapped != starts-1 {
			t.Errorf("%s: %d of %d restarts started the next process before the previous one ended", side, overlapped, starts-1)
		}
	}
}

// A serving process that dies, answers badly or hangs fails the run, naming the side and
// the round, and no process of it is left running.
func TestServedFailuresNameTheSide(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, head []string
		side       Side
		round      int
		says       []string
		servers    int
	}{
		{"death", nil, []string{"die_on=5"}, Head, 5, []string{"head harness, round 5 failed", "exited with status 1 before it answered", "illegal memory access"}, 0},
		{"bad JSON", []string{"bad_on=3"}, nil, Base, 3, []string{"base harness, round 3 failed", "answered badly", "not an answer", "cannot be trusted"}, 0},
		{"wrong round", []string{"wrong_on=2"}, nil, Base, 2, []string{"answered round 3 when asked for round 2"}, 0},
		{"hung round", nil, []string{"hang_on=6"}, Head, 6, []string{"head harness, round 6 failed", "did not answer within 700ms: killed with its process group"}, 0},
		{"bad exit", nil, []string{"exit_code=3"}, Head, -1, []string{"exited with status 3 at the end of its input"}, 0},
		{"warm-up death", nil, []string{"die_on=0"}, Head, 0, []string{"head harness, warm-up round failed", "serving process 1 failed its warm-up round", "exited with status 1"}, 0},
		{"death in a set of 3", nil, []string{"die_on=5"}, Head, 5, []string{"head harness, round 5 failed", "exited with status 1 before it answered"}, 3},
		{"hung warm-up in a set of 3", []string{"hang_on=0"}, nil, Base, 0, []string{"base harness, warm-up round failed", "failed its warm-up round", "did not answer within 700ms"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newServeFakes(t, tc.base, tc.head)
			o := serveOptions(f, t.TempDir())
			o.Settings.RoundTimeout = 700 * time.Millisecond
			o.Settings.Servers = tc.servers
			start := time.Now()
			g, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("took %s", took)
			}
			errs := findings(g, result.Error, MetricRun)
			d := decodeData(t, g)
			fl := d.Runner.Failure
			if g.Verdict != result.Fail || len(errs) != 1 || fl == nil || fl.Side != tc.side || d.Runner.Stopped != StopFailed || len(d.Comparisons) != 0 {
				t.Fatalf("want one failure of %s\n%s", tc.side, dump(g))
			}
			if tc.round >= 0 && fl.Round != tc.round {
				t.Errorf("failed round %d, want %d", fl.Round, tc.round)
			}
			for _, s := range tc.says {
				if !strings.Contains(errs[0], s) {
					t.Errorf("the finding does not say %q: %s", s, errs[0])
				}
			}
			if !strings.HasPrefix(g.Summary, "no comparison: the "+string(tc.side)+" harness") {
				t.Errorf("summary %q", g.Summary)
			}
			deadline := time.Now().Add(3 * time.Second)
			for _, e := range readLog(t, f.log) {
				if e.kind != "start" && e.kind != "child" {
					continue
				}
				for alive(e.n) {
					if time.Now().After(deadline) {
						t.Fatalf("%s's process %d outlived the failed run", e.side, e.n)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// When the wall budget is spent, a pair still undecided (head 2% slower: at the margin) is
// inconclusive with the rounds it reached and the reason, a warning and never a pass; a
// budget spent before any round leaves the gate a skip; a run's budget spent by earlier
// targets starts nothing.
func TestWallBudgetLeavesPairsInconclusive(t *testing.T) {
	t.Run("after some rounds", func(t *testing.T) {
		f := newServeFakes(t, []string{"round_ms=40"}, []string{"factor=1.02", "round_ms=40"})
		o := serveOptions(f, "")
		o.Settings.WallBudget = 2 * time.Second
		g, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		d := decodeData(t, g)
		if d.Runner.Stopped != StopWallBudget || d.Runner.Rounds == 0 || d.Runner.TimingSeconds < 2 || d.Runner.TimingSeconds > 10 {
			t.Fatalf("stopped %q after %d rounds, %g s\n%s", d.Runner.Stopped, d.Runner.Rounds, d.Runner.TimingSeconds, dump(g))
		}
		if g.Verdict == result.Fail {
			t.Fatalf("a spent budget failed the gate\n%s", dump(g))
		}
		var gemm *speedup.Record
		for i := range d.Comparisons {
			if d.Comparisons[i].Kernel == "gemm" {
				gemm = &d.Comparisons[i]
			}
		}
		if gemm == nil || gemm.Verdict != speedup.Inconclusive || gemm.Stopped != StopWallBudget || gemm.Rounds != d.Runner.Rounds ||
			gemm.WallSeconds == nil || *gemm.WallSeconds != d.Runner.TimingSeconds {
			t.Fatalf("gemm: %+v", gemm)
		}
		var said bool
		for _, w := range findings(g, result.Warning, "") {
			if strings.HasPrefix(w, "gemm × small: inconclusive") {
				said = strings.Contains(w, "no more rounds were run: the wall budget speedup.wall_budget (2.0 s) was spent") && !strings.Contains(w, "should add")
			}
		}
		if !said {
			t.Errorf("the inconclusive warning does not give the reason\n%s", dump(g))
		}
		if w := findings(g, result.Warning, MetricRounds); len(w) != 1 || !strings.Contains(w[0], "pair(s) undecided") {
			t.Errorf("runner warnings %q", w)
		}
	})
	t.Run("before any round", func(t *testing.T) {
		f := newServeFakes(t, []string{"setup_ms=1200"}, nil)
		o := serveOptions(f, t.TempDir())
		o.Settings.WallBudget = time.Second
		g, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		d := decodeData(t, g)
		if g.Verdict != result.Skip || d.Runner.Stopped != StopWallBudget || d.Runner.Rounds != 0 || !strings.HasPrefix(g.Summary, "not compared") {
			t.Fatalf("want a skip\n%s", dump(g))
		}
		if w := findings(g, result.Warning, MetricRounds); len(w) != 1 || !strings.Contains(w[0], "after 0 round(s)") || !strings.Contains(w[0], "2 pair(s) undecided") {
			t.Errorf("warnings %q", w)
		}
	})
	t.Run("run budget spent", func(t *testing.T) {
		f := newServeFakes(t, nil, nil)
		o := serveOptions(f, "")
		o.RunWallBudget, o.RunWallSpent = 10*time.Second, 11*time.Second
		g, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		d := decodeData(t, g)
		if g.Verdict != result.Skip || d.Runner.Stopped != StopRunWall || len(readLog(t, f.log)) != 0 {
			t.Fatalf("want nothing started and a skip\n%s", dump(g))
		}
		if w := findings(g, result.Warning, MetricRounds); len(w) != 1 || !strings.Contains(w[0], "speedup.run_wall_budget") {
			t.Errorf("warnings %q", w)
		}
	})
}

// Harnesses that do not serve are run as before, one process per round, after one
// handshake process each (auto); with serve false not even that; with serve true the run
// fails naming the side; when only one of base and head serves, neither does.
func TestNonServingHarnesses(t *testing.T) {
	t.Run("auto", func(t *testing.T) {
		f := newServeFakes(t, []string{"noserve=1"}, []string{"noserve=1", "factor=1.05"})
		g, err := Run(context.Background(), serveOptions(f, ""))
		if err != nil {
			t.Fatal(err)
		}
		d := decodeData(t, g)
		if g.Verdict != result.Fail || verdicts(d)["gemm × small"] != speedup.Slower || d.Runner.Serve.Serving {
			t.Fatalf("want gemm slower, one process per round\n%s", dump(g))
		}
		es := readLog(t, f.log)
		for _, side := range []string{"base", "head"} {
			if s, b := count(es, "start", side, "serve"), count(es, "start", side, "bench"); s != 1 || b != d.Runner.RoundsRun+1 {
				t.Errorf("%s: %d handshake processes, %d bench runs for %d rounds", side, s, b, d.Runner.RoundsRun)
			}
		}
		if n := findings(g, result.Notice, MetricServe); len(n) != 1 || !strings.Contains(n[0], "head runs once per round: its handshake process (KG_MODE=serve) exited with status 2; its last output: fake: KG_MODE=serve") {
			t.Errorf("notices %q", n)
		}
	})
	t.Run("false", func(t *testing.T) {
		f := newServeFakes(t, nil, nil)
		o := serveOptions(f, "")
		o.Settings.Serve = ServeOff
		g, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		es := readLog(t, f.log)
		if g.Verdict != result.Pass || count(es, "start", "base", "serve") != 0 || count(es, "start", "base", "bench") == 0 {
			t.Fatalf("serve false: %d serve, %d bench starts\n%s", count(es, "start", "base", "serve"), count(es, "start", "base", "bench"), dump(g))
		}
	})
	t.Run("true", func(t *testing.T) {
		f := newServeFakes(t, nil, []string{"noserve=1"})
		o := serveOptions(f, "")
		o.Settings.Serve = ServeOn
		g, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		errs := findings(g, result.Error, MetricRun)
		if g.Verdict != result.Fail || len(errs) != 1 || !strings.Contains(errs[0], "the head harness, warm-up round failed: speedup.serve is true, but it does not serve") {
			t.Fatalf("want head's failure\n%s", dump(g))
		}
	})
	t.Run("one side serves", func(t *testing.T) {
		f := newServeFakes(t, []string{"noserve=1"}, nil)
		g, err := Run(context.Background(), serveOptions(f, ""))
		if err != nil {
			t.Fatal(err)
		}
		d := decodeData(t, g)
		es := readLog(t, f.log)
		if g.Verdict != result.Pass || d.Runner.Serve.Serving || count(es, "exit", "head", "") != 1 || count(es, "start", "head", "bench") != d.Runner.RoundsRun+1 {
			t.Fatalf("want both sides once per round\n%s", dump(g))
		}
		raw, _ := json.Marshal(d.Runner.Serve.Sides)
		if !strings.Contains(string(raw), "it serves, but the base harness does not") {
			t.Errorf("sides %s", raw)
		}
	})
}

// Serving processes slow to set up while Python keeps no bytecode get a hint, once; with
// PYTHONPYCACHEPREFIX set, in the environment or by the command itself, none.
func TestSlowSetupWithoutBytecodeIsNoted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    []string
		python bool   // the command names Python
		cmdEnv string // a setting the command's own words make (env NAME=VALUE ...)
		hint   bool
	}{
		{"no bytecode", []string{"PYTHONDONTWRITEBYTECODE=1"}, true, "", true},
		{"a bytecode prefix", []string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONPYCACHEPREFIX=/tmp/pyc"}, true, "", false},
		{"a prefix the command sets", []string{"PYTHONDONTWRITEBYTECODE=1"}, true, "PYTHONPYCACHEPREFIX=/tmp/pyc", false},
		{"bytecode the command allows", []string{"PYTHONDONTWRITEBYTECODE=1"}, true, "PYTHONDONTWRITEBYTECODE=", false},
		{"a compiled harness", []string{"PYTHONDONTWRITEBYTECODE=1"}, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			setup := slowSetup + 100*time.Millisecond
			slow := []string{fmt.Sprintf("setup_ms=%d", setup.Milliseconds())}
			f := newServeFakes(t, slow, slow)
			if tc.python {
				for _, c := range []*Command{&f.base, &f.head} {
					c.Argv = append([]string{"env", "PYTHONPATH=" + t.TempDir()}, c.Argv...)
					if tc.cmdEnv != "" {
						c.Argv = append([]string{"env", tc.cmdEnv}, c.Argv...)
					}
				}
			}
			o := serveOptions(f, "")
			o.Environ = append(o.Environ, tc.env...)
			o.Settings.RestartEvery = 64 // one slow start per side
			g, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var hints []string
			for _, n := range findings(g, result.Notice, MetricServe) {
				if strings.Contains(n, "PYTHONPYCACHEPREFIX") {
					hints = append(hints, n)
				}
			}
			// The time it names is at least the fake's setup_ms: how much more, a loaded
			// machine's start of the process decides.
			const said = "the base harness's serving processes took "
			if tc.hint {
				var took float64
				if len(hints) == 1 && strings.HasPrefix(hints[0], said) {
					took, _ = strconv.ParseFloat(strings.Fields(hints[0][len(said):])[0], 64)
				}
				if math.Round(took*10) < float64(setup/(100*time.Millisecond)) { // in tenths, as it is printed
					t.Errorf("hints %q, want one naming the base harness's setup, at least %s", hints, setup)
				}
			}
			if !tc.hint && len(hints) != 0 {
				t.Errorf("hints %q", hints)
			}
		})
	}
}

// A set of serving processes that does not fit in GPU memory (small GPUs: room for 2
// processes of each side, 4 a side asked for) is started again with one a side, before
// anything is timed, and said in a warning; the run goes on and decides. Every way a
// harness says it: exiting before its handshake or in its warm-up round, or answering with
// a CUDA out-of-memory error. Each side has a fake GPU of its own, so that a restart's new
// process and the old one still ending (a loaded machine can take longer than setup_ms to
// end it) always fit: a restart that did not is TestRestartOutOfMemoryWaitsForTheOldSet's.
func TestServersOutOfMemoryFallBackToOne(t *testing.T) {
	for _, how := range []string{"exit", "die", "answer"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			args := func() []string { return []string{"gpu=2:" + t.TempDir(), "oom=" + how, "setup_ms=300"} }
			f := newServeFakes(t, args(), args())
			o := serveOptions(f, "")
			o.Settings.Servers = 4
			g, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			d := decodeData(t, g)
			if d.Runner.Failure != nil || d.Runner.Serve == nil || !d.Runner.Serve.Serving || d.Runner.Serve.Servers != 1 {
				t.Fatalf("want a served run with 1 process a side\n%s", dump(g))
			}
			w := findings(g, result.Warning, MetricServe)
			if len(w) != 1 || !strings.Contains(w[0], "4 serving processes a side (speedup.servers: 4), started side by side, ran out of GPU memory (the base harness: ") ||
				!strings.Contains(w[0], "out of memory") || !strings.Contains(w[0], "the run went on with 1 a side, each answering at most 4 rounds") {
				t.Errorf("warnings %q", w)
			}
			for _, c := range d.Comparisons {
				if c.Verdict != "same" && c.Verdict != "faster" && c.Verdict != "slower" {
					t.Errorf("%s × %s: %s", c.Kernel, c.Shape, c.Verdict)
				}
			}
			if n := findings(g, result.Notice, MetricServe); len(n) != 1 || !strings.Contains(n[0], "base serves its rounds (KG_MODE=serve: one process at a time, each answering at most 4 rounds, then a fresh one)") {
				t.Errorf("notices %q", n)
			}
			// The first attempt's 4 starts a side, then one a side per 4 rounds.
			for _, sd := range d.Runner.Serve.Sides {
				if want := 4 + (d.Runner.RoundsRun+3)/4; sd.Starts != want {
					t.Errorf("%s: %d starts, want %d for %d rounds", sd.Side, sd.Starts, want, d.Runner.RoundsRun)
				}
			}
		})
	}
}

// A replacement set that runs out of GPU memory while the previous set is still ending (its
// teardown beside the new setup) is started again once that set has exited, with a
// warning; one that does not fit even then fails the run, naming the error.
func TestRestartOutOfMemoryWaitsForTheOldSet(t *testing.T) {
	t.Run("fits once the old set is gone", func(t *testing.T) {
		t.Parallel()
		// Room for 3: base and head (one each) fit, not with the 2 ending beside them.
		args := []string{"gpu=3:" + t.TempDir(), "oom=answer", "setup_ms=50", "teardown_ms=1500"}
		f := newServeFakes(t, args, args)
		g, err := Run(context.Background(), serveOptions(f, ""))
		if err != nil {
			t.Fatal(err)
		}
		d := decodeData(t, g)
		if d.Runner.Failure != nil || d.Runner.RoundsRun < 16 {
			t.Fatalf("want a whole run\n%s", dump(g))
		}
		w := findings(g, result.Warning, MetricServe)
		if len(w) == 0 || !strings.Contains(w[0], "the serving processes started for round 5 ran out of GPU memory while the previous ones ended (the base harness: its warm-up answer for gemm × small: CUDA out of memory.") ||
			!strings.Contains(w[0], "they were started again once those had exited") {
			t.Errorf("warnings %q", w)
		}
		for _, m := range findings(g, result.Warning, MetricRun) {
			t.Errorf("a harness error reached the rounds: %s", m)
		}
	})
	t.Run("does not fit at all", func(t *testing.T) {
		t.Parallel()
		args := []string{"gpu=1:" + t.TempDir(), "oom=answer", "setup_ms=50"}
		f := newServeFakes(t, args, args)
		g, err := Run(context.Background(), serveOptions(f, ""))
		if err != nil {
			t.Fatal(err)
		}
		if g.Verdict == result.Pass {
			t.Fatalf("a run whose every answer is an out-of-memory error passed\n%s", dump(g))
		}
		if !strings.Contains(dump(g), "CUDA out of memory") {
			t.Errorf("the failure does not name the error\n%s", dump(g))
		}
	})
}

// outOfGPUMemory on what real harnesses printed (testdata/serve-oom/run.sh on an H100):
// kernels/harness.cu's cudaMalloc failure, in its log and its result file, and PyTorch's
// OutOfMemoryError; never on a real CUDA error that is not one (an illegal address, a launch
// failure). The recorded run itself fell back to one process a side and decided.
func TestOutOfGPUMemoryOnRealOutput(t *testing.T) {
	const dir = "../../../testdata/serve-oom/h100/"
	errorsIn := func(path string) []string {
		t.Helper()
		var out []string
		for _, r := range readBench(t, path).Results {
			if r.Error != "" {
				out = append(out, r.Error)
			}
		}
		if len(out) == 0 {
			t.Fatalf("%s: no error results", path)
		}
		return out
	}
	read := func(path string) string {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil || len(raw) == 0 {
			t.Fatalf("%s: %v (%d bytes)", path, err, len(raw))
		}
		return string(raw)
	}
	for _, text := range append([]string{read(dir + "harness-oom-1200.stderr"), read(dir + "torch-oom.stderr")}, errorsIn(dir+"harness-oom-1200.json")...) {
		if !outOfGPUMemory(text) {
			t.Errorf("not taken for out of memory: %q", text)
		}
	}
	for _, path := range []string{"../../../testdata/harness-python/bench.json", "../../../testdata/replay/torch-oob/attention-torch/check.json"} {
		for _, text := range errorsIn(path) {
			if outOfGPUMemory(text) {
				t.Errorf("%s: taken for out of memory: %q", path, text)
			}
		}
	}
	doc, err := result.Read(strings.NewReader(read(dir + "result.json")))
	if err != nil || len(doc.Gates) != 1 {
		t.Fatalf("result.json: %v, %d gates", err, len(doc.Gates))
	}
	g := doc.Gates[0]
	d := decodeData(t, g)
	w := findings(g, result.Warning, MetricServe)
	if g.Verdict != result.Pass || d.Runner.Serve == nil || d.Runner.Serve.Servers != 1 || len(w) != 1 ||
		!strings.Contains(w[0], "torch.OutOfMemoryError: CUDA out of memory.") || !strings.Contains(w[0], "the run went on with 1 a side") {
		t.Errorf("the recorded run: %s", dump(g))
	}
}

// A look that adds rounds for base and head with every pair's reference goal decided stops
// timing the reference: no new reference processes start (its set's end with the set, at
// the next restart, mid-set here), the added rounds ask it nothing, and each pair's
// reference estimate is over the rounds it was timed in, beside the same rounds of head,
// none of them counted as dropped. The merged files judge again (as a replay) to the same
// gate.
func TestReferenceStopsOnceDecided(t *testing.T) {
	const p, k, first, most = 2, 4, 12, 24
	f := newServeFakes(t, nil, []string{"factor=1.02"}) // gemm at the margin: undecided to the end
	// The reference: 2× slower gemm, the same softmax: both meet 0.5.
	o, g, d, progress := referenceGoalRun(t, f, f.referent, first, most)
	if d.Runner.Rounds != most || d.Runner.ReferenceLastRound != first {
		t.Fatalf("%d rounds, the reference's last %d: want %d and %d\n%s\n%s", d.Runner.Rounds, d.Runner.ReferenceLastRound, most, first, dump(g), progress)
	}
	es := readLog(t, f.log)
	if got, want := count(es, "start", "head", "serve"), lifetimes(most, p, k); got != want {
		t.Errorf("head: %d serving processes, want %d", got, want)
	}
	if got, want := count(es, "start", "reference", "serve"), lifetimes(first, p, k); got != want {
		t.Errorf("reference: %d serving processes for its %d rounds, want %d", got, first, want)
	}
	if got := count(es, "exit", "reference", ""); got != lifetimes(first, p, k) {
		t.Errorf("reference: %d processes ended at the end of their input", got)
	}
	asked := 0
	for _, e := range es {
		if e.kind == "round" && e.side == "reference" && e.n > 0 {
			asked++
			if e.n > first {
				t.Errorf("the reference was asked for round %d, after its goal was decided at %d", e.n, first)
			}
		}
	}
	if asked != first {
		t.Errorf("the reference answered %d timed rounds, want %d", asked, first)
	}
	if !strings.Contains(progress, "the reference goal is decided for every pair after 12 rounds") {
		t.Errorf("progress:\n%s", progress)
	}
	for _, c := range d.Comparisons {
		r := c.SpeedupVsReference
		if r == nil || r.Rounds != first || r.Verdict != speedup.GoalMet {
			t.Errorf("%s × %s: reference %+v, want met over %d rounds", c.Kernel, c.Shape, r, first)
		}
	}
	if v := verdicts(d); v["gemm × small"] != speedup.Inconclusive {
		t.Errorf("gemm at the margin: %v", v)
	}
	head := readBench(t, d.Runner.HeadFile)
	for _, r := range head.Results {
		if len(r.RoundsUs) != most || r.Reference == nil || len(r.Reference.RoundsUs) != first {
			t.Errorf("merged head %s × %s: %d rounds, reference %+v", r.Kernel, r.Shape, len(r.RoundsUs), r.Reference)
		}
	}
	var rec []result.Finding
	for _, fd := range g.Findings {
		if slices.Contains(Metrics(), fd.Metric) {
			rec = append(rec, fd)
		}
	}
	again, err := Judge(readBench(t, d.Runner.BaseFile), head, o.Speedup, d.Runner, rec)
	if err != nil {
		t.Fatal(err)
	}
	if again.Verdict != g.Verdict || string(again.Data) != string(g.Data) {
		t.Errorf("judged again: %s\nlive: %s", dump(again), dump(g))
	}
}

// A pair whose reference has not been timed yet is no pair whose reference goal is decided:
// the reference reports softmax from round 13 on only, so the look at 12 rounds finds
// gemm's goal met and softmax's not judged. The reference goes on; softmax's goal is
// judged (met), never left "not checked".
func TestReferenceGoesOnForAPairItHasNotTimed(t *testing.T) {
	const first, most = 12, 24
	f := newServeFakes(t, nil, []string{"factor=1.02"}) // gemm at the margin: undecided to the end
	_, g, d, progress := referenceGoalRun(t, f, Command{Argv: append(slices.Clone(f.referent.Argv), "late=softmax:13")}, first, most)
	if d.Runner.ReferenceLastRound != 0 && d.Runner.ReferenceLastRound < first+2 {
		t.Errorf("the reference stopped after round %d, before softmax's goal could be decided\n%s", d.Runner.ReferenceLastRound, progress)
	}
	for _, c := range d.Comparisons {
		if r := c.SpeedupVsReference; r == nil || r.Verdict != speedup.GoalMet {
			t.Errorf("%s × %s: reference %+v, want met\n%s", c.Kernel, c.Shape, r, dump(g))
		}
	}
}

// referenceGoalRun is a served A/B run of f with the reference ref, 2 processes a side each
// answering at most 4 rounds, min_rounds first and max_rounds most, and a goal of 0.5× the
// reference for every kernel: its options, gate, data and progress.
func referenceGoalRun(t *testing.T, f serveFakes, ref Command, first, most int) (Options, result.Gate, Data, string) {
	t.Helper()
	o := serveOptions(f, t.TempDir())
	o.Settings.Servers = 2
	o.Reference = ref
	goal, lo, hi := 0.5, first, most
	o.Speedup = speedup.Config{MinRounds: &lo, MaxRounds: &hi, Kernels: []speedup.Rule{{Match: "*", MinSpeedupVsReference: &goal}}}
	var progress strings.Builder
	o.Progress = &progress
	g, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return o, g, decodeData(t, g), progress.String()
}
