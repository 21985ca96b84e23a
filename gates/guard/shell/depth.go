package shell

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Depth bounds. Every front-end and mvdan.cc/sh's parser walk syntax recursively, so one
// hostile file (a million nested parentheses fits in the size cap) would otherwise exhaust
// the stack, which Go cannot recover from. Each bound is far beyond what a real file nests;
// beyond it the file is not judged and says so (an unjudged warning, which fails the gate).
const (
	// MaxShellNesting is how deep shell constructs may nest in the text before it is parsed:
	// (), {}, $(), ${}, $(( )), backquotes, double quotes, if/case/do blocks.
	MaxShellNesting = 500
	// maxSyntaxDepth is how deep a parsed shell syntax tree may be (pipelines and && chains
	// nest too).
	maxSyntaxDepth = 2000
	// MaxPyNesting is how deep Python brackets may nest: CPython itself refuses more than
	// 200.
	MaxPyNesting = 200
	// MaxMakeNesting is how deep make's $(...) and ${...} may nest in one line.
	MaxMakeNesting = 32
	// MaxVarChain is how many variables (or make variables, or Python names) one value may
	// go through.
	MaxVarChain = 64
)

// errTooDeep is a text that nests beyond maxShellNesting, or parses to a tree deeper than
// maxSyntaxDepth.
type errTooDeep struct {
	off   int // where, in the parsed text
	limit int
	what  string
}

func (e errTooDeep) Error() string {
	return fmt.Sprintf("%s nest more than %d levels deep", e.what, e.limit)
}

// nestFrame is one open construct of the shell text being pre-scanned.
type nestFrame struct {
	kind  byte // 'c' code, 'b' backquotes, 'd' double quotes, 'p' ${...}, 'a' arithmetic, 'h' here-document body
	close byte // what ends a code frame: ')', '}', 'f' (fi), 'D' (done), 'e' (esac)
	delim string
	strip bool // <<-: leading tabs of the delimiter line are removed
	ops   int  // |, && and || in the command being read: each nests the tree one deeper
}

type pendingHdoc struct {
	delim        string
	quoted, dash bool
}

