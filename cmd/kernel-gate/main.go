// Command kernel-gate guards CUDA kernel repositories: it reads what the CUDA toolchain
// printed about each kernel and refuses a change that makes a kernel wrong, unsafe or
// slower. Package main only calls cli.Main: the flags live in cli, the pipeline in
// pipeline, each gate in a package under gates/, shared plumbing under internal/
// (docs/architecture.md).
//
//	kernel-gate ptxas [FILES...]      resource usage (ptxas -v, --resource-usage, cuobjdump)
//	kernel-gate sass --sass FILE      required / forbidden SASS instructions
//	kernel-gate sanitize -- CMD       compute-sanitizer's four tools on the harness
//	kernel-gate ncu -- CMD            Nsight Compute metrics of the harness against thresholds
//	kernel-gate check FILE...         correctness of harness results (kernel-gate/bench/v1)
//	kernel-gate report FILE           render a saved result again
//	kernel-gate demo                  replay the recorded GPU run in testdata/
//	kernel-gate version
//
// Exit codes (internal/exitcode): 0 every gate passed (or had nothing to judge), 1 a gate
// failed, 2 bad usage or input the tool could not read, 3 kernel-gate could not run a step
// itself.
package main

import (
	"os"

	"github.com/kernel-gate/kernel-gate/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
