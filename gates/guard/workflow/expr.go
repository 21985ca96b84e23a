package workflow

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// GitHub expressions (`${{ ... }}`) are opaque to the shell, but their values often are
// not: a workflow_dispatch or workflow_call input has a default and choice options, a
// matrix lists its values, an env value is literal. The guard evaluates an expression to
// the values it can take (exprValues) and judges the script once per value (up to maxAlts
// variants); a value it cannot know stays unknown bytes of the expression's length.

// exprAlt is one value an expression may take; !known is a value the guard cannot know.
type exprAlt struct {
	text  string
	known bool
}

// exprCtx is what an expression can refer to in one place of a workflow.
type exprCtx struct {
	inputs map[string][]string // inputs.NAME, github.event.inputs.NAME: default and options
	matrix map[string][]string // matrix.NAME (and matrix.NAME.FIELD)
	env    []envVar            // env.NAME, innermost last
}

// maxExprDepth bounds the parentheses an expression is read through.
const maxExprDepth = 32

// exprValues evaluates an expression (the text between `${{` and `}}`).
func exprValues(e string, c *exprCtx) []exprAlt {
	return exprEval(strings.TrimSpace(e), c, 0)
}

func exprEval(e string, c *exprCtx, depth int) []exprAlt {
	unknown := []exprAlt{{}}
	if depth > maxExprDepth || e == "" {
		return unknown
	}
	if parts := splitExprTop(e, "||"); len(parts) > 1 {
		var out []exprAlt
		for _, p := range parts {
			out = appendAlts(out, exprEval(strings.TrimSpace(p), c, depth+1))
		}
		return out
	}
	if parts := splitExprTop(e, "&&"); len(parts) > 1 {
		return exprEval(strings.TrimSpace(parts[len(parts)-1]), c, depth+1)
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if len(splitExprTop(e, op)) > 1 {
			return []exprAlt{{text: "true", known: true}, {text: "false", known: true}}
		}
	}
	switch {
	case strings.HasPrefix(e, "!"):
		return []exprAlt{{text: "true", known: true}, {text: "false", known: true}}
	case strings.HasPrefix(e, "(") && strings.HasSuffix(e, ")") && matchingParen(e) == len(e)-1:
		return exprEval(strings.TrimSpace(e[1:len(e)-1]), c, depth+1)
	case strings.HasPrefix(e, "'") && strings.HasSuffix(e, "'") && len(e) >= 2 && closingQuote(e) == len(e)-1:
		return []exprAlt{{text: strings.ReplaceAll(e[1:len(e)-1], "''", "'"), known: true}}
	case e == "true" || e == "false":
		return []exprAlt{{text: e, known: true}}
	case e == "null":
		return []exprAlt{{text: "", known: true}}
	case isExprNumber(e):
		return []exprAlt{{text: e, known: true}}
	}
	ref, ok := exprRef(e)
	if !ok || c == nil {
		return unknown
	}
	var vals []string
	switch {
	case strings.HasPrefix(ref, "inputs."):
		vals = c.inputs[strings.TrimPrefix(ref, "inputs.")]
	case strings.HasPrefix(ref, "github.event.inputs."):
		vals = c.inputs[strings.TrimPrefix(ref, "github.event.inputs.")]
	case strings.HasPrefix(ref, "matrix."):
		vals = c.matrix[strings.TrimPrefix(ref, "matrix.")]
	case strings.HasPrefix(ref, "env."):
		name := strings.TrimPrefix(ref, "env.")
		for i := len(c.env) - 1; i >= 0; i-- {
			if strings.EqualFold(c.env[i].name, name) {
				if v := c.env[i].value.Text; rules.Known(v) {
					vals = []string{v}
				}
				break
			}
		}
	}
	if len(vals) == 0 {
		return unknown
	}
	out := make([]exprAlt, 0, len(vals))
	for _, v := range vals {
		out = appendAlts(out, []exprAlt{{text: v, known: true}})
	}
	return out
}

// appendAlts adds alternatives that are not there yet (at most maxAlts).
func appendAlts(out, more []exprAlt) []exprAlt {
	for _, m := range more {
		dup := false
		for _, o := range out {
			if o == m {
				dup = true
				break
			}
		}
		if !dup && len(out) < shell.MaxAlts {
			out = append(out, m)
		}
	}
	return out
}

// splitExprTop splits an expression at op outside quotes and parentheses.
func splitExprTop(e, op string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '\'':
			i = closingQuoteFrom(e, i)
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		default:
			if depth == 0 && strings.HasPrefix(e[i:], op) {
				// "<" is not "<=", "=" of "==" is not "!=".
				if (op == "<" || op == ">") && i+1 < len(e) && e[i+1] == '=' {
					continue
				}
				out = append(out, e[start:i])
				start = i + len(op)
				i += len(op) - 1
			}
		}
	}
	return append(out, e[start:])
}

func closingQuoteFrom(e string, i int) int {
	for j := i + 1; j < len(e); j++ {
		if e[j] == '\'' {
			if j+1 < len(e) && e[j+1] == '\'' {
				j++
				continue
			}
			return j
		}
	}
	return len(e)
}

func closingQuote(e string) int { return closingQuoteFrom(e, 0) }

