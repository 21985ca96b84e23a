// Package python is the guard's Python front end: a tokenizer (names, strings of every
// prefix and quoting, comments, brackets) and a reader of calls. Only call arguments are
// ever code to the guard: comments, docstrings and printed strings are not.
//
// Read judges the calls a Python text makes: subprocess, os.system and the file's own
// functions that run a parameter hand their command to the shell analyzer (package
// shell); boto3, azure-mgmt, runpod and other SDK calls and HTTP requests (requests,
// httpx, urllib) are matched against the rules' Call, URL and Method. The arrow runs one
// way: python imports shell, and the shell analyzer reaches Python (`python -c`, a
// workflow step in `shell: python`, a Dockerfile's Python here-document) only through
// the reader its shell.File was given, which the gate sets to Read.
package python

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

type pyTok struct {
	kind       byte // 'n' name, 's' string, 'o' operator, 'l' end of logical line, 'x' other
	idx        int  // index in the file's tokens
	start, end int
	text       string       // name or operator
	val        *source.Text // a string's value
}

// pyTokenize splits Python source into tokens. A string that does not end is warned
// about and taken to the end of its line (or of the text, when triple-quoted).
func pyTokenize(a *shell.Analyzer, fr *shell.Frame) []pyTok {
	t := fr.Src.Text
	var toks []pyTok
	depth := 0
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '\n':
			if depth == 0 {
				toks = append(toks, pyTok{kind: 'l', start: i, end: i + 1})
			}
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '\\' && i+1 < len(t) && t[i+1] == '\n':
			i += 2
		case c == '#':
			for i < len(t) && t[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			tok, n := pyString(a, fr, i, i, "")
			toks = append(toks, tok)
			i = n
		case isIdentStart(c):
			j := i
			for j < len(t) && isIdentChar(t[j]) {
				j++
			}
			word := t[i:j]
			if j < len(t) && (t[j] == '"' || t[j] == '\'') && isStringPrefix(word) {
				tok, n := pyString(a, fr, i, j, strings.ToLower(word))
				toks = append(toks, tok)
				i = n
				continue
			}
			toks = append(toks, pyTok{kind: 'n', start: i, end: j, text: word})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(t) && (isIdentChar(t[j]) || t[j] == '.') {
				j++
			}
			toks = append(toks, pyTok{kind: 'x', start: i, end: j})
			i = j
		default:
			n := 1
			if i+1 < len(t) {
				switch t[i : i+2] {
				case "==", "!=", "<=", ">=", ":=", "->", "**", "//", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "<<", ">>":
					n = 2
				}
			}
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth = max(depth-1, 0)
			}
			toks = append(toks, pyTok{kind: 'o', start: i, end: i + n, text: t[i : i+n]})
			i += n
		}
	}
	return toks
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "f", "t", "br", "rb", "fr", "rf", "tr", "rt":
		return true
	}
	return false
}

// pyString reads a string literal whose quote is at q (its prefix starts at start) and
// builds its value with the map back to the file.
func pyString(a *shell.Analyzer, fr *shell.Frame, start, q int, prefix string) (pyTok, int) {
	t := fr.Src.Text
	quote := t[q]
	triple := q+2 < len(t) && t[q+1] == quote && t[q+2] == quote
	body := q + 1
	if triple {
		body = q + 3
	}
	raw := strings.Contains(prefix, "r")
	fstr := strings.Contains(prefix, "f") || strings.Contains(prefix, "t")
	var b source.Builder
	i := body
	closed := false
	for i < len(t) {
		c := t[i]
		if c == quote && (!triple || i+2 < len(t) && t[i+1] == quote && t[i+2] == quote) {
			closed = true
			break
		}
		if c == '\n' && !triple {
			break
		}
		if c == '\\' && i+1 < len(t) {
			if raw {
				b.From(fr.Src, i, i+2)
				i += 2
				continue
			}
			n, out := pyEscape(t, i)
			if n == 2 && t[i+1] == '\n' {
				i += 2 // line continuation inside the string
				continue
			}
			b.SynthAt(fr.Src, i, i+n, out)
			i += n
			continue
		}
		if fstr && c == '{' {
			if i+1 < len(t) && t[i+1] == '{' {
				b.SynthAt(fr.Src, i, i+2, "{")
				i += 2
				continue
			}
			j := pySkipField(t, i, quote, triple)
			b.FromMasked(fr.Src, i, j)
			i = j
			continue
		}
		if fstr && c == '}' && i+1 < len(t) && t[i+1] == '}' {
			b.SynthAt(fr.Src, i, i+2, "}")
			i += 2
			continue
		}
		j := i + 1
		for j < len(t) && t[j] != quote && t[j] != '\\' && t[j] != '\n' && !(fstr && (t[j] == '{' || t[j] == '}')) {
			j++
		}
		b.From(fr.Src, i, j)
		i = j
	}
	end := i
	if closed {
		end = i + 1
		if triple {
			end = i + 3
		}
	} else {
		a.File.Warn(a, a.File.Line(fr.Src.FileOff(start)), "could not parse Python: a string that starts here does not end; it was read to the end of its line")
	}
	return pyTok{kind: 's', start: start, end: end, val: b.Text()}, end
}

// pySkipField returns the end of an f-string replacement field that starts at i ('{').
func pySkipField(t string, i int, quote byte, triple bool) int {
	depth := 0
	for j := i; j < len(t); j++ {
		switch c := t[j]; c {
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '\n':
			if !triple {
				return j
			}
		case '\'', '"':
			if c == quote && !triple {
				return j // the string ends: the field is malformed
			}
			k := j + 1
			for k < len(t) && t[k] != c && t[k] != '\n' {
				k++
			}
			j = k
		}
	}
	return len(t)
}

