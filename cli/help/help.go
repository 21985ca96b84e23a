// Package help holds kernel-gate's usage texts: the command list (Text("kernel-gate")) and
// each command's, which -h prints above the command's flags. They are Go strings, not
// embedded files, so that a build from the Go files alone (the action's tests copy only
// those) has them.
package help

// Text is the usage text of command name ("ptxas", "speedup-run", "baseline" for its four
// subcommands, "kernel-gate" for the command list); "" for a name that has none.
func Text(name string) string {
	switch name {
	case "action":
		return `Usage: kernel-gate action

The GitHub Actions entry (action.yml runs it). It reads the action's inputs (INPUT_MODE,
INPUT_GITHUB-TOKEN, ...) and the event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH), gates head
against its base on pull_request, push and workflow_dispatch or reports another job's
result on workflow_run, and posts a check run with annotations on the kernels' source
lines, the job summary and the step outputs. A reporting failure never changes the exit
code.

`
	case "baseline":
		return `Usage: kernel-gate baseline update --store DIR|git [--commit SHA] RESULT.json
       kernel-gate baseline show --store DIR|git [--format text|json] [-n N]
       kernel-gate baseline prune --store DIR|git [--keep N]
       kernel-gate baseline diff --store DIR|git [--key GPU] [--from SHA] [--to SHA] [--format text|json]
       kernel-gate baseline diff --store DIR|git [--from SHA] RESULT.json

The baseline store keeps, per GPU and arch, the entries of gated results on the default
branch: PTXAS records, SASS counts and digests, timings, correctness errors, sanitizer
status. The config's baseline section names the store, the branch, how many entries to
keep and which entries are comparable; the flags override it. diff compares two entries of
one GPU (the newest two by default), or a result with the newest stored entry that the
config's baseline.compatible_cuda and compatible_driver allow. --key names a GPU as show
prints it ("NVIDIA H200 (sm_90)"), as GPU/arch ("NVIDIA H200/sm_90", as trend takes it) or
by its file's name (nvidia-h200.sm_90).

`
	case "check":
		return `Usage: kernel-gate check [flags] FILE...

Judges kernel-gate/bench/v1 harness results (KG_MODE=check) against the correctness
tolerances of the config ("-" is standard input).

`
	case "demo":
		return `Usage: kernel-gate demo [flags]
       kernel-gate demo --trend [--out trend.html]

Replays a recorded real GPU run of this repository's kernels through every gate,
with no GPU and no CUDA toolkit. The report says that it is a replay. With --trend,
draws the trend page of a baseline store made of every recorded case.

`
	case "guard":
		return `Usage: kernel-gate guard [flags] [PATHS...]
       kernel-gate guard [flags] --diff BASE..HEAD

Blocks commands that would stop, deallocate, reboot or reset the GPU machine, found by
parsing workflows, composite actions, shell scripts, Makefiles, Dockerfiles and Python.
A file is judged by its path in its repository, wherever PATHS point and the command
runs (guard .github reads the workflows there as workflows); findings name that path.
A file named or found that is not read is named in a notice; one that cannot be read
(permissions, a FIFO, a link to nowhere) fails the gate. Exit 1 when anything is blocked
or cannot be judged.

`
	case "kernel-gate":
		return `kernel-gate: gates for CUDA kernels

Usage:
  kernel-gate ptxas [flags] [FILES...]   judge resource usage read from build logs (stdin when no FILES)
  kernel-gate sass [flags] --sass FILE   judge SASS from cuobjdump --dump-sass or nvdisasm
  kernel-gate sanitize [flags] -- CMD    run compute-sanitizer's four tools on CMD and judge (or --log/--xml FILE)
  kernel-gate ncu [flags] -- CMD         profile CMD with Nsight Compute and judge its metrics (or --csv FILE)
  kernel-gate check [flags] FILE...      judge harness results (kernel-gate/bench/v1) for correctness
  kernel-gate speedup run [flags]        the A/B run: time base and head side by side (ABBA) on one GPU and judge them
  kernel-gate speedup compare BASE HEAD  judge head vs base timings (kernel-gate/bench/v1) side by side
  kernel-gate run [flags]                build and run every gate on the config's run.targets (head vs base)
  kernel-gate run --replay DIR           feed a recorded run through the same gates (no GPU needed)
  kernel-gate merge RESULT.json...       join the results of a run's shards (run --shard i/n) into one
  kernel-gate action                     the GitHub Actions entry: gate or report per event, post a check run
  kernel-gate baseline show|update|prune|diff  the baseline store (--store DIR, or git: the kernel-gate-baseline branch)
  kernel-gate trend --store DIR|git      the baseline store's history as one HTML page (--out trend.html)
  kernel-gate guard [PATHS...]           block commands that would stop, reboot or reset the GPU machine
  kernel-gate guard --diff BASE..HEAD    the same, judging only what the change adds
  kernel-gate report [flags] FILE        render a saved JSON result again
  kernel-gate explain BASE.json HEAD.json  why kernels changed: resources, occupancy, instruction mix
  kernel-gate demo [flags]               replay the recorded real GPU run in testdata/ (no GPU needed)
  kernel-gate version                    print the version

Flags of the commands that write a result (ptxas, sass, sanitize, ncu, check, speedup run,
speedup compare, run, guard, merge, report, demo):
  --config FILE     config (default: kernel-gate.yml, then .github/kernel-gate.yml)
  --format FORMAT   text, json, markdown or sarif (default text; merge's default json)
  --out FILE        write the report to FILE instead of standard output
baseline show and diff take --format text or json; trend --format html (default) or text;
both take --config and --out. baseline update and prune take --config only; demo --trend
writes its page to --out; action takes none of these (its inputs are INPUT_* variables).

Exit codes: 0 pass, 1 a gate failed, 2 bad usage or unreadable input,
3 kernel-gate could not run a step itself.
Run 'kernel-gate COMMAND -h' for a command's flags.
`
	case "speedup-compare":
		return `Usage: kernel-gate speedup compare [flags] BASE.json HEAD.json

Judges two kernel-gate/bench/v1 files made side by side (round i of base beside round i of
head), as an A/B run leaves them: slower, same, faster or inconclusive per kernel × shape.
kernel-gate bench compare is its old name, still accepted.

`
	case "speedup-run":
		return `Usage: kernel-gate speedup run [flags] --base-cmd CMD --head-cmd CMD
       kernel-gate speedup run [flags] [--base REV] [--build CMD] --harness CMD

The A/B run: runs the base and head harnesses (KG_MODE=bench, KG_ROUNDS=1) alternately on
one GPU in ABBA order after a warm-up, drops rounds the GPU was throttled in (nvidia-smi,
read only), adds rounds while a kernel × shape is inconclusive, and judges them with the
speedup gate. Each CMD is a shell command, run by sh -c (pipes and && work). Without
--base-cmd/--head-cmd, base is built from the merge base with REV in a temporary git
worktree and head from the working tree, and --harness runs from each tree's root. A
harness that crashes, hangs or writes no valid file fails the gate. kernel-gate bench run
is its old name, still accepted.

`
	case "explain":
		return `Usage: kernel-gate explain [flags] BASE.json HEAD.json
       kernel-gate explain [flags] --base-log LOG --head-log LOG [--base-sass DUMP --head-sass DUMP]

Explains every kernel × arch whose ptxas record or SASS differs between base and head,
from two saved results (the ptxas gate's data.kernels, the sass gate's data.functions)
or two builds' logs (nvcc -Xptxas -v) and SASS dumps (cuobjdump --dump-sass): registers,
shared memory, stack and spills; the theoretical occupancy they allow on --gpu at
--block-size, and what limits it; the SASS instruction mix per class, with new local
memory traffic, lost tensor-core MMA and clock reads called out. A result written before
the sass gate kept the mix has none: --base-sass and --head-sass add it. It explains, it
does not judge: exit 0, or 2 for bad input.

`
	case "merge":
		return `Usage: kernel-gate merge [--out merged.json] [--expect-shards N] [--expect-gpus N] RESULT.json...

Joins the results of a run's shards (kernel-gate run --shard i/N, one job each, on one GPU
or several) into one result, JSON by default, that kernel-gate report and the action's
report mode post as one check run. The results must be shards of one run (the same
commit, base, config and targets), each shard 1..N once per GPU. A result that is
missing, given twice, unreadable or of another run fails the merged result's "shards"
gate, naming it; otherwise each gate is its shards' gates joined. Results of several GPUs
(device name and arch) are kept apart: a gate that differs between them is shown per GPU,
"speedup (L4, sm_89)". Exits 1 when the merged result fails.

`
	case "ncu":
		return `Usage: kernel-gate ncu [flags] -- CMD [ARGS...]
       kernel-gate ncu [flags] --csv FILE [FILE...]

Runs Nsight Compute once on CMD (the kernel harness, with KG_MODE=check, KG_ROUNDS=1 and
KG_SHAPES set to the main shape): ncu --csv --clock-control none --metrics M... with the
metrics the config's ncu.kernels name, and applies the ncu gate. kernel-gate never lets ncu
lock the GPU's clocks. With --csv it judges output saved elsewhere (files after the flags
are more CSV files then).

`
	case "ptxas":
		return `Usage: kernel-gate ptxas [flags] [FILES...]

Reads nvcc -Xptxas -v / --resource-usage build logs, ptxas or nvlink output, or
cuobjdump --dump-resource-usage listings (standard input when no FILES, or "-").

`
	case "report":
		return `Usage: kernel-gate report [flags] FILE

Renders a result saved with --format json again ("-" is standard input). Exits 0 once rendered.

`
	case "run":
		return `Usage: kernel-gate run [flags]

Runs every gate on the config's run.targets: builds head (and base, the merge base, in a
git worktree) with nvcc -lineinfo -Xptxas -v, then the PTXAS and SASS gates, and per
target the sanitizer (small shape), the correctness check and the speedup gate (head vs
base, interleaved). A target whose SASS is byte-identical to base's is not sanitized or
timed again. Progress goes to standard error; everything the run read is kept in
--artifacts, which --replay feeds through the same code without a GPU.

--shard I/N splits the targets across N runners (a matrix job each): a target belongs to
the shard its name hashes to, so adding a target never moves another; kernel-gate merge
joins the shards' results into one.

--base-cache DIR keeps base's side (its builds, JIT caches, dumps and first runs) in DIR,
keyed by the merge base's tree, the toolkit, the GPU, the config and kernel-gate's version:
a later run of the same base restores it and builds only head (base is still timed live).
An entry that does not verify is ignored, said, and base is built.

`
	case "sanitize":
		return `Usage: kernel-gate sanitize [flags] -- CMD [ARGS...]
       kernel-gate sanitize [flags] --log FILE... --xml FILE...

Runs compute-sanitizer once per tool on CMD (the kernel harness on a small shape) with
KG_MODE=sanitize and KG_OUT set, or reads logs made elsewhere, and applies the sanitizer gate.

`
	case "sass":
		return `Usage: kernel-gate sass [flags] --sass FILE [FILE...]

`
	case "trend":
		return `Usage: kernel-gate trend --store DIR|git [--out trend.html] [--key GPU/arch] [-n N]

Draws the baseline store's history as one self-contained HTML page (inline SVG and
CSS, no script, nothing fetched): per GPU and commit, each kernel's registers, shared
memory and spills per arch, and each kernel × shape's median time with its interval
and max_err. --format text prints a few lines of it instead.

`
	}
	return ""
}
