// Package baseline keeps what a change is compared against when no base build is at hand,
// and the history a trend is drawn from: per GPU (Key) the last DefaultKeep runs of the
// default branch, each an Entry of its PTXAS records, SASS summary, timings, correctness
// errors and sanitizer statuses, with the GPU, driver and CUDA toolkit they were measured
// with (Fingerprint). Whether an entry measured with other software may still be compared
// is decided by Constraints (Comparable), never silently. docs/baseline.md is the user's
// account of it.
//
// Two stores keep the same files (one JSON file per key, Schema): Dir, a directory that
// many processes may update at once, and Git, a branch (DefaultBranch) written through
// GitHub's Git Data API that many workflow runs may update at once. Open picks one from
// a spec (a directory, or GitSpec). Load and PtxasKernels read a plain result file saved
// by an earlier run (`--format json --out base.json`).
//
// A gated result of the default branch is stored in these steps:
//
//  1. EntryFromResult turns the result into an Entry for its commit (a shard is refused:
//     ErrPartRun); AddArtifacts and AddBench add head's timings from the run's artifacts.
//  2. Its Key is the GPU and arch it ran on (Fingerprint.Key, Entry.Key); Key.File names
//     the store's file.
//  3. Store.Update adds it to the key's history and drops the oldest beyond the store's
//     keep, never losing a concurrent update: Dir under the key's lock (one held for
//     DefaultLockWait is an error naming its holder, ErrLockWait), Git by moving the branch
//     to a new commit, trying again (DefaultAttempts) when another writer moved it first,
//     never by a forced push. A file over MaxFileBytes is refused, and the fields a newer
//     kernel-gate wrote are kept. Store.Prune keeps the newest N entries of every key.
//
// It is read back in these:
//
//  1. NewestComparable picks the newest entry of a key that the Constraints allow, or says
//     why none is (Choice); Entry.PtxasBaseline is that entry as the ptxas gate's baseline.
//  2. List (baseline show) lists each key's newest entries; Reader.History is a key's
//     history, which package trend draws.
//  3. DiffEntries (baseline diff) compares two entries of one key (DiffSchema): per kernel ×
//     arch the PTXAS records and the SASS digest, per kernel × shape the median times with
//     their intervals, correctness errors and sanitizer statuses.
package baseline