// pyEscape decodes the escape at t[i] ('\'): its length in the source and its value.
func pyEscape(t string, i int) (int, string) {
	c := t[i+1]
	switch c {
	case 'n':
		return 2, "\n"
	case 't':
		return 2, "\t"
	case 'r':
		return 2, "\r"
	case '\\', '\'', '"':
		return 2, string(c)
	case '\n':
		return 2, ""
	case 'a':
		return 2, "\a"
	case 'b':
		return 2, "\b"
	case 'f':
		return 2, "\f"
	case 'v':
		return 2, "\v"
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if i+2+n <= len(t) {
			if v, err := strconv.ParseUint(t[i+2:i+2+n], 16, 32); err == nil && utf8.ValidRune(rune(v)) {
				return 2 + n, string(rune(v))
			}
		}
	case 'N':
		if j := strings.IndexByte(t[i:], '}'); j > 0 && i+2 < len(t) && t[i+2] == '{' {
			return j + 1, string(source.UnknownByte)
		}
	}
	if c >= '0' && c <= '7' {
		j := i + 1
		for j < len(t) && j < i+4 && t[j] >= '0' && t[j] <= '7' {
			j++
		}
		v, _ := strconv.ParseUint(t[i+1:j], 8, 16)
		return j - i, string(rune(v))
	}
	return 2, t[i : i+2]
}

// pyValue is what a Python expression evaluates to, as far as the guard can tell.
type pyValue struct {
	kind  byte // 's' string, 'l' list, 'd' dict (keys and values), 'b' bool, 'p' a string that is split (cmd.split(), shlex.split), 0 unknown
	str   *source.Text
	list  []pyValue
	truth bool
	start int // offset of the expression
	size  int // strings in it, lists flattened
}

// maxListSize is the most strings a list value may hold (lists of lists of names can
// grow exponentially).
const maxListSize = 4096

type pyCall struct {
	callee     string // dotted name as written ("sp.run", "boto3.client().stop_instances")
	resolved   string // with import aliases resolved ("subprocess.run")
	start, end int    // offsets of the whole call expression
	args       [][]pyTok
	kwargs     map[string][]pyTok
}

// pyFile is one Python text being read.
type pyFile struct {
	a      *shell.Analyzer
	fr     *shell.Frame
	toks   []pyTok
	match  []int                // index of the matching bracket
	mods   map[string]string    // import aliases: "sp" → "subprocess"
	names  map[string]string    // from-imports: "run" → "subprocess.run"
	assign map[string][][]pyTok // NAME = value
	depth  map[string]bool
	memo   map[string]pyValue // a name's value, once evaluated
	loops  map[string][]pyTok // for NAME in EXPR: the EXPR
	recv   map[string]string  // a name's value as a callee prefix ("boto3.resource().Instance()"), once resolved
	// runners are the file's functions that run one of their parameters as a command
	// (def sh(cmd): subprocess.run(cmd, shell=True)).
	runners map[string]pyRunner
}

// pyRunner is a function that runs its parameter param (counting self) as a command.
type pyRunner struct {
	param  int
	name   string // the parameter's name, for keyword calls
	shell  bool
	method bool // its first parameter is self or cls
	via    string
}

// Scan reads a Python file.
func Scan(fc *shell.File) { Read(shell.NewAnalyzer(fc), &shell.Frame{Src: source.FileText(fc.Text)}) }

// Read reads a Python text (fr.src) for dangerous calls.
func Read(a *shell.Analyzer, fr *shell.Frame) {
	if fr.Depth > shell.MaxDepth {
		return
	}
	a.File.Scanned += len(fr.Src.Text)
	p := &pyFile{a: a, fr: fr, toks: pyTokenize(a, fr), mods: map[string]string{}, names: map[string]string{},
		assign: map[string][][]pyTok{}, depth: map[string]bool{}, memo: map[string]pyValue{}, loops: map[string][]pyTok{},
		recv: map[string]string{}, runners: map[string]pyRunner{}}
	for i := range p.toks {
		p.toks[i].idx = i
	}
	if k, deep := p.matchBrackets(); deep {
		a.File.Unjudged(a, a.File.Line(fr.Src.FileOff(p.toks[k].start)), fmt.Sprintf("Python brackets nest more than %d deep here (Python itself refuses that): the guard cannot judge this file", shell.MaxPyNesting))
		return
	}
	p.statements()
	p.findRunners()
	for i, tk := range p.toks {
		if tk.kind == 'o' && tk.text == "(" && i > 0 {
			if c, ok := p.call(i); ok {
				p.judge(c)
			}
		}
	}
	p.references()
}

// kwargMay reports whether a call passes keyword spec: "name" is there; "name=VALUE" is
// there with that value, given as the keyword or as a key of a dict argument (patch_node(n,
// {"spec": {"unschedulable": True}})). A True or False the guard cannot resolve (a
// parameter) may be the value; any other value must be the literal.
func (p *pyFile) kwargMay(c pyCall, spec string) bool {
	name, want, withValue := strings.Cut(spec, "=")
	if ts, ok := c.kwargs[name]; ok {
		return !withValue || p.literalMay(ts, want)
	}
	if !withValue {
		return false
	}
	var found bool
	var walk func(ts []pyTok)
	walk = func(ts []pyTok) {
		if found || len(ts) == 0 || ts[0].kind != 'o' || ts[0].text != "{" || p.indexOf(ts, 0) != len(ts)-1 {
			return
		}
		for _, el := range splitTop(ts[1:len(ts)-1], ",") {
			kv := splitTop(el, ":")
			if len(kv) != 2 {
				continue
			}
			if k := p.value(kv[0]); k.kind == 's' && k.str.Text == name && p.literalMay(kv[1], want) {
				found = true
				return
			}
			walk(kv[1])
		}
	}
	for _, ts := range c.args {
		walk(p.resolvedTokens(ts))
	}
	for _, ts := range c.kwargs {
		walk(p.resolvedTokens(ts))
	}
	return found
}

