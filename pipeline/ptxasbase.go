package pipeline

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// PtxasBaseline is the ptxas gate's baseline read from a result saved earlier (`kernel-gate
// ptxas --baseline FILE`, a --format json result); nil for no path.
func PtxasBaseline(ctx context.Context, path string) (*ptxas.Baseline, error) {
	if path == "" {
		return nil, nil
	}
	var res result.Result
	err := input.Read(ctx, []string{path}, nil, input.JSON, func(r io.Reader, name string) error {
		var err error
		if res, err = result.Read(r); err != nil {
			return fmt.Errorf("baseline %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	kernels, err := baseline.PtxasKernels(res)
	if err != nil {
		return nil, exitcode.BadInputf("baseline %s: %w", path, err)
	}
	return ptxas.NewBaseline(filepath.Base(path), kernels), nil
}