// shellNesting scans shell text (without parsing it, and without recursion) for the
// deepest nesting of the constructs the parser recurses on. It reports the offset where
// the nesting first goes beyond limit.
func shellNesting(t string, limit int) (int, bool) {
	stack := []nestFrame{{kind: 'c'}}
	cmdPos := true
	var pending []pendingHdoc
	push := func(f nestFrame) bool {
		stack = append(stack, f)
		return len(stack)-1 > limit
	}
	pop := func() {
		if len(stack) > 1 {
			stack = stack[:len(stack)-1]
		}
	}
	wordStart := func(i int) bool {
		if i == 0 {
			return true
		}
		switch t[i-1] {
		case ' ', '\t', '\n', ';', '&', '|', '(', ')', '{', '}', '`':
			return true
		}
		return false
	}
	// startBodies begins the here-document bodies announced on the line that ends at i.
	startBodies := func(i int) (int, bool) {
		for len(pending) > 0 {
			h := pending[0]
			pending = pending[1:]
			if h.quoted {
				i = skipHdocBody(t, i, h.delim, h.dash)
				continue
			}
			if push(nestFrame{kind: 'h', delim: h.delim, strip: h.dash}) {
				return i, true
			}
			return i, false // the body is scanned in 'h' mode; the next bodies start when it ends
		}
		return i, false
	}
	afterOp := false // the last token was |, && or ||: a newline continues the command
	for i := 0; i < len(t); i++ {
		top := &stack[len(stack)-1]
		c := t[i]
		if c != ' ' && c != '\t' && c != '\n' {
			afterOp = false
		}
		// At the start of a line of a here-document body: is it the delimiter?
		if top.kind == 'h' && (i == 0 || t[i-1] == '\n') {
			line := t[i:]
			if nl := strings.IndexByte(line, '\n'); nl >= 0 {
				line = line[:nl]
			}
			check := line
			if top.strip {
				check = strings.TrimLeft(check, "\t")
			}
			if check == top.delim {
				i += len(line)
				pop()
				if len(pending) > 0 {
					var deep bool
					if i, deep = startBodies(i + 1); deep {
						return i, true
					}
					i-- // the loop's i++ lands on the next body's first byte
				}
				continue
			}
		}
		switch top.kind {
		case 'd', 'h':
			switch c {
			case '\\':
				i++
			case '"':
				if top.kind == 'd' {
					pop()
				}
			case '`':
				if push(nestFrame{kind: 'b', close: '`'}) {
					return i, true
				}
				cmdPos = true
			case '$':
				if n, deep := dollar(t, i, push); deep {
					return i, true
				} else if n > 0 {
					i += n - 1
					cmdPos = true
				}
			}
			continue
		case 'p', 'a':
			switch c {
			case '\\':
				i++
			case '\'':
				i = skipSingle(t, i)
			case '"':
				if push(nestFrame{kind: 'd'}) {
					return i, true
				}
			case '`':
				if push(nestFrame{kind: 'b', close: '`'}) {
					return i, true
				}
			case '$':
				if n, deep := dollar(t, i, push); deep {
					return i, true
				} else if n > 0 {
					i += n - 1
				}
			case '(':
				if top.kind == 'a' && push(nestFrame{kind: 'a', close: ')'}) {
					return i, true
				}
			case ')':
				if top.kind == 'a' {
					pop()
				}
			case '{':
				if top.kind == 'p' && push(nestFrame{kind: 'p', close: '}'}) {
					return i, true
				}
			case '}':
				if top.kind == 'p' {
					pop()
				}
			}
			continue
		}
		// Code ('c') and backquotes ('b').
		switch c {
		case '\\':
			i++
			cmdPos = false
		case '\'':
			i = skipSingle(t, i)
			cmdPos = false
		case '"':
			if push(nestFrame{kind: 'd'}) {
				return i, true
			}
			cmdPos = false
		case '`':
			if top.kind == 'b' {
				pop()
			} else if push(nestFrame{kind: 'b', close: '`'}) {
				return i, true
			}
			cmdPos = true
		case '$':
			if i+1 < len(t) && t[i+1] == '\'' {
				i = skipANSIC(t, i+1)
				cmdPos = false
				continue
			}
			if n, deep := dollar(t, i, push); deep {
				return i, true
			} else if n > 0 {
				i += n - 1
				cmdPos = true
			}
		case '#':
			if wordStart(i) {
				for i+1 < len(t) && t[i+1] != '\n' {
					i++
				}
			}
		case '(':
			if cmdPos && i+1 < len(t) && t[i+1] == '(' { // (( arithmetic ))
				if push(nestFrame{kind: 'c', close: ')'}) || push(nestFrame{kind: 'a', close: ')'}) {
					return i, true
				}
				i++
				continue
			}
			if push(nestFrame{kind: 'c', close: ')'}) {
				return i, true
			}
			cmdPos = true
		case ')':
			if top.kind == 'c' && top.close == ')' {
				pop()
			}
			cmdPos = true
		case '{':
			if wordStart(i) && (i+1 >= len(t) || t[i+1] == ' ' || t[i+1] == '\t' || t[i+1] == '\n') {
				if push(nestFrame{kind: 'c', close: '}'}) {
					return i, true
				}
				cmdPos = true
			} else {
				cmdPos = false
			}
		case '}':
			if wordStart(i) && top.kind == 'c' && top.close == '}' {
				pop()
			}
			cmdPos = false
		case ';', '&', '|':
			cmdPos = true
			switch {
			case c == '|' || c == '&' && i+1 < len(t) && t[i+1] == '&':
				if i+1 < len(t) && (t[i+1] == '|' || t[i+1] == '&') {
					i++ // || && |&
				}
				top.ops++
				afterOp = true
				if top.ops > limit {
					return i, true
				}
				continue
			case c == '&' && i+1 < len(t) && t[i+1] == '>':
				i++ // &> is a redirection
			default:
				top.ops = 0
			}
		case '\n':
			cmdPos = true
			if !afterOp {
				top.ops = 0
			}
			if len(pending) > 0 {
				var deep bool
				if i, deep = startBodies(i + 1); deep {
					return i, true
				}
				i--
			}
		case '<':
			if i+2 < len(t) && t[i+1] == '<' && t[i+2] == '<' {
				i += 2
				continue
			}
			if i+1 < len(t) && t[i+1] == '<' {
				h, n := readHdocWord(t, i+2)
				if h.delim != "" || h.quoted {
					pending = append(pending, h)
				}
				i += 1 + n
			}
		case ' ', '\t':
		default:
			if !isWordByte(c) {
				cmdPos = false
				continue
			}
			j := i
			for j < len(t) && isWordByte(t[j]) {
				j++
			}
			word := t[i:j]
			if cmdPos && (j == len(t) || !isWordByte(t[j])) {
				switch word {
				case "if":
					if push(nestFrame{kind: 'c', close: 'f'}) {
						return i, true
					}
				case "case":
					if push(nestFrame{kind: 'c', close: 'e'}) {
						return i, true
					}
				case "do":
					if push(nestFrame{kind: 'c', close: 'D'}) {
						return i, true
					}
				case "fi", "esac", "done":
					if top.kind == 'c' && top.close == map[string]byte{"fi": 'f', "esac": 'e', "done": 'D'}[word] {
						pop()
					}
				}
			}
			switch word {
			case "if", "then", "else", "elif", "do", "while", "until", "time", "!", "fi", "done", "esac":
				cmdPos = true
			default:
				cmdPos = false
			}
			i = j - 1
		}
	}
	return 0, false
}

