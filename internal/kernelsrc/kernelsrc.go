// Package kernelsrc finds where CUDA kernels are defined in their sources: the line of each
// `__global__` function, by its name. Findings that the toolchain reports per kernel (ptxas
// registers, SASS instructions, a wrong result) carry no source position; this is where an
// annotation on a pull request puts them. It reads C++ as tokens (comments, strings and
// character literals skipped, preprocessor lines ignored), not with a regular expression, so
// a `__global__` in a comment or a string is not a definition, and attributes between
// `__global__` and the name (`__launch_bounds__(...)`, `[[...]]`) are skipped.
package kernelsrc

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Def is one kernel definition (or declaration) in a source file.
type Def struct {
	Name string // the unqualified identifier, e.g. "flash_fwd"
	File string // as given to Scan
	Line int    // the line of its `__global__`, 1-based
}

// MaxFileSize bounds one source file: a larger one is not a hand-written kernel source.
const MaxFileSize = 8 << 20

// Scan reads one source file and returns its kernels in order. file names them.
func Scan(r io.Reader, file string) ([]Def, error) {
	src, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(src) > MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d MiB, not read as a kernel source", file, MaxFileSize>>20)
	}
	toks := tokenize(string(src))
	var defs []Def
	for i := 0; i < len(toks); i++ {
		if toks[i].text != "__global__" {
			continue
		}
		if name, ok := kernelName(toks[i+1:]); ok {
			defs = append(defs, Def{Name: name, File: file, Line: toks[i].line})
		}
	}
	return defs, nil
}

// attributes may stand between __global__ and the kernel's name, each with an optional
// parenthesised argument list.
func isAttribute(s string) bool {
	switch s {
	case "__launch_bounds__", "__cluster_dims__", "__maxnreg__", "__attribute__", "__declspec",
		"alignas", "__noinline__", "__forceinline__", "__host__", "__device__", "static", "inline",
		"extern", "__inline__", "__restrict__", "void", "auto", "const", "volatile", "typename":
		return true
	}
	return false
}

// kernelName is the identifier right before the parameter list that follows __global__.
func kernelName(toks []token) (string, bool) {
	// A definition's head is short; bounding it keeps a file of stray __global__s linear.
	toks = toks[:min(len(toks), 256)]
	last := ""
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.text == "(":
			if last == "" || isAttribute(last) {
				// An attribute's arguments: skip to the matching parenthesis.
				depth := 0
				for ; i < len(toks); i++ {
					if toks[i].text == "(" {
						depth++
					} else if toks[i].text == ")" {
						if depth--; depth == 0 {
							break
						}
					}
				}
				last = ""
				continue
			}
			return last, true
		case t.text == "[" && i+1 < len(toks) && toks[i+1].text == "[":
			// [[attribute]]: skip to "]]".
			for i += 2; i+1 < len(toks) && (toks[i].text != "]" || toks[i+1].text != "]"); i++ {
			}
			i++
			last = ""
		case t.text == ";" || t.text == "{" || t.text == "}" || t.text == "__global__":
			return "", false
		case isIdent(t.text):
			last = t.text
		case t.text == "<":
			// Template arguments of a return type or a specialisation name: skip them.
			depth := 0
			for ; i < len(toks); i++ {
				if toks[i].text == "<" {
					depth++
				} else if toks[i].text == ">" {
					if depth--; depth == 0 {
						break
					}
				} else if toks[i].text == ";" || toks[i].text == "{" {
					return "", false
				}
			}
		}
	}
	return "", false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

type token struct {
	text string
	line int
}

// tokenize splits C++ source into identifiers, numbers and single punctuation characters,
// with their lines; comments, string and character literals and preprocessor lines are
// dropped.
func tokenize(src string) []token {
	var toks []token
	line := 1
	atLineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			atLineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#' && atLineStart:
			// A preprocessor line, with its continuations.
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					line++
					i++
				}
				i++
			}
			continue
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
			continue
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, token{src[i:j], line})
			i = j
		default:
			toks = append(toks, token{src[i : i+1], line})
			i++
		}
		atLineStart = false
	}
	return toks
}

// Index is the kernels of a set of sources by name.
type Index map[string][]Def

// Add scans one file into the index.
func (x Index) Add(r io.Reader, file string) error {
	defs, err := Scan(bufio.NewReader(r), file)
	if err != nil {
		return err
	}
	for _, d := range defs {
		x[d.Name] = append(x[d.Name], d)
	}
	return nil
}

// Find returns the definition of the kernel a tool names: a mangled or demangled name,
// qualified or not, with template arguments and parameters or without
// ("kg::flash_fwd<64, 64, false>", "void kg::flash_fwd<64, 64, false>(__half const*, ...)",
// "_ZN2kg9flash_fwd..."). The first definition of that identifier wins (a declaration
// before its definition shares its name and file in practice).
func (x Index) Find(identifier string) (Def, bool) {
	defs := x[identifier]
	if len(defs) == 0 {
		return Def{}, false
	}
	return defs[0], true
}

// Identifier is the unqualified name of a kernel's short name: "kg::flash_fwd<64, 64,
// false>" → "flash_fwd".
func Identifier(short string) string {
	s := short
	if i := strings.IndexAny(s, "<("); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	if i := strings.LastIndexByte(strings.TrimSpace(s), ' '); i >= 0 {
		s = s[i+1:] // a return type before the name
	}
	return strings.TrimSpace(s)
}
