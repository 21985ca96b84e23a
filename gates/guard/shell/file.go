package shell

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/gates/guard/finding"
	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// Hit is a finding before allow comments and formatting.
type Hit struct {
	Rule  *rules.Rule
	At    Span // where it is reported
	Inner Span // the offending command itself
	Outer Span // the outermost command around it
	Via   []string
}

// File is one file being scanned.
type File struct {
	Path       string
	content    string // as read
	Text       string // as analysed: CR before LF and a BOM blanked
	Lines      source.Lines
	Rules      *rules.Set
	writeRules []*rules.Rule
	CallRules  []*rules.Rule
	knownIDs   map[string]bool
	hits       []Hit
	warnings   []finding.Warning
	warned     map[string]bool
	Invalid    []int // offsets of the bytes that are not UTF-8 (source.UnknownByte in Text)
	Refs       []ScriptRef
	refSeen    map[ScriptRef]bool
	readPython func(*Analyzer, *Frame) // see NewFile
	// Scanned counts the bytes of text the front-ends went over: each text parsed as shell
	// or read as Python, each make text expanded or searched for $(shell ...). It is the
	// work a file costs, which its nesting must not multiply beyond the bounds (depth.go):
	// TestDeepNesting checks it against the file's size.
	Scanned int
}

// ScriptRef is a file of the repository that the file runs by its name (`bash ci/teardown`,
// `./tools/reap`, `source env.sh`, `python3 tools/stop.py`): ScanTree and ScanDiff judge it
// as what runs it reads it, whatever its name says.
type ScriptRef struct {
	Path string
	Kind source.Kind // KindShell, KindPython, or KindNone: by its shebang (none: sh reads it)
	Line int
}

// NewFile prepares a file for the front ends. readPython reads Python for them (the
// analyzer hands it `python -c` scripts, a workflow step in `shell: python`, a
// Dockerfile's Python here-document): it is passed in so that the shell analyzer need not
// import the Python reader, which itself reads subprocess calls as shell.
func NewFile(p string, content []byte, rs *rules.Set, readPython func(*Analyzer, *Frame)) *File {
	fc := &File{Path: p, content: string(content), Rules: rs, knownIDs: rs.KnownIDs, writeRules: rs.WriteRules,
		CallRules: rs.CallRules, warned: map[string]bool{}, readPython: readPython}
	t := []byte(fc.content)
	for i := 0; i+1 < len(t); i++ {
		if t[i] == '\r' && t[i+1] == '\n' {
			t[i] = ' '
		}
	}
	if bytes.HasPrefix(t, []byte("\xef\xbb\xbf")) {
		t[0], t[1], t[2] = ' ', ' ', ' '
	}
	// A byte that is not UTF-8 is a byte the guard cannot read: it stands for itself in
	// the shell (which runs on through it), but no parser takes it. It becomes an unknown
	// byte, so the words around it are judged and the word it is in matches no rule.
	if !utf8.Valid(t) {
		for i := 0; i < len(t); {
			r, n := utf8.DecodeRune(t[i:])
			if r == utf8.RuneError && n <= 1 {
				t[i] = source.UnknownByte
				fc.Invalid = append(fc.Invalid, i)
				i++
				continue
			}
			i += n
		}
	}
	fc.Text = string(t)
	fc.Lines = source.NewLines(fc.Text)
	return fc
}

func (fc *File) Line(off int) int {
	l, _ := fc.Lines.Pos(off)
	return l
}

func (fc *File) Add(h Hit) { fc.hits = append(fc.hits, h) }

// Warn records a warning once; during a dry run (a) it records nothing.
func (fc *File) Warn(a *Analyzer, line int, msg string) { fc.warning(a, line, msg, false) }

// Unjudged records that the file, from line on, could not be judged (see Warning).
func (fc *File) Unjudged(a *Analyzer, line int, msg string) { fc.warning(a, line, msg, true) }

func (fc *File) warning(a *Analyzer, line int, msg string, unjudged bool) {
	if a != nil && a.collect != nil {
		return
	}
	line = min(max(line, 0), len(fc.Lines.Starts)) // yaml counts a lone CR as a line break
	key := fmt.Sprint(line, msg)
	if fc.warned[key] {
		return
	}
	fc.warned[key] = true
	fc.warnings = append(fc.warnings, finding.Warning{Path: fc.Path, Line: line, Message: msg, Unjudged: unjudged})
}

// allowRE reads `# kernel-gate: allow <rule-id>[,<rule-id>] <reason>`.
var allowRE = regexp.MustCompile(`#.*?kernel-gate:\s*allow\b[ \t]*([^\s]*)[ \t]*(.*)$`)

type allowComment struct {
	ids    []string
	reason string
}

