package action

import (
	"context"
	"fmt"
	"io"

	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// workflowCommands annotates the shown findings through workflow commands in the step's
// log (::error file=...::): what a run without a check run shows on the change's lines.
// GitHub shows only the first ten of each level; the log says how many more there are.
type workflowCommands struct{ Log io.Writer }

func (workflowCommands) Name() string { return "workflow-command annotations" }

func (w workflowCommands) Report(_ context.Context, f *Findings) error {
	st := workflowcmd.Annotate(w.Log, workflowcmd.FromResult(f.Shown), workflowcmd.AnnotateOptions{Root: f.Root, TitlePrefix: f.Untrusted})
	if st.Err != nil {
		return fmt.Errorf("annotations: %w", st.Err)
	}
	return nil
}
