package action

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/report"
)

// SARIFPath is where format: sarif writes the SARIF log: beside the result file, its
// .json replaced (action.yml's script names the single commands' the same way).
func SARIFPath(resultsFile string) string {
	return strings.TrimSuffix(resultsFile, ".json") + ".sarif"
}

// sarifFile writes the result as a SARIF 2.1.0 log for code scanning, for the sarif-path
// output, when the input format asks for it. It holds every finding, whatever filter-mode
// annotates.
type sarifFile struct {
	// Workspace is the pull request's checkout, which the log is never written out of; a
	// finding's absolute path under it is made relative.
	Workspace, ResultsFile string
	// Locate is the file a finding that names none is located at (the config's).
	Locate string
	Log    io.Writer
}

func (r *run) sarifFile() sarifFile {
	return sarifFile{Workspace: r.root, ResultsFile: r.in.ResultsFile, Locate: r.cfg.Path, Log: r.o.Log}
}

func (sarifFile) Name() string { return "SARIF log" }

func (s sarifFile) Report(_ context.Context, f *Findings) error {
	p := SARIFPath(s.ResultsFile)
	var b bytes.Buffer
	err := report.Render(&b, f.Result, report.SARIF, report.Options{Root: s.Workspace, Fallback: s.Locate})
	if err == nil {
		// Never through a link planted where the file goes, nor on its way (writeOut).
		err = writeOut(s.Workspace, p, b.Bytes())
	}
	if err != nil {
		return fmt.Errorf("the SARIF log %s: %s", p, msgtext.FirstLine(err.Error()))
	}
	f.SARIFPath = p
	logf(s.Log, "kernel-gate action: SARIF log written to %s (upload it with github/codeql-action/upload-sarif)", p)
	return nil
}
