package action

import (
	"bytes"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
	"github.com/kernel-gate/kernel-gate/report"
)

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

// SARIFPath is where format: sarif writes the SARIF log: beside the result file, its
// .json replaced (action.yml's script names the single commands' the same way).
func SARIFPath(resultsFile string) string {
	return strings.TrimSuffix(resultsFile, ".json") + ".sarif"
}

// writeSARIF writes the result as a SARIF 2.1.0 log for code scanning when the format
// input asks for it, and returns its path for the sarif-path output ("" when it was not
// asked for, or could not be written: said in the log, the verdict unchanged). It holds
// every finding, whatever filter-mode annotates.
func (r *run) writeSARIF(res result.Result) string {
	if r.in.Format != FormatSARIF {
		return ""
	}
	p := SARIFPath(r.in.ResultsFile)
	var b bytes.Buffer
	err := report.Render(&b, res, report.SARIF, report.Options{Root: r.root, Fallback: r.cfg.Path})
	if err == nil {
		// Never through a link planted where the file goes, nor on its way (writeOut).
		err = writeOut(r.root, p, b.Bytes())
	}
	if err != nil {
		r.logf("kernel-gate action: the SARIF log %s: %s", p, workflowcmd.Neutralize(msgtext.FirstLine(err.Error())))
		return ""
	}
	r.logf("kernel-gate action: SARIF log written to %s (upload it with github/codeql-action/upload-sarif)", p)
	return p
}
