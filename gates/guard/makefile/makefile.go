// Package makefile is the guard's Makefile front end: recipe lines (a tab after a rule,
// `@`/`-`/`+` prefixes, `\` continuations) become shell scripts with make's syntax undone:
// `$$` is `$`, a variable set to a literal in the file is its value, any other `$(...)` is
// opaque, and the command of a `$(shell ...)` (anywhere in the file) is a script of its
// own. Scan hands each script to the shell analyzer.
package makefile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

var (
	makeAssignRE = regexp.MustCompile(`^\s*((?:(?:export|override|private)\s+)*)([^\s:#=?+!$()]+)\s*(\?=|:::=|::=|:=|\+=|!=|=)\s*(.*)$`)
	makeDefineRE = regexp.MustCompile(`^\s*(?:(?:export|override)\s+)*define\s+([^\s:#=?+!]+)`)
	makeCondRE   = regexp.MustCompile(`^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b`)
	makeRefRE    = regexp.MustCompile(`\$[({]([^\s:#=()${}]+)[)}]`)
)

type makeVar struct {
	value string
	lit   bool // set with no `$` left after expansion
}

type mkFile struct {
	fc      *shell.File
	a       *shell.Analyzer
	lines   []mkLine
	vars    map[string]string
	defines map[string][]int // define NAME → its body's line indexes
	used    map[string]bool  // variables referenced in recipes
	memo    map[string]makeLit
	nest    int // $(shell ...) being read inside one another
}

type makeLit struct {
	value string
	ok    bool
}

type mkLine struct{ start, end int } // byte range, without the newline

func Scan(fc *shell.File) {
	m := &mkFile{fc: fc, a: shell.NewAnalyzer(fc), vars: map[string]string{}, defines: map[string][]int{}, used: map[string]bool{},
		memo: map[string]makeLit{}}
	for l := 1; l <= len(fc.Lines.Starts); l++ {
		m.lines = append(m.lines, mkLine{fc.Lines.LineStart(l), fc.Lines.LineEnd(l)})
	}
	oneShell := strings.Contains(fc.Text, ".ONESHELL:")
	// First pass: variables and defines, so a recipe sees variables set after it.
	inDefine := ""
	for i := 0; i < len(m.lines); i++ {
		ln := m.lines[i]
		text := fc.Text[ln.start:ln.end]
		if inDefine != "" {
			if strings.HasPrefix(strings.TrimSpace(text), "endef") {
				inDefine = ""
			} else {
				m.defines[inDefine] = append(m.defines[inDefine], i)
			}
			continue
		}
		if strings.HasPrefix(text, "\t") {
			continue
		}
		if d := makeDefineRE.FindStringSubmatch(text); d != nil {
			inDefine = d[1]
			m.defines[inDefine] = nil
			continue
		}
		// A value continued over lines ("VAR = \" then one item a line) is one value; make
		// turns each backslash-newline into a space.
		for continued(text) && i+1 < len(m.lines) {
			i++
			next := m.lines[i]
			text = strings.TrimSuffix(text, "\\") + " " + strings.TrimSpace(fc.Text[next.start:next.end])
		}
		if as := makeAssignRE.FindStringSubmatch(stripMakeComment(text)); as != nil && !strings.Contains(as[2], "%") {
			name, op, val := as[2], as[3], strings.TrimSpace(as[4])
			switch op {
			case "?=":
				if _, ok := m.vars[name]; !ok {
					m.vars[name] = val
				}
			case "+=":
				if old, ok := m.vars[name]; ok && old != "" {
					m.vars[name] = old + " " + val
				} else {
					m.vars[name] = val
				}
			case "!=":
				m.vars[name] = "$(shell " + val + ")"
			default:
				m.vars[name] = val
			}
		}
	}
	// Second pass: recipes and $(shell ...).
	inRule := false
	inDefine = ""
	var group []int // the recipe lines of a rule, for .ONESHELL
	flush := func() {
		if oneShell && len(group) > 0 {
			m.recipe(group)
		}
		group = nil
	}
	for i := 0; i < len(m.lines); i++ {
		ln := m.lines[i]
		text := fc.Text[ln.start:ln.end]
		if inDefine != "" {
			if strings.HasPrefix(strings.TrimSpace(text), "endef") {
				inDefine = ""
			}
			continue
		}
		if strings.HasPrefix(text, "\t") && inRule {
			j := i
			for j+1 < len(m.lines) && continued(fc.Text[m.lines[j].start:m.lines[j].end]) {
				j++
			}
			lines := make([]int, 0, j-i+1)
			for k := i; k <= j; k++ {
				lines = append(lines, k)
			}
			if oneShell {
				group = append(group, lines...)
			} else {
				m.recipe(lines)
			}
			i = j
			continue
		}
		trim := strings.TrimSpace(text)
		if trim == "" || strings.HasPrefix(trim, "#") {
			continue
		}
		if makeCondRE.MatchString(text) {
			m.shellCalls(ln.start, stripMakeComment(text))
			continue
		}
		flush()
		if d := makeDefineRE.FindStringSubmatch(text); d != nil {
			inDefine = d[1]
			inRule = false
			continue
		}
		// Join continued non-recipe lines.
		j := i
		for j+1 < len(m.lines) && continued(fc.Text[m.lines[j].start:m.lines[j].end]) {
			j++
		}
		logical := fc.Text[ln.start:m.lines[j].end]
		i = j
		code := stripMakeComment(logical)
		m.shellCalls(ln.start, code)
		if makeAssignRE.MatchString(code) && !isRuleLine(code) {
			inRule = false
			continue
		}
		if isRuleLine(code) {
			inRule = true
			// target: prereqs ; recipe
			if k := ruleSemicolon(code); k >= 0 {
				m.recipeText(ln.start+k+1, ln.start+len(code))
			}
			continue
		}
		inRule = false
	}
	flush()
	for name, body := range m.defines {
		if m.used[name] {
			for _, k := range body {
				m.recipe([]int{k})
			}
		}
	}
}

