// Package dockerfile is the guard's Dockerfile front end: RUN (and ONBUILD RUN) in shell
// form with its continuations (comment lines inside them dropped, as docker does), exec
// form (`RUN ["sh", "-c", "..."]`, a JSON array) and here-documents (`RUN <<EOF`, read
// as Python when its shebang says so). Each becomes a shell text mapped back to the
// Dockerfile's bytes, which Scan hands to the shell analyzer.
package dockerfile

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

var (
	dockerEscapeRE  = regexp.MustCompile(`(?i)^#\s*escape\s*=\s*([\\` + "`" + `])\s*$`)
	dockerHeredocRE = regexp.MustCompile(`(?:^|[\s0-9])<<(-?)(["']?)([A-Za-z_][A-Za-z0-9_]*)(["']?)`)
)

func Scan(fc *shell.File) {
	t := fc.Text
	lt := fc.Lines
	n := len(lt.Starts)
	escape := byte('\\')
	a := shell.NewAnalyzer(fc)
	analysable := true
	line := func(l int) string { return t[lt.LineStart(l):lt.LineEnd(l)] }
	// Parser directives come first.
	for l := 1; l <= n; l++ {
		s := strings.TrimSpace(line(l))
		if !strings.HasPrefix(s, "#") {
			break
		}
		if m := dockerEscapeRE.FindStringSubmatch(s); m != nil {
			escape = m[1][0]
		}
	}
	for l := 1; l <= n; l++ {
		s := strings.TrimSpace(line(l))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		// The instruction's logical lines: continuations, skipping comment and empty lines.
		lines := []int{l}
		last := l
		for endsWithEscape(line(last), escape) && last < n {
			last++
			for last < n && (strings.TrimSpace(line(last)) == "" || strings.HasPrefix(strings.TrimSpace(line(last)), "#")) {
				last++
			}
			lines = append(lines, last)
		}
		// Here-documents follow the instruction.
		first := line(l)
		heredocs := dockerHeredocRE.FindAllStringSubmatch(joinLines(t, lt, lines), -1)
		bodyEnd := last
		for _, h := range heredocs {
			for bodyEnd < n {
				bodyEnd++
				body := line(bodyEnd)
				if h[1] == "-" {
					body = strings.TrimLeft(body, "\t")
				}
				if strings.TrimRight(body, " ") == h[3] {
					break
				}
			}
		}
		word := strings.ToUpper(strings.Fields(first)[0])
		argStart := lt.LineStart(l) + strings.Index(first, strings.Fields(first)[0]) + len(strings.Fields(first)[0])
		if word == "ONBUILD" {
			rest := strings.TrimLeft(t[argStart:lt.LineEnd(l)], " \t")
			if f := strings.Fields(rest); len(f) > 0 && strings.EqualFold(f[0], "RUN") {
				word = "RUN"
				argStart = lt.LineEnd(l) - len(rest) + len(f[0])
			}
		}
		switch word {
		case "SHELL":
			sh := strings.ToLower(t[argStart:lt.LineEnd(l)])
			analysable = !strings.Contains(sh, "powershell") && !strings.Contains(sh, "pwsh") && !strings.Contains(sh, "cmd")
		case "RUN", "CMD", "ENTRYPOINT":
			// CMD and ENTRYPOINT run when a container of the image starts (on the GPU
			// machine, with --gpus): what they run is judged as RUN's is.
			if !analysable {
				fc.Unjudged(nil, l, "this "+word+" runs in the shell that SHELL names, which the guard does not analyse, so it cannot judge it: check it by hand")
				break
			}
			dockerRun(a, fc, word, lines, argStart, bodyEnd, escape, len(heredocs) > 0)
		}
		l = bodyEnd
	}
}

func endsWithEscape(s string, escape byte) bool {
	s = strings.TrimRight(s, " \t\r")
	return len(s) > 0 && s[len(s)-1] == escape
}

func joinLines(t string, lt source.Lines, lines []int) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(t[lt.LineStart(l):lt.LineEnd(l)])
		b.WriteByte('\n')
	}
	return b.String()
}

