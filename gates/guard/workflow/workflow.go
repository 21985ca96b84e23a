// Package workflow is the guard's front end for GitHub workflows and composite actions.
//
// Scan reads a file in these steps:
//
//  1. Parse the YAML (a file yaml.v3 refuses is unjudged).
//  2. For each job and step, gather the values `${{ }}` can take: inputs' defaults and
//     choice options, matrix entries, env values (expr.go).
//  3. Map every `run:` back to the exact file bytes (block scalars with their indentation
//     and chomping, plain and quoted scalars with their folding and escapes), with each
//     `${{ }}` replaced by unknown bytes of the same length, or by each of its values in
//     turn (at most shell.MaxAlts variants).
//  4. Read it in the shell that `shell:` (or defaults.run.shell) names, Python for
//     `shell: python`; any other shell (pwsh, cmd) is unjudged.
//  5. Read `uses:` steps (actions.go): inputs that hold scripts are shell, a CLI action's
//     args are that CLI's, and the step itself is the pseudo-command
//     `uses OWNER/REPO[/PATH] KEY=VALUE...` that the rules match.
package workflow

import (
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

type wfCtx struct {
	shell   string
	windows bool
	env     []envVar
	inputs  map[string][]string
	matrix  map[string][]string
}

func (c wfCtx) exprCtx() *exprCtx { return &exprCtx{inputs: c.inputs, matrix: c.matrix, env: c.env} }

type envVar struct {
	name  string
	value *source.Text
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

func Scan(fc *shell.File, kind source.Kind) {
	text := fc.Text
	if len(fc.Invalid) > 0 {
		// YAML refuses bytes that are not UTF-8 (and the control byte that stands for them
		// in fc.text): it reads a letter in their place, and the scripts get them back as
		// unknown bytes.
		b := []byte(text)
		for _, o := range fc.Invalid {
			b[o] = 'x'
		}
		text = string(b)
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for doc := 0; ; doc++ {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			line := 0
			if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
				line, _ = strconv.Atoi(m[1])
			}
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			if strings.Contains(msg, "exceeded max depth") {
				if line == 0 {
					line = yamlDeepLine(text)
				}
				fc.Unjudged(nil, line, fmt.Sprintf("the YAML nests too deep for its parser (%s): the guard cannot judge this %s", msg, kind))
				return
			}
			// Not GitHub's parser: what this one refuses GitHub may run, so a file it
			// cannot parse is not judged safe.
			fc.Unjudged(nil, line, fmt.Sprintf("could not parse YAML (%s): the %s was not analysed, so the guard cannot judge it", msg, kind))
			return
		}
		w := &wfScan{fc: fc, text: text, seen: map[*yaml.Node]bool{}}
		w.walk(&root, wfCtx{inputs: workflowInputs(&root)})
		if doc > 100 {
			return
		}
	}
}

type wfScan struct {
	fc   *shell.File
	text string              // what YAML reads: fc.text with a letter for each byte that is not UTF-8
	seen map[*yaml.Node]bool // guards against alias loops
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func MapGet(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

func scalar(n *yaml.Node) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

func (w *wfScan) walk(n *yaml.Node, c wfCtx) {
	n = deref(n)
	if n == nil || w.seen[n] {
		return
	}
	w.seen[n] = true
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, k := range n.Content {
			w.walk(k, c)
		}
	case yaml.MappingNode:
		if sh, ok := scalar(MapGet(MapGet(MapGet(n, "defaults"), "run"), "shell")); ok {
			c.shell = sh
		}
		if ro := MapGet(n, "runs-on"); ro != nil && strings.Contains(strings.ToLower(nodeText(ro)), "windows") {
			c.windows = true
		}
		if m := jobMatrix(n); m != nil {
			c.matrix = m
		}
		if env := MapGet(n, "env"); env != nil && env.Kind == yaml.MappingNode {
			outer := c
			c.env = append([]envVar(nil), c.env...)
			for i := 0; i+1 < len(env.Content); i += 2 {
				if v := deref(env.Content[i+1]); v != nil && v.Kind == yaml.ScalarNode {
					for _, val := range expandExpressions(w.scalarSrc(v), outer.exprCtx()) {
						c.env = append(c.env, envVar{env.Content[i].Value, val})
					}
				}
			}
		}
		if run := MapGet(n, "run"); run != nil && run.Kind == yaml.ScalarNode {
			sh := c.shell
			if s, ok := scalar(MapGet(n, "shell")); ok {
				sh = s
			}
			w.step(run, sh, c)
		}
		if uses, ok := scalar(MapGet(n, "uses")); ok {
			w.uses(n, uses, c)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], c) // a job may be called "run"; scalars are no steps
		}
	}
}

