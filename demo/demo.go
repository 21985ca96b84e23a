// Package demo is kernel-gate's recorded real GPU runs (testdata/replay): listing the cases,
// replaying one through every gate without a GPU (pipeline's replay plus a live guard), and
// storing all of them in a temporary baseline store, one synthetic commit each, to draw its
// trend page.
package demo

import (
	"bytes"
	"cmp"
	"context"
	"errors"
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
	// Dir is where the recorded cases are, from the repository root; DefaultCase is the one
	// replayed when none is named.
	Dir         = "testdata/replay"
	DefaultCase = "clean"
	// JournalFile marks a directory as a recording.
	JournalFile = "journal.json"
)

// CaseConfig is the config a recorded case ran with, as testdata/replay/record.sh chose it:
// a target form's case ("torch-oob") its form's kernels/<form>/kernel-gate.yml, any other
// case the example config gating kernels/.
func CaseConfig(caseName string) string {
	if form, _, ok := strings.Cut(caseName, "-"); ok && slices.Contains(targetForms, form) {
		return filepath.Join("kernels", form, "kernel-gate.yml")
	}
	return "kernel-gate.yml"
}

// targetForms are the target forms of README "Gating your repository" that record.sh
// records, each with its config in kernels/<form>/.
var targetForms = []string{"torch", "setup", "cmake", "triton"}

// Cases lists the case directories under dir.
func Cases(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, exitcode.BadInputf("no recorded run at %s: run the demo from the repository root, or pass --dir", dir)
	}
	if err != nil {
		return nil, exitcode.BadInput(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), JournalFile)); err == nil {
				cases = append(cases, e.Name())
			}
		}
	}
	if len(cases) == 0 {
		return nil, exitcode.BadInputf("%s holds no recorded case (a directory with a %s file)", dir, JournalFile)
	}
	return cases, nil
}

// Replay feeds one recorded case through `kernel-gate run --replay` (nothing is executed;
// the toolkit version comes from the recorded `nvcc --version`) and adds the guard, which
// needs no GPU and judges this repository as it is, live.
func Replay(ctx context.Context, dir string, cfg config.Config, tool string) (result.Result, error) {
	res, err := pipeline.Run(ctx, cfg, pipeline.Options{Replay: dir, Tool: tool})
	if err != nil {
		return result.Result{}, err
	}
	g, err := guard.ScanPaths([]string{"."}, cfg.Guard)
	if err != nil {
		return result.Result{}, err
	}
	label := res.Replay
	res = result.New(tool, append(res.Gates, g)...)
	res.Replay = label + "; no GPU was used now (the guard read this repository as it is)"
	return res, nil
}

// TrendPage is the demo's trend page and what the command says of it.
type TrendPage struct {
	// HTML is the page.
	HTML []byte
	// Order is the cases in their synthetic commit order.
	Order []string
	// Histories are the store's histories, for a few lines of text.
	Histories []trend.History
}

// Trend stores every recorded case of dir (of the C++ harness's config) as one baseline
// entry in a temporary directory store, in a synthetic commit order (clean first, then the
// other cases by name, an hour apart from the recording's day) and labelled as a replay,
// and draws the store's trend page.
func Trend(ctx context.Context, dir string, cases []string) (TrendPage, error) {
	storeDir, err := os.MkdirTemp("", "kernel-gate-demo-store-")
	if err != nil {
		return TrendPage{}, exitcode.CouldNotRunf("the demo's baseline store: %w", err)
	}
	defer os.RemoveAll(storeDir)
	store := baseline.NewDir(storeDir, 0)
	// One history: the C++ harness's cases (the forms' recordings gate other targets, under
	// their own configs).
	order := slices.DeleteFunc(slices.Clone(cases), func(c string) bool { return CaseConfig(c) != "kernel-gate.yml" })
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(boolRank(a != DefaultCase), boolRank(b != DefaultCase)) })
	day := recordedDay(ctx, filepath.Join(dir, order[0]))
	for i, name := range order {
		entry, err := replayEntry(ctx, dir, name, day.Add(time.Duration(i)*time.Hour))
		if err != nil {
			return TrendPage{}, err
		}
		if err := store.Update(ctx, entry); err != nil {
			return TrendPage{}, exitcode.CouldNotRun(err)
		}
	}
	hs, err := trend.Load(ctx, store, nil, 0)
	if err != nil {
		return TrendPage{}, exitcode.CouldNotRun(err)
	}
	var page bytes.Buffer
	if err := trend.WriteHTML(&page, hs, trend.PageOptions{Source: "the recorded replays in " + dir + ", one synthetic commit per case"}); err != nil {
		return TrendPage{}, exitcode.CouldNotRun(err)
	}
	return TrendPage{HTML: page.Bytes(), Order: order, Histories: hs}, nil
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
