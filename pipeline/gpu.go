package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

const gpuFile = "gpu.csv"

// smiQuery is nvidia-smi's read-only question about the GPU, kept in log.
func (p *pipeline) smiQuery(id, log string) proc {
	return proc{id: id, argv: append([]string{p.o.Tools.NvidiaSMI}, gpuinfo.QueryArgs()...), timeout: smiStepTimeout, log: log}
}

// detectGPU asks nvidia-smi which GPU this is and resolves run.arch's "native" to it (a
// replay builds what the recording built, whatever the config says now). No GPU is not an
// error: the static gates still run, and the GPU gates fail saying why.
func (p *pipeline) detectGPU(ctx context.Context, replaying bool) error {
	s, err := p.x.run(ctx, p.smiQuery("gpu", gpuFile))
	if err != nil {
		return err
	}
	if s.Why != "" {
		p.gpuWhy = "nvidia-smi could not be asked for the GPU: " + s.failureText()
	} else if g, err := gpuinfo.ParseFile(p.x.path(gpuFile)); err != nil {
		p.gpuWhy = err.Error()
	} else {
		p.gpu = &g
		p.progress("GPU: %s (compute %s, driver %s)", g.Name, g.ComputeCap, g.Driver)
	}
	if !replaying {
		if p.decided.Arch, err = p.resolveArch(); err != nil {
			return err
		}
	}
	p.set.Arch = p.decided.Arch
	if p.gpu != nil && p.buildsSources() && !gpuinfo.RunnableOn(p.set.Arch, p.gpu.Arch()) {
		p.gpuWhy = fmt.Sprintf("the GPU is %s (%s) but run.arch builds only %s: the harness cannot run on it; add %s or native to run.arch",
			p.gpu.Name, p.gpu.Arch(), strings.Join(p.set.Arch, ", "), p.gpu.Arch())
	}
	if p.gpuWhy != "" {
		p.progress("no GPU steps: %s", msgtext.FirstLine(p.gpuWhy))
	}
	return nil
}

// resolveArch replaces "native" with the GPU's architecture.
func (p *pipeline) resolveArch() ([]string, error) {
	out := []string{}
	for _, a := range p.set.Arch {
		if a != config.DefaultRunArch {
			out = append(out, a)
			continue
		}
		if p.gpu == nil && !p.buildsSources() {
			continue // run.arch is nvcc's for sources targets; a harness target's build picks its own
		}
		if p.gpu == nil {
			return nil, exitcode.BadInputf("%s: run.arch has \"native\" but %s; name the architectures in run.arch to build without a GPU", p.cfg.Path, p.gpuWhy)
		}
		if !slices.Contains(out, p.gpu.Arch()) {
			out = append(out, p.gpu.Arch())
		}
	}
	return out, nil
}

// gpuErrorPhrases are what the CUDA runtime and driver print when the GPU itself failed
// during a run (as opposed to a wrong result): the process's context is lost, and a
// harness that hits one proves nothing about the rest of its kernels.
func gpuErrorPhrases() []string {
	return []string{
		"unspecified launch failure", "an illegal memory access was encountered",
		"an illegal instruction was encountered", "misaligned address",
		"device-side assert triggered", "GPU has fallen off the bus", "uncorrectable ECC error",
		"cudaErrorLaunchFailure", "cudaErrorIllegalAddress", "CUDA_ERROR_LAUNCH_FAILED",
		"CUDA_ERROR_ILLEGAL_ADDRESS", "NVRM: Xid", "Xid (PCI:",
	}
}

// gpuError returns the first GPU error phrase in text ("" when none).
func gpuError(text string) string {
	low := strings.ToLower(text)
	for _, p := range gpuErrorPhrases() {
		if strings.Contains(low, strings.ToLower(p)) {
			return p
		}
	}
	return ""
}

// gpuErrorIn finds a GPU error in a gate's failed harness runs.
func gpuErrorIn(g result.Gate) string {
	for _, f := range g.Findings {
		if f.Severity == result.Error && f.Metric == abrun.MetricRun {
			if why := gpuError(f.Message); why != "" {
				return why
			}
		}
	}
	return ""
}

// checkGPUAlive asks nvidia-smi whether the GPU still answers after a GPU error; when it
// does not, no later GPU step runs (every target says why).
func (p *pipeline) checkGPUAlive(ctx context.Context) {
	p.gpuChecks++
	id := fmt.Sprintf("gpu-after-error/%d", p.gpuChecks)
	s, err := p.x.run(ctx, p.smiQuery(id, id+".csv"))
	if err != nil || s.Why != "" {
		why := "it could not be asked"
		if s.Why != "" {
			why = s.failureText()
		}
		p.gpuLost = "after a GPU error nvidia-smi no longer answers (" + msgtext.FirstLine(why) + "): no GPU step runs after it, and the machine needs a look (kernel-gate never resets a GPU)"
		p.progress("%s", p.gpuLost)
	}
}

// buildsSources reports whether a target of the run is built by kernel-gate from sources
// (run.arch applies to those only).
func (p *pipeline) buildsSources() bool {
	return slices.ContainsFunc(p.targets, func(t config.Target) bool { return !t.HasCommands() })
}
