package shell

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// Limits that keep one hostile file from costing unbounded time.
const (
	MaxDepth     = 12      // nested scripts (bash -c in ssh in eval ...) and function calls
	maxWork      = 200000  // commands and words analysed per file
	MaxAlts      = 8       // alternative values of one command (a variable set in several places)
	MaxDefs      = 8       // definitions kept per variable
	maxFuncCalls = 2000    // function and alias expansions per file
	MaxValueLen  = 1 << 16 // longest variable value the guard expands
	maxFields    = 4096    // words of one command
)

// Analyzer walks the shell (and Python) code of one file. It holds only per-file state.
type Analyzer struct {
	File    *File
	Env     *Env
	collect *[]hitKey // during a dry run (a function's own hits), hits go here
	work    int
	calls   int
	parser  *syntax.Parser
	zsh     *syntax.Parser
	evalVar map[string]bool // variables being evaluated (a=$b b=$a)
	varMemo map[string][]textExp
	parsed  map[parseKey]parseResult // the same text is parsed once
	// written is the text the script wrote to each file (see scriptWrite); runningWritten
	// the files whose text is being judged, so that a file that runs itself stops.
	written        map[string]*source.Text
	runningWritten map[string]bool
}

type parseKey struct {
	lang syntax.LangVariant
	text string
}

type parseResult struct {
	f   *syntax.File
	err error
}

// textExp is a variable's value as text: one element for a scalar, several for an array.
type textExp struct {
	elems []string
	multi bool
}

// Env is what a script defines that later commands use: variables with literal values,
// functions and aliases. It is flow-insensitive: every definition in the file counts.
type Env struct {
	called    map[string]bool // names the file runs as commands (functions it calls)
	Vars      map[string][]VarDef
	funcs     map[string]*funcDef
	aliases   map[string]*aliasDef
	funcHits  map[string]map[hitKey]bool
	aliasHits map[string]map[string]bool
}

type VarDef struct {
	fn    string // the function the assignment is in ("" at the top level)
	value *syntax.Word
	array *syntax.ArrayExpr
	src   *source.Text // the text the word belongs to
	Lit   *source.Text // a value given directly (a workflow's env:, a make variable)
	fr    *Frame
}

type funcDef struct {
	name string
	body *syntax.Stmt
	fr   *Frame // frame of the definition (its src and language)
}

type aliasDef struct {
	name  string
	value *source.Text
	fr    *Frame
}

func newEnv() *Env {
	return &Env{called: map[string]bool{}, Vars: map[string][]VarDef{}, funcs: map[string]*funcDef{}, aliases: map[string]*aliasDef{},
		funcHits: map[string]map[hitKey]bool{}, aliasHits: map[string]map[string]bool{}}
}

func NewAnalyzer(fc *File) *Analyzer {
	return &Analyzer{File: fc, Env: newEnv(), evalVar: map[string]bool{}, varMemo: map[string][]textExp{},
		parsed: map[parseKey]parseResult{}}
}

// Span is a range of file offsets.
type Span struct{ Start, End int }

// site is a function call that findings inside the function are reported at.
type site struct {
	at    Span
	outer Span
	skip  map[hitKey]bool // hits the function has on its own, reported at its definition
}

// hitKey identifies a hit by the file offset of its innermost command and its rule.
type hitKey struct {
	off  int
	rule string
}

// Frame is one level of code: a file, a nested script, a function body being called.
type Frame struct {
	Src         *source.Text
	Lang        syntax.LangVariant
	params      []Field // positional parameters $1..., when known
	paramsKnown bool
	Outer       *Span // file span of the outermost command, once one is entered
	site        *site
	Via         []string
	Depth       int
	fnStack     []string
	What        string // what the text is, for parse warnings ("the script passed to bash -c")
	Quiet       bool   // no parse warnings: the text may not be a script (an action's input)
	stdin       *input // the script's own standard input (ssh host bash -s <<EOF)
}

func (fr *Frame) Child() *Frame {
	c := *fr
	c.Via = append([]string(nil), fr.Via...)
	return &c
}

// input is text fed to a command's standard input (a here-document, a pipe from echo).
type input struct {
	s    *source.Text
	what string
	// opaque is text decoded at run time that the guard could not decode (base64 -d of a
	// variable): a shell reading it runs something the guard cannot judge.
	opaque bool
}

// Field is one word of a command after expansion, with its file mapping. Parts whose
// value is unknown hold source.UnknownByte.
type Field struct {
	Src    *source.Text
	Quoted bool
	from   string // the expansion the field starts with ("$CMD"), for Via
	opaque bool   // holds text decoded at run time that the guard could not decode
}

func (f Field) val() string { return f.Src.Text }

func (a *Analyzer) Spend() bool {
	a.work++
	if a.work == maxWork {
		a.File.Unjudged(nil, 1, fmt.Sprintf("stopped after %d commands and words: the file is too complex to analyse fully, so the guard cannot judge it", maxWork))
	}
	return a.work < maxWork
}

func off(p syntax.Pos) int { return int(p.Offset()) }

// wordSpan is a word's offsets in its text, guarding against empty words.
func wordSpan(w *syntax.Word) (int, int, bool) {
	if w == nil || len(w.Parts) == 0 {
		return 0, 0, false
	}
	return off(w.Pos()), off(w.End()), true
}

