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
	"github.com/kernel-gate/kernel-gate/gates/result"
)

// A recorded case is a directory under testdata/replay/ holding what the GPU run printed:
//
//	build.log   nvcc --version and the nvcc -Xptxas -v build of kernels/ (xtrace-style)
//	sass.txt    cuobjdump --dump-sass of the objects that build made (or sass.txt.gz)
//	sanitize/   what `kernel-gate sanitize --artifacts` kept: per tool its log, its XML and
//	            the harness's output (launch counts)
//	check.json  the harness's KG_MODE=check output (kernel-gate/bench/v1)
//	bench/      what `kernel-gate bench run --artifacts` kept: base.json and head.json, the
//	            merged timings of base and head run side by side (where recorded)
//	RECORDED    one line saying where and when it was recorded (shown in the report)
//
// testdata/replay/record.sh makes them on a GPU machine.
const (
	replayDir      = "testdata/replay"
	replayBuild    = "build.log"
	replaySass     = "sass.txt"
	replaySanitize = "sanitize"
	replayCheck    = "check.json"
	replayRecord   = "RECORDED"
	replayDefault  = "clean"
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
		return exitUsage, err
	}
	if len(rest) > 0 {
		return exitUsage, usagef("demo takes no arguments (got %q); choose a recording with --case", rest)
	}
	cases, err := recordedCases(dir)
	if err != nil {
		return exitUsage, err
	}
	if !slices.Contains(cases, caseName) {
		return exitUsage, usagef("no recorded case %q in %s (recorded: %s)", caseName, dir, strings.Join(cases, ", "))
	}
	if c.config == "" {
		c.config = "kernel-gate.yml" // the example config gating kernels/, which the recording built
	}
	cfg, fmtr, err := setup(c)
	if err != nil {
		return exitUsage, err
	}
	res, err := replay(ctx, filepath.Join(dir, caseName), cfg)
	if err != nil {
		return exitUsage, err
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
		return nil, usageError{err}
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), replayRecord)); err == nil {
				cases = append(cases, e.Name())
			}
		}
	}
	if len(cases) == 0 {
		return nil, usagef("%s holds no recorded case (a directory with a %s file)", dir, replayRecord)
	}
	return cases, nil
}

// replay runs every gate that exists over one recorded case. Nothing is executed: the
// toolkit version comes from the recorded `nvcc --version`, never from a local nvcc.
func replay(ctx context.Context, dir string, cfg config.Config) (result.Result, error) {
	recorded, err := os.ReadFile(filepath.Join(dir, replayRecord))
	if err != nil {
		return result.Result{}, usageError{err}
	}
	var in ptxasInputs
	build := filepath.Join(dir, replayBuild)
	if err := readFiles([]string{build}, nil, in.read); err != nil {
		return result.Result{}, err
	}
	gates, err := ptxasGates(ctx, &in, cfg, nil, "", "")
	if err != nil {
		return result.Result{}, err
	}
	sassFile := filepath.Join(dir, replaySass)
	if !fileExists(sassFile) {
		sassFile += ".gz" // large dumps are kept compressed
	}
	sassGate, err := sassGate([]string{sassFile}, nil, cfg, "")
	if err != nil {
		return result.Result{}, err
	}
	gates = append(gates, sassGate)
	if g, ok, err := replaySanitizer(filepath.Join(dir, replaySanitize), cfg); err != nil {
		return result.Result{}, err
	} else if ok {
		gates = append(gates, g)
	}
	if check := filepath.Join(dir, replayCheck); fileExists(check) {
		f, err := os.Open(check)
		if err != nil {
			return result.Result{}, err
		}
		g, err := correctnessGate(f, check, cfg)
		f.Close()
		if err != nil {
			return result.Result{}, usageError{err}
		}
		gates = append(gates, g)
	}
	base, head := filepath.Join(dir, "bench", "base.json"), filepath.Join(dir, "bench", "head.json")
	if fileExists(base) && fileExists(head) {
		g, err := compareFiles(base, head, nil, cfg)
		if err != nil {
			return result.Result{}, err
		}
		gates = append(gates, g)
	}
	// The guard needs no GPU: it judges this repository's own workflows and scripts, live.
	g, err := guardPaths([]string{"."}, cfg)
	if err != nil {
		return result.Result{}, err
	}
	gates = append(gates, g)
	res := result.New(toolName(), gates...)
	res.Replay = fmt.Sprintf("replay of %s: %s; no GPU was used now (the guard read this repository as it is)", filepath.ToSlash(dir), strings.TrimSpace(string(recorded)))
	return res, nil
}