// dockerRun analyses one RUN, CMD or ENTRYPOINT (word): its text from argStart over the
// instruction's lines and, with here-documents, up to the end of line bodyEnd.
func dockerRun(a *shell.Analyzer, fc *shell.File, word string, lines []int, argStart, bodyEnd int, escape byte, heredoc bool) {
	t := fc.Text
	lt := fc.Lines
	file := source.FileText(t)
	var b source.Builder
	for k, l := range lines {
		st, en := lt.LineStart(l), lt.LineEnd(l)
		if k == 0 {
			st = argStart
		}
		if k > 0 {
			prev := lt.LineEnd(lines[k-1])
			b.Synth(prev, prev, "\n")
		}
		if escape != '\\' && endsWithEscape(t[st:en], escape) {
			e := strings.LastIndexByte(t[st:en], escape) + st
			b.From(file, st, e)
			b.Synth(e, e+1, "\\")
			b.From(file, e+1, en)
			continue
		}
		b.From(file, st, en)
	}
	if heredoc {
		last := lines[len(lines)-1]
		if bodyEnd > last {
			b.From(file, lt.LineEnd(last), lt.LineEnd(bodyEnd))
		}
	}
	s := b.Text()
	// Flags: --mount=..., --network=..., --security=...
	i := 0
	for {
		for i < len(s.Text) && (s.Text[i] == ' ' || s.Text[i] == '\t') {
			i++
		}
		if !strings.HasPrefix(s.Text[i:], "--") {
			break
		}
		for i < len(s.Text) && s.Text[i] != ' ' && s.Text[i] != '\t' && s.Text[i] != '\n' {
			i++
		}
	}
	s = s.Sub(i, len(s.Text))
	fr := &shell.Frame{Src: s, Lang: shell.LangOf("sh"), What: "the " + word + " command"}
	if strings.HasPrefix(s.Text, "[") {
		// Docker drops each escape and line break before reading the JSON array.
		if argv, ok := jsonArgv(withoutContinuations(s)); ok {
			cc := &shell.CmdCtx{Frame: fr, Start: 0, End: len(strings.TrimRight(s.Text, " \t\n"))}
			fr.Outer = &shell.Span{Start: s.FileOff(0), End: s.FileEnd(cc.End)}
			a.Resolve(argv, cc)
			return
		}
	}
	// RUN <<EOF alone: the body is the script (a shebang may name its interpreter).
	if m := dockerHeredocRE.FindStringSubmatchIndex(s.Text); m != nil && m[0] == 0 {
		nl := strings.IndexByte(s.Text[m[1]:], '\n')
		if nl < 0 || strings.TrimSpace(s.Text[m[1]:m[1]+nl]) != "" {
			a.RunShell(fr) // `RUN <<EOF cmd` or no body: the shell reads it
			return
		}
		nl += m[1]
		body := s.Text[nl+1:]
		term := s.Text[m[6]:m[7]]
		end := len(body)
		for o := 0; o < len(body); {
			e := strings.IndexByte(body[o:], '\n')
			if e < 0 {
				e = len(body) - o
			}
			if strings.TrimLeft(strings.TrimRight(body[o:o+e], " "), "\t") == term {
				end = o
				break
			}
			o += e + 1
		}
		script := s.Sub(nl+1, nl+1+end)
		if k := source.ShebangKind([]byte(script.Text)); k == source.KindPython {
			a.RunPython(&shell.Frame{Src: script})
			return
		}
		sh := source.ShebangShell([]byte(script.Text))
		a.RunShell(&shell.Frame{Src: script, Lang: shell.LangOf(sh), What: "the " + word + " here-document"})
		return
	}
	a.RunShell(fr)
}

// withoutContinuations is s without its line continuations (a backslash, maybe blanks, and
// the line break the builder put after it), keeping the mapping of the rest.
func withoutContinuations(s *source.Text) *source.Text {
	var b source.Builder
	t := s.Text
	from := 0
	for i := 0; i < len(t); i++ {
		if t[i] != '\\' {
			continue
		}
		j := i + 1
		for j < len(t) && (t[j] == ' ' || t[j] == '\t' || t[j] == '\r') {
			j++
		}
		if j < len(t) && t[j] == '\n' {
			b.From(s, from, i)
			from = j + 1
			i = j
		}
	}
	b.From(s, from, len(t))
	return b.Text()
}

// jsonArgv reads the exec form, a JSON array of strings, keeping each string's map.
func jsonArgv(s *source.Text) ([]shell.Field, bool) {
	t := s.Text
	i := 1
	var argv []shell.Field
	skip := func() {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
			i++
		}
	}
	skip()
	if i < len(t) && t[i] == ']' {
		return nil, false
	}
	for {
		skip()
		if i >= len(t) || t[i] != '"' {
			return nil, false
		}
		i++
		var b source.Builder
		for {
			if i >= len(t) || t[i] == '\n' {
				return nil, false
			}
			c := t[i]
			if c == '"' {
				i++
				break
			}
			if c == '\\' && i+1 < len(t) {
				out, n := "", 2
				switch e := t[i+1]; e {
				case '"', '\\', '/':
					out = string(e)
				case 'n':
					out = "\n"
				case 't':
					out = "\t"
				case 'r':
					out = "\r"
				case 'b':
					out = "\b"
				case 'f':
					out = "\f"
				case 'u':
					if i+6 > len(t) {
						return nil, false
					}
					r, err := strconv.ParseUint(t[i+2:i+6], 16, 32)
					if err != nil || !utf8.ValidRune(rune(r)) {
						return nil, false
					}
					out, n = string(rune(r)), 6
				default:
					return nil, false
				}
				b.SynthAt(s, i, i+n, out)
				i += n
				continue
			}
			b.From(s, i, i+1)
			i++
		}
		argv = append(argv, shell.Field{Src: b.Text(), Quoted: true})
		skip()
		if i < len(t) && t[i] == ',' {
			i++
			continue
		}
		if i < len(t) && t[i] == ']' {
			i++
			skip()
			return argv, i == len(t)
		}
		return nil, false
	}
}