func (a *Analyzer) parse(s *source.Text, lang syntax.LangVariant) (*syntax.File, error) {
	var p *syntax.Parser
	if lang == syntax.LangZsh {
		if a.zsh == nil {
			a.zsh = syntax.NewParser(syntax.Variant(syntax.LangZsh))
		}
		p = a.zsh
	} else {
		if a.parser == nil {
			a.parser = syntax.NewParser(syntax.Variant(syntax.LangBash))
		}
		p = a.parser
	}
	key := parseKey{lang, s.Text}
	if r, ok := a.parsed[key]; ok {
		return r.f, r.err
	}
	var f *syntax.File
	var err error
	a.File.Scanned += len(s.Text)
	if o, deep := shellNesting(s.Text, MaxShellNesting); deep {
		err = errTooDeep{off: o, limit: MaxShellNesting, what: "its brackets, quotes, blocks or pipelines"}
	} else {
		f, err = p.Parse(strings.NewReader(s.Text), "")
		if f != nil {
			if n, deep := syntaxTooDeep(f, maxSyntaxDepth); deep {
				f, err = nil, errTooDeep{off: off(n.Pos()), limit: maxSyntaxDepth, what: "its commands (pipelines, && chains, blocks)"}
			}
		}
	}
	a.parsed[key] = parseResult{f, err}
	return f, err
}

// Scan reads a shell script file: in the shell its shebang names (zsh for a .zsh file),
// bash when there is none.
func Scan(fc *File) {
	a := NewAnalyzer(fc)
	fr := &Frame{Src: source.FileText(fc.Text), Lang: LangOf(source.ShebangShell([]byte(fc.Text[:min(len(fc.Text), 256)])))}
	if strings.HasSuffix(fc.Path, ".zsh") {
		fr.Lang = LangOf("zsh")
	}
	a.RunShell(fr)
}

// RunShell parses s as shell and analyses it in frame fr (fr.src is s).
func (a *Analyzer) RunShell(fr *Frame) {
	if fr.Depth > MaxDepth {
		a.File.Unjudged(a, a.File.Line(fr.Src.FileOff(0)), fmt.Sprintf("scripts nest inside scripts more than %d deep here: the guard cannot judge this file", MaxDepth))
		return
	}
	f, err := a.parse(fr.Src, fr.Lang)
	if err != nil {
		a.parseWarning(fr, err)
	}
	if f == nil {
		return
	}
	a.collectDefs(f, fr)
	a.stmts(f.Stmts, fr, fr.stdin)
}

// RunPython reads fr.src as Python, with the reader the file was given (NewFile).
func (a *Analyzer) RunPython(fr *Frame) { a.File.readPython(a, fr) }

func (a *Analyzer) parseWarning(fr *Frame, err error) {
	if fr.Quiet && !errors.As(err, new(errTooDeep)) {
		return
	}
	what := fr.What
	if what == "" {
		what = "shell"
	}
	o, text := 0, err.Error()
	var pe syntax.ParseError
	var le syntax.LangError
	var td errTooDeep
	switch {
	case errors.As(err, &td):
		a.File.Unjudged(a, a.File.Line(fr.Src.FileOff(td.off)), fmt.Sprintf("%s: %s here; the guard does not read deeper, so it cannot judge this file", what, td.Error()))
		return
	case errors.As(err, &le):
		o = off(le.Pos)
		text = strings.TrimPrefix(le.Error(), le.Pos.String()+": ")
		a.File.Unjudged(a, a.File.Line(fr.Src.FileOff(o)), fmt.Sprintf("could not parse %s (%s), which the shell runs: the guard cannot judge what follows", what, text))
		return
	case errors.As(err, &pe):
		o, text = off(pe.Pos), pe.Text
	}
	a.File.Warn(a, a.File.Line(fr.Src.FileOff(o)), fmt.Sprintf("could not parse %s (%s): commands after this point were not analysed", what, text))
}

// collectDefs records the functions, aliases and literal variables a script defines.
func (a *Analyzer) collectDefs(f *syntax.File, fr *Frame) {
	var stack []syntax.Node // the nodes being walked, to know the function a variable is set in
	fn := func() string {
		for i := len(stack) - 1; i >= 0; i-- {
			if d, ok := stack[i].(*syntax.FuncDecl); ok && d.Name != nil {
				return d.Name.Value
			}
		}
		return ""
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:max(len(stack)-1, 0)]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *syntax.FuncDecl:
			if n.Body == nil {
				return true
			}
			def := &funcDef{body: n.Body, fr: fr}
			if n.Name != nil {
				def.name = n.Name.Value
				a.Env.funcs[n.Name.Value] = def
			}
			for _, l := range n.Names {
				if l != nil {
					d := *def
					d.name = l.Value
					a.Env.funcs[l.Value] = &d
				}
			}
		case *syntax.CallExpr:
			for _, as := range n.Assigns {
				a.addVarIn(as, fr, fn())
			}
			if len(n.Args) > 0 {
				if lit := n.Args[0].Lit(); lit != "" {
					a.Env.called[lit] = true
				}
			}
			if len(n.Args) > 0 && n.Args[0].Lit() == "alias" {
				for _, w := range n.Args[1:] {
					a.addAlias(w, fr)
				}
			}
		case *syntax.DeclClause:
			for _, as := range n.Args {
				a.addVarIn(as, fr, fn())
			}
		case *syntax.ForClause:
			// for m in nvidia_uvm nvidia; do rmmod "$m"; done: each word is a value of m.
			if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name != nil {
				for _, w := range wi.Items {
					a.addVarIn(&syntax.Assign{Name: wi.Name, Value: w}, fr, fn())
				}
			}
		}
		return true
	})
}

func (a *Analyzer) addVar(as *syntax.Assign, fr *Frame) { a.addVarIn(as, fr, "") }