func isWordByte(c byte) bool {
	return c == '_' || c == '!' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// dollar handles a '$' at t[i]: $( $(( ${ $[ push a frame. It returns how many bytes the
// opener takes (0 for a plain $).
func dollar(t string, i int, push func(nestFrame) bool) (int, bool) {
	if i+1 >= len(t) {
		return 0, false
	}
	switch t[i+1] {
	case '(':
		if i+2 < len(t) && t[i+2] == '(' {
			return 3, push(nestFrame{kind: 'c', close: ')'}) || push(nestFrame{kind: 'a', close: ')'})
		}
		return 2, push(nestFrame{kind: 'c', close: ')'})
	case '{':
		return 2, push(nestFrame{kind: 'p', close: '}'})
	case '[':
		return 2, push(nestFrame{kind: 'a', close: ']'})
	case '"':
		return 2, push(nestFrame{kind: 'd'})
	}
	return 0, false
}

// skipSingle returns the offset of the quote that ends the '...' starting at t[i].
func skipSingle(t string, i int) int {
	if j := strings.IndexByte(t[i+1:], '\''); j >= 0 {
		return i + 1 + j
	}
	return len(t)
}

// skipANSIC returns the offset of the quote that ends the $'...' whose quote is t[i].
func skipANSIC(t string, i int) int {
	for j := i + 1; j < len(t); j++ {
		switch t[j] {
		case '\\':
			j++
		case '\'':
			return j
		}
	}
	return len(t)
}

// readHdocWord reads a here-document's delimiter word after "<<" (at t[i]): [-] blanks
// word. It returns the delimiter and how many bytes it took.
func readHdocWord(t string, i int) (pendingHdoc, int) {
	var h pendingHdoc
	j := i
	if j < len(t) && t[j] == '-' {
		h.dash = true
		j++
	}
	for j < len(t) && (t[j] == ' ' || t[j] == '\t') {
		j++
	}
	var b strings.Builder
	for j < len(t) {
		c := t[j]
		switch c {
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
			return h, j - i
		case '\'':
			h.quoted = true
			k := skipSingle(t, j)
			b.WriteString(t[j+1 : min(k, len(t))])
			j = k + 1
			continue
		case '"':
			h.quoted = true
			k := j + 1
			for k < len(t) && t[k] != '"' {
				if t[k] == '\\' && k+1 < len(t) {
					k++
				}
				b.WriteByte(t[k])
				k++
			}
			j = k + 1
			continue
		case '\\':
			h.quoted = true
			if j+1 < len(t) {
				b.WriteByte(t[j+1])
			}
			j += 2
			continue
		}
		b.WriteByte(c)
		j++
		h.delim = b.String()
	}
	h.delim = b.String()
	return h, min(j, len(t)) - i
}

// skipHdocBody returns the offset of the line after a quoted here-document's delimiter
// line (the body starts at t[i]), or the end of the text.
func skipHdocBody(t string, i int, delim string, dash bool) int {
	for i < len(t) {
		nl := strings.IndexByte(t[i:], '\n')
		line := t[i:]
		if nl >= 0 {
			line = t[i : i+nl]
		}
		check := line
		if dash {
			check = strings.TrimLeft(check, "\t")
		}
		if check == delim {
			return min(i+len(line)+1, len(t))
		}
		if nl < 0 {
			return len(t)
		}
		i += nl + 1
	}
	return len(t)
}

// syntaxTooDeep reports the first node of a parsed tree that lies deeper than limit. It
// walks with syntax.Walk, which stops descending where the callback says no, so the walk
// itself never goes deeper than limit.
func syntaxTooDeep(n syntax.Node, limit int) (syntax.Node, bool) {
	depth := 0
	var deep syntax.Node
	syntax.Walk(n, func(n syntax.Node) bool {
		if n == nil {
			depth--
			return true
		}
		if deep != nil {
			return false
		}
		if depth >= limit {
			deep = n
			return false
		}
		depth++
		return true
	})
	return deep, deep != nil
}
