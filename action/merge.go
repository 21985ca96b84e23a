package action

import (
	"context"
	"os"

	"github.com/kernel-gate/kernel-gate/internal/errtext"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shard"
)

// MaxMergeFiles bounds the result files of one merge: every shard of a run on every GPU.
const MaxMergeFiles = shard.Max * result.MaxMergeGPUs

// MaxMergeBytes bounds the files of one merge together, as a merge holds them all: the
// shards of a run hold what the whole run holds (each GPU's gates, what shards share once
// per shard), so their sum is about the merged result's size, which the report job reads
// up to 128 MiB (ReadUntrusted).
const MaxMergeBytes = 1 << 30

// MergeFiles is `kernel-gate merge`: the result files of a run's shards (kernel-gate run
// --shard i/n, on one GPU or a matrix of them) made into one result. Each file is read as
// the reporting job reads a result another job uploaded, whole (ReadUntrustedWhole): a
// shard's job ran the pull request's code; note is told what was cleaned in it. A file that
// cannot be read fails the merged result naming it, as does a shard missing or given twice
// (result.Merge); files that hold more than MaxMergeBytes together are refused (exit 2)
// before any is read.
func MergeFiles(ctx context.Context, files []string, o result.MergeOptions, note func(file, what string)) (result.Result, error) {
	if err := checkMergeSize(files); err != nil {
		return result.Result{}, err
	}
	var inputs []result.MergeInput
	for _, file := range files {
		if err := ctx.Err(); err != nil {
			return result.Result{}, exitcode.BadInputf("merge stopped: %w", err)
		}
		// Whole: a shard's gates, findings, rows and data all go into the merged result,
		// which is judged from all of them and cut only where it is shown.
		res, notes, err := ReadUntrustedWhole(file)
		for _, n := range notes {
			note(file, n)
		}
		// The reason lands in the merged result's "shards" gate, read by a person.
		inputs = append(inputs, result.MergeInput{Name: file, Result: res, Err: errtext.Plain(err)})
	}
	merged, err := result.Merge(inputs, o)
	if err != nil {
		return result.Result{}, exitcode.CouldNotRun(err)
	}
	return merged, nil
}

// checkMergeSize refuses a merge whose files hold more than MaxMergeBytes together, before
// any is read. A file that cannot be examined is left to ReadUntrustedWhole, which fails
// the merged result naming it.
func checkMergeSize(files []string) error {
	var total int64
	for _, file := range files {
		st, err := os.Lstat(file)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if total += st.Size(); total > MaxMergeBytes {
			return exitcode.BadInputf("the %d result files hold more than %d MiB together (%s brings them to %d bytes): no run's shards are that big, and merge holds them all", len(files), MaxMergeBytes>>20, file, total)
		}
	}
	return nil
}