// addVarIn records an assignment made in function fn ("" at the top level).
func (a *Analyzer) addVarIn(as *syntax.Assign, fr *Frame, fn string) {
	if as == nil || as.Name == nil || as.Naked || as.Append || as.Index != nil {
		return
	}
	name := as.Name.Value
	if len(a.Env.Vars[name]) >= MaxDefs {
		return
	}
	a.Env.Vars[name] = append(a.Env.Vars[name], VarDef{value: as.Value, array: as.Array, src: fr.Src, fr: fr, fn: fn})
	clear(a.varMemo)
}

// localTexts are the values a variable set in the function being called takes from the
// call's arguments (run() { local cmd="$1"; $cmd; }; run "sudo reboot"): definitions in
// that function are read with the call's positional parameters.
func (a *Analyzer) localTexts(name string, fr *Frame) []textExp {
	if !fr.paramsKnown || len(fr.fnStack) == 0 || a.evalVar[name] {
		return nil
	}
	fn := fr.fnStack[len(fr.fnStack)-1]
	var out []textExp
	for _, d := range a.Env.Vars[name] {
		if d.fn != fn || d.value == nil || d.fr == nil {
			continue
		}
		a.evalVar[name] = true
		df := d.fr.Child()
		df.Src, df.params, df.paramsKnown, df.fnStack = d.src, fr.params, true, fr.fnStack
		alts := a.evalWord(d.value, df)
		delete(a.evalVar, name)
		if len(alts) > 0 && len(out) < MaxAlts {
			out = append(out, textExp{elems: []string{joinFields(alts[0]).Text}})
		}
	}
	return out
}

// addAlias records `alias name=value`.
func (a *Analyzer) addAlias(w *syntax.Word, fr *Frame) {
	alts := a.evalWord(w, fr)
	if len(alts) == 0 || len(alts[0]) != 1 {
		return
	}
	f := alts[0][0]
	name, _, ok := strings.Cut(f.val(), "=")
	if !ok || name == "" || !rules.Known(name) {
		return
	}
	a.Env.aliases[name] = &aliasDef{name: name, value: f.Src.Sub(len(name)+1, len(f.val())), fr: fr}
}

func (a *Analyzer) stmts(list []*syntax.Stmt, fr *Frame, stdin *input) {
	for _, s := range list {
		a.stmt(s, fr, stdin)
	}
}

// simpleCmd reports whether a command is one the guard reports as a whole (a call, a
// pipeline), as opposed to a compound command whose parts are reported one by one.
func simpleCmd(c syntax.Command) bool {
	switch c := c.(type) {
	case *syntax.CallExpr, *syntax.TimeClause, *syntax.CoprocClause, *syntax.DeclClause:
		return true
	case *syntax.BinaryCmd:
		return c.Op == syntax.Pipe || c.Op == syntax.PipeAll
	}
	return false
}

// shiftParams applies `shift [n]` to the frame's positional parameters, so that a later
// "$*" or "$@" forwards what is left. It reports whether s was such a shift.
func shiftParams(s *syntax.Stmt, fr *Frame) bool {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Args) > 2 || call.Args[0].Lit() != "shift" {
		return false
	}
	if !fr.paramsKnown {
		return true
	}
	n := 1
	if len(call.Args) == 2 {
		v, err := strconv.Atoi(call.Args[1].Lit())
		if err != nil || v < 0 {
			fr.params, fr.paramsKnown = nil, false
			return true
		}
		n = v
	}
	fr.params = fr.params[min(n, len(fr.params)):]
	return true
}

func (a *Analyzer) stmt(s *syntax.Stmt, fr *Frame, stdin *input) {
	if s == nil || !a.Spend() {
		return
	}
	start, end := off(s.Pos()), stmtEnd(s)
	if end < start {
		end = start
	}
	if shiftParams(s, fr) {
		return
	}
	if fr.Outer == nil && simpleCmd(s.Cmd) {
		fr = fr.Child()
		fr.Outer = &Span{fr.Src.FileOff(start), fr.Src.FileEnd(end)}
	}
	stdin = a.redirects(s, fr, stdin, start, end)
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		a.scriptWrite(s, c, fr, stdin, start, end)
		a.call(c, fr, stdin)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			a.stmt(c.X, fr, stdin)
			a.stmt(c.Y, fr, a.output(c.X, fr, stdin))
			return
		}
		a.stmt(c.X, fr, stdin)
		a.stmt(c.Y, fr, nil)
	case *syntax.Block:
		a.stmts(c.Stmts, fr, stdin)
	case *syntax.Subshell:
		a.stmts(c.Stmts, fr, stdin)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			a.stmts(ic.Cond, fr, nil)
			a.stmts(ic.Then, fr, nil)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond, fr, nil)
		a.stmts(c.Do, fr, nil)
	case *syntax.ForClause:
		a.nested(c.Loop, fr)
		a.stmts(c.Do, fr, nil)
	case *syntax.CaseClause:
		a.nested(c.Word, fr)
		for _, it := range c.Items {
			if it != nil {
				a.stmts(it.Stmts, fr, nil)
			}
		}
	case *syntax.FuncDecl:
		// The body on its own: what it does whatever its arguments.
		name := ""
		if c.Name != nil {
			name = c.Name.Value
		}
		body := fr.Child()
		body.params, body.paramsKnown, body.site, body.stdin = nil, false, nil, nil
		body.fnStack = append(append([]string(nil), fr.fnStack...), name)
		a.stmt(c.Body, body, nil)
	case *syntax.DeclClause:
		for _, as := range c.Args {
			a.nestedAssign(as, fr)
		}
	case *syntax.TimeClause:
		a.stmt(c.Stmt, fr, stdin)
	case *syntax.CoprocClause:
		a.stmt(c.Stmt, fr, stdin)
	case *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
		a.nested(c, fr)
	}
}