// allows reads the allow comments of the file, warning about those that allow nothing.
func (fc *File) allows() map[int]allowComment {
	out := map[int]allowComment{}
	if !strings.Contains(fc.Text, "kernel-gate:") {
		return out
	}
	for i := range fc.Lines.Starts {
		line := i + 1
		text := fc.Text[fc.Lines.LineStart(line):fc.Lines.LineEnd(line)]
		if !strings.Contains(text, "kernel-gate:") {
			continue
		}
		m := allowRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		ids := strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' })
		reason := strings.TrimSpace(m[2])
		if len(ids) == 0 {
			fc.Warn(nil, line, "kernel-gate allow comment names no rule: write `# kernel-gate: allow <rule-id> <reason>`; it allows nothing")
			continue
		}
		for _, id := range ids {
			if !fc.knownIDs[id] {
				fc.Warn(nil, line, fmt.Sprintf("kernel-gate allow comment names unknown rule %q%s", id, rules.SuggestID(id, fc.knownIDs)))
			}
		}
		if reason == "" {
			fc.Warn(nil, line, fmt.Sprintf("kernel-gate allow comment for %s has no reason, so it allows nothing: write `# kernel-gate: allow %s <why this is safe>`", m[1], m[1]))
			continue
		}
		out[line] = allowComment{ids: ids, reason: reason}
	}
	return out
}

// Finish turns the hits into findings.
func (fc *File) Finish() ([]finding.Finding, []finding.Warning) {
	allows := fc.allows()
	seen := map[hitKey]bool{}
	var out []finding.Finding
	for _, h := range fc.hits {
		key := hitKey{h.At.Start, h.Rule.ID}
		if seen[key] {
			continue
		}
		seen[key] = true
		line, col := fc.Lines.Pos(h.At.Start)
		endLine := line
		if h.At.End > h.At.Start {
			endLine, _ = fc.Lines.Pos(h.At.End - 1)
		}
		f := finding.Finding{Path: fc.Path, Line: line, Column: col, EndLine: max(endLine, line), Rule: h.Rule.ID,
			What: h.Rule.What, Why: h.Rule.Why}
		f.Command = fc.commandText(h)
		if len(h.Via) > 1 {
			f.Via = strings.Join(h.Via, " → ")
		}
		innerLine := fc.Line(h.Inner.Start)
		outerLine := fc.Line(h.Outer.Start)
		for _, l := range []int{line, line - 1, innerLine, innerLine - 1, outerLine, outerLine - 1} {
			if al, ok := allows[l]; ok && slices.Contains(al.ids, f.Rule) {
				f.Allowed, f.AllowReason = true, al.reason
				break
			}
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b finding.Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Rule, b.Rule))
	})
	slices.SortStableFunc(fc.warnings, func(a, b finding.Warning) int { return cmp.Compare(a.Line, b.Line) })
	return out, fc.warnings
}

func (fc *File) slice(s Span) string {
	st, en := min(max(s.Start, 0), len(fc.content)), min(max(s.End, 0), len(fc.content))
	if en < st {
		en = st
	}
	return fc.content[st:en]
}

// commandText is the outer command as written; a nested command that lies outside it (a
// here-document's) follows after " … ".
func (fc *File) commandText(h Hit) string {
	outer := h.Outer
	if outer.End <= outer.Start {
		outer = h.At
	}
	text := source.OneLine(fc.slice(outer))
	if h.At == h.Inner && (h.Inner.Start < outer.Start || h.Inner.End > outer.End) {
		text = source.OneLine(text + " … " + source.OneLine(fc.slice(h.Inner)))
	}
	if text == "" {
		text = source.OneLine(fc.slice(h.Inner))
	}
	return text
}

// MaskInvalid turns the bytes of s that stand for bytes of the file that are not UTF-8 back
// into unknown bytes.
func (fc *File) MaskInvalid(s *source.Text) *source.Text { return s.Masked(fc.Invalid) }

// ref records a file the command runs by its name; text the script wrote to that file
// runs too.
func (a *Analyzer) ref(p string, kind source.Kind, cc *CmdCtx) {
	if p == "" || !rules.Known(p) || strings.HasPrefix(p, "-") || strings.ContainsAny(p, "\n*?[") {
		return
	}
	a.runWrittenFile(p, cc)
	line := a.File.Line(cc.Frame.Src.FileOff(cc.Start))
	if cc.Frame.site != nil {
		line = a.File.Line(cc.Frame.site.at.Start)
	}
	r := ScriptRef{Path: p, Kind: kind, Line: line}
	if a.File.refSeen == nil {
		a.File.refSeen = map[ScriptRef]bool{}
	}
	if !a.File.refSeen[r] {
		a.File.refSeen[r] = true
		a.File.Refs = append(a.File.Refs, r)
	}
}
