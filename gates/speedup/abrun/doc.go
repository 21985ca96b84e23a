// Package abrun is the A/B run, behind `kernel-gate speedup run` and the timing step of
// `kernel-gate run`: it times the base and head harnesses (kernel-gate/bench/v1,
// KG_MODE=bench) side by side on one GPU and judges them with the speedup gate. A harness
// command, given or configured, runs through sh -c (internal/shellcmd). Its settings are
// the A/B run's keys of the config's speedup section (Config). It does no GitHub I/O.
//
// # Rounds
//
// Each harness run is one round: KG_ROUNDS=1, KG_SAMPLES single-launch timings of every
// kernel × shape (KG_SHAPES), written to KG_OUT and read with benchfile.Read; a result's
// rounds_us[0] becomes that side's round. Base and head alternate in ABBA order — the k-th
// kept round runs base first when k is even and head first when it is odd — so whatever
// favours the first (or second) run of a round cancels out, and round k of base is judged
// only beside round k of head. A warm-up round of both runs first and is discarded (it
// also proves both harnesses work before any time is spent).
//
// # Serving harnesses
//
// A harness that serves (KG_MODE=serve, docs/harness-protocol.md) sets up once and answers
// one round per request line on its standard input, on a descriptor of its own
// (KG_SERVE_FD=3), so that nothing it prints can be read as an answer. With speedup.serve
// auto, every harness is started that way once before the warm-up round: base and head
// serve when both answer the handshake (else both run once per round, as above), the
// reference when it does. Rounds are asked for in the same ABBA order, each bounded by
// speedup.round_timeout. Each side runs speedup.servers processes, started side by side, that
// answer the rounds in turn, each first a discarded warm-up round and then at most
// speedup.restart_every rounds, after which base's, head's and the reference's sets are
// replaced together, so that one process's memory layout or lazily chosen kernels cannot
// bias a side for the whole run, while a side's start-up is paid once per set. A
// serving process that exits, hangs, answers badly or does not exit cleanly at the end of
// its input fails the run like a failed harness run.
//
// # Clocks
//
// The runner reads, never sets, the SM clock, the temperature and the active clock event
// reasons: one `nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active
// --format=csv,noheader,nounits` query (with --id from CUDA_VISIBLE_DEVICES when it names a
// GPU), then the same query as a stream (-lms 100). A round's reading is the worst of the
// readings that arrived while it ran and the newest one before it began (smiwatch.go);
// when the stream has none recent, or has ended, one query after the round. A round during which a reason other than none (0x0) and GPU idle (0x1)
// was active is run but dropped: its timings are not judged, its GPU time still counts
// against the budget, and it is listed in the gate's data (runner.dropped_rounds) and a
// warning. Without nvidia-smi the runner says so in a warning and goes on.
//
// # When to stop
//
// After the speedup config's min_rounds kept rounds the runner judges every kernel × shape
// as the gate will (speedup.JudgePair, with the same family for the Bonferroni level) and
// asks speedup.NeedMore how many rounds to add; while any pair is inconclusive it adds the
// most any pair needs (one harness run times every pair, so all get the same rounds), until
// every pair is decided, NeedMore says max_rounds or gpu_seconds_budget is reached, or the
// runner's own rounds budget (default twice max_rounds, dropped rounds included) or wall
// budget (speedup.wall_budget, and what speedup.run_wall_budget leaves; checked before each
// round) is spent. The reference is timed until a look finds its goal decided for every pair
// (or there is no goal to decide): the rounds added after that time base and head only, no
// new reference process starts, and each pair's reference estimate stays the one over the
// rounds it was timed in, beside the same rounds of head (RunnerData.ReferenceLastRound).
// A new set's start-up is its slowest process's, and a PyTorch one's is the slowest
// (3.0-3.1 s a serving process on an H200, against 1.1-1.4 s for the C++ harness:
// testdata/timing/serve-h200-split). Then Judge judges the merged files with speedup.CompareWith and adds the
// runner's findings and data (Data): an undecided pair is inconclusive with the reason the
// runner stopped, and each comparison records the wall time it took to its verdict. A
// replay of a recording calls Judge with the same files and record.
//
// # Failures
//
// A harness run that exits non-zero, is killed, times out (each run has a timeout and is
// killed with its whole process group), writes no file or an invalid one, or reports
// another device than before, stops the runner: the gate fails with an error finding that
// names the side, the round and why, quoting the end of its output. A failed build of
// base or head fails it the same way. Nothing is ever passed for want of timings.
//
// # Base and head
//
// Either two given commands (Options.Base and Options.Head), or a Worktree: base is the
// merge base of the base branch (origin/main) and HEAD, checked out with `git worktree add
// --detach` in a temporary directory that is removed afterwards, even on error; head is
// the working tree. The build command runs in each (sh -c), then the harness. The merged
// base.json and head.json are kept in the artifact directory, so `kernel-gate speedup
// compare` can judge them again.
package abrun
