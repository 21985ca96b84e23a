package report

import (
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// maxNoteNames is the most gates the cut note names; the rest are counted.
const maxNoteNames = 8

// fitMarkdown joins the summary: top (the heading, the verdict table, the links), the gates'
// sections and the tool line. With a limit (bytes; 0 or less: none) that the whole does not
// fit in, it is cut (cutSummary).
func fitMarkdown(top string, secs []mdSection, tool, link string, limit int) string {
	var b strings.Builder
	b.WriteString(top)
	for _, s := range secs {
		for _, blk := range s.blocks {
			b.WriteString(blk.String())
		}
	}
	body := b.String()
	switch {
	case limit <= 0 || len(body)+len(tool) <= limit:
		return body + tool
	case len(body) <= limit:
		return body // only the tool line is left out: nothing a reader needs
	}
	return cutSummary(top, secs, link, limit)
}

// cutPoint is where a cut summary stops: sections before sec are whole, section sec shows
// its blocks before blk and the first rows rows of block blk (a table).
type cutPoint struct{ sec, blk, rows int }

// cutSummary returns the longest summary of at most limit bytes that keeps top whole and
// stops at a block boundary (or after a row of a table), ending in a line that says what was
// left out and where to find it. Sections come failures first, so failures are kept first.
// When not even top fits, it is the first line and the note alone, cut to the limit.
func cutSummary(top string, secs []mdSection, link string, limit int) string {
	best, bestLen := cutPoint{}, -1
	try := func(p cutPoint, n int) {
		if n+len(cutNote(secs, p, link, limit)) <= limit {
			best, bestLen = p, n
		}
	}
	n := len(top)
	try(cutPoint{}, n)
blocks:
	for si, s := range secs {
		for bi, b := range s.blocks {
			if len(b.rows) > 1 {
				part := n + len(b.head) + len(b.tail)
				for k := 1; k < len(b.rows); k++ {
					part += len(b.rows[k-1])
					if part > limit {
						break
					}
					try(cutPoint{si, bi, k}, part)
				}
			}
			n += len(b.String())
			if n > limit {
				break blocks
			}
			if bi+1 < len(s.blocks) {
				try(cutPoint{si, bi + 1, 0}, n)
			} else {
				try(cutPoint{si + 1, 0, 0}, n)
			}
		}
	}
	if bestLen < 0 {
		// Not even the verdict table fits: the first line (the verdict) and the note, or
		// the first line alone, or nothing.
		first := msgtext.FirstLine(top) + "\n"
		if s := first + "\n> ✂️ **Cut to fit " + strconv.Itoa(limit) + " bytes**: only the verdict fits." +
			whereNote(link) + "\n"; len(s) <= limit {
			return s
		}
		if len(first) <= limit {
			return first
		}
		return ""
	}
	var b strings.Builder
	b.WriteString(top)
	for si := 0; si <= best.sec && si < len(secs); si++ {
		for bi, blk := range secs[si].blocks {
			if si == best.sec && bi >= best.blk {
				if bi == best.blk && best.rows > 0 {
					b.WriteString(blk.head + strings.Join(blk.rows[:best.rows], "") + blk.tail)
				}
				break
			}
			b.WriteString(blk.String())
		}
	}
	b.WriteString(cutNote(secs, best, link, limit))
	return b.String()
}

// cutNote is the last line of a summary cut at p: what was left out, and where it is.
func cutNote(secs []mdSection, p cutPoint, link string, limit int) string {
	var parts []string
	si := p.sec
	if si < len(secs) && (p.blk > 0 || p.rows > 0) {
		s := secs[si]
		var what []string
		for bi := p.blk; bi < len(s.blocks); bi++ {
			b := s.blocks[bi]
			switch {
			case b.rows != nil && bi == p.blk && p.rows > 0:
				what = append(what, "the last "+strconv.Itoa(len(b.rows)-p.rows)+" of the "+
					strconv.Itoa(len(b.rows))+" rows of its "+b.what)
			case b.rows != nil:
				what = append(what, "its "+b.what+" ("+numtext.Count(len(b.rows), "row")+")")
			default:
				what = append(what, "its "+b.what)
			}
		}
		parts = append(parts, "from "+s.short+": "+strings.Join(what, ", "))
		si++
	}
	if rest := secs[min(si, len(secs)):]; len(rest) > 0 {
		var names []string
		for i, s := range rest {
			if i == maxNoteNames {
				names = append(names, "and "+numtext.Count(len(rest)-i, "more gate"))
				break
			}
			if s.aside {
				names = append(names, s.short)
				continue
			}
			names = append(names, s.short+" ("+verdictWord(s.verdict)+")")
		}
		word := "the section of "
		if len(rest) > 1 {
			word = "the sections of "
		}
		parts = append(parts, word+strings.Join(names, ", "))
	}
	return "\n> ✂️ **Cut to fit " + strconv.Itoa(limit) + " bytes**: left out " + strings.Join(parts, "; ") + "." +
		whereNote(link) + "\n"
}

// whereNote says where the whole report is.
func whereNote(link string) string {
	if link != "" {
		return " Everything is in the run's [artifacts](" + link + ")."
	}
	return " The JSON result has everything (`kernel-gate report FILE` renders it)."
}

// verdictWord names a verdict in the cut note.
func verdictWord(v result.Verdict) string {
	switch v {
	case result.Pass, result.Fail, result.Skip:
		return string(v)
	}
	return "unknown verdict"
}
