package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/pipeline"
)

// A recorded case is a directory under testdata/replay/: the --artifacts directory of a real
// `kernel-gate run` on a GPU (journal.json says what ran; the logs, SASS dumps, sanitizer
// XML and harness files are what the gates read), plus RECORDED, one line saying where and
// when, shown in the report. testdata/replay/record.sh makes them on a GPU machine.
const (
	replayDir     = "testdata/replay"
	replayDefault = "clean"
	// journalFile marks a directory as a recording.
	journalFile = "journal.json"
)

func runDemo(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var dir, caseName string
	var trendDemo bool
	fs := newFlagSet("demo", e, &c)
	fs.StringVar(&dir, "dir", replayDir, "`DIR` holding the recorded cases")
	fs.StringVar(&caseName, "case", replayDefault, "recorded `CASE` to replay (a directory under --dir)")
	fs.BoolVar(&trendDemo, "trend", false, "store every recorded case in a temporary baseline store, one commit each, and write its trend page to --out (default: a new file in the temporary directory)")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, "Usage: kernel-gate demo [flags]\n       kernel-gate demo --trend [--out trend.html]\n\nReplays a recorded real GPU run of this repository's kernels through every gate,\nwith no GPU and no CUDA toolkit. The report says that it is a replay. With --trend,\ndraws the trend page of a baseline store made of every recorded case.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return failed(err)
	}
	if len(rest) > 0 {
		return failed(usagef("demo takes no arguments (got %q); choose a recording with --case", rest))
	}
	cases, err := recordedCases(dir)
	if err != nil {
		return failed(err)
	}
	if trendDemo {
		caseSet := false
		fs.Visit(func(f *flag.Flag) { caseSet = caseSet || f.Name == "case" })
		if caseSet {
			return failed(usagef("demo --trend draws every recorded case: leave out --case"))
		}
		return demoTrend(ctx, dir, cases, c, e)
	}
	if !slices.Contains(cases, caseName) {
		return failed(usagef("no recorded case %q in %s (recorded: %s)", caseName, dir, strings.Join(cases, ", ")))
	}
	if c.config == "" {
		c.config = caseConfig(caseName)
	}
	cfg, fmtr, err := setup(c, reads{dirs: []string{filepath.Join(dir, caseName)}})
	if err != nil {
		return failed(err)
	}
	res, err := replay(ctx, filepath.Join(dir, caseName), cfg)
	if err != nil {
		return failed(err)
	}
	code, err := emit(res, c, fmtr, e)
	if err == nil && c.out == "" && fmtr == "text" {
		var others []string
		for _, o := range cases {
			if o != caseName {
				others = append(others, o)
			}
		}
		if len(others) > 0 {
			fmt.Fprintf(e.stdout, "\nAlso recorded: %s (kernel-gate demo --case NAME)\n", strings.Join(others, ", "))
		}
	}
	return code, err
}

// caseConfig is the config a recorded case ran with, as testdata/replay/record.sh chose it:
// a target form's case ("torch-oob") its form's kernels/<form>/kernel-gate.yml, any other
// case the example config gating kernels/.
func caseConfig(caseName string) string {
	if form, _, ok := strings.Cut(caseName, "-"); ok && slices.Contains(targetForms, form) {
		return filepath.Join("kernels", form, "kernel-gate.yml")
	}
	return "kernel-gate.yml"
}

// targetForms are the target forms of README "Gating your repository" that record.sh
// records, each with its config in kernels/<form>/.
var targetForms = []string{"torch", "setup", "cmake", "triton"}

// recordedCases lists the case directories under dir.
func recordedCases(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("no recorded run at %s: run the demo from the repository root, or pass --dir", dir)
	}
	if err != nil {
		return nil, exitcode.BadInput(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), journalFile)); err == nil {
				cases = append(cases, e.Name())
			}
		}
	}
	if len(cases) == 0 {
		return nil, usagef("%s holds no recorded case (a directory with a %s file)", dir, journalFile)
	}
	return cases, nil
}

// replay feeds one recorded case through `kernel-gate run --replay` (nothing is executed;
// the toolkit version comes from the recorded `nvcc --version`) and adds the guard, which
// needs no GPU and judges this repository as it is, live.
func replay(ctx context.Context, dir string, cfg config.Config) (result.Result, error) {
	res, err := pipeline.Run(ctx, cfg, pipeline.Options{Replay: dir, Tool: toolName()})
	if err != nil {
		return result.Result{}, err
	}
	g, err := guard.ScanPaths([]string{"."}, cfg.Guard)
	if err != nil {
		return result.Result{}, err
	}
	label := res.Replay
	res = result.New(toolName(), append(res.Gates, g)...)
	res.Replay = label + "; no GPU was used now (the guard read this repository as it is)"
	return res, nil
}

// trendDemoLines is how many lines of the trend the demo prints per GPU.
const trendDemoLines = 12

