package cli

import (
	"context"
	"fmt"

	"github.com/kernel-gate/kernel-gate/action"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shard"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// runMerge is `kernel-gate merge` (action.MergeFiles); exit 2 is left for bad flags.
func runMerge(ctx context.Context, args []string, e env) (int, error) {
	var c common
	o := result.MergeOptions{Tool: toolName()}
	// The merged result is a file for the next step (a check run, the baseline): JSON
	// unless asked for another format.
	fs := flagSet("merge", e, &c, []string{"json", "text", "markdown", "sarif"})
	fs.IntVar(&o.ExpectShards, "expect-shards", 0, "fail unless the results are shards 1 to `N` of their run on each GPU (default: the n the results say)")
	fs.IntVar(&o.ExpectGPUs, "expect-gpus", 0, "fail unless the results come from `N` GPUs (default: any number; a GPU whose every shard is missing is only caught with this)")
	files, err := parse(fs, args, e)
	switch {
	case err != nil:
		return failed(err)
	case len(files) == 0:
		return failed(usagef("merge takes the shards' result files (kernel-gate merge results/*.json)"))
	case len(files) > action.MaxMergeFiles:
		// No run has more shards than this; MergeFiles bounds what they hold.
		return failed(usagef("merge takes at most %d result files (%d shards on each of %d GPUs); got %d", action.MaxMergeFiles, shard.Max, result.MaxMergeGPUs, len(files)))
	case o.ExpectShards < 0 || o.ExpectShards > shard.Max:
		return failed(usagef("--expect-shards %d: want 1 to %d (or 0: what the results say)", o.ExpectShards, shard.Max))
	case o.ExpectGPUs < 0 || o.ExpectGPUs > result.MaxMergeGPUs:
		return failed(usagef("--expect-gpus %d: want 1 to %d (or 0: any number)", o.ExpectGPUs, result.MaxMergeGPUs))
	}
	f, err := report.ParseFormat(c.format)
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	if err := outfile.Check(c.out, outfile.Reads{Files: files}); err != nil {
		return failed(err)
	}
	merged, err := action.MergeFiles(ctx, files, o, func(file, note string) {
		msg := fmt.Sprintf("%s: %s", file, note)
		if underActions(e) {
			msg = workflowcmd.Neutralize(msg)
		}
		fmt.Fprintf(e.stderr, "kernel-gate merge: %s\n", msg)
	})
	if err != nil {
		return failed(err)
	}
	return emit(merged, c, f, e)
}
