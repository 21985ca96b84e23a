package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/kernel-gate/kernel-gate/action"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shard"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

// maxExpectGPUs bounds --expect-gpus: a typo, not a matrix, beyond it.
const maxExpectGPUs = result.MaxMergeGPUs

// maxMergeFiles bounds the result files of one merge: every shard of a run on every GPU.
const maxMergeFiles = shard.Max * maxExpectGPUs

// maxMergeBytes bounds the files of one merge together, as merge holds them all: the shards
// of a run hold what the whole run holds (each GPU's gates, what shards share once per
// shard), so their sum is about the merged result's size, which the report job reads up to
// 128 MiB (action.ReadUntrusted).
const maxMergeBytes = 1 << 30

// runMerge is `kernel-gate merge`: the results of a run's shards (kernel-gate run --shard
// i/n, on one GPU or a matrix of them) made into one result. Each file is read as the
// reporting job reads a result another job uploaded, whole (action.ReadUntrustedWhole):
// a shard's job ran the pull request's code. A file that cannot be read fails the merged result
// naming it, as does a shard missing or given twice (result.Merge); exit 2 is left for
// bad flags.
func runMerge(ctx context.Context, args []string, e env) (int, error) {
	var c common
	o := result.MergeOptions{Tool: toolName()}
	fs := newFlagSet("merge", e, &c)
	// The merged result is a file for the next step (a check run, the baseline): JSON
	// unless asked for another format.
	if f := fs.Lookup("format"); f != nil {
		f.DefValue = string(report.JSON)
		_ = f.Value.Set(f.DefValue)
	}
	fs.IntVar(&o.ExpectShards, "expect-shards", 0, "fail unless the results are shards 1 to `N` of their run on each GPU (default: the n the results say)")
	fs.IntVar(&o.ExpectGPUs, "expect-gpus", 0, "fail unless the results come from `N` GPUs (default: any number; a GPU whose every shard is missing is only caught with this)")
	fs.Usage = usage(e, fs, `Usage: kernel-gate merge [--out merged.json] [--expect-shards N] [--expect-gpus N] RESULT.json...

Joins the results of a run's shards (kernel-gate run --shard i/N, one job each, on one GPU
or several) into one result, JSON by default, that kernel-gate report and the action's
report mode post as one check run. The results must be shards of one run (the same
commit, base, config and targets), each shard 1..N once per GPU. A result that is
missing, given twice, unreadable or of another run fails the merged result's "shards"
gate, naming it; otherwise each gate is its shards' gates joined. Results of several GPUs
(device name and arch) are kept apart: a gate that differs between them is shown per GPU,
"speedup (L4, sm_89)". Exits 1 when the merged result fails.

`)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return failed(err)
	}
	switch {
	case len(files) == 0:
		return failed(usagef("merge takes the shards' result files (kernel-gate merge results/*.json)"))
	case len(files) > maxMergeFiles:
		// No run has more shards than this; checkMergeSize bounds what they hold.
		return failed(usagef("merge takes at most %d result files (%d shards on each of %d GPUs); got %d", maxMergeFiles, shard.Max, maxExpectGPUs, len(files)))
	case o.ExpectShards < 0 || o.ExpectShards > shard.Max:
		return failed(usagef("--expect-shards %d: want 1 to %d (or 0: what the results say)", o.ExpectShards, shard.Max))
	case o.ExpectGPUs < 0 || o.ExpectGPUs > maxExpectGPUs:
		return failed(usagef("--expect-gpus %d: want 1 to %d (or 0: any number)", o.ExpectGPUs, maxExpectGPUs))
	}
	f, err := report.ParseFormat(c.format)
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	if err := checkOut(c.out, reads{files: files}); err != nil {
		return failed(err)
	}
	if err := checkMergeSize(files); err != nil {
		return failed(err)
	}
	var inputs []result.MergeInput
	for _, file := range files {
		if err := ctx.Err(); err != nil {
			return failed(exitcode.BadInputf("merge stopped: %w", err))
		}
		// Whole: a shard's gates, findings, rows and data all go into the merged result,
		// which is judged from all of them and cut only where it is shown.
		res, notes, err := action.ReadUntrustedWhole(file)
		for _, n := range notes {
			msg := fmt.Sprintf("%s: %s", file, n)
			if underActions(e) {
				msg = workflowcmd.Neutralize(msg)
			}
			fmt.Fprintf(e.stderr, "kernel-gate merge: %s\n", msg)
		}
		inputs = append(inputs, result.MergeInput{Name: file, Result: res, Err: err})
	}
	merged, err := result.Merge(inputs, o)
	if err != nil {
		return failed(exitcode.CouldNotRun(err))
	}
	return emit(merged, c, f, e)
}

// checkMergeSize refuses a merge whose files hold more than maxMergeBytes together, before
// any is read. A file that cannot be examined is left to ReadUntrustedWhole, which fails
// the merged result naming it.
func checkMergeSize(files []string) error {
	var total int64
	for _, file := range files {
		st, err := os.Lstat(file)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if total += st.Size(); total > maxMergeBytes {
			return exitcode.BadInputf("the %d result files hold more than %d MiB together (%s brings them to %d bytes): no run's shards are that big, and merge holds them all", len(files), maxMergeBytes>>20, file, total)
		}
	}
	return nil
}