// redirects handles a statement's redirections: writes to dangerous files, words with
// command substitutions, and the here-document or here-string that becomes its input.
func (a *Analyzer) redirects(s *syntax.Stmt, fr *Frame, stdin *input, start, end int) *input {
	for _, r := range s.Redirs {
		if r == nil {
			continue
		}
		a.nested(r.Word, fr)
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut,
			syntax.RdrAllClob, syntax.AppAllClob:
			for _, alt := range a.evalWord(r.Word, fr) {
				if len(alt) == 1 {
					a.WriteTo(alt[0].val(), fr, start, end, nil, r.Op.String()+" "+alt[0].val())
				}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			a.nested(r.Hdoc, fr)
			stdin = a.heredoc(r, fr)
		case syntax.WordHdoc:
			stdin = nil
			if alts := a.evalWord(r.Word, fr); len(alts) > 0 {
				stdin = &input{s: joinFields(alts[0]), what: "<<<"}
			}
		case syntax.RdrIn:
			stdin = nil
		}
	}
	return stdin
}

func (a *Analyzer) heredoc(r *syntax.Redirect, fr *Frame) *input {
	delim := "EOF"
	if r.Word != nil {
		if alts := a.evalWord(r.Word, fr); len(alts) > 0 && len(alts[0]) > 0 {
			delim = alts[0][0].val()
		}
	}
	st, en, ok := wordSpan(r.Hdoc)
	if !ok {
		return &input{s: &source.Text{Segs: []source.Seg{{Contiguous: true}}}, what: "<<" + delim}
	}
	return &input{s: fr.Src.Sub(st, en), what: "<<" + delim}
}

// WriteTo reports a write to a file that a rule names.
func (a *Analyzer) WriteTo(p string, fr *Frame, start, end int, via []string, how string) {
	for _, r := range a.File.writeRules {
		if r.MatchWrite(p) {
			a.Report(fr, r, start, end, append(append([]string(nil), via...), how))
		}
	}
}

// nested analyses the command substitutions inside a node (a word, a test): they run.
func (a *Analyzer) nested(n syntax.Node, fr *Frame) {
	if n == nil {
		return
	}
	switch n := n.(type) {
	case *syntax.Word:
		if n == nil {
			return
		}
	case syntax.Loop:
		if n == nil {
			return
		}
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			a.stmts(n.Stmts, fr, nil)
			return false
		case *syntax.ProcSubst:
			a.stmts(n.Stmts, fr, nil)
			return false
		}
		return true
	})
}

func (a *Analyzer) nestedAssign(as *syntax.Assign, fr *Frame) {
	if as == nil {
		return
	}
	if as.Value != nil {
		a.nested(as.Value, fr)
	}
	if as.Array != nil {
		a.nested(as.Array, fr)
	}
}

