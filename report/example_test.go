package report_test

import (
	"os"

	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/report"
)

// A result of two gates, one of which failed, rendered for a terminal.
func ExampleRender() {
	ptxas := result.Gate{Name: "ptxas", Summary: "2 kernels on sm_90a: 1 over the register limit",
		Findings: []result.Finding{{Severity: result.Error, Kernel: "flash_fwd", Arch: "sm_90a", Metric: "registers",
			Value: result.Num(153), Limit: result.Num(128), Message: "uses 153 registers, over the limit of 128"}}}
	ptxas.Decide(true)
	sass := result.Gate{Name: "sass", Summary: "2 kernels: no forbidden instructions"}
	sass.Decide(true)
	res := result.New("kernel-gate 1.0.0", ptxas, sass)

	if err := report.Render(os.Stdout, res, report.Text, report.Options{Width: 80}); err != nil {
		panic(err)
	}
	// Output:
	// kernel-gate: FAIL (2 gates: 1 failed, 1 passed) · kernel-gate 1.0.0
	//
	// == ptxas: FAIL (1 error) ==
	//   2 kernels on sm_90a: 1 over the register limit
	//
	//   error  flash_fwd  sm_90a  registers  153 > 128  uses 153 registers, over the limit of 128
	//
	// == sass: PASS ==
	//   2 kernels: no forbidden instructions
}
