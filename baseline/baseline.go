package baseline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Load reads a saved result file: a regular file (a FIFO is refused, not waited on) of at
// most input.JSON's limit.
func Load(path string) (result.Result, error) {
	raw, err := input.ReadFile(context.Background(), path, input.JSON)
	if err != nil {
		return result.Result{}, fmt.Errorf("baseline: %w", err)
	}
	res, err := result.Read(bytes.NewReader(raw))
	if err != nil {
		return result.Result{}, fmt.Errorf("baseline %s: %w", path, err)
	}
	return res, nil
}

// PtxasKernels returns the kernel records of the result's ptxas gate. A baseline without
// one cannot be compared against, which is an error rather than an empty baseline.
func PtxasKernels(res result.Result) ([]ptxas.Kernel, error) {
	for _, g := range res.Gates {
		if g.Name != ptxas.Name {
			continue
		}
		var d ptxas.Data
		if err := json.Unmarshal(g.Data, &d); err != nil {
			return nil, fmt.Errorf("ptxas data: %w", err)
		}
		return d.Kernels, nil
	}
	return nil, fmt.Errorf("no ptxas gate in the result: save one with `kernel-gate ptxas --format json --out FILE`")
}
