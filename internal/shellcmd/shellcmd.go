// Package shellcmd is a command of the config or the command line that kernel-gate runs
// through sh -c: a harness (run.targets' harness and sanitize, a target's reference,
// speedup.harness, --harness, --base-cmd, --head-cmd) or a build. A value means what sh
// makes of it, pipes, && and redirections included; the same value as shell words
// ("./build/harness --x 'a b'", "python3 kernels/sdpa_reference.py") means what it meant
// when these commands were split into words without a shell.
//
// Argv is the one way such a command is run; Check refuses one that sh could not run;
// Show writes a command for messages and data; Words reads the words written in it (to
// find the files it names, or whether it runs Python), and is never how it is run.
package shellcmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// MaxBytes is the longest command: sh -c gets it as one argument, and Linux refuses to
// start a program with an argument longer than 128 KiB (MAX_ARG_STRLEN). It also bounds
// how deep the parser of Check and Words can recurse.
const MaxBytes = 128 << 10

// Argv is the argv that runs line: sh -c line, in whatever directory and environment the
// caller gives it, as its own process group's leader (procgroup) so that a timeout kills
// the shell and everything it started.
func Argv(line string) []string { return []string{"sh", "-c", line} }

// Check returns why line cannot be run as a command ("" and blank lines name no program, a
// NUL byte cannot be passed to sh, a quote left open is no command), nil when it can.
func Check(line string) error {
	switch {
	case strings.TrimSpace(line) == "":
		return errors.New("an empty command")
	case strings.ContainsRune(line, 0):
		return errors.New("a command holds no NUL byte")
	case len(line) > MaxBytes:
		return fmt.Errorf("a command of %d bytes: sh -c takes at most %d", len(line), MaxBytes)
	}
	if _, err := parse(line); err != nil {
		// The line is the config's (a pull request's): quoted and cut, so that a refusal
		// shown in a log, an annotation or a summary is one line of bounded length.
		return fmt.Errorf("%s is not a shell command: %v", msgtext.Clip(strconv.Quote(line), 200), err)
	}
	return nil
}

// Show writes a command for messages and data: a command run through sh -c as its line,
// any other argv as the shell words that run it.
func Show(argv []string) string {
	if len(argv) == 3 && argv[0] == "sh" && argv[1] == "-c" {
		return argv[2]
	}
	return procgroup.ShellJoin(argv)
}

// Words are the words written in line with their quotes removed: every simple command's
// assignments (as NAME=VALUE) and arguments, in order, then those of the commands nested in
// them ($(...)); pipes, && lists and export's assignments included. A word that only
// expanding a variable or running a command would give ($HOME/x, $(pwd)) is left out. nil
// when line does not parse (Check says why).
func Words(line string) []string {
	f, err := parse(line)
	if err != nil {
		return nil
	}
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		assign := func(as []*syntax.Assign) {
			for _, a := range as {
				if a.Name != nil && a.Value != nil {
					if v, ok := literal(a.Value); ok {
						out = append(out, a.Name.Value+"="+v)
					}
				}
			}
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			assign(n.Assigns)
			for _, w := range n.Args {
				if v, ok := literal(w); ok {
					out = append(out, v)
				}
			}
		case *syntax.DeclClause:
			assign(n.Args)
		}
		return true
	})
	return out
}

// parse parses line as the shell reads it; lines too long to run are not parsed.
func parse(line string) (*syntax.File, error) {
	if len(line) > MaxBytes {
		return nil, fmt.Errorf("longer than %d bytes", MaxBytes)
	}
	return syntax.NewParser().Parse(strings.NewReader(line), "")
}

// literal is a word's value when it is written out (plain text, quotes, backslashes),
// without a variable, command or arithmetic to expand: what sh makes of it.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false // bash's $'...', which sh does not read
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(lit.Value, "$`\"\\\n"))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes sh removes: before any character outside quotes (only),
// before one of those in double quotes; a backslash before a newline removes both.
func unescape(s, only string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (only == "" || strings.IndexByte(only, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
