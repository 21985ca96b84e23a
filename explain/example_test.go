package explain_test

import (
	"fmt"

	"github.com/kernel-gate/kernel-gate/explain"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
)

// gemm_wmma of testdata/replay/occupancy: the same code given more registers
// (__maxnreg__(128) for __launch_bounds__(128)), on the H100 it was recorded on, at the
// 128 threads per block its harness launches.
func ExampleBuild() {
	regs := func(n int64) *ptxas.Kernel { return &ptxas.Kernel{Registers: &n, Smem: &[]int64{9728}[0]} }
	e := explain.Build(explain.Input{
		Headline: "registers 72 → 108",
		Base:     explain.Side{Record: regs(72)},
		Head:     explain.Side{Record: regs(108)},
		GPU:      "sm_90a", BlockSize: 128, BlockSizeFrom: "harness",
	})
	fmt.Println(e.Sentence)
	for _, c := range e.Clauses {
		fmt.Printf("[%s] %s\n", c.Source, c.Text)
	}
	// Output:
	// registers 72 → 108: occupancy 28 → 16 warps/SM (44% → 25% of the SM) at 128 threads per block, limited by registers
	// [occupancy] occupancy 28 → 16 warps/SM (44% → 25% of the SM) at 128 threads per block, limited by registers
}