// resolvedTokens follows a name to the tokens of its last assignment (body = {...};
// patch_node(n, body)).
func (p *pyFile) resolvedTokens(ts []pyTok) []pyTok {
	for range shell.MaxVarChain {
		if len(ts) != 1 || ts[0].kind != 'n' {
			return ts
		}
		defs := p.assign[ts[0].text]
		if len(defs) == 0 {
			return ts
		}
		ts = defs[len(defs)-1]
	}
	return ts
}

// literalMay reports whether an expression may have the literal value want.
func (p *pyFile) literalMay(ts []pyTok, want string) bool {
	ts = p.resolvedTokens(ts)
	if len(ts) == 1 && ts[0].kind == 'x' {
		return p.fr.Src.Text[ts[0].start:ts[0].end] == want
	}
	v := p.value(ts)
	switch v.kind {
	case 'b':
		return want == "True" && v.truth || want == "False" && !v.truth
	case 's':
		return v.str.Text == want
	case 0:
		return want == "True" || want == "False"
	}
	return false
}

// references reports the methods a rule names that the file refers to without calling
// them there: the call is decided at run time (fn = {"stop": ec2.stop_instances}[action];
// fn(InstanceIds=ids)), so referring to the method is taken as calling it.
func (p *pyFile) references() {
	for i, tk := range p.toks {
		if tk.kind != 'n' || i < 2 || p.toks[i-1].kind != 'o' || p.toks[i-1].text != "." {
			continue
		}
		if i+1 < len(p.toks) && p.toks[i+1].kind == 'o' && strings.Contains("(.[=", p.toks[i+1].text) && p.toks[i+1].text != "==" {
			continue // called, or only a part of a longer name, or assigned to
		}
		k := i
		parts := []string{tk.text}
		for k >= 2 && p.toks[k-1].kind == 'o' && p.toks[k-1].text == "." && p.toks[k-2].kind == 'n' {
			k -= 2
			parts = append([]string{p.toks[k].text}, parts...)
		}
		if k > 0 && (p.toks[k-1].kind == 'o' && (p.toks[k-1].text == "." || p.toks[k-1].text == ")" || p.toks[k-1].text == "]") ||
			p.toks[k-1].kind == 'n' && (p.toks[k-1].text == "import" || p.toks[k-1].text == "from" || p.toks[k-1].text == "def")) {
			continue
		}
		callee := strings.Join(parts, ".")
		resolved := callee
		if full, ok := p.names[parts[0]]; ok {
			resolved = strings.Join(append([]string{full}, parts[1:]...), ".")
		} else if mod, ok := p.mods[parts[0]]; ok {
			resolved = strings.Join(append([]string{mod}, parts[1:]...), ".")
		} else if rec, ok := p.receiver(parts[0]); ok {
			resolved = strings.Join(append([]string{rec}, parts[1:]...), ".")
		}
		for _, r := range p.a.File.CallRules {
			if len(r.Kwargs) > 0 || len(r.ArgContains) > 0 || len(r.URL) > 0 || len(r.Method) > 0 {
				continue // what the call passes decides it: a reference says nothing
			}
			if !rules.GlobList(r.Call, callee) && !rules.GlobList(r.Call, resolved) {
				continue
			}
			start, end := p.toks[k].start, tk.end
			fr := p.fr
			if fr.Outer == nil {
				fr = fr.Child()
				fr.Outer = &shell.Span{Start: p.fr.Src.FileOff(start), End: p.fr.Src.FileEnd(end)}
			}
			p.a.Report(fr, r, start, end, []string{callee + " (called at run time)"})
		}
	}
}

// matchBrackets pairs the brackets; it reports the first bracket nested deeper than
// maxPyNesting.
func (p *pyFile) matchBrackets() (int, bool) {
	p.match = make([]int, len(p.toks))
	var stack []int
	for i, tk := range p.toks {
		p.match[i] = -1
		if tk.kind != 'o' {
			continue
		}
		switch tk.text {
		case "(", "[", "{":
			stack = append(stack, i)
			if len(stack) > shell.MaxPyNesting {
				return i, true
			}
		case ")", "]", "}":
			if n := len(stack); n > 0 {
				p.match[stack[n-1]], p.match[i] = i, stack[n-1]
				stack = stack[:n-1]
			}
		}
	}
	return 0, false
}

// statements reads imports and simple assignments, one logical line at a time.
func (p *pyFile) statements() {
	lineStart := 0
	for i := 0; i <= len(p.toks); i++ {
		if i < len(p.toks) && p.toks[i].kind != 'l' && !(p.toks[i].kind == 'o' && p.toks[i].text == ";") {
			continue
		}
		p.statement(p.toks[lineStart:i])
		lineStart = i + 1
	}
}

