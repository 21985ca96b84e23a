//go:build unix

package abrun

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The serving tests run this test binary itself as the fake harness: with
// KG_ABRUN_FAKE_HARNESS=1 in its environment, TestMain runs fakeHarness instead of the
// tests. It speaks kernel-gate/bench/v1 in bench mode (one round per run) and the serve
// protocol in serve mode, drawing timings of kernels gemm and softmax like
// testdata/fake-harness.sh. Settings are NAME=VALUE arguments:
//
//	side=NAME       names it in the logs below
//	log=PATH        shared log: "start SIDE MODE PID" per process, "round SIDE N" per
//	                round run ("round SIDE N PID" per round answered when serving),
//	                "exit SIDE PID" at the end of its input
//	factor=F        head/base scale of gemm's timings (1.05: 5% slower)
//	seed=N          its noise seed (the per-round drift is shared by both sides)
//	noserve=1       does not know serve mode: KG_MODE=serve exits 2, as kg_bench.py does
//	die_on=R        exits 1 when asked for round R
//	bad_on=R        answers round R with a line that is not JSON
//	wrong_on=R      answers round R as round R+1
//	hang_on=R       hangs (with a child) when asked for round R; the child's pid in log
//	linger=1        does not exit at the end of its input
//	exit_code=N     exits N at the end of its input
//	noise=1         prints answer-like JSON lines on stdout and stderr every round
//	late=K:R        reports kernel K only from round R on
//	setup_ms=N      sleeps N ms before its handshake;  round_ms=N  sleeps N ms per round
//	teardown_ms=N   sleeps N ms at the end of its input before it logs its exit
//	mark=PATH       writes the round number to PATH as each request arrives
//	wait_on=R:PATH  asked for round R, waits (up to 20 s) for PATH to exist before its
//	                round_ms: for a fake nvidia-smi to have seen the round's mark. May be
//	                given more than once; R "*" is every round, and "{round}" in PATH
//	                stands for the round asked for
//	gpu=N:DIR       a GPU with room for N processes: each serving process keeps a file
//	                in DIR while it lives (removed as it exits, after teardown_ms); after
//	                setup_ms, more than N live ones is out of memory, which oom says how
//	                to report: exit (the default: exits 1 before its handshake, as a C++
//	                harness whose cudaMalloc failed), die (exits 1 when asked for its
//	                first round) or answer (answers every round with a CUDA out-of-memory
//	                error, as kg_bench.serve_cases does)
func fakeHarness(args []string) int {
	set := map[string]string{"side": "x", "factor": "1", "seed": "1"}
	var waits []string // wait_on's, each R:PATH
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "fake: bad setting %q\n", a)
			return 2
		}
		if k == "wait_on" {
			waits = append(waits, v)
			continue
		}
		set[k] = v
	}
	num := func(k string) int { n, _ := strconv.Atoi(set[k]); return n }
	factor, _ := strconv.ParseFloat(set["factor"], 64)
	logLine := func(format string, a ...any) {
		if set["log"] == "" {
			return
		}
		f, err := os.OpenFile(set["log"], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return
		}
		fmt.Fprintf(f, format+"\n", a...)
		f.Close()
	}
	mode := os.Getenv("KG_MODE")
	logLine("start %s %s %d", set["side"], mode, os.Getpid())
	samples, _ := strconv.Atoi(os.Getenv("KG_SAMPLES"))
	shapes := strings.Split(cmpOr(os.Getenv("KG_SHAPES"), "small"), ",")
	file := func(round int) string {
		f := fakeFile(round, num("seed"), factor, samples, shapes)
		if k, from, ok := strings.Cut(set["late"], ":"); ok {
			if r, _ := strconv.Atoi(from); round < r {
				f = withoutKernel(f, k)
			}
		}
		return f
	}
	switch mode {
	case "bench":
		// One round per run; the run's round is counted in a state file beside the log.
		state := set["log"] + "." + set["side"] + ".runs"
		raw, _ := os.ReadFile(state)
		n, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
		os.WriteFile(state, []byte(strconv.Itoa(n+1)), 0o644)
		logLine("round %s %d", set["side"], n)
		if err := os.WriteFile(os.Getenv("KG_OUT"), []byte(file(n)), 0o644); err != nil {
			return 2
		}
		return 0
	case "serve":
		if set["noserve"] == "1" {
			fmt.Fprintf(os.Stderr, "fake: KG_MODE=serve: want check, bench or sanitize\n")
			return 2
		}
	default:
		fmt.Fprintf(os.Stderr, "fake: KG_MODE=%q\n", mode)
		return 2
	}
	fd, err := strconv.Atoi(os.Getenv("KG_SERVE_FD"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake: no KG_SERVE_FD\n")
		return 2
	}
	answers := os.NewFile(uintptr(fd), "answers")
	gpuRoom, gpuDir, _ := strings.Cut(set["gpu"], ":")
	if gpuDir != "" {
		mine := filepath.Join(gpuDir, strconv.Itoa(os.Getpid()))
		os.WriteFile(mine, nil, 0o644)
		defer os.Remove(mine)
	}
	time.Sleep(time.Duration(num("setup_ms")) * time.Millisecond)
	oomErr := ""
	if room, _ := strconv.Atoi(gpuRoom); gpuDir != "" && livePids(gpuDir) > room {
		oomErr = fmt.Sprintf("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; %d processes, room for %d)", livePids(gpuDir), room)
		if set["oom"] == "exit" || set["oom"] == "" {
			fmt.Fprintf(os.Stderr, "harness: cudaMalloc: out of memory\n")
			return 1
		}
	}
	fmt.Println("fake: set up; stdout is not where answers go")
	fmt.Fprintf(answers, `{"serve": "kernel-gate/serve/v1"}`+"\n")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			Round   int      `json:"round"`
			Samples int      `json:"samples"`
			Shapes  []string `json:"shapes"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "fake: bad request %q\n", in.Text())
			return 2
		}
		r := req.Round
		if set["mark"] != "" {
			os.WriteFile(set["mark"], []byte(strconv.Itoa(r)), 0o644)
		}
		if set["noise"] == "1" {
			fmt.Printf(`{"round": %d, "file": {"schema": "kernel-gate/bench/v1", "results": []}}`+"\n", r)
			fmt.Fprintf(os.Stderr, `{"round": %d}`+"\n", r+7)
		}
		on := func(k string) bool { v, ok := set[k]; return ok && v == strconv.Itoa(r) }
		switch {
		case on("die_on"):
			fmt.Fprintf(os.Stderr, "harness: flash_fwd mission: an illegal memory access was encountered\n")
			return 1
		case on("hang_on"):
			child, err := os.StartProcess("/bin/sleep", []string{"sleep", "30"}, &os.ProcAttr{})
			if err == nil {
				logLine("child %s %d", set["side"], child.Pid)
			}
			time.Sleep(30 * time.Second)
		case on("bad_on"):
			fmt.Fprintf(answers, "{\"round\": %d, \"file\": {not json\n", r)
			continue
		case on("wrong_on"):
			fmt.Fprintf(answers, `{"round": %d, "file": %s}`+"\n", r+1, oneLine(file(r)))
			continue
		}
		for _, w := range waits {
			if wr, path, ok := strings.Cut(w, ":"); ok && (wr == "*" || wr == strconv.Itoa(r)) {
				waitForFile(strings.ReplaceAll(path, "{round}", strconv.Itoa(r)), 20*time.Second)
			}
		}
		if oomErr != "" && set["oom"] == "die" {
			fmt.Fprintf(os.Stderr, "harness: flash_fwd mission: out of memory at cudaMalloc(&p, n)\n")
			return 1
		}
		if oomErr != "" {
			fmt.Fprintf(answers, `{"round": %d, "file": %s}`+"\n", r, oneLine(errorFile(samples, shapes, oomErr)))
			continue
		}
		time.Sleep(time.Duration(num("round_ms")) * time.Millisecond)
		if req.Samples != samples {
			fmt.Fprintf(os.Stderr, "fake: asked for %d samples, KG_SAMPLES=%d\n", req.Samples, samples)
		}
		logLine("round %s %d %d", set["side"], r, os.Getpid())
		fmt.Fprintf(answers, `{"round": %d, "file": %s}`+"\n", r, oneLine(file(r)))
	}
	time.Sleep(time.Duration(num("teardown_ms")) * time.Millisecond)
	logLine("exit %s %d", set["side"], os.Getpid())
	if set["linger"] == "1" {
		time.Sleep(time.Minute)
	}
	return num("exit_code")
}

// livePids counts the files in dir named by the pid of a live process (not a zombie).
func livePids(dir string) int {
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && alive(pid) {
			n++
		}
	}
	return n
}

// errorFile is a round's harness file whose every result is the error msg.
func errorFile(samples int, shapes []string, msg string) string {
	var res []string
	for _, k := range []string{"gemm", "softmax"} {
		for _, sh := range shapes {
			res = append(res, fmt.Sprintf(`{"kernel": %q, "shape": %q, "error": %q}`, k, sh, msg))
		}
	}
	return fakeFileHead(samples) + strings.Join(res, ", ") + "]}"
}

// fakeFileHead is a fake harness file up to its results' list: the device and request.
func fakeFileHead(samples int) string {
	return `{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"},` + "\n" +
		fmt.Sprintf(` "request": {"mode": "bench", "shapes": [], "rounds": 1, "samples": %d}, "results": [`, samples)
}

// waitForFile polls for path until it exists or limit passes.
func waitForFile(path string, limit time.Duration) {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// fakeFile is one round's harness file: gemm (100 µs × shape index) and softmax (20 µs ×
// shape index), gemm scaled by factor, a drift per round shared by both sides and 1%
// noise per launch from the side's seed.
func fakeFile(round, seed int, factor float64, samples int, shapes []string) string {
	drift := 1 + 0.1*(rand.New(rand.NewPCG(uint64(round), 7)).Float64()-0.5)
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(round)))
	var b strings.Builder
	b.WriteString(fakeFileHead(samples))
	first := true
	for _, k := range []string{"gemm", "softmax"} {
		for j, sh := range shapes {
			if !first {
				b.WriteString(",")
			}
			first = false
			base := 20.0
			scale := 1.0
			if k == "gemm" {
				base, scale = 100, factor
			}
			base *= float64(j + 1)
			fmt.Fprintf(&b, "\n  {\"kernel\": %q, \"shape\": %q, \"rounds_us\": [[", k, sh)
			for s := range samples {
				if s > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%.4f", base*scale*drift*(1+0.01*rng.NormFloat64()))
			}
			b.WriteString("]]}")
		}
	}
	b.WriteString("\n ]}\n")
	return b.String()
}

// withoutKernel is a fake harness file without kernel k's results.
func withoutKernel(file, k string) string {
	var f map[string]any
	if err := json.Unmarshal([]byte(file), &f); err != nil {
		panic(err)
	}
	var kept []any
	for _, r := range f["results"].([]any) {
		if r.(map[string]any)["kernel"] != k {
			kept = append(kept, r)
		}
	}
	f["results"] = kept
	raw, err := json.Marshal(f)
	if err != nil {
		panic(err)
	}
	return string(raw) + "\n"
}

func TestMain(m *testing.M) {
	if os.Getenv("KG_ABRUN_FAKE_HARNESS") == "1" {
		os.Exit(fakeHarness(os.Args[1:]))
	}
	os.Exit(m.Run())
}