func matchingParen(e string) int {
	depth := 0
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '\'':
			i = closingQuoteFrom(e, i)
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func isExprNumber(e string) bool {
	if e == "" {
		return false
	}
	for i := 0; i < len(e); i++ {
		if (e[i] < '0' || e[i] > '9') && e[i] != '.' && e[i] != '-' {
			return false
		}
	}
	return true
}

// exprRef normalises a context reference (inputs.Cmd, inputs['cmd'], github.event.inputs.x)
// to lower-case dotted form.
func exprRef(e string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(e); i++ {
		c := e[i]
		switch {
		case c == '[' && i+1 < len(e) && e[i+1] == '\'':
			j := closingQuoteFrom(e, i+1)
			if j+1 >= len(e) || e[j+1] != ']' {
				return "", false
			}
			b.WriteByte('.')
			b.WriteString(e[i+2 : j])
			i = j + 1
		case c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return strings.ToLower(b.String()), b.Len() > 0
}

// workflowInputs reads the inputs a workflow (on.workflow_dispatch.inputs,
// on.workflow_call.inputs) or a composite action (inputs) declares: each input's default
// and choice options are the values `inputs.NAME` may take.
func workflowInputs(root *yaml.Node) map[string][]string {
	out := map[string][]string{}
	doc := deref(root)
	if doc != nil && doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = deref(doc.Content[0])
	}
	var lists []*yaml.Node
	if on := MapGet(doc, "on"); on != nil {
		lists = append(lists, MapGet(MapGet(on, "workflow_dispatch"), "inputs"), MapGet(MapGet(on, "workflow_call"), "inputs"))
	}
	lists = append(lists, MapGet(doc, "inputs"))
	for _, l := range lists {
		if l == nil || l.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(l.Content); i += 2 {
			name := strings.ToLower(l.Content[i].Value)
			in := deref(l.Content[i+1])
			if d, ok := scalar(MapGet(in, "default")); ok {
				out[name] = appendUnique(out[name], d)
			}
			if opts := MapGet(in, "options"); opts != nil && opts.Kind == yaml.SequenceNode {
				for _, o := range opts.Content {
					if v, ok := scalar(o); ok {
						out[name] = appendUnique(out[name], v)
					}
				}
			}
		}
	}
	return out
}

// jobMatrix reads a job's strategy.matrix: each key's values, the values that include
// entries add, and the fields of values that are mappings (matrix.NAME.FIELD).
func jobMatrix(job *yaml.Node) map[string][]string {
	m := MapGet(MapGet(job, "strategy"), "matrix")
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := map[string][]string{}
	budget := 10000 // nodes read: aliases can make a small matrix a huge tree
	var add func(prefix string, n *yaml.Node, depth int)
	add = func(prefix string, n *yaml.Node, depth int) {
		n = deref(n)
		if n == nil || depth > 4 || budget <= 0 {
			return
		}
		budget--
		switch n.Kind {
		case yaml.ScalarNode:
			out[prefix] = appendUnique(out[prefix], n.Value)
		case yaml.SequenceNode:
			for _, k := range n.Content {
				add(prefix, k, depth+1)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				add(prefix+"."+strings.ToLower(n.Content[i].Value), n.Content[i+1], depth+1)
			}
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key := strings.ToLower(m.Content[i].Value)
		switch key {
		case "include", "exclude":
			if key == "include" {
				add("", m.Content[i+1], 0)
			}
		default:
			add(key, m.Content[i+1], 0)
		}
	}
	for k, v := range out { // include entries were read with a leading '.'
		if strings.HasPrefix(k, ".") {
			out[k[1:]] = append(out[k[1:]], v...)
			delete(out, k)
		}
	}
	return out
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	if len(list) >= shell.MaxAlts {
		return list
	}
	return append(list, v)
}

// expandExpressions returns the variants of a script: each `${{ }}` replaced by one of its
// values (every value in at least one variant), or by unknown bytes of its length.
func expandExpressions(s *source.Text, c *exprCtx) []*source.Text {
	if !strings.Contains(s.Text, "${{") {
		return []*source.Text{s}
	}
	type expr struct {
		start, end int
		alts       []exprAlt
	}
	var exprs []expr
	n := 1
	for i := 0; i+2 < len(s.Text); i++ {
		if s.Text[i] != '$' || s.Text[i+1] != '{' || s.Text[i+2] != '{' {
			continue
		}
		end := strings.Index(s.Text[i+3:], "}}")
		stop := len(s.Text)
		inner := s.Text[i+3:]
		if end >= 0 {
			stop = i + 3 + end + 2
			inner = s.Text[i+3 : i+3+end]
		}
		alts := exprValues(inner, c)
		exprs = append(exprs, expr{i, stop, alts})
		n = max(n, len(alts))
		i = stop - 1
	}
	n = min(n, shell.MaxAlts)
	out := make([]*source.Text, 0, n)
	for k := range n {
		var b source.Builder
		run := 0
		for _, e := range exprs {
			b.From(s, run, e.start)
			alt := e.alts[k%len(e.alts)]
			if alt.known {
				b.SynthAt(s, e.start, e.end, alt.text)
			} else {
				n0 := b.Len()
				b.From(s, e.start, e.end)
				for j := n0; j < b.Len(); j++ {
					if b.Buf[j] != '\n' {
						b.Buf[j] = source.UnknownByte
					}
				}
			}
			run = e.end
		}
		b.From(s, run, len(s.Text))
		out = append(out, b.Text())
	}
	return out
}