// nodeText is a node's scalar values joined (runs-on may be a list or a mapping). It reads
// at most 1,000 nodes: aliases can make a small file a huge tree.
func nodeText(n *yaml.Node) string {
	budget := 1000
	var parts []string
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		n = deref(n)
		if n == nil || budget <= 0 || depth > 64 {
			return
		}
		budget--
		if n.Kind == yaml.ScalarNode {
			parts = append(parts, n.Value)
			return
		}
		for _, k := range n.Content {
			if k != n {
				walk(k, depth+1)
			}
		}
	}
	walk(n, 0)
	return strings.Join(parts, " ")
}

// step analyses one run: in its shell, once per value its expressions may take.
func (w *wfScan) step(run *yaml.Node, shell string, c wfCtx) {
	for _, s := range expandExpressions(w.scalarSrc(run), c.exprCtx()) {
		w.script(run, s, shell, c, "the run: script")
	}
}

// script analyses one script of a step (run:, or an action's script input) in its shell.
func (w *wfScan) script(run *yaml.Node, s *source.Text, shell string, c wfCtx, what string) {
	w.scriptIn(run, s, shell, c, what, false)
}

// scriptIn is script; quiet reads it without parse warnings (an input that may not be a
// script at all).
func (w *wfScan) scriptIn(run *yaml.Node, s *source.Text, stepShell string, c wfCtx, what string, quiet bool) {
	name := ""
	if f := strings.Fields(stepShell); len(f) > 0 {
		name = path.Base(f[0])
	}
	if name == "" && c.windows {
		name = "pwsh"
	}
	a := shell.NewAnalyzer(w.fc)
	for _, e := range c.env {
		a.Env.Vars[e.name] = append(a.Env.Vars[e.name], shell.VarDef{Lit: e.value})
	}
	switch {
	case name == "" || shell.IsShell(name):
		a.RunShell(&shell.Frame{Src: s, Lang: shell.LangOf(name), What: what, Quiet: quiet})
	case shell.IsPython(name):
		a.RunPython(&shell.Frame{Src: s})
	default:
		if stepShell == "" {
			stepShell = name + " (the default on Windows runners)"
		}
		w.fc.Unjudged(nil, run.Line, fmt.Sprintf("this step runs in shell %q, which the guard does not analyse, so it cannot judge it: check it by hand", stepShell))
	}
}

// offsetOf converts a yaml.v3 line and column (1-based, counting characters) to a byte
// offset of the text.
func (w *wfScan) offsetOf(line, col int) int {
	t := w.text
	o := w.fc.Lines.LineStart(line)
	for c := 1; c < col && o < len(t) && t[o] != '\n'; c++ {
		_, n := utf8.DecodeRuneInString(t[o:])
		o += n
	}
	return o
}

// scalarSrc rebuilds a scalar's value with its map to the file. Where the text cannot be
// matched with the value yaml.v3 decoded, every byte maps to the scalar's start.
func (w *wfScan) scalarSrc(n *yaml.Node) *source.Text {
	return w.fc.MaskInvalid(w.scalarSrcOf(n))
}

func (w *wfScan) scalarSrcOf(n *yaml.Node) *source.Text {
	start := w.offsetOf(n.Line, n.Column)
	var s *source.Text
	var ok bool
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		s, ok = w.blockSrc(n, start)
	case n.Style&yaml.DoubleQuotedStyle != 0:
		s, ok = alignFlow(n.Value, w.text, start+1, '"')
	case n.Style&yaml.SingleQuotedStyle != 0:
		s, ok = alignFlow(n.Value, w.text, start+1, '\'')
	default:
		s, ok = alignFlow(n.Value, w.text, start, 0)
	}
	if ok {
		return s
	}
	var b source.Builder
	b.Synth(start, start, n.Value)
	return b.Text()
}