func (a *Analyzer) call(c *syntax.CallExpr, fr *Frame, stdin *input) {
	for _, as := range c.Assigns {
		a.nestedAssign(as, fr)
	}
	for _, w := range c.Args {
		a.nested(w, fr)
	}
	if len(c.Args) == 0 {
		return
	}
	start, _, ok := wordSpan(c.Args[0])
	if !ok {
		return
	}
	if len(c.Assigns) > 0 && c.Assigns[0] != nil && c.Assigns[0].Name != nil {
		start = off(c.Assigns[0].Name.Pos())
	}
	_, end, ok := wordSpan(c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	if a.boring(c.Args[0], fr) {
		return
	}
	for _, argv := range a.evalArgs(c.Args, fr) {
		a.Resolve(argv, &CmdCtx{Frame: fr, Start: start, End: end, stdin: stdin, canFunc: true})
	}
}

// boring reports whether a command's program is a literal that no rule, wrapper,
// function or alias is about (nvcc, make, echo): its arguments need no expanding.
func (a *Analyzer) boring(w *syntax.Word, fr *Frame) bool {
	lit := w.Lit()
	if lit == "" || strings.ContainsAny(lit, "\\") {
		return false
	}
	if a.Env.funcs[lit] != nil || a.Env.aliases[lit] != nil || a.written[path.Clean(lit)] != nil {
		return false
	}
	name := rules.ProgName(lit)
	return len(a.File.Rules.CommandRules(name)) == 0 && !isWrapperName(name) && name != "tee" && name != "dd"
}

// evalArgs expands a command's words; a variable set to several literals in the file
// gives several alternative commands (at most maxAlts).
func (a *Analyzer) evalArgs(words []*syntax.Word, fr *Frame) [][]Field {
	alts := [][]Field{nil}
	for _, w := range words {
		if !a.Spend() {
			break
		}
		wa := a.evalWord(w, fr)
		if len(wa) == 0 {
			continue
		}
		if len(alts[0])+len(wa[0]) > maxFields {
			break
		}
		if len(alts) == 1 && len(wa) == 1 {
			alts[0] = append(alts[0], wa[0]...)
			continue
		}
		var next [][]Field
		for _, prefix := range alts {
			for _, fs := range wa {
				if len(next) >= MaxAlts {
					break
				}
				next = append(next, append(slices.Clip(prefix), fs...))
			}
		}
		alts = next
	}
	return alts
}

// wordState is one alternative value of a word being expanded.
type wordState struct {
	done   []Field
	cur    source.Builder
	curOn  bool
	quoted bool
	from   string
	opaque bool
}

func (w *wordState) clone() wordState {
	c := wordState{curOn: w.curOn, quoted: w.quoted, from: w.from, opaque: w.opaque}
	c.done = append([]Field(nil), w.done...)
	c.cur.Buf = append([]byte(nil), w.cur.Buf...)
	c.cur.Segs = append([]source.Seg(nil), w.cur.Segs...)
	return c
}

func (w *wordState) finish() {
	if w.curOn {
		w.done = append(w.done, Field{Src: w.cur.Text(), Quoted: w.quoted, from: w.from, opaque: w.opaque})
	}
	w.cur = source.Builder{}
	w.curOn, w.quoted, w.from, w.opaque = false, false, "", false
}

// appendSplit adds an unquoted expansion's value, split into fields at blanks; a field
// it starts is marked as coming from the expansion `from`.
func (w *wordState) appendSplit(s *source.Text, from string) {
	t := s.Text
	i := 0
	for i < len(t) {
		if isBlank(t[i]) {
			w.finish()
			for i < len(t) && isBlank(t[i]) {
				i++
			}
			continue
		}
		j := i
		for j < len(t) && !isBlank(t[j]) {
			j++
		}
		if w.cur.Len() == 0 && from != "" {
			w.from = from
		}
		from = "" // only the field the expansion starts
		w.cur.From(s, i, j)
		w.curOn = true
		i = j
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// evalWord expands a word into fields: one alternative per combination of variable
// values (at most maxAlts).
func (a *Analyzer) evalWord(w *syntax.Word, fr *Frame) [][]Field {
	if w == nil {
		return nil
	}
	states := []wordState{{}}
	for _, p := range w.Parts {
		states = a.evalPart(p, fr, states, false)
	}
	out := make([][]Field, 0, len(states))
	for i := range states {
		states[i].finish()
		out = append(out, states[i].done)
	}
	return out
}

func (a *Analyzer) evalPart(p syntax.WordPart, fr *Frame, states []wordState, dq bool) []wordState {
	if p == nil {
		return states
	}
	each := func(fn func(*wordState)) []wordState {
		for i := range states {
			fn(&states[i])
		}
		return states
	}
	switch p := p.(type) {
	case *syntax.Lit:
		return each(func(w *wordState) { a.appendLit(w, p, fr, dq) })
	case *syntax.SglQuoted:
		return each(func(w *wordState) {
			w.curOn, w.quoted = true, true
			st := off(p.Left) + 1
			if p.Dollar {
				st++
				decodeANSIC(&w.cur, fr.Src, p.Value, st)
				return
			}
			if st+len(p.Value) <= len(fr.Src.Text) && fr.Src.Text[st:st+len(p.Value)] == p.Value {
				w.cur.From(fr.Src, st, st+len(p.Value))
			} else {
				w.cur.SynthAt(fr.Src, off(p.Pos()), off(p.End()), p.Value)
			}
		})
	case *syntax.DblQuoted:
		each(func(w *wordState) { w.curOn, w.quoted = true, true })
		for _, q := range p.Parts {
			states = a.evalPart(q, fr, states, true)
		}
		return states
	case *syntax.ParamExp:
		return a.evalParam(p, fr, states, dq)
	case *syntax.CmdSubst:
		st, en := off(p.Pos()), off(p.End())
		// $(echo c2h1dGRvd24= | base64 -d), $(cat <<EOF ...): output the guard can tell.
		if out := a.substOutput(p, fr); out != nil && !out.opaque {
			text := strings.TrimRight(out.s.Text, "\n")
			return each(func(w *wordState) {
				if dq {
					w.cur.SynthAt(fr.Src, st, en, text)
				} else {
					var b source.Builder
					b.SynthAt(fr.Src, st, en, text)
					w.appendSplit(b.Text(), "")
				}
				w.curOn = true
			})
		} else if out != nil {
			return each(func(w *wordState) { w.cur.FromMasked(fr.Src, st, en); w.curOn, w.opaque = true, true })
		}
		return each(func(w *wordState) { w.cur.FromMasked(fr.Src, st, en); w.curOn = true })
	case *syntax.ArithmExp, *syntax.ProcSubst:
		st, en := off(p.Pos()), off(p.End())
		return each(func(w *wordState) { w.cur.FromMasked(fr.Src, st, en); w.curOn = true })
	default:
		st, en := off(p.Pos()), off(p.End())
		return each(func(w *wordState) { w.cur.From(fr.Src, st, en); w.curOn = true })
	}
}

// appendLit adds a literal part, removing the backslashes the shell removes.
func (a *Analyzer) appendLit(w *wordState, l *syntax.Lit, fr *Frame, dq bool) {
	w.curOn = true
	st, v := off(l.ValuePos), l.Value
	if st+len(v) > len(fr.Src.Text) || fr.Src.Text[st:st+len(v)] != v {
		w.cur.SynthAt(fr.Src, st, st, v)
		return
	}
	run := st
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 >= len(v) {
			continue
		}
		c := v[i+1]
		if dq && c != '$' && c != '`' && c != '"' && c != '\\' && c != '\n' {
			i++
			continue
		}
		w.cur.From(fr.Src, run, st+i)
		if c != '\n' {
			w.cur.From(fr.Src, st+i+1, st+i+2)
		}
		run = st + i + 2
		i++
	}
	w.cur.From(fr.Src, run, st+len(v))
}

// decodeANSIC appends the value of a $'...' string (raw text v at offset st).
func decodeANSIC(b *source.Builder, s *source.Text, v string, st int) {
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 >= len(v) {
			b.From(s, st+i, st+i+1)
			continue
		}
		c, n := v[i+1], 2
		out := string(c)
		switch c {
		case 'n':
			out = "\n"
		case 't':
			out = "\t"
		case 'r':
			out = "\r"
		case 'e', 'E':
			out = "\x1b"
		case 'a':
			out = "\a"
		case 'b':
			out = "\b"
		case 'x':
			j := i + 2
			for j < len(v) && j < i+4 && isHex(v[j]) {
				j++
			}
			if x, err := strconv.ParseUint(v[i+2:j], 16, 8); err == nil {
				out, n = string(rune(x)), j-i
			}
		}
		b.SynthAt(s, st+i, st+i+n, out)
		i += n - 1
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// expansion is one possible value of a parameter expansion.
type expansion struct {
	elems []*source.Text
	multi bool // "$@" and "${a[@]}": each element is its own field even inside quotes
}

func (a *Analyzer) evalParam(p *syntax.ParamExp, fr *Frame, states []wordState, dq bool) []wordState {
	st, en := off(p.Pos()), off(p.End())
	exps := a.paramValues(p, fr, st, en)
	if len(exps) == 0 { // unknown
		for i := range states {
			states[i].cur.FromMasked(fr.Src, st, en)
			states[i].curOn = true
		}
		return states
	}
	var out []wordState
	for i := range states {
		for j, e := range exps {
			if len(out) >= MaxAlts {
				break
			}
			w := states[i]
			if j < len(exps)-1 {
				w = states[i].clone()
			}
			from := ""
			if syntax.ValidName(p.Param.Value) {
				from = "$" + p.Param.Value // positional parameters are named by the function in Via
			}
			applyExpansion(&w, e, dq, from)
			out = append(out, w)
		}
	}
	return out
}

func applyExpansion(w *wordState, e expansion, dq bool, from string) {
	for k, el := range e.elems {
		if dq {
			if w.cur.Len() == 0 {
				w.from = from
			}
			if k > 0 && e.multi {
				w.finish()
				w.curOn, w.quoted = true, true
			} else if k > 0 {
				w.cur.Synth(el.FileOff(0), el.FileOff(0), " ")
			}
			w.cur.From(el, 0, len(el.Text))
			w.curOn = true
			continue
		}
		if k > 0 {
			w.finish()
		}
		w.appendSplit(el, from)
	}
}

// paramValues resolves a parameter expansion to its possible values; none means unknown.
func (a *Analyzer) paramValues(p *syntax.ParamExp, fr *Frame, st, en int) []expansion {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.IsSet || p.Slice != nil || p.Repl != nil ||
		p.Names != 0 || p.NestedParam != nil || len(p.Modifiers) > 0 || p.Flags != nil {
		return nil
	}
	deflt := false
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			deflt = true
		default:
			return nil
		}
	}
	name := p.Param.Value
	at := func(text string) *source.Text {
		var b source.Builder
		b.SynthAt(fr.Src, st, en, text)
		return b.Text()
	}
	var out []expansion
	switch {
	case name == "@" || name == "*":
		if !fr.paramsKnown {
			return nil
		}
		e := expansion{multi: name == "@"}
		for _, f := range fr.params {
			e.elems = append(e.elems, f.Src)
		}
		if name == "*" {
			e.elems = []*source.Text{joinFields(fr.params)}
		}
		out = append(out, e)
	case isDigits(name):
		n, err := strconv.Atoi(name)
		if err != nil || n == 0 || !fr.paramsKnown {
			return nil
		}
		if n <= len(fr.params) {
			out = append(out, expansion{elems: []*source.Text{fr.params[n-1].Src}})
		}
	case syntax.ValidName(name):
		idx := ""
		if p.Index != nil {
			w, ok := p.Index.(*syntax.Word)
			if !ok || w.Lit() == "" {
				return nil
			}
			idx = w.Lit()
		}
		texts := a.varTexts(name, idx)
		if idx == "" {
			if local := a.localTexts(name, fr); len(local) > 0 {
				texts = local // set from the call's arguments
			}
		}
		for _, te := range texts {
			e := expansion{multi: te.multi}
			for _, el := range te.elems {
				e.elems = append(e.elems, at(el))
			}
			out = append(out, e)
		}
	default:
		return nil
	}
	if deflt && p.Exp.Word != nil && (len(out) == 0 || !isDigits(name)) {
		for _, fs := range a.evalWord(p.Exp.Word, fr) {
			out = append(out, expansion{elems: []*source.Text{at(joinFields(fs).Text)}})
			break
		}
	}
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// varTexts are the values a variable's definitions give it (at most maxAlts), as text.
func (a *Analyzer) varTexts(name, idx string) []textExp {
	key := name + "[" + idx + "]"
	if r, ok := a.varMemo[key]; ok {
		return r
	}
	if a.evalVar[name] || !a.Spend() {
		return nil
	}
	if len(a.evalVar) >= MaxVarChain {
		a.File.Unjudged(a, 1, fmt.Sprintf("a variable's value goes through more than %d other variables: the guard cannot judge this file", MaxVarChain))
		return nil
	}
	a.evalVar[name] = true
	var out []textExp
	for _, d := range a.Env.Vars[name] {
		if te, ok := a.varValue(d, idx); ok && textLen(te) <= MaxValueLen {
			out = append(out, te)
		}
		if len(out) >= MaxAlts {
			break
		}
	}
	delete(a.evalVar, name)
	a.varMemo[key] = out
	return out
}

func textLen(te textExp) int {
	n := 0
	for _, e := range te.elems {
		n += len(e)
	}
	return n
}

// varValue evaluates one definition of a variable.
func (a *Analyzer) varValue(d VarDef, idx string) (textExp, bool) {
	scalarIdx := idx == "" || idx == "@" || idx == "*" || idx == "0"
	if d.Lit != nil {
		return textExp{elems: []string{d.Lit.Text}}, scalarIdx
	}
	if d.fr == nil {
		return textExp{}, false
	}
	df := d.fr.Child()
	df.Src, df.params, df.paramsKnown = d.src, nil, false
	if d.array != nil {
		var elems []string
		for _, el := range d.array.Elems {
			if el == nil || el.Value == nil || el.Index != nil {
				return textExp{}, false
			}
			alts := a.evalWord(el.Value, df)
			if len(alts) == 0 {
				continue
			}
			for _, f := range alts[0] {
				elems = append(elems, f.val())
			}
		}
		switch idx {
		case "@":
			return textExp{elems: elems, multi: true}, true
		case "*":
			return textExp{elems: []string{strings.Join(elems, " ")}}, true
		}
		n := 0
		if idx != "" {
			var err error
			if n, err = strconv.Atoi(idx); err != nil {
				return textExp{}, false
			}
		}
		if n < 0 || n >= len(elems) {
			return textExp{}, false
		}
		return textExp{elems: elems[n : n+1]}, true
	}
	if !scalarIdx {
		return textExp{}, false
	}
	if d.value == nil {
		return textExp{elems: []string{""}}, true
	}
	alts := a.evalWord(d.value, df)
	if len(alts) == 0 {
		return textExp{elems: []string{""}}, true
	}
	return textExp{elems: []string{joinFields(alts[0]).Text}}, true
}

// joinFields joins fields with spaces into one text, keeping each field's mapping.
func joinFields(fs []Field) *source.Text {
	var b source.Builder
	for i, f := range fs {
		if i > 0 {
			fo := f.Src.FileOff(0)
			b.Synth(fo, fo, " ")
		}
		b.From(f.Src, 0, len(f.val()))
	}
	return b.Text()
}

// output is what a pipeline's left side writes, when the guard can tell: echo and printf
// of literal text, cat of a here-document, tee passing its input on.
func (a *Analyzer) output(s *syntax.Stmt, fr *Frame, stdin *input) *input {
	if s == nil {
		return nil
	}
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return a.output(c.Y, fr, a.output(c.X, fr, stdin))
		}
		return nil
	case *syntax.CallExpr:
		own := stdin
		for _, r := range s.Redirs {
			if r == nil {
				continue
			}
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				own = a.heredoc(r, fr)
			case syntax.WordHdoc:
				if alts := a.evalWord(r.Word, fr); len(alts) > 0 {
					own = &input{s: joinFields(alts[0]), what: "<<<"}
				}
			case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
				return nil // the output goes to a file
			}
		}
		alts := a.evalArgs(c.Args, fr)
		if len(alts) == 0 || len(alts[0]) == 0 {
			return nil
		}
		argv := alts[0]
		switch rules.ProgName(argv[0].val()) {
		case "echo":
			return &input{s: echoText(argv[1:]), what: "| echo"}
		case "printf":
			if len(argv) < 2 {
				return nil
			}
			return &input{s: printfText(argv[1], argv[2:]), what: "| printf"}
		case "base64", "base32", "basenc", "openssl", "xxd":
			return decoderOutput(argv, own)
		case "cat", "tee":
			for _, f := range argv[1:] {
				if v := f.val(); v != "-" && !strings.HasPrefix(v, "-") && rules.ProgName(argv[0].val()) == "cat" {
					return nil
				}
			}
			return own
		}
	}
	return nil
}

