package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// stepOutputs sets the step's outputs: the verdict, where the result, the summary and the
// SARIF log are, the check run's id, the regressions and the failed gates. It runs last:
// the paths and the id are what the other reporters posted and wrote ("" when they did not).
type stepOutputs struct {
	Getenv      func(string) string
	ResultsFile string
}

func (stepOutputs) Name() string { return "step outputs" }

func (s stepOutputs) Report(_ context.Context, f *Findings) error {
	res := f.Result
	for _, out := range [][2]string{
		{"verdict", string(res.Verdict)}, {"result-path", s.ResultsFile}, {"check-run-id", f.CheckRunID},
		{"regressions", fmt.Sprint(regressions(res))}, {"summary-path", f.SummaryPath}, {"failed-gates", failedGates(res)},
		{"sarif-path", f.SARIFPath},
	} {
		if err := workflowcmd.SetOutput(s.Getenv, out[0], out[1]); err != nil {
			return fmt.Errorf("step outputs are not set: %s", msgtext.FirstLine(err.Error())) // said once
		}
	}
	return nil
}

// failedGates is the failed-gates output: the names of the gates that failed, comma-
// separated, in the result's order. A report's gate names come from an untrusted file and
// an output is often spliced into a later step's script: any character but letters,
// digits, '_', '-' and '.' becomes '_'.
func failedGates(res result.Result) string {
	var names []string
	for _, g := range res.Gates {
		if g.Verdict != result.Fail {
			continue
		}
		name := strings.Map(func(r rune) rune {
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' || r == '.' {
				return r
			}
			return '_'
		}, g.Name)
		if len(name) > 64 {
			name = name[:64]
		}
		names = append(names, name)
	}
	return strings.Join(names, ",")
}

// regressions counts the error findings: what the change broke.
func regressions(res result.Result) int {
	n := 0
	for _, g := range res.Gates {
		n += g.Count(result.Error)
	}
	return n
}
