package sanitizer

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// toolRun is what one tool's compute-sanitizer process left.
type toolRun struct {
	ran  bool
	runs []Run
	err  error
}

// runEach runs each tool on cmd in a compute-sanitizer process of its own, with its own
// KG_OUT, and returns the runs in the tools' order with the harness's launch counts. One
// after the other (o.AtOnce ≤ 1), a hung tool ends the series: the tools after it would
// hang too. o.AtOnce at a time (or while each holds one of o.Slots' places, shared with
// other targets' processes), every tool runs within its own timeout, as each started
// before anyone knew; every run is kept, so a replay of the kept logs (ReadKept) judges the
// same runs. Each run is the same process, files and parsing either way.
func runEach(ctx context.Context, cmd []string, o RunOptions, dir string, tools []string, progress io.Writer) ([]Run, map[string]int, error) {
	var mu sync.Mutex // the progress writer is shared by the tools running at once
	label := ""
	if o.Label != "" {
		label = o.Label + ": "
	}
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(progress, "kernel-gate sanitize: "+label+format, a...)
	}
	ended := make([]toolRun, len(tools))
	one := func(i int) {
		tool := tools[i]
		opts := o
		opts.Tools, opts.ArtifactDir = []string{tool}, dir
		out := HarnessOut(dir, tool)
		// A file left from an earlier run must not speak for this one, and a link of its
		// name must not take the harness's output out of the directory.
		if err := procgroup.ClearArtifact(dir, filepath.Base(out)); err != nil {
			ended[i] = toolRun{ran: true, err: fmt.Errorf("sanitizer: %w", err)}
			return
		}
		opts.ExtraEnv = append(slices.Clone(o.ExtraEnv), "KG_MODE=sanitize", "KG_OUT="+out)
		say("%s %s\n", tool, strings.Join(cmd, " "))
		start := time.Now()
		rs, err := RunTools(ctx, cmd, opts)
		took := time.Since(start)
		if o.OnTool != nil {
			o.OnTool(tool, start, took)
		}
		ended[i] = toolRun{ran: true, runs: rs, err: err}
		if err == nil {
			say("%s done in %s\n", tool, took.Round(time.Millisecond))
		}
	}
	if o.AtOnce > 1 || o.Slots != nil {
		slots := o.Slots
		if slots == nil {
			slots = make(chan struct{}, o.AtOnce)
		}
		var wg sync.WaitGroup
		for i := range tools {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				one(i)
			})
		}
		wg.Wait()
	} else {
		for i := range tools {
			one(i)
			if rs := ended[i].runs; ended[i].err != nil || len(rs) > 0 && rs[len(rs)-1].TimedOut {
				break // an error, or a hung kernel: the other tools would hang too
			}
		}
	}
	var runs []Run
	launches := map[string]int{}
	for i, e := range ended {
		if !e.ran {
			break
		}
		if e.err != nil {
			return nil, nil, e.err
		}
		runs = append(runs, e.runs...)
		if n, ok := harnessLaunches(HarnessOut(dir, tools[i])); ok {
			launches[tools[i]] = n
		}
	}
	return runs, launches, nil
}