func (p *pyFile) statement(st []pyTok) {
	if len(st) == 0 {
		return
	}
	isName := func(k int, s string) bool { return k < len(st) && st[k].kind == 'n' && (s == "" || st[k].text == s) }
	if isName(0, "for") && isName(1, "") && isName(2, "in") && len(st) > 4 {
		end := len(st)
		if st[end-1].kind == 'o' && st[end-1].text == ":" {
			end--
		} else {
			for k := 3; k < len(st); k++ { // for x in y: body on one line
				if st[k].kind == 'o' && st[k].text == ":" && p.depthAt(st[3:k]) == 0 {
					end = k
					break
				}
			}
		}
		p.loops[st[1].text] = st[3:end]
		return
	}
	switch {
	case isName(0, "import"):
		for _, part := range splitTop(st[1:], ",") {
			if len(part) == 0 || part[0].kind != 'n' {
				continue
			}
			mod := dotted(part)
			if len(part) >= 3 && part[len(part)-2].text == "as" {
				p.mods[part[len(part)-1].text] = mod
			} else {
				p.mods[strings.SplitN(mod, ".", 2)[0]] = strings.SplitN(mod, ".", 2)[0]
			}
		}
	case isName(0, "from"):
		k := 1
		for k < len(st) && !isName(k, "import") {
			k++
		}
		mod := dotted(st[1:k])
		for _, part := range splitTop(st[min(k+1, len(st)):], ",") {
			part = trimParens(part)
			if len(part) == 0 || part[0].kind != 'n' {
				continue
			}
			local := part[0].text
			if len(part) >= 3 && part[1].text == "as" {
				local = part[2].text
			}
			p.names[local] = mod + "." + part[0].text
		}
	case isName(0, "") && len(st) > 2 && st[1].kind == 'o' && st[1].text == "=":
		if len(p.assign[st[0].text]) < shell.MaxDefs {
			p.assign[st[0].text] = append(p.assign[st[0].text], st[2:])
		}
	case isName(0, "") && len(st) > 4 && st[1].text == ":" && st[1].kind == 'o':
		// NAME: type = value
		for k := 2; k < len(st); k++ {
			if st[k].kind == 'o' && st[k].text == "=" {
				p.assign[st[0].text] = append(p.assign[st[0].text], st[k+1:])
				break
			}
		}
	}
}

func trimParens(part []pyTok) []pyTok {
	for len(part) > 0 && part[0].kind == 'o' && part[0].text == "(" {
		part = part[1:]
	}
	for len(part) > 0 && part[len(part)-1].kind == 'o' && part[len(part)-1].text == ")" {
		part = part[:len(part)-1]
	}
	return part
}

