package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/action/config"
	"github.com/kernel-gate/kernel-gate/action/pipeline"
	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
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
	fs := newFlagSet("demo", e, &c)
	fs.StringVar(&dir, "dir", replayDir, "`DIR` holding the recorded cases")
	fs.StringVar(&caseName, "case", replayDefault, "recorded `CASE` to replay (a directory under --dir)")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, "Usage: kernel-gate demo [flags]\n\nReplays a recorded real GPU run of this repository's kernels through every gate,\nwith no GPU and no CUDA toolkit. The report says that it is a replay.\n\n")
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
	if !slices.Contains(cases, caseName) {
		return failed(usagef("no recorded case %q in %s (recorded: %s)", caseName, dir, strings.Join(cases, ", ")))
	}
	if c.config == "" {
		c.config = "kernel-gate.yml" // the example config gating kernels/, which the recording built
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
