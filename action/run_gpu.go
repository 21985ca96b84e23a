package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

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
	s, err := p.r.exec(ctx, id, append([]string{p.o.smi}, gpuinfo.QueryArgs()...), "", nil, smiStepTimeout, id+".csv")
	if err != nil || s.Why != "" {
		why := "it could not be asked"
		if s.Why != "" {
			why = s.failureText()
		}
		p.gpuLost = "after a GPU error nvidia-smi no longer answers (" + oneLine(why) + "): no GPU step runs after it, and the machine needs a look (kernel-gate never resets a GPU)"
		p.progress("%s", p.gpuLost)
	}
}