func dotted(ts []pyTok) string {
	var b strings.Builder
	for _, t := range ts {
		if t.kind == 'n' && t.text == "as" {
			break
		}
		if t.kind == 'n' || t.kind == 'o' && t.text == "." {
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// splitTop splits tokens at a separator outside brackets.
func splitTop(ts []pyTok, sep string) [][]pyTok {
	var out [][]pyTok
	depth, start := 0, 0
	for i, t := range ts {
		if t.kind != 'o' {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		default:
			if depth == 0 && t.text == sep {
				out = append(out, ts[start:i])
				start = i + 1
			}
		}
	}
	if start < len(ts) {
		out = append(out, ts[start:])
	}
	return out
}

// call reads the call whose '(' is token i.
func (p *pyFile) call(i int) (pyCall, bool) {
	end := p.match[i]
	if end < 0 {
		return pyCall{}, false
	}
	// Walk back over the callee: name(.name | .name() | .name[...])*
	if p.toks[i-1].kind != 'n' {
		return pyCall{}, false
	}
	var parts []string
	k, startTok := i-1, i-1
	for k >= 0 {
		tk := p.toks[k]
		switch {
		case tk.kind == 'n':
			parts = append(parts, tk.text)
		case tk.kind == 'o' && (tk.text == ")" || tk.text == "]") && p.match[k] > 0 && p.toks[p.match[k]-1].kind == 'n':
			m := p.match[k]
			parts = append(parts, p.toks[m-1].text+map[string]string{")": "()", "]": "[]"}[tk.text])
			k = m - 1
		default:
			k = -1
			continue
		}
		startTok = k
		if k >= 2 && p.toks[k-1].kind == 'o' && p.toks[k-1].text == "." {
			k -= 2
			continue
		}
		break
	}
	for l, r := 0, len(parts)-1; l < r; l, r = l+1, r-1 {
		parts[l], parts[r] = parts[r], parts[l]
	}
	if len(parts) == 0 {
		return pyCall{}, false
	}
	// Python keywords before a '(' are not calls (if (...), return (...)), nor is a def.
	if len(parts) == 1 && pyKeyword(parts[0]) {
		return pyCall{}, false
	}
	if startTok > 0 && p.toks[startTok-1].kind == 'n' && (p.toks[startTok-1].text == "def" || p.toks[startTok-1].text == "class") {
		return pyCall{}, false
	}
	c := pyCall{callee: strings.Join(parts, "."), start: p.toks[startTok].start, end: p.toks[end].end, kwargs: map[string][]pyTok{}}
	c.resolved = c.callee
	if full, ok := p.names[parts[0]]; ok {
		c.resolved = strings.Join(append([]string{full}, parts[1:]...), ".")
	} else if mod, ok := p.mods[parts[0]]; ok {
		c.resolved = strings.Join(append([]string{mod}, parts[1:]...), ".")
	} else if len(parts) > 1 {
		if rec, ok := p.receiver(parts[0]); ok {
			// instance = ec2.Instance(id); instance.stop() is ec2.Instance().stop()
			c.resolved = strings.Join(append([]string{rec}, parts[1:]...), ".")
		}
	}
	for _, arg := range splitTop(p.toks[i+1:end], ",") {
		if len(arg) == 0 {
			continue
		}
		if len(arg) >= 2 && arg[0].kind == 'n' && arg[1].kind == 'o' && arg[1].text == "=" {
			c.kwargs[arg[0].text] = arg[2:]
			continue
		}
		c.args = append(c.args, arg)
	}
	return c, true
}

func pyKeyword(s string) bool {
	switch s {
	case "if", "elif", "while", "return", "not", "and", "or", "in", "is", "for", "with", "assert", "yield",
		"del", "print", "lambda", "await", "else", "except", "raise", "import", "from", "as", "class", "def":
		return true
	}
	return false
}

// value evaluates an expression's tokens.
func (p *pyFile) value(ts []pyTok) pyValue {
	if len(ts) == 0 || !p.a.Spend() {
		return pyValue{}
	}
	v := pyValue{start: ts[0].start}
	// Strings, possibly concatenated (implicitly or with +).
	allStr := true
	for k, t := range ts {
		if t.kind == 's' || (k%2 == 1 && t.kind == 'o' && t.text == "+") {
			continue
		}
		allStr = false
		break
	}
	if allStr && ts[0].kind == 's' {
		var b source.Builder
		for _, t := range ts {
			if t.kind == 's' {
				b.From(t.val, 0, len(t.val.Text))
			}
		}
		v.kind, v.str = 's', b.Text()
		return v
	}
	// 'https://host/path/' + iid + '/': a concatenation with a string in it is a string,
	// its other operands' values or unknown bytes.
	if parts := splitTop(ts, "+"); len(parts) > 1 && len(parts) <= 64 && slices.ContainsFunc(parts, func(op []pyTok) bool { return len(op) == 1 && op[0].kind == 's' }) {
		var b source.Builder
		for _, op := range parts {
			if len(op) == 0 {
				return v
			}
			ov := p.value(op)
			if ov.kind == 's' {
				b.From(ov.str, 0, len(ov.str.Text))
			} else {
				b.SynthAt(p.fr.Src, op[0].start, op[len(op)-1].end, string(source.UnknownByte))
			}
		}
		v.kind, v.str = 's', b.Text()
		return v
	}
	// {"key": value, ...}: the keys and values, for the strings a call passes.
	if ts[0].kind == 'o' && ts[0].text == "{" && p.indexOf(ts, 0) == len(ts)-1 {
		for _, el := range splitTop(ts[1:len(ts)-1], ",") {
			for _, kv := range splitTop(el, ":") {
				if len(kv) > 0 {
					v.list = append(v.list, p.value(kv))
				}
			}
		}
		for _, el := range v.list {
			v.size += max(el.size, 1)
		}
		if v.size > maxListSize {
			return pyValue{start: v.start}
		}
		v.kind = 'd'
		return v
	}
	// "sep".join([...])
	if len(ts) >= 4 && ts[0].kind == 's' && ts[1].text == "." && ts[2].text == "join" && ts[3].text == "(" {
		if end := p.indexOf(ts, 3); end == len(ts)-1 {
			inner := p.value(ts[4:end])
			if inner.kind == 'l' {
				var b source.Builder
				for k, el := range inner.list {
					if k > 0 {
						b.From(ts[0].val, 0, len(ts[0].val.Text))
					}
					if el.kind == 's' {
						b.From(el.str, 0, len(el.str.Text))
					} else {
						b.SynthAt(p.fr.Src, el.start, el.start, string(source.UnknownByte))
					}
				}
				v.kind, v.str = 's', b.Text()
				return v
			}
		}
	}
	// base64.b64decode(S), bytes.fromhex(S), codecs.decode(S, "hex"), each maybe .decode():
	// text decoded at run time is a string like any other.
	if dec, ok := p.decodedValue(ts); ok {
		return dec
	}
	// X.split() and shlex.split(X)
	if n := len(ts); n >= 4 && ts[n-1].text == ")" {
		if open := p.indexBack(ts, n-1); open >= 2 && ts[open-1].text == "split" && ts[open-2].text == "." && n-1-open <= 2 {
			if inner := p.value(ts[:open-2]); inner.kind == 's' {
				inner.kind = 'p'
				return inner
			}
		}
	}
	if len(ts) >= 4 && ts[0].kind == 'n' && ts[0].text == "shlex" && ts[1].text == "." && ts[2].text == "split" && ts[3].text == "(" {
		if end := p.indexOf(ts, 3); end == len(ts)-1 {
			if args := splitTop(ts[4:end], ","); len(args) > 0 {
				if inner := p.value(args[0]); inner.kind == 's' {
					inner.kind = 'p'
					return inner
				}
			}
		}
	}
	// Lists and tuples.
	if (ts[0].text == "[" || ts[0].text == "(") && ts[0].kind == 'o' && p.indexOf(ts, 0) == len(ts)-1 {
		for _, el := range splitTop(ts[1:len(ts)-1], ",") {
			if len(el) == 0 {
				continue
			}
			if el[0].kind == 'o' && el[0].text == "*" {
				ev := p.value(el[1:])
				if ev.kind == 'l' {
					v.list = append(v.list, ev.list...)
				} else {
					v.list = append(v.list, pyValue{start: el[0].start})
				}
				continue
			}
			v.list = append(v.list, p.value(el))
		}
		if ts[0].text == "(" && len(v.list) == 1 && !strings.Contains(p.fr.Src.Text[ts[0].start:ts[len(ts)-1].end], ",") {
			return v.list[0] // (expr) is not a tuple
		}
		for _, el := range v.list {
			v.size += max(el.size, 1)
		}
		if v.size > maxListSize {
			return pyValue{start: v.start}
		}
		v.kind = 'l'
		return v
	}
	if len(ts) == 1 && ts[0].kind == 'n' {
		switch ts[0].text {
		case "True":
			return pyValue{kind: 'b', truth: true, start: ts[0].start}
		case "False", "None":
			return pyValue{kind: 'b', start: ts[0].start}
		}
		name := ts[0].text
		defs := p.assign[name]
		if len(defs) == 0 || p.depth[name] {
			return v
		}
		if len(p.depth) >= shell.MaxVarChain {
			p.a.File.Unjudged(p.a, p.a.File.Line(p.fr.Src.FileOff(ts[0].start)), fmt.Sprintf("a name's value goes through more than %d other names: the guard cannot judge this file", shell.MaxVarChain))
			return v
		}
		r, ok := p.memo[name]
		if !ok {
			p.depth[name] = true
			r = p.value(defs[len(defs)-1])
			delete(p.depth, name)
			if r.kind == 's' && len(r.str.Text) > shell.MaxValueLen {
				r = pyValue{}
			}
			p.memo[name] = r
		}
		r.start = ts[0].start
		if r.kind == 's' { // the value is used here
			var b source.Builder
			b.SynthAt(p.fr.Src, ts[0].start, ts[0].end, r.str.Text)
			r.str = b.Text()
		}
		return r
	}
	return v
}

// indexBack is the position in ts of the bracket opening the one at ts[k].
func (p *pyFile) indexBack(ts []pyTok, k int) int {
	depth := 0
	for j := k; j >= 0; j-- {
		if ts[j].kind != 'o' {
			continue
		}
		switch ts[j].text {
		case ")", "]", "}":
			depth++
		case "(", "[", "{":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// indexOf is the position in ts of the bracket matching ts[k].
func (p *pyFile) indexOf(ts []pyTok, k int) int {
	depth := 0
	for j := k; j < len(ts); j++ {
		if ts[j].kind != 'o' {
			continue
		}
		switch ts[j].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// strings collects the string values in an argument (for ArgContains).
func (v pyValue) strings(out []string) []string {
	switch v.kind {
	case 's', 'p':
		out = append(out, v.str.Text)
	case 'l', 'd':
		for _, el := range v.list {
			out = el.strings(out)
		}
	}
	return out
}

func lastPart(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// judge checks one call: a process it starts, an API it calls, a file it writes.
func (p *pyFile) judge(c pyCall) {
	a := p.a
	fr := p.fr
	if fr.Outer == nil {
		fr = fr.Child()
		fr.Outer = &shell.Span{Start: p.fr.Src.FileOff(c.start), End: p.fr.Src.FileEnd(c.end)}
	}
	arg := func(k int, names ...string) []pyTok {
		for _, n := range names {
			if ts, ok := c.kwargs[n]; ok {
				return ts
			}
		}
		if k < len(c.args) {
			return c.args[k]
		}
		return nil
	}
	name := c.resolved
	fn := lastPart(name)
	mod := strings.TrimSuffix(name, "."+fn)
	cc := &shell.CmdCtx{Frame: fr, Start: c.start, End: c.end}
	if r, ok := p.runners[fn]; ok && (c.callee == fn || r.method && strings.Contains(c.callee, ".")) {
		// A function of the file that runs its parameter: the argument is the command.
		k := r.param
		if r.method && strings.Contains(c.callee, ".") {
			k-- // called on an object: self is not among the arguments
		}
		cc.Via = append(cc.Via, "function "+fn)
		p.runValue(p.value(arg(k, r.name)), cc, r.via, r.shell)
		return
	}
	switch {
	case mod == "subprocess" && isSubprocessFunc(fn):
		shell := false
		if sv := p.value(c.kwargs["shell"]); sv.kind == 'b' && sv.truth {
			shell = true
		}
		p.runValue(p.value(arg(0, "args", "cmd")), cc, c.callee, shell || fn == "getoutput" || fn == "getstatusoutput")
	case name == "os.system" || name == "os.popen" || name == "commands.getoutput" || name == "asyncio.create_subprocess_shell" ||
		name == "pty.spawn":
		p.runValue(p.value(arg(0, "cmd", "command")), cc, c.callee, name != "pty.spawn")
	case name == "asyncio.create_subprocess_exec":
		var list []pyValue
		for _, ts := range c.args {
			list = append(list, p.value(ts))
		}
		p.runValue(pyValue{kind: 'l', list: list, start: c.start}, cc, c.callee, false)
	case strings.HasPrefix(name, "os.exec") || strings.HasPrefix(name, "os.spawn"):
		k := 1
		if strings.HasPrefix(name, "os.spawn") {
			k = 2
		}
		if strings.Contains(fn, "v") { // execv(path, argv), spawnv(mode, path, argv)
			p.runValue(p.value(arg(k)), cc, c.callee, false)
		} else { // execl(path, arg0, arg1, ...)
			var list []pyValue
			for _, ts := range c.args[min(k, len(c.args)):] {
				list = append(list, p.value(ts))
			}
			p.runValue(pyValue{kind: 'l', list: list, start: c.start}, cc, c.callee, false)
		}
	case strings.HasPrefix(name, "fabric") && (fn == "run" || fn == "sudo" || fn == "local"):
		p.runValue(p.value(arg(0, "command")), cc, c.callee, true)
	}
	// API calls.
	var strs []string
	for _, ts := range c.args {
		strs = p.value(ts).strings(strs)
	}
	for _, ts := range c.kwargs {
		strs = p.value(ts).strings(strs)
	}
	hasURL := slices.ContainsFunc(strs, func(s string) bool { return strings.Contains(s, "://") })
	for _, r := range a.File.CallRules {
		if len(r.URL) > 0 && !hasURL {
			continue // no URL among the arguments: no request the rule is about
		}
		if !rules.GlobList(r.Call, c.callee) && !rules.GlobList(r.Call, c.resolved) {
			continue
		}
		if len(r.URL) > 0 {
			if req, ok := p.httpCall(c, fn, arg); ok && r.MatchRequest(req) && rules.ArgContains(strs, r.ArgContains) {
				a.Report(fr, r, c.start, c.end, []string{c.callee})
			}
			continue
		}
		ok := true
		for _, kw := range r.Kwargs {
			if !p.kwargMay(c, kw) {
				ok = false
			}
		}
		if ok && len(r.ArgContains) > 0 {
			ok = false
			for _, s := range strs {
				for _, sub := range r.ArgContains {
					if sub != "" && strings.Contains(s, sub) {
						ok = true
					}
				}
			}
		}
		if ok {
			a.Report(fr, r, c.start, c.end, []string{c.callee})
		}
	}
	// Files written.
	switch fn {
	case "open", "Path", "PosixPath", "FileIO":
		if v := p.value(arg(0, "file", "path")); v.kind == 's' {
			a.WriteTo(v.str.Text, fr, c.start, c.end, nil, c.callee+"("+v.str.Text+")")
		}
	}
}

func isSubprocessFunc(fn string) bool {
	switch fn {
	case "run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput":
		return true
	}
	return false
}

// runValue analyses what a call runs: a string as a shell script, a list as argv.
func (p *pyFile) runValue(v pyValue, cc *shell.CmdCtx, via string, viaShell bool) {
	a := p.a
	switch v.kind {
	case 's', 'p':
		// A string without shell=True names one program; the guard reads it as a command
		// line anyway, erring toward finding the danger.
		a.NestedShell(v.str, cc, via, syntax.LangBash, nil, false)
	case 'l':
		argv := make([]shell.Field, 0, len(v.list))
		for _, el := range v.list {
			if el.kind == 's' {
				argv = append(argv, shell.Field{Src: el.str, Quoted: true})
				continue
			}
			var b source.Builder
			b.SynthAt(p.fr.Src, el.start, el.start+1, string(source.UnknownByte))
			argv = append(argv, shell.Field{Src: b.Text(), Quoted: true})
		}
		cc.Via = append(cc.Via, via)
		a.Resolve(argv, cc)
	}
}

// httpCall reads the method and URL of a requests, httpx or urllib call.
func (p *pyFile) httpCall(c pyCall, fn string, arg func(int, ...string) []pyTok) (rules.HTTPRequest, bool) {
	var req rules.HTTPRequest
	urlArg := arg(0, "url")
	switch fn {
	case "get", "post", "put", "delete", "patch", "head":
		req.Method = strings.ToUpper(fn)
	case "request":
		if m := p.value(arg(0, "method")); m.kind == 's' {
			req.Method = strings.ToUpper(m.str.Text)
		}
		urlArg = arg(1, "url")
	case "urlopen", "Request":
		req.Method = "GET"
		if _, ok := c.kwargs["data"]; ok || len(c.args) > 1 {
			req.Method = "POST"
		}
		if m := p.value(c.kwargs["method"]); m.kind == 's' {
			req.Method = strings.ToUpper(m.str.Text)
		}
	default:
		return req, false
	}
	u := p.value(urlArg)
	if u.kind != 's' {
		return req, false
	}
	req.URLs = []string{u.str.Text}
	return req, true
}

// depthAt is the bracket depth at the end of ts.
func (p *pyFile) depthAt(ts []pyTok) int {
	d := 0
	for _, t := range ts {
		if t.kind == 'o' {
			switch t.text {
			case "(", "[", "{":
				d++
			case ")", "]", "}":
				d--
			}
		}
	}
	return d
}

// receiver resolves a name to the callee form of what it was set to: a call chain
// (ec2.Instance(id) → "boto3.resource().Instance()"), a dotted name, or the items of a
// loop over one (for i in ec2.instances.filter(...) → "....filter().[]").
func (p *pyFile) receiver(name string) (string, bool) {
	if r, ok := p.recv[name]; ok {
		return r, r != ""
	}
	if p.depth[name] || len(p.depth) >= shell.MaxVarChain {
		return "", false
	}
	p.recv[name] = "" // a name set from itself is not resolved
	p.depth[name] = true
	defer delete(p.depth, name)
	item := ""
	ts := []pyTok(nil)
	if defs := p.assign[name]; len(defs) > 0 {
		ts = defs[len(defs)-1]
	} else if loop, ok := p.loops[name]; ok {
		ts, item = loop, ".[]"
	}
	r := p.calleeOf(ts)
	if r != "" {
		r += item
	}
	p.recv[name] = r
	return r, r != ""
}

// calleeOf is the callee form of an expression that is a call chain or a dotted name.
func (p *pyFile) calleeOf(ts []pyTok) string {
	if len(ts) == 0 {
		return ""
	}
	last := ts[len(ts)-1]
	if last.kind == 'o' && last.text == ")" {
		open := p.match[last.idx]
		if open <= 0 || p.toks[open].start < ts[0].start {
			return ""
		}
		c, ok := p.call(open)
		if !ok || c.start != ts[0].start {
			return ""
		}
		return c.resolved + "()"
	}
	for k, t := range ts {
		if !(t.kind == 'n' && k%2 == 0 || t.kind == 'o' && t.text == "." && k%2 == 1) {
			return ""
		}
	}
	d := dotted(ts)
	parts := strings.Split(d, ".")
	if full, ok := p.names[parts[0]]; ok {
		return strings.Join(append([]string{full}, parts[1:]...), ".")
	}
	if mod, ok := p.mods[parts[0]]; ok {
		return strings.Join(append([]string{mod}, parts[1:]...), ".")
	}
	if len(parts) > 1 {
		if rec, ok := p.receiver(parts[0]); ok {
			return strings.Join(append([]string{rec}, parts[1:]...), ".")
		}
	}
	return d
}

// findRunners finds the file's functions that run one of their parameters as a command:
// `def sh(cmd): subprocess.run(cmd, shell=True)`, `def run(self, c): os.system(c)`.
func (p *pyFile) findRunners() {
	t := p.fr.Src.Text
	type def struct {
		tok, close int // token indexes of "def" and of its parameters' ")"
		indent     int
		end        int // offset where its body ends
	}
	var defs []def
	for i := 0; i+2 < len(p.toks); i++ {
		if p.toks[i].kind == 'n' && p.toks[i].text == "def" && p.toks[i+1].kind == 'n' && p.toks[i+2].text == "(" && p.match[i+2] > 0 {
			lineStart := strings.LastIndexByte(t[:p.toks[i].start], '\n') + 1
			defs = append(defs, def{tok: i, close: p.match[i+2], indent: p.toks[i].start - lineStart, end: len(t)})
		}
	}
	if len(defs) == 0 {
		return
	}
	// One pass over the lines: a def's body ends at the first line after it that is not
	// indented more than the def.
	var open []int // indexes into defs, innermost last
	next := 0
	for o := 0; o < len(t); {
		e := strings.IndexByte(t[o:], '\n')
		line := t[o:]
		if e >= 0 {
			line = t[o : o+e]
		}
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			ind := len(line) - len(trimmed)
			for len(open) > 0 && ind <= defs[open[len(open)-1]].indent && p.toks[defs[open[len(open)-1]].close].end <= o {
				defs[open[len(open)-1]].end = o
				open = open[:len(open)-1]
			}
		}
		for next < len(defs) && p.toks[defs[next].tok].start < o+len(line)+1 {
			open = append(open, next)
			next++
		}
		if e < 0 {
			break
		}
		o += e + 1
	}
	for _, d := range defs {
		name := p.toks[d.tok+1].text
		var params []string
		for _, part := range splitTop(p.toks[d.tok+3:d.close], ",") {
			if len(part) > 0 && part[0].kind == 'n' {
				params = append(params, part[0].text)
			} else {
				params = append(params, "")
			}
		}
		for k := d.close + 1; k < len(p.toks) && p.toks[k].start < d.end; k++ {
			if p.toks[k].kind != 'o' || p.toks[k].text != "(" {
				continue
			}
			if !p.a.Spend() {
				return
			}
			c, ok := p.call(k)
			if !ok {
				continue
			}
			cmd, shell, via, ok := p.commandArg(c)
			if !ok {
				continue
			}
			pname := cmdParam(cmd)
			for n, prm := range params {
				if pname != "" && prm == pname {
					p.runners[name] = pyRunner{param: n, name: prm, shell: shell, via: via,
						method: len(params) > 0 && (params[0] == "self" || params[0] == "cls")}
				}
			}
		}
	}
}

// commandArg is the command argument of a call that runs one (subprocess, os.system).
func (p *pyFile) commandArg(c pyCall) ([]pyTok, bool, string, bool) {
	fn := lastPart(c.resolved)
	mod := strings.TrimSuffix(c.resolved, "."+fn)
	first := func(names ...string) []pyTok {
		for _, n := range names {
			if ts, ok := c.kwargs[n]; ok {
				return ts
			}
		}
		if len(c.args) > 0 {
			return c.args[0]
		}
		return nil
	}
	switch {
	case mod == "subprocess" && isSubprocessFunc(fn):
		sv := p.value(c.kwargs["shell"])
		return first("args", "cmd"), sv.kind == 'b' && sv.truth || fn == "getoutput" || fn == "getstatusoutput", c.callee, true
	case c.resolved == "os.system" || c.resolved == "os.popen" || c.resolved == "asyncio.create_subprocess_shell":
		return first("cmd", "command"), true, c.callee, true
	}
	return nil, false, "", false
}

// cmdParam is the name a command argument is, when it is just a name (cmd, cmd.split(),
// shlex.split(cmd)).
func cmdParam(ts []pyTok) string {
	switch {
	case len(ts) == 1 && ts[0].kind == 'n':
		return ts[0].text
	case len(ts) == 5 && ts[0].kind == 'n' && ts[1].text == "." && ts[2].text == "split" && ts[3].text == "(" && ts[4].text == ")":
		return ts[0].text
	case len(ts) == 6 && ts[0].text == "shlex" && ts[2].text == "split" && ts[4].kind == 'n':
		return ts[4].text
	}
	return ""
}

// decodedValue evaluates base64.b64decode(S) (standard_, urlsafe_, b32decode),
// bytes.fromhex(S) and binascii.unhexlify(S), with an optional .decode(...) after them.
func (p *pyFile) decodedValue(ts []pyTok) (pyValue, bool) {
	n := len(ts)
	if n >= 4 && ts[n-1].text == ")" {
		if open := p.indexBack(ts, n-1); open >= 2 && ts[open-1].text == "decode" && ts[open-2].text == "." {
			ts = ts[:open-2] // .decode("utf-8")
			n = len(ts)
		}
	}
	if n < 5 || ts[n-1].text != ")" || ts[1].text != "." || ts[3].text != "(" || p.indexOf(ts, 3) != n-1 {
		return pyValue{}, false
	}
	var decode func(string) (string, bool)
	switch ts[0].text + "." + ts[2].text {
	case "base64.b64decode", "base64.standard_b64decode", "base64.urlsafe_b64decode", "base64.decodebytes":
		decode = source.DecodeBase64
	case "base64.b32decode":
		decode = source.DecodeBase32
	case "bytes.fromhex", "binascii.unhexlify", "binascii.a2b_hex":
		decode = source.DecodeHex
	default:
		return pyValue{}, false
	}
	args := splitTop(ts[4:n-1], ",")
	if len(args) == 0 {
		return pyValue{}, false
	}
	v := p.value(args[0])
	if v.kind != 's' || !rules.Known(v.str.Text) {
		return pyValue{start: ts[0].start}, true
	}
	text, ok := decode(v.str.Text)
	if !ok {
		return pyValue{start: ts[0].start}, true
	}
	var b source.Builder
	b.SynthAt(p.fr.Src, ts[0].start, ts[n-1].end, text)
	return pyValue{kind: 's', str: b.Text(), start: ts[0].start}, true
}
