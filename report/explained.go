package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kernel-gate/kernel-gate/explain"
)

// RenderExplained writes what `kernel-gate explain` found, in text, markdown or JSON
// (kernel-gate/explain/v1): each kernel's sentence and, where it leaves clauses out, every
// clause. Kernel names and notes come from the inputs, which may be a
// fork's: they are cleaned (text) or escaped (markdown) like a result's.
func RenderExplained(w io.Writer, e explain.Explained, f Format) error {
	var b strings.Builder
	switch f {
	case JSON:
		raw, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			return err
		}
		b.Write(raw)
		b.WriteByte('\n')
	case Text:
		fmt.Fprintf(&b, "kernel-gate explain: %d kernel × arch changed, %d unchanged\n", len(e.Kernels), e.Unchanged)
		for _, k := range e.Kernels {
			fmt.Fprintf(&b, "  %s (%s): %s\n", clean(k.Kernel), clean(k.Arch), clean(k.Explain.Sentence))
			b.WriteString(textWhy("      ", k.Explain))
		}
		for _, n := range e.Notes {
			fmt.Fprintf(&b, "note: %s\n", clean(n))
		}
	case Markdown:
		fmt.Fprintf(&b, "### kernel-gate explain\n\n%d kernel × arch changed, %d unchanged.\n", len(e.Kernels), e.Unchanged)
		if len(e.Kernels) > 0 {
			b.WriteString("\n| kernel | arch | why |\n| --- | --- | --- |\n")
			for _, k := range e.Kernels {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", md(k.Kernel), md(k.Arch), md(k.Explain.Sentence))
			}
			for _, k := range e.Kernels {
				b.WriteString(mdWhy(k.Kernel+" ("+k.Arch+")", &k.Explain))
			}
		}
		for _, n := range e.Notes {
			fmt.Fprintf(&b, "\n%s\n", mdParagraph(n))
		}
	default:
		return fmt.Errorf("kernel-gate explain writes text, json or markdown, not %s", f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