// continued reports whether a line ends in an odd number of backslashes.
func continued(line string) bool {
	line = strings.TrimRight(line, " \r")
	n := 0
	for n < len(line) && line[len(line)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

// stripMakeComment cuts a make comment (an unescaped '#').
func stripMakeComment(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && (i == 0 || s[i-1] != '\\') {
			return s[:i]
		}
	}
	return s
}

// isRuleLine reports whether a (non-recipe) line is a rule: "targets: prerequisites".
func isRuleLine(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case '=':
			if depth == 0 {
				return false
			}
		case ':':
			if depth == 0 {
				if i+1 < len(s) && s[i+1] == '=' {
					return false
				}
				return true
			}
		}
	}
	return false
}

func ruleSemicolon(s string) int {
	depth := 0
	colon := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case ':':
			colon = true
		case ';':
			if depth == 0 && colon {
				return i
			}
		}
	}
	return -1
}

// recipe analyses recipe lines (one logical line, or a .ONESHELL recipe) as one script.
func (m *mkFile) recipe(lines []int) {
	var b source.Builder
	t := m.fc.Text
	for n, k := range lines {
		ln := m.lines[k]
		st := ln.start
		if n > 0 {
			b.Synth(m.lines[lines[n-1]].end, m.lines[lines[n-1]].end, "\n")
		}
		if st < ln.end && t[st] == '\t' {
			st++
		}
		if n == 0 || !continued(t[m.lines[lines[n-1]].start:m.lines[lines[n-1]].end]) {
			for st < ln.end && strings.IndexByte("@-+ \t", t[st]) >= 0 {
				st++
			}
		}
		m.expand(&b, st, ln.end, 0)
	}
	s := b.Text()
	m.a.RunShell(&shell.Frame{Src: s, Lang: shell.LangOf("bash"), What: "the recipe line"})
}

// recipeText analyses an inline recipe (after "target: ;").
func (m *mkFile) recipeText(st, en int) {
	var b source.Builder
	m.expand(&b, st, en, 0)
	m.a.RunShell(&shell.Frame{Src: b.Text(), Lang: shell.LangOf("bash"), What: "the recipe"})
}

