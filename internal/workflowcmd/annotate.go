package workflowcmd

import (
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/repopath"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// MaxAnnotations is how many annotations of each level (error, warning, notice) GitHub shows
// for one step; it drops the rest.
const MaxAnnotations = 10

// GateFinding is a finding with the name of the gate that made it, which titles its
// annotation.
type GateFinding struct {
	Gate string
	result.Finding
}

// FromResult lists every finding of r with its gate's name, in the result's order.
func FromResult(r result.Result) []GateFinding {
	n := 0
	for _, g := range r.Gates {
		n += len(g.Findings)
	}
	out := make([]GateFinding, 0, n)
	for _, g := range r.Gates {
		for _, f := range g.Findings {
			out = append(out, GateFinding{Gate: g.Name, Finding: f})
		}
	}
	return out
}

// AnnotateOptions control Annotate.
type AnnotateOptions struct {
	// Root is the repository's checkout (GITHUB_WORKSPACE): a finding's absolute path under
	// it is annotated relative to it, as GitHub needs. Empty leaves paths as they are.
	Root string
	// Max is the most annotations written per level; 0 or less means MaxAnnotations.
	Max int
	// TitlePrefix starts every title: what says whose word the findings are ("untrusted
	// (fork's code): " for a result a fork's code made).
	TitlePrefix string
}

// Counts are numbers of annotations per level. A finding of a severity other than error or
// warning is a notice.
type Counts struct {
	Errors, Warnings, Notices int
}

// Total is Errors + Warnings + Notices.
func (c Counts) Total() int { return c.Errors + c.Warnings + c.Notices }

func (c *Counts) add(level int, n int) {
	switch level {
	case 0:
		c.Errors += n
	case 1:
		c.Warnings += n
	default:
		c.Notices += n
	}
}

// Stats says what Annotate did.
type Stats struct {
	Written Counts // annotations written
	Omitted Counts // findings not annotated because of the per-level cap
	Err     error  // the write error, if writing failed (then nothing was written)
}

var levels = [3]string{"error", "warning", "notice"}

// Annotate writes one "::error ...::", "::warning ...::" or "::notice ...::" command per
// finding, worst first (errors, then warnings, then notices, each in the given order), at
// most opts.Max of each level, and then, when any were left out, one plain line saying how
// many more findings are in the job summary. Each annotation has a title naming the gate and
// the kernel, the file (relative to opts.Root when under it) with its line and column when
// the finding has them; a finding without a file is annotated without one. Every value is
// escaped, and titles and messages are neutralized, since the runner copies them into the
// log. Everything is written with one Write.
func Annotate(w io.Writer, findings []GateFinding, opts AnnotateOptions) Stats {
	limit := opts.Max
	if limit <= 0 {
		limit = MaxAnnotations
	}
	root := ""
	if opts.Root != "" {
		if abs, err := filepath.Abs(opts.Root); err == nil {
			root = abs
		}
	}
	var st Stats
	var b strings.Builder
	// One pass per level keeps the order stable within a level without sorting, and stops
	// looking at a level's findings (beyond counting them) once it has its limit.
	for level := range levels {
		written := 0
		for i := range findings {
			if levelOf(findings[i].Severity) != level {
				continue
			}
			if written == limit {
				st.Omitted.add(level, 1)
				continue
			}
			writeAnnotation(&b, level, &findings[i], root, opts.TitlePrefix)
			written++
		}
		st.Written.add(level, written)
	}
	if n := st.Omitted.Total(); n > 0 {
		verb := " are"
		if n == 1 {
			verb = " is"
		}
		b.WriteString("kernel-gate: " + numtext.Count(n, "more finding") + " (" + countWords(st.Omitted) + ")" + verb +
			" in the job summary: GitHub shows at most " + strconv.Itoa(limit) +
			" annotations of each level per step.\n")
	}
	if b.Len() == 0 {
		return st
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		st.Err = err
		st.Omitted.Errors += st.Written.Errors
		st.Omitted.Warnings += st.Written.Warnings
		st.Omitted.Notices += st.Written.Notices
		st.Written = Counts{}
	}
	return st
}

// levelOf maps a severity to its annotation level: 0 error, 1 warning, 2 notice.
func levelOf(s result.Severity) int {
	switch s {
	case result.Error:
		return 0
	case result.Warning:
		return 1
	}
	return 2
}

func writeAnnotation(b *strings.Builder, level int, f *GateFinding, root, titlePrefix string) {
	b.WriteString("::")
	b.WriteString(levels[level])
	sep := " "
	prop := func(name, value string) {
		b.WriteString(sep + name + "=" + EscapeProperty(value))
		sep = ","
	}
	file := ""
	if f.File != "" && !repopath.Disguised(f.File) {
		file = annotationPath(f.File, root) // a name that displays as another's is named in the message, escaped
	}
	if file != "" {
		prop("file", file)
		if f.Line > 0 {
			prop("line", strconv.Itoa(f.Line))
			if f.Column > 0 {
				prop("col", strconv.Itoa(f.Column))
			}
		}
	}
	prop("title", oneLine(titlePrefix)+title(f))
	b.WriteString("::")
	msg := f.MessageWhy(false)
	if strings.TrimSpace(msg) == "" {
		msg = f.Metric
		if msg == "" {
			msg = "(no message)"
		}
	}
	if file == "" && f.File != "" {
		msg += " (file " + repopath.Quote(f.File) + ")"
	}
	b.WriteString(EscapeData(Neutralize(msg)))
	b.WriteByte('\n')
}

// maxTitleKernel is the most characters of a kernel name a title shows (templated names run
// to thousands); the middle is cut so both ends stay.
const maxTitleKernel = 160

// title is "kernel-gate GATE: KERNEL (ARCH)", on one line.
func title(f *GateFinding) string {
	t := "kernel-gate"
	if g := strings.TrimSpace(f.Gate); g != "" {
		t += " " + g
	}
	if k := strings.TrimSpace(f.Kernel); k != "" {
		t += ": " + truncMiddle(k, maxTitleKernel)
	}
	if a := strings.TrimSpace(f.Arch); a != "" {
		t += " (" + a + ")"
	}
	return oneLine(t)
}

// annotationPath is file relative to root when it is an absolute path under root, with
// forward slashes; otherwise file itself (cleaned, with forward slashes).
func annotationPath(file, root string) string {
	if filepath.IsAbs(file) {
		if rel, ok := result.Under(root, file); ok {
			return rel
		}
	}
	return filepath.ToSlash(filepath.Clean(file))
}

func truncMiddle(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	head := n / 2
	tail := n - 1 - head
	return string(rs[:head]) + "…" + string(rs[len(rs)-tail:])
}

// countWords is "90 errors, 5 warnings" over the non-zero counts.
func countWords(c Counts) string {
	var parts []string
	for _, x := range []struct {
		n    int
		word string
	}{{c.Errors, "error"}, {c.Warnings, "warning"}, {c.Notices, "notice"}} {
		if x.n > 0 {
			parts = append(parts, numtext.Count(x.n, x.word))
		}
	}
	return strings.Join(parts, ", ")
}
