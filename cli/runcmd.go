package cli

import (
	"context"
	"os"

	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/shard"
	"github.com/kernel-gate/kernel-gate/pipeline"
)

func runRun(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var o pipeline.Options
	var targets, baselineStore, shardSpec string
	fs := newFlagSet("run", e, &c)
	fs.StringVar(&o.Artifacts, "artifacts", pipeline.DefaultArtifacts, "keep every log, dump, XML and harness file, and the journal of what ran, in `DIR` (replayable with --replay)")
	fs.StringVar(&o.Replay, "replay", "", "run nothing: feed the recording in `DIR` (an --artifacts directory of an earlier run) through the gates")
	fs.StringVar(&o.BaseRef, "base", "", "compare with the merge base of `REV` and HEAD (default: the config's speedup.base_ref, else origin/main)")
	fs.BoolVar(&o.NoBase, "no-base", false, "build head alone: no speedup gate, nothing skipped as unchanged")
	fs.BoolVar(&o.All, "all", false, "sanitize, time and profile every target, also where its SASS is unchanged")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "run a target's GPU steps even after one of its gates failed")
	fs.StringVar(&o.Dir, "C", ".", "the repository to build and run, `DIR` (sources are relative to its top level)")
	fs.StringVar(&targets, "targets", "", "comma-separated `NAMES` of the config's targets to run (default: all)")
	fs.StringVar(&shardSpec, "shard", "", "gate only shard `I/N` of the targets (1-based: 1/4 to 4/4), those whose names hash to it; the result records the shard for kernel-gate merge")
	fs.StringVar(&o.Tools.NVCC, "nvcc", "", "nvcc `PATH` (default: the config's run.nvcc, else nvcc)")
	fs.StringVar(&o.Tools.Cuobjdump, "cuobjdump", "cuobjdump", "cuobjdump `PATH`")
	fs.StringVar(&o.Tools.Nvdisasm, "nvdisasm", "", "nvdisasm `PATH`, which disassembles the cubins cuobjdump extracts, at once (default: the one beside cuobjdump; none: cuobjdump --dump-sass, slower)")
	fs.StringVar(&o.Tools.Sanitizer, "sanitizer", "compute-sanitizer", "compute-sanitizer `PATH`")
	fs.StringVar(&o.Tools.NCU, "ncu", "ncu", "Nsight Compute's ncu `PATH` (for the config's ncu rules)")
	fs.StringVar(&baselineStore, "baseline-store", "", "with no base build (--no-base, --base none, a push): judge ptxas growth against the newest comparable entry of this GPU in the baseline store, a `DIR` or git (default: the config's baseline.store)")
	fs.StringVar(&o.Tools.NvidiaSMI, "nvidia-smi", "nvidia-smi", "nvidia-smi `PATH` (asked, read only, for the GPU and its clocks)")
	fs.StringVar(&o.BaseCache, "base-cache", "", "restore base's builds and first runs from the base cache in `DIR` when it holds this base's entry, and save them there after building them (default: off)")
	fs.BoolVar(&o.BaseCacheReadOnly, "base-cache-read-only", false, "with --base-cache: restore from it, never save to it")
	rest, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	if o.Replay != "" {
		// The recording decides what ran and against what: these would change nothing.
		if err := ignored(fs, "--replay", "shard", "targets", "all", "keep-going", "base", "no-base", "base-cache", "base-cache-read-only"); err != nil {
			return failed(err)
		}
	}
	if len(rest) > 0 {
		return failed(usagef("run takes no arguments (got %q): the config's run section says what to build", rest))
	}
	if o.BaseCacheReadOnly && o.BaseCache == "" {
		return failed(usagef("--base-cache-read-only needs --base-cache DIR"))
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Dirs: []string{o.Replay}})
	if err != nil {
		return failed(err)
	}
	o.Targets = splitList(targets)
	if o.BaselineStore, err = readOnlyStore(ctx, e, cfg, baselineStore); err != nil {
		return failed(err)
	}
	if shardSpec != "" {
		if o.Shard, err = shard.Parse(shardSpec); err != nil {
			return failed(usagef("--shard: %v", err))
		}
	}
	o.Environ, o.Progress, o.Getenv, o.Tool = os.Environ(), e.stderr, e.getenv, toolName()
	res, err := pipeline.Run(ctx, cfg, o)
	if err != nil {
		return failed(err)
	}
	return emit(res, c, fmtr, e)
}