// expand appends the make text [st, en) with make's syntax undone.
func (m *mkFile) expand(b *source.Builder, st, en, depth int) {
	t := m.fc.Text
	m.fc.Scanned += en - st
	file := source.FileText(t)
	run := st
	for i := st; i < en; i++ {
		if t[i] != '$' || i+1 >= en {
			continue
		}
		b.From(file, run, i)
		switch c := t[i+1]; {
		case c == '$':
			b.Synth(i, i+2, "$")
			i++
		case c == '(' || c == '{':
			close := matchMakeParen(t, i+1, en)
			ref := t[i+2 : max(close-1, i+2)]
			m.shellCalls(i, t[i:close])
			if name, ok := simpleMakeRef(ref); ok {
				m.used[name] = true
				if v, ok := m.literal(name, depth); ok {
					b.Synth(i, close, v)
				} else {
					b.FromMasked(file, i, close)
				}
			} else {
				for _, r := range makeRefRE.FindAllStringSubmatch(ref, -1) {
					m.used[r[1]] = true
				}
				if strings.HasPrefix(ref, "call ") {
					if f := strings.FieldsFunc(ref[5:], func(r rune) bool { return r == ',' || r == ' ' }); len(f) > 0 {
						m.used[f[0]] = true
					}
				}
				b.FromMasked(file, i, close)
			}
			i = close - 1
		default:
			b.FromMasked(file, i, i+2) // $@, $<, $^, ...
			i++
		}
		run = i + 1
	}
	b.From(file, run, en)
}

// matchMakeParen returns the end (exclusive) of the $( or ${ group opening at t[open].
func matchMakeParen(t string, open, en int) int {
	depth := 0
	for i := open; i < en; i++ {
		switch t[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return en
}

func simpleMakeRef(ref string) (string, bool) {
	if ref == "" || strings.ContainsAny(ref, " \t:$(){},=") {
		return "", false
	}
	return ref, true
}

// literal is a make variable's value when it expands to literal text.
func (m *mkFile) literal(name string, depth int) (string, bool) {
	if r, ok := m.memo[name]; ok {
		return r.value, r.ok
	}
	m.memo[name] = makeLit{} // a variable that refers to itself is not literal
	s, ok := m.literalOf(name, depth)
	if len(s) > shell.MaxValueLen {
		s, ok = "", false
	}
	m.memo[name] = makeLit{s, ok}
	return s, ok
}

func (m *mkFile) literalOf(name string, depth int) (string, bool) {
	v, ok := m.vars[name]
	if !ok {
		return "", false
	}
	if depth > shell.MaxVarChain {
		m.fc.Unjudged(nil, 0, fmt.Sprintf("a make variable's value goes through more than %d other variables: the guard cannot judge this file", shell.MaxVarChain))
		return "", false
	}
	if _, isDef := m.defines[name]; isDef {
		return "", false
	}
	var out strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '$' {
			out.WriteByte(v[i])
			continue
		}
		if i+1 < len(v) && v[i+1] == '$' {
			out.WriteByte('$')
			i++
			continue
		}
		if i+1 < len(v) && (v[i+1] == '(' || v[i+1] == '{') {
			close := matchMakeParen(v, i+1, len(v))
			inner, ok := simpleMakeRef(v[i+2 : max(close-1, i+2)])
			if !ok {
				return "", false
			}
			s, ok := m.literal(inner, depth+1)
			if !ok {
				return "", false
			}
			out.WriteString(s)
			i = close - 1
			continue
		}
		return "", false
	}
	return out.String(), true
}

// shellCalls analyses the command of every $(shell ...) in text (which starts at file
// offset base).
func (m *mkFile) shellCalls(base int, text string) {
	m.nest++
	defer func() { m.nest-- }()
	if m.nest > shell.MaxMakeNesting {
		m.fc.Unjudged(nil, m.fc.Line(base), fmt.Sprintf("make's $(...) nest more than %d deep here: the guard cannot judge this file", shell.MaxMakeNesting))
		return
	}
	m.fc.Scanned += len(text)
	for k := 0; k+8 <= len(text); k++ {
		if !strings.HasPrefix(text[k:], "$(shell") || k+7 >= len(text) || (text[k+7] != ' ' && text[k+7] != '\t') {
			continue
		}
		close := matchMakeParen(text, k+1, len(text))
		inner := base + k + 8
		end := base + close - 1
		if close == len(text) && text[len(text)-1] != ')' {
			end = base + close
		}
		if end <= inner {
			continue
		}
		var b source.Builder
		m.expand(&b, inner, end, 0)
		m.a.RunShell(&shell.Frame{Src: b.Text(), Lang: shell.LangOf("bash"), What: "the $(shell ...) command"})
		k = close - 1
	}
}