// blockSrc maps a literal (|) or folded (>) block scalar: its content lines start on the
// line after the indicator, at the indentation of the first non-empty one.
func (w *wfScan) blockSrc(n *yaml.Node, start int) (*source.Text, bool) {
	lt := w.fc.Lines
	t := w.text
	first, _ := lt.Pos(start)
	first++
	indent := -1
	type piece struct {
		off  int
		text string
	}
	var pieces []piece
	for l := first; l <= len(lt.Starts); l++ {
		ls, le := lt.LineStart(l), lt.LineEnd(l)
		if ls > len(t) || ls > le {
			break
		}
		line := strings.TrimRight(t[ls:le], "\r")
		ind := len(line) - len(strings.TrimLeft(line, " "))
		blank := strings.TrimSpace(line) == ""
		if indent < 0 && !blank {
			indent = ind
		}
		if !blank && ind < indent {
			break
		}
		if blank && len(line) <= max(indent, 0) {
			pieces = append(pieces, piece{ls, ""})
			continue
		}
		k := max(indent, 0)
		if k > len(line) {
			k = len(line)
		}
		pieces = append(pieces, piece{ls + k, line[k:]})
	}
	v := n.Value
	var b source.Builder
	p := 0
	sep := start
	for _, pc := range pieces {
		if pc.text == "" {
			continue
		}
		for p < len(v) && !strings.HasPrefix(v[p:], pc.text) {
			if v[p] != '\n' && v[p] != ' ' {
				return nil, false
			}
			b.Synth(sep, sep, v[p:p+1])
			p++
		}
		if !strings.HasPrefix(v[p:], pc.text) {
			return nil, false
		}
		b.Raw(pc.off, pc.text)
		p += len(pc.text)
		sep = pc.off + len(pc.text)
	}
	for ; p < len(v); p++ {
		if v[p] != '\n' && v[p] != ' ' {
			return nil, false
		}
		b.Synth(sep, sep, v[p:p+1])
	}
	return b.Text(), true
}

// alignFlow maps a plain (quote 0), single- or double-quoted scalar whose text starts at
// byte j: the decoded value v is matched with the text, through line folding and escapes.
func alignFlow(v, t string, j int, quote byte) (*source.Text, bool) {
	var b source.Builder
	i := 0
	for i < len(v) {
		if j >= len(t) {
			return nil, false
		}
		switch {
		case quote == '\'' && t[j] == '\'' && j+1 < len(t) && t[j+1] == '\'' && v[i] == '\'':
			b.Synth(j, j+2, "'")
			i, j = i+1, j+2
		case quote == '"' && t[j] == '\\':
			if j+1 < len(t) && (t[j+1] == '\n' || t[j+1] == '\r') {
				j += 2
				for j < len(t) && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n' || t[j] == '\r') {
					j++
				}
				continue
			}
			n, out := yamlEscape(t, j)
			if out == "" || !strings.HasPrefix(v[i:], out) {
				return nil, false
			}
			b.Synth(j, j+n, out)
			i, j = i+len(out), j+n
		case t[j] == v[i] && t[j] != '\n':
			k := 1
			for i+k < len(v) && j+k < len(t) && t[j+k] == v[i+k] && t[j+k] != '\n' && t[j+k] != '\\' && t[j+k] != '\'' {
				k++
			}
			b.Raw(j, v[i:i+k])
			i, j = i+k, j+k
		case isYAMLSpace(t[j]) && (v[i] == ' ' || v[i] == '\n'):
			// Line folding: a line break (and the indentation after it) became a space, or
			// blank lines became line breaks.
			at := j
			for j < len(t) && isYAMLSpace(t[j]) {
				j++
			}
			for i < len(v) && (v[i] == ' ' || v[i] == '\n') {
				b.Synth(at, at, v[i:i+1])
				i++
			}
		default:
			return nil, false
		}
	}
	return b.Text(), true
}

func isYAMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// yamlEscape decodes a double-quoted scalar's escape at t[j] ('\').
func yamlEscape(t string, j int) (int, string) {
	if j+1 >= len(t) {
		return 1, ""
	}
	switch c := t[j+1]; c {
	case '0':
		return 2, "\x00"
	case 'a':
		return 2, "\a"
	case 'b':
		return 2, "\b"
	case 't', '\t':
		return 2, "\t"
	case 'n':
		return 2, "\n"
	case 'v':
		return 2, "\v"
	case 'f':
		return 2, "\f"
	case 'r':
		return 2, "\r"
	case 'e':
		return 2, "\x1b"
	case ' ', '"', '/', '\\':
		return 2, string(c)
	case 'N':
		return 2, "\u0085"
	case '_':
		return 2, "\u00a0"
	case 'L':
		return 2, "\u2028"
	case 'P':
		return 2, "\u2029"
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if j+2+n <= len(t) {
			if r, err := strconv.ParseUint(t[j+2:j+2+n], 16, 32); err == nil && utf8.ValidRune(rune(r)) {
				return 2 + n, string(rune(r))
			}
		}
	}
	return 2, ""
}

// yamlDeepLine is the line where YAML's flow brackets first nest 10,000 deep (yaml.v3's
// limit, whose error names no line), or 1.
func yamlDeepLine(t string) int {
	depth, line := 0, 1
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\n':
			line++
		case '[', '{':
			if depth++; depth > 10000 {
				return line
			}
		case ']', '}':
			depth = max(depth-1, 0)
		case '"', '\'':
			if j := strings.IndexByte(t[i+1:], t[i]); j >= 0 {
				line += strings.Count(t[i:i+1+j], "\n")
				i += j + 1
			}
		}
	}
	return 1
}
