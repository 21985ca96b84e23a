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
	fs.StringVar(&tools.Nvdisasm, "nvdisasm", "", "nvdisasm `PATH` (default: the one beside cuobjdump; none: cuobjdump --dump-sass)")
	fs.StringVar(&tools.Sanitizer, "sanitizer", "compute-sanitizer", "compute-sanitizer `PATH`")
	fs.StringVar(&tools.NCU, "ncu", "ncu", "Nsight Compute's ncu `PATH`")
	fs.StringVar(&tools.NvidiaSMI, "nvidia-smi", "nvidia-smi", "nvidia-smi `PATH`")
	rest, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	if len(rest) > 0 {
		return failed(usagef("action takes no arguments (got %q): its inputs come from INPUT_* variables", rest))
	}
	return action.Run(ctx, action.Options{Getenv: e.getenv, Environ: os.Environ(), Log: e.stderr, Tool: toolName(), Tools: tools})
}
