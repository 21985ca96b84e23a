package source

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// UnknownByte fills the place of text whose value the guard cannot know: a `${{ }}`
// expression, a make variable, an f-string field, a shell expansion with no literal
// value. A word containing it never equals a literal, so it never matches a rule word;
// it has the length of what it replaces, so positions after it stay right.
const UnknownByte = '\x1a'

// Seg maps a run of a text's bytes to the file. A contiguous seg maps byte off+i to file
// byte fileOff+i; a synthetic one (an escape, an expansion, a folded line break) maps
// every byte to fileOff, and the end of the run to fileEnd.
type Seg struct {
	Off, FileOff, fileEnd int
	Contiguous            bool
}

// Text is a text the guard parses (a whole file, a workflow step's script, the string
// passed to `bash -c`) with the map from its bytes back to the file's.
type Text struct {
	Text string
	Segs []Seg
}

// FileText is a whole file's text, mapped to itself.
func FileText(text string) *Text {
	return &Text{Text: text, Segs: []Seg{{Contiguous: true}}}
}

func (s *Text) segIndex(o int) int {
	i := sort.Search(len(s.Segs), func(i int) bool { return s.Segs[i].Off > o }) - 1
	return max(i, 0)
}

// FileOff maps text offset o to a file offset.
func (s *Text) FileOff(o int) int {
	if len(s.Segs) == 0 {
		return 0
	}
	if o >= len(s.Text) && len(s.Text) > 0 {
		return s.FileEnd(len(s.Text))
	}
	o = max(o, 0)
	sg := s.Segs[s.segIndex(o)]
	if sg.Contiguous {
		return sg.FileOff + o - sg.Off
	}
	return sg.FileOff
}

// FileEnd maps the end (exclusive) of a span ending at text offset e.
func (s *Text) FileEnd(e int) int {
	if len(s.Segs) == 0 {
		return 0
	}
	if e <= 0 {
		return s.FileOff(0)
	}
	e = min(e, len(s.Text))
	sg := s.Segs[s.segIndex(e-1)]
	if sg.Contiguous {
		return sg.FileOff + e - sg.Off
	}
	return max(sg.fileEnd, sg.FileOff)
}

// Builder assembles a Text piece by piece.
type Builder struct {
	Buf  []byte
	Segs []Seg
}

// Raw appends text that stands at fileOff in the file, byte for byte.
func (b *Builder) Raw(fileOff int, s string) {
	if s == "" {
		return
	}
	if n := len(b.Segs); n > 0 {
		last := b.Segs[n-1]
		if last.Contiguous && last.FileOff+len(b.Buf)-last.Off == fileOff {
			b.Buf = append(b.Buf, s...)
			return
		}
	}
	b.Segs = append(b.Segs, Seg{Off: len(b.Buf), FileOff: fileOff, Contiguous: true})
	b.Buf = append(b.Buf, s...)
}

// Synth appends text that the file spells differently (an escape, an expansion): all of
// it maps to fileOff, and its end to fileEnd.
func (b *Builder) Synth(fileOff, fileEnd int, s string) {
	if s == "" {
		return
	}
	b.Segs = append(b.Segs, Seg{Off: len(b.Buf), FileOff: fileOff, fileEnd: fileEnd})
	b.Buf = append(b.Buf, s...)
}

// From appends p.text[start:end] with its mapping.
func (b *Builder) From(p *Text, start, end int) {
	start, end = max(start, 0), min(end, len(p.Text))
	for start < end {
		i := p.segIndex(start)
		sg := p.Segs[i]
		segEnd := len(p.Text)
		if i+1 < len(p.Segs) {
			segEnd = p.Segs[i+1].Off
		}
		stop := min(end, segEnd)
		if stop <= start {
			stop = end // a malformed map: take the rest as one piece
		}
		if sg.Contiguous {
			b.Raw(sg.FileOff+start-sg.Off, p.Text[start:stop])
		} else {
			b.Synth(sg.FileOff, sg.fileEnd, p.Text[start:stop])
		}
		start = stop
	}
}

// FromMasked appends p.text[start:end] with its mapping, every byte replaced by
// UnknownByte.
func (b *Builder) FromMasked(p *Text, start, end int) {
	n := len(b.Buf)
	b.From(p, start, end)
	for i := n; i < len(b.Buf); i++ {
		b.Buf[i] = UnknownByte
	}
}

// SynthAt appends s mapped to the span p.text[start:end].
func (b *Builder) SynthAt(p *Text, start, end int, s string) {
	b.Synth(p.FileOff(start), p.FileEnd(end), s)
}

func (b *Builder) Len() int { return len(b.Buf) }

func (b *Builder) Text() *Text {
	s := &Text{Text: string(b.Buf), Segs: b.Segs}
	if len(s.Segs) == 0 {
		s.Segs = []Seg{{Contiguous: true}}
	}
	return s
}

// Sub is p.text[start:end] as a src of its own.
func (p *Text) Sub(start, end int) *Text {
	var b Builder
	b.From(p, start, end)
	return b.Text()
}

// Lines finds the line and column of a file offset.
type Lines struct {
	Starts []int // offset of each line's first byte
	size   int
}

func NewLines(text string) Lines {
	t := Lines{Starts: []int{0}, size: len(text)}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			t.Starts = append(t.Starts, i+1)
		}
	}
	return t
}

// Pos returns the 1-based line and byte column of a file offset.
func (t Lines) Pos(off int) (line, col int) {
	off = min(max(off, 0), t.size)
	i := sort.Search(len(t.Starts), func(i int) bool { return t.Starts[i] > off }) - 1
	i = max(i, 0)
	return i + 1, off - t.Starts[i] + 1
}

// LineStart is the offset of a 1-based line's first byte.
func (t Lines) LineStart(line int) int {
	if line < 1 {
		return 0
	}
	if line > len(t.Starts) {
		return t.size
	}
	return t.Starts[line-1]
}

// LineEnd is the offset of a 1-based line's newline (or the end of the text).
func (t Lines) LineEnd(line int) int {
	if line < 1 {
		return 0
	}
	if line >= len(t.Starts) {
		return t.size
	}
	return t.Starts[line] - 1
}

const MaxCommandLen = 300

// OneLine turns a span of the file into one line: line breaks and the indentation after
// them become one space, and it is cut to MaxCommandLen characters.
func OneLine(s string) string {
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
		case UnknownByte:
			b.WriteByte('?')
			continue
		}
		b.WriteByte(c)
	}
	out := strings.TrimSpace(b.String())
	if utf8.RuneCountInString(out) > MaxCommandLen {
		r := []rune(out)
		out = string(r[:MaxCommandLen-1]) + "…"
	}
	return strings.ToValidUTF8(out, "?")
}

// Masked is s with the bytes that stand for the file offsets offs (sorted) turned into
// UnknownByte; s itself when none of them is in s.
func (s *Text) Masked(offs []int) *Text {
	if len(offs) == 0 {
		return s
	}
	var b []byte
	for k, sg := range s.Segs {
		if !sg.Contiguous {
			continue
		}
		end := len(s.Text)
		if k+1 < len(s.Segs) {
			end = s.Segs[k+1].Off
		}
		lo, hi := sg.FileOff, sg.FileOff+end-sg.Off
		i := sort.SearchInts(offs, lo)
		for ; i < len(offs) && offs[i] < hi; i++ {
			if b == nil {
				b = []byte(s.Text)
			}
			b[sg.Off+offs[i]-sg.FileOff] = UnknownByte
		}
	}
	if b == nil {
		return s
	}
	return &Text{Text: string(b), Segs: s.Segs}
}
