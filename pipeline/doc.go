// Package pipeline is `kernel-gate run`: the whole gate pipeline on a change. The command,
// the demo, the action and the tests all call Run.
//
// Run takes the loaded config (its run.targets) and Options, and goes through these steps:
//
//  1. Choose the targets: Options.Targets picks among run.targets, and Options.Shard keeps
//     those whose names hash to this shard (package shard); a shard with none still asks
//     for the GPU and passes with "no targets in shard".
//  2. Find the GPU: nvidia-smi, read only (package gpuinfo); `arch: native` builds for it,
//     and a build that cannot run on it is refused.
//  3. Resolve the base: the merge base of Options.Base (default speedup.base_ref, else
//     origin/main) with HEAD, checked out in a git worktree; none with --no-base, or when
//     HEAD is the base.
//  4. Build base and head side by side: nvcc -lineinfo -Xptxas -v for a target of sources
//     (targets with the same sources share a build; several sources are compiled each by an
//     nvcc -c of its own, at once within the side's share of the cores, then linked), or the
//     repository's own build command and first harness run for a target of commands, then
//     the SASS of what they made: each binary's cubins listed and extracted by cuobjdump and
//     disassembled by nvdisasm, a process per cubin, at once (every side's), kept as one
//     sass.txt; cuobjdump --dump-sass where there is no nvdisasm (sassdump.go).
//     With Options.BaseCache, base's side is restored from the entry of its key instead
//     of run, when one verifies, and saved there after it is built (basecache.go).
//  5. The static gates on the builds: ptxas (base's records as the baseline, or, with no
//     base, the newest comparable entry of the baseline store), toolkit and sass
//     (PtxasGates, SASSGate).
//  6. Each target's GPU steps, in order, stopping at its first failed gate unless
//     Options.KeepGoing: the sanitizer, the correctness check, the speedup gate (base and
//     head harnesses side by side, package abrun), for a kernel it finds slower one
//     Nsight Compute profile of each side within a 60 s budget (profile.go), and Nsight
//     Compute where a rule names its kernels: one run for the later targets of the same
//     harness and shape too, each judged on its own launches, unless that run proves less
//     than the runs apart (ncutogether.go). The reference is timed until its goal is
//     decided (package abrun). A target whose functions have byte-identical SASS to base's on every arch
//     is not sanitized, timed or profiled again unless Options.All (with base restored from
//     the base cache it is still sanitized and profiled: threat-model T19); a GPU error ends the
//     target's steps, and every later target's when nvidia-smi no longer answers.
//  7. Merge each gate's per-target parts into one gate, point findings at the kernels'
//     __global__ lines (package kernelsrc), explain every failed or warned ptxas, sass and
//     speedup finding of a kernel (package explain, explain.go), and return the result
//     (package result); a shard's result records its shard.
//
// Every process goes through an executor. Live, it runs the process with a timeout, killed
// with its process group (package procgroup), keeps its output in the artifacts directory
// (Options.Artifacts) with a cap on each log, and writes result.json, journal.json (each
// process: arguments, exit, time) and commands.sh (the same processes as a plain script).
// Replaying (Options.Replay), it reads the same files back, so that a recording is judged
// by the same code without a GPU and reaches the same verdicts; the recording's decisions
// (targets, shard, --all, --keep-going) override the call's.
//
// The single commands judge one input with the same helpers: PtxasGates, SASSGate,
// CorrectnessGate and CompareFiles.
package pipeline