// echoText is what echo prints of its arguments (its -n, -e and -E flags read).
func echoText(args []Field) *source.Text {
	escapes := false
	for len(args) > 0 && isEchoFlag(args[0].val()) {
		escapes = escapes || strings.Contains(args[0].val(), "e")
		args = args[1:]
	}
	text := joinFields(args)
	if escapes {
		text = decodeEscapes(text)
	}
	return text
}

func isEchoFlag(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, c := range s[1:] {
		if c != 'n' && c != 'e' && c != 'E' {
			return false
		}
	}
	return true
}

// printfText renders printf's format with its arguments: \n and %s, roughly. Like
// printf, it uses the format again while arguments are left.
func printfText(format Field, args []Field) *source.Text {
	var b source.Builder
	t := format.val()
	ai := 0
	for pass := 0; pass == 0 || ai < len(args) && pass < len(args); pass++ {
		if !printfPass(&b, format, t, args, &ai) {
			break
		}
	}
	return b.Text()
}

// printfPass renders the format once; it reports whether it used an argument.
func printfPass(b *source.Builder, format Field, t string, args []Field, next *int) bool {
	ai := *next
	defer func() { *next = ai }()
	used := false
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t):
			out, n := escapeAt(t, i)
			if n == 2 && out == t[i:i+2] {
				out = string(t[i+1])
			}
			b.SynthAt(format.Src, i, i+n, out)
			i += n - 1
		case t[i] == '%' && i+1 < len(t):
			j := i + 1
			for j < len(t) && strings.IndexByte("-+ #0123456789.", t[j]) >= 0 {
				j++
			}
			if j < len(t) && t[j] == '%' {
				b.SynthAt(format.Src, i, j+1, "%")
			} else if ai < len(args) {
				b.From(args[ai].Src, 0, len(args[ai].val()))
				ai++
				used = true
			}
			i = j
		default:
			b.From(format.Src, i, i+1)
		}
	}
	return used
}