// demoTrend is `kernel-gate demo --trend`: every recorded case becomes one baseline entry,
// stored in a temporary directory store in a synthetic commit order (clean first, then the
// other cases by name, an hour apart from the recording's day) and labelled as a replay;
// the store's trend page is written to --out, or to a new file in the temporary directory,
// and a few lines of it are printed.
func demoTrend(ctx context.Context, dir string, cases []string, c common, e env) (int, error) {
	if c.format != "text" {
		return failed(usagef("demo --trend writes an HTML page and prints text: --format %q does not apply", c.format))
	}
	if err := checkOut(c.out, reads{dirs: []string{dir}}); err != nil {
		return failed(err)
	}
	storeDir, err := os.MkdirTemp("", "kernel-gate-demo-store-")
	if err != nil {
		return failed(exitcode.CouldNotRunf("the demo's baseline store: %w", err))
	}
	defer os.RemoveAll(storeDir)
	store := baseline.NewDir(storeDir, 0)
	// One history: the C++ harness's cases (the forms' recordings gate other targets, under
	// their own configs).
	order := slices.DeleteFunc(slices.Clone(cases), func(c string) bool { return caseConfig(c) != "kernel-gate.yml" })
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(boolRank(a != replayDefault), boolRank(b != replayDefault)) })
	day := recordedDay(ctx, filepath.Join(dir, order[0]))
	for i, name := range order {
		entry, err := replayEntry(ctx, dir, name, day.Add(time.Duration(i)*time.Hour))
		if err != nil {
			return failed(err)
		}
		if err := store.Update(ctx, entry); err != nil {
			return failed(exitcode.CouldNotRun(err))
		}
	}
	hs, err := trend.Load(ctx, store, nil, 0)
	if err != nil {
		return failed(exitcode.CouldNotRun(err))
	}
	var page bytes.Buffer
	if err := trend.WriteHTML(&page, hs, trend.PageOptions{Source: "the recorded replays in " + dir + ", one synthetic commit per case"}); err != nil {
		return failed(exitcode.CouldNotRun(err))
	}
	out := c.out
	if out == "" {
		f, err := os.CreateTemp("", "kernel-gate-trend-*.html")
		if err != nil {
			return failed(exitcode.CouldNotRunf("the trend page: %w", err))
		}
		out = f.Name()
		f.Close()
	}
	if err := writeOut(e.ctx, e.getenv("GITHUB_WORKSPACE"), out, page.Bytes()); err != nil {
		return failed(err)
	}
	fmt.Fprintf(e.stdout, "Trend of %d recorded replays (synthetic commit order: %s), no GPU used now\n", len(order), strings.Join(order, ", "))
	fmt.Fprintf(e.stdout, "Page: %s (%d charts; open it in a browser)\n\n", out, strings.Count(page.String(), `<svg class="chart"`))
	if err := trend.WriteText(e.stdout, hs, trendDemoLines); err != nil {
		return failed(exitcode.CouldNotRun(err))
	}
	return exitPass, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// recordedDay is the day the RECORDED line of a case names ("recorded 2026-11-21 on
// ..."), else the Unix epoch: the demo's commits are an hour apart from it.
func recordedDay(ctx context.Context, caseDir string) time.Time {
	if root, err := os.OpenRoot(caseDir); err == nil {
		defer root.Close()
		if raw, err := input.ReadFileIn(ctx, root, "RECORDED", input.Limit{Bytes: recordedBytes, What: "a RECORDED line"}); err == nil {
			if f := strings.Fields(string(raw)); len(f) > 1 && f[0] == "recorded" {
				if d, err := time.Parse(time.DateOnly, f[1]); err == nil {
					return d
				}
			}
		}
	}
	return time.Unix(0, 0).UTC()
}

// recordedBytes bounds a RECORDED file: one line.
const recordedBytes = 4096

// replayEntry is the baseline entry of recorded case name, committed as name at
// when: its result.json, with each target's head timings (TARGET/bench/head.json, which the
// result keeps only as ratios). Nothing is read outside the case's directory.
func replayEntry(ctx context.Context, dir, name string, when time.Time) (baseline.Entry, error) {
	caseDir := filepath.Join(dir, name)
	root, err := os.OpenRoot(caseDir)
	if err != nil {
		return baseline.Entry{}, exitcode.BadInput(err)
	}
	defer root.Close()
	raw, err := input.ReadFileIn(ctx, root, "result.json", input.JSON)
	if err != nil {
		return baseline.Entry{}, exitcode.BadInput(fmt.Errorf("recorded case %s: %w", name, err))
	}
	res, err := result.Read(bytes.NewReader(raw))
	if err != nil {
		return baseline.Entry{}, exitcode.BadInput(fmt.Errorf("%s: %w", filepath.Join(caseDir, "result.json"), err))
	}
	entry, err := baseline.EntryFromResult(res, name, when)
	if err != nil {
		return baseline.Entry{}, exitcode.BadInput(fmt.Errorf("recorded case %s: %w", name, err))
	}
	label := "recorded case " + name
	if rec, err := input.ReadFileIn(ctx, root, "RECORDED", input.Limit{Bytes: recordedBytes, What: "a RECORDED line"}); err == nil {
		label += ": " + strings.TrimSpace(string(rec))
	}
	entry.Replay = label
	targets := map[string]bool{}
	for _, t := range entry.Timings {
		if t.Target == "" || targets[t.Target] {
			continue
		}
		targets[t.Target] = true
		head := filepath.Join(t.Target, "bench", "head.json")
		if !input.Exists(filepath.Join(caseDir, head)) {
			continue // not timed: a gate before the speedup failed
		}
		raw, err := input.ReadFileIn(ctx, root, head, input.JSON)
		if err != nil {
			return baseline.Entry{}, exitcode.BadInput(fmt.Errorf("recorded case %s: %w", name, err))
		}
		f, err := benchfile.Read(bytes.NewReader(raw))
		if err != nil {
			return baseline.Entry{}, exitcode.BadInput(fmt.Errorf("%s: %w", filepath.Join(caseDir, head), err))
		}
		if err := entry.AddBench(t.Target, f); err != nil {
			return baseline.Entry{}, exitcode.BadInput(err)
		}
	}
	return entry, nil
}
