package guard

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// unknownByte fills the place of text whose value the guard cannot know: a `${{ }}`
// expression, a make variable, an f-string field, a shell expansion with no literal
// value. A word containing it never equals a literal, so it never matches a rule word;
// it has the length of what it replaces, so positions after it stay right.
const unknownByte = '\x1a'

// seg maps a run of a text's bytes to the file. A contiguous seg maps byte off+i to file
// byte fileOff+i; a synthetic one (an escape, an expansion, a folded line break) maps
// every byte to fileOff, and the end of the run to fileEnd.
type seg struct {
	off, fileOff, fileEnd int
	contiguous            bool
}

// src is a text the guard parses (a whole file, a workflow step's script, the string
// passed to `bash -c`) with the map from its bytes back to the file's.
type src struct {
	text string
	segs []seg
}

// fileSrc is a whole file's text, mapped to itself.
func fileSrc(text string) *src {
	return &src{text: text, segs: []seg{{contiguous: true}}}
}

func (s *src) segIndex(o int) int {
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].off > o }) - 1
	return max(i, 0)
}

// fileOff maps text offset o to a file offset.
func (s *src) fileOff(o int) int {
	if len(s.segs) == 0 {
		return 0
	}
	if o >= len(s.text) && len(s.text) > 0 {
		return s.fileEnd(len(s.text))
	}
	o = max(o, 0)
	sg := s.segs[s.segIndex(o)]
	if sg.contiguous {
		return sg.fileOff + o - sg.off
	}
	return sg.fileOff
}

// fileEnd maps the end (exclusive) of a span ending at text offset e.
func (s *src) fileEnd(e int) int {
	if len(s.segs) == 0 {
		return 0
	}
	if e <= 0 {
		return s.fileOff(0)
	}
	e = min(e, len(s.text))
	sg := s.segs[s.segIndex(e-1)]
	if sg.contiguous {
		return sg.fileOff + e - sg.off
	}
	return max(sg.fileEnd, sg.fileOff)
}

// builder assembles a src piece by piece.
type builder struct {
	buf  []byte
	segs []seg
}

// raw appends text that stands at fileOff in the file, byte for byte.
func (b *builder) raw(fileOff int, s string) {
	if s == "" {
		return
	}
	if n := len(b.segs); n > 0 {
		last := b.segs[n-1]
		if last.contiguous && last.fileOff+len(b.buf)-last.off == fileOff {
			b.buf = append(b.buf, s...)
			return
		}
	}
	b.segs = append(b.segs, seg{off: len(b.buf), fileOff: fileOff, contiguous: true})
	b.buf = append(b.buf, s...)
}

// synth appends text that the file spells differently (an escape, an expansion): all of
// it maps to fileOff, and its end to fileEnd.
func (b *builder) synth(fileOff, fileEnd int, s string) {
	if s == "" {
		return
	}
	b.segs = append(b.segs, seg{off: len(b.buf), fileOff: fileOff, fileEnd: fileEnd})
	b.buf = append(b.buf, s...)
}

// from appends p.text[start:end] with its mapping.
func (b *builder) from(p *src, start, end int) {
	start, end = max(start, 0), min(end, len(p.text))
	for start < end {
		i := p.segIndex(start)
		sg := p.segs[i]
		segEnd := len(p.text)
		if i+1 < len(p.segs) {
			segEnd = p.segs[i+1].off
		}
		stop := min(end, segEnd)
		if stop <= start {
			stop = end // a malformed map: take the rest as one piece
		}
		if sg.contiguous {
			b.raw(sg.fileOff+start-sg.off, p.text[start:stop])
		} else {
			b.synth(sg.fileOff, sg.fileEnd, p.text[start:stop])
		}
		start = stop
	}
}

// fromMasked appends p.text[start:end] with its mapping, every byte replaced by
// unknownByte.
func (b *builder) fromMasked(p *src, start, end int) {
	n := len(b.buf)
	b.from(p, start, end)
	for i := n; i < len(b.buf); i++ {
		b.buf[i] = unknownByte
	}
}

// synthAt appends s mapped to the span p.text[start:end].
func (b *builder) synthAt(p *src, start, end int, s string) {
	b.synth(p.fileOff(start), p.fileEnd(end), s)
}

func (b *builder) len() int { return len(b.buf) }

func (b *builder) src() *src {
	s := &src{text: string(b.buf), segs: b.segs}
	if len(s.segs) == 0 {
		s.segs = []seg{{contiguous: true}}
	}
	return s
}

// sub is p.text[start:end] as a src of its own.
func (p *src) sub(start, end int) *src {
	var b builder
	b.from(p, start, end)
	return b.src()
}

// lineTable finds the line and column of a file offset.
type lineTable struct {
	starts []int // offset of each line's first byte
	size   int
}

func newLineTable(text string) lineTable {
	t := lineTable{starts: []int{0}, size: len(text)}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			t.starts = append(t.starts, i+1)
		}
	}
	return t
}

// pos returns the 1-based line and byte column of a file offset.
func (t lineTable) pos(off int) (line, col int) {
	off = min(max(off, 0), t.size)
	i := sort.Search(len(t.starts), func(i int) bool { return t.starts[i] > off }) - 1
	i = max(i, 0)
	return i + 1, off - t.starts[i] + 1
}

// lineStart is the offset of a 1-based line's first byte.
func (t lineTable) lineStart(line int) int {
	if line < 1 {
		return 0
	}
	if line > len(t.starts) {
		return t.size
	}
	return t.starts[line-1]
}

// lineEnd is the offset of a 1-based line's newline (or the end of the text).
func (t lineTable) lineEnd(line int) int {
	if line < 1 {
		return 0
	}
	if line >= len(t.starts) {
		return t.size
	}
	return t.starts[line] - 1
}

const maxCommandLen = 300

// oneLine turns a span of the file into one line: line breaks and the indentation after
// them become one space, and it is cut to maxCommandLen characters.
func oneLine(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\r':
			continue
		case '\n':
			for i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\r') {
				i++
			}
			b.WriteByte(' ')
			continue
		case unknownByte:
			b.WriteByte('?')
			continue
		}
		b.WriteByte(c)
	}
	out := strings.TrimSpace(b.String())
	if utf8.RuneCountInString(out) > maxCommandLen {
		r := []rune(out)
		out = string(r[:maxCommandLen-1]) + "…"
	}
	return strings.ToValidUTF8(out, "?")
}