// LangOf is the parser variant for a shell name.
func LangOf(name string) syntax.LangVariant {
	if name == "zsh" {
		return syntax.LangZsh
	}
	return syntax.LangBash
}

// stmtEnd is the end of a statement without its ';' or '&' and without here-document
// bodies.
func stmtEnd(s *syntax.Stmt) (end int) {
	end = off(s.Position)
	defer func() {
		if recover() != nil { // a node the parser left incomplete
			end = off(s.Position)
		}
	}()
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		if n := len(c.Args); n > 0 {
			if _, e, ok := wordSpan(c.Args[n-1]); ok {
				end = e
			}
		} else if n := len(c.Assigns); n > 0 && c.Assigns[n-1] != nil {
			end = off(c.Assigns[n-1].End())
		}
	default:
		end = off(c.End())
	}
	for _, r := range s.Redirs {
		if r != nil && r.Word != nil {
			if _, e, ok := wordSpan(r.Word); ok {
				end = max(end, e)
			}
		}
	}
	return end
}

// substOutput is what a command substitution outputs, when the guard can tell (a pipeline
// of echo, printf, cat of a here-document and decoders).
func (a *Analyzer) substOutput(cs *syntax.CmdSubst, fr *Frame) *input {
	if len(cs.Stmts) != 1 || cs.Stmts[0] == nil || !a.Spend() {
		return nil
	}
	switch c := cs.Stmts[0].Cmd.(type) {
	case *syntax.CallExpr:
	case *syntax.BinaryCmd:
		if c.Op != syntax.Pipe {
			return nil
		}
	default:
		return nil
	}
	return a.output(cs.Stmts[0], fr, nil)
}

