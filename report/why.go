package report

import (
	"fmt"
	"html"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// mdWhy is an explanation clause by clause, most telling first, each with its source, in a
// <details> whose summary names what it explains (title): where the sentence a report
// shows leaves clauses out (result.SentenceShows), so that the summary has them all; ""
// where it leaves none out.
func mdWhy(title string, e *result.Explanation) string {
	if e == nil || result.SentenceShows(len(e.Clauses)) == len(e.Clauses) {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n<details><summary>Why %s: %s, most telling first</summary>\n\n", htmlText(title), numtext.Count(len(e.Clauses), "clause"))
	for i, c := range e.Clauses {
		fmt.Fprintf(&b, "%d. %s — %s\n", i+1, mdParagraph(c.Text), md(c.Source))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// mdFindingsWhy is mdWhy of each finding whose explanation the findings table cuts short,
// in the table's order; "" where none.
func mdFindingsWhy(fs []result.Finding) string {
	var b strings.Builder
	for _, f := range sortedFindings(fs) {
		var name []string
		for _, s := range []string{f.Kernel, f.Arch, f.Metric} {
			if s = strings.TrimSpace(s); s != "" {
				name = append(name, s)
			}
		}
		b.WriteString(mdWhy(strings.Join(name, " · "), f.Explain))
	}
	return b.String()
}

// htmlText escapes untrusted text for a line of raw HTML (a <summary>), where markdown's
// backslash escapes would show: no tag, entity or attribute can open, no link forms by
// itself (unlink), and '@' mentions nobody.
func htmlText(s string) string {
	return strings.ReplaceAll(html.EscapeString(unlink(clean(s))), "@", "@"+zwsp)
}

// textWhy is an explanation clause by clause for a terminal, indented under the line
// that shows its sentence, where that sentence leaves clauses out; "" where it leaves none.
func textWhy(indent string, e result.Explanation) string {
	if result.SentenceShows(len(e.Clauses)) == len(e.Clauses) {
		return ""
	}
	var b strings.Builder
	for i, c := range e.Clauses {
		fmt.Fprintf(&b, "%s%d. %s — %s\n", indent, i+1, clean(c.Text), clean(c.Source))
	}
	return b.String()
}
