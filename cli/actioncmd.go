package cli

import (
	"context"
	"os"

	"github.com/kernel-gate/kernel-gate/action"
	"github.com/kernel-gate/kernel-gate/pipeline"
)

// runAction is `kernel-gate action`, the GitHub Actions entry: everything it needs comes
// from the action's inputs and the event (INPUT_*, GITHUB_*), so it takes no flags but the
// tools' paths.
func runAction(ctx context.Context, args []string, e env) (int, error) {
	var tools pipeline.Tools
	// No --config, --format or --out: the action's inputs say them (INPUT_CONFIG, ...).
	fs := flagSet("action", e, nil, nil)
	fs.StringVar(&tools.NVCC, "nvcc", "", "nvcc `PATH` (default: the config's run.nvcc, else nvcc)")
	fs.StringVar(&tools.Cuobjdump, "cuobjdump", "cuobjdump", "cuobjdump `PATH`")
	fs.StringVar(&tools.Sanitizer, "sanitizer", "compute-sanitizer", "compute-sanitizer `PATH`")
	fs.StringVar(&tools.NCU, "ncu", "ncu", "Nsight Compute's ncu `PATH`")
	fs.StringVar(&tools.NvidiaSMI, "nvidia-smi", "nvidia-smi", "nvidia-smi `PATH`")
	rest, err := parse(fs, args, `Usage: kernel-gate action

The GitHub Actions entry (action.yml runs it). It reads the action's inputs (INPUT_MODE,
INPUT_GITHUB-TOKEN, ...) and the event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH), gates head
against its base on pull_request, push and workflow_dispatch or reports another job's
result on workflow_run, and posts a check run with annotations on the kernels' source
lines, the job summary and the step outputs. A reporting failure never changes the exit
code.

`, e)
	if err != nil {
		return failed(err)
	}
	if len(rest) > 0 {
		return failed(usagef("action takes no arguments (got %q): its inputs come from INPUT_* variables", rest))
	}
	return action.Run(ctx, action.Options{Getenv: e.getenv, Environ: os.Environ(), Log: e.stderr, Tool: toolName(), Tools: tools})
}
