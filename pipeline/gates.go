package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/correctness"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/gates/toolkit"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The gates judged from files: the pipeline reads its artifacts with them, and the
// single-gate commands (kernel-gate ptxas, sass, check, speedup compare) the files they are
// given.

// nvccTimeout bounds `nvcc --version` when the logs do not say which toolkit built them.
const nvccTimeout = 20 * time.Second

// PtxasInputs collects resource-usage logs into one Log and scans them for the toolkit
// version.
type PtxasInputs struct {
	Log     ptxas.Log
	scanner toolkit.Scanner
}

// Read reads one log (an input.ReadFunc).
func (in *PtxasInputs) Read(r io.Reader, name string) error {
	return in.Log.Parse(r, name, in.scanner.Line)
}

// PtxasGates judges parsed resource usage (and the toolkit, when the config constrains it:
// nvcc is asked its version only when the logs print none, and never when nvcc is empty).
// defaultArch is the arch of records whose input names none.
func PtxasGates(ctx context.Context, in *PtxasInputs, cfg config.Config, base *ptxas.Baseline, nvcc string, defaultArch string) ([]result.Gate, error) {
	if err := in.Log.Check(); err != nil {
		return nil, exitcode.BadInput(err)
	}
	if defaultArch != "" {
		for i := range in.Log.Kernels {
			if in.Log.Kernels[i].Arch == "" {
				in.Log.Kernels[i].Arch = defaultArch
			}
		}
	}
	g, err := ptxas.Evaluate(&in.Log, cfg.PTXAS, base)
	if err != nil {
		return nil, err
	}
	gates := []result.Gate{g}
	if cfg.CUDA != "" {
		tk, err := toolkitGate(ctx, cfg.CUDA, in.scanner.Versions(), nvcc)
		if err != nil {
			return nil, err
		}
		gates = append(gates, tk)
	}
	return gates, nil
}

// toolkitGate checks the CUDA constraint against versions found in the inputs, asking nvcc
// only when they name none.
func toolkitGate(ctx context.Context, constraint string, versions []toolkit.Version, nvcc string) (result.Gate, error) {
	var lookupErr error
	if len(versions) == 0 && nvcc != "" {
		ctx, cancel := context.WithTimeout(ctx, nvccTimeout)
		v, err := toolkit.FromNVCC(ctx, nvcc)
		cancel()
		if err != nil {
			lookupErr = err
		} else {
			versions = []toolkit.Version{v}
		}
	} else if len(versions) == 0 {
		lookupErr = errors.New("the inputs print no `nvcc --version` banner and --nvcc is empty")
	}
	return toolkit.Check(constraint, versions, lookupErr)
}

// SASSGate reads every dump (cuobjdump --dump-sass or nvdisasm; "-" is stdin) and judges
// them together; arch names the functions of a dump that names none.
func SASSGate(files []string, stdin io.Reader, cfg config.Config, arch string) (result.Gate, error) {
	var all sass.Dump
	err := input.Files(files, stdin, func(r io.Reader, name string) error {
		d, err := sass.Parse(r, sass.ParseOptions{Arch: arch})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if all.Format == "" {
			all.Format = d.Format
		}
		all.Functions = append(all.Functions, d.Functions...)
		return nil
	})
	if err != nil {
		return result.Gate{}, err
	}
	return sass.Evaluate(&all, cfg.SASS)
}

// CorrectnessGate reads one harness file (kernel-gate/bench/v1) and judges it.
func CorrectnessGate(r io.Reader, name string, cfg config.Config) (result.Gate, error) {
	f, err := benchfile.Read(r)
	if err != nil {
		return result.Gate{}, exitcode.BadInputf("%s: %w", name, err)
	}
	return correctness.Evaluate(f, name, cfg.Correctness)
}

// CompareFiles reads a base and a head harness file made side by side and judges them
// with the speedup gate.
func CompareFiles(base, head string, stdin io.Reader, cfg config.Config) (result.Gate, error) {
	var sides [2]*benchfile.File
	for i, name := range []string{base, head} {
		err := input.Files([]string{name}, stdin, func(r io.Reader, name string) error {
			f, err := benchfile.Read(r)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			sides[i] = f
			return nil
		})
		if err != nil {
			return result.Gate{}, err
		}
	}
	g, err := speedup.Compare(sides[0], sides[1], cfg.Speedup.Config)
	if err != nil {
		return result.Gate{}, exitcode.BadInput(err)
	}
	return g, nil
}