// decoderOutput is the output of base64 -d, base32 -d, basenc -d, openssl base64 -d and
// xxd -r -p reading in: the decoded text, or opaque when it cannot be decoded.
func decoderOutput(argv []Field, in *input) *input {
	vals := make([]string, len(argv))
	for i, f := range argv {
		vals[i] = f.val()
	}
	prog := rules.ProgName(vals[0])
	has := func(fl ...string) bool {
		for _, v := range vals[1:] {
			for _, f := range fl {
				if v == f {
					return true
				}
			}
		}
		return false
	}
	var decode func(string) (string, bool)
	switch {
	case prog == "base64" && has("-d", "--decode", "-D"):
		decode = source.DecodeBase64
	case prog == "base32" && has("-d", "--decode"):
		decode = source.DecodeBase32
	case prog == "basenc" && has("-d", "--decode") && has("--base64", "--base64url"):
		decode = source.DecodeBase64
	case prog == "basenc" && has("-d", "--decode") && has("--base32"):
		decode = source.DecodeBase32
	case prog == "basenc" && has("-d", "--decode") && has("--base16"):
		decode = source.DecodeHex
	case prog == "openssl" && has("-d") && (has("base64") || has("-a", "-base64")):
		decode = source.DecodeBase64
	case prog == "xxd" && (has("-r") && has("-p", "-ps", "-plain") || has("-rp", "-r -p", "-pr")):
		decode = source.DecodeHex
	default:
		return nil
	}
	what := "| " + prog + " -d"
	switch prog {
	case "xxd":
		what = "| xxd -r"
	case "openssl":
		what = "| openssl base64 -d"
	}
	if in == nil || in.opaque || !rules.Known(in.s.Text) {
		return &input{s: &source.Text{Text: string(source.UnknownByte), Segs: []source.Seg{{Contiguous: true}}}, what: what, opaque: true}
	}
	text, ok := decode(in.s.Text)
	if !ok {
		return &input{s: &source.Text{Text: string(source.UnknownByte), Segs: []source.Seg{{Contiguous: true}}}, what: what, opaque: true}
	}
	var b source.Builder
	b.Synth(in.s.FileOff(0), in.s.FileEnd(len(in.s.Text)), text)
	return &input{s: b.Text(), what: what}
}

// decodeEscapes decodes echo -e's and printf's backslash escapes in s.
func decodeEscapes(s *source.Text) *source.Text {
	t := s.Text
	if !strings.Contains(t, "\\") {
		return s
	}
	var b source.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '\\' || i+1 >= len(t) {
			b.From(s, i, i+1)
			continue
		}
		out, n := escapeAt(t, i)
		b.SynthAt(s, i, i+n, out)
		i += n - 1
	}
	return b.Text()
}

// escapeAt decodes the backslash escape at t[i]: its text and length.
func escapeAt(t string, i int) (string, int) {
	switch c := t[i+1]; c {
	case 'n':
		return "\n", 2
	case 't':
		return "\t", 2
	case 'r':
		return "\r", 2
	case '\\':
		return "\\", 2
	case 'x':
		j := i + 2
		for j < len(t) && j < i+4 && isHex(t[j]) {
			j++
		}
		if v, err := strconv.ParseUint(t[i+2:j], 16, 8); err == nil {
			return string(rune(v)), j - i
		}
	case '0', '1', '2', '3', '4', '5', '6', '7':
		j := i + 1
		if c == '0' {
			j++ // \0NNN
		}
		k := j
		for k < len(t) && k < j+3 && t[k] >= '0' && t[k] <= '7' {
			k++
		}
		if v, err := strconv.ParseUint(t[j:k], 8, 8); err == nil && k > j {
			return string(rune(v)), k - i
		}
	}
	return t[i : i+2], 2
}
