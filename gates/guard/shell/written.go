package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// Script text a command writes to a file runs later, when something runs the file: the
// script itself by its path (nohup /usr/local/bin/x.sh, bash x.sh, a unit's ExecStart), or
// the system, for files in the places it runs by itself (cron's directories and crontabs,
// systemd's unit directories, init scripts). Text written anywhere else, and never run,
// is only data (a generated script uploaded as an artifact, a unit staged for review).

// writtenKind is how the system reads a file at a path.
type writtenKind int

const (
	writtenData        writtenKind = iota // nothing runs it by itself
	writtenScript                         // run as a script (cron.hourly, init.d)
	writtenCrontab                        // a crontab whose lines name the user (/etc/cron.d)
	writtenUserCrontab                    // a user's crontab (/var/spool/cron)
	writtenUnit                           // a systemd unit: its Exec*= lines run
)

// systemPlaces are the directories (and files) whose contents the system runs by itself.
var systemPlaces = []struct {
	prefix string
	kind   writtenKind
}{
	{"/etc/cron.hourly/", writtenScript}, {"/etc/cron.daily/", writtenScript}, {"/etc/cron.weekly/", writtenScript},
	{"/etc/cron.monthly/", writtenScript}, {"/etc/init.d/", writtenScript}, {"/etc/rc.local", writtenScript},
	{"/etc/cron.d/", writtenCrontab}, {"/etc/crontab", writtenCrontab},
	{"/var/spool/cron/", writtenUserCrontab},
	{"/etc/systemd/system/", writtenUnit}, {"/lib/systemd/system/", writtenUnit}, {"/usr/lib/systemd/system/", writtenUnit},
	{"/run/systemd/system/", writtenUnit}, {"/etc/systemd/user/", writtenUnit},
}

func placeKind(p string) writtenKind {
	for _, pl := range systemPlaces {
		if strings.HasPrefix(p, pl.prefix) {
			return pl.kind
		}
	}
	if strings.Contains(p, "/.config/systemd/user/") {
		return writtenUnit
	}
	return writtenData
}

// scriptWrite handles a command that writes text to files: echo or printf with a
// redirection, cat with a here-document and a redirection, tee with its input. The text
// is remembered under each file's path, and judged at once where the system runs it.
func (a *Analyzer) scriptWrite(s *syntax.Stmt, c *syntax.CallExpr, fr *Frame, stdin *input, start, end int) {
	if len(c.Args) == 0 {
		return
	}
	switch rules.ProgName(c.Args[0].Lit()) {
	case "echo", "printf", "cat", "tee", "sudo", "doas":
	default:
		return // only these write text the guard can read (and only a literal one is looked at)
	}
	alts := a.evalArgs(c.Args, fr)
	if len(alts) == 0 {
		return
	}
	argv := alts[0]
	for len(argv) > 0 {
		sp, ok := rules.Wrapper(rules.ProgName(argv[0].val()))
		if !ok || rules.ProgName(argv[0].val()) != "sudo" && rules.ProgName(argv[0].val()) != "doas" {
			break
		}
		i, stopped, _ := sp.CommandStart(vals(argv[1:]))
		if stopped {
			return
		}
		argv = argv[1+i:]
	}
	if len(argv) == 0 {
		return
	}
	var text *source.Text
	var targets []string
	switch rules.ProgName(argv[0].val()) {
	case "echo":
		text = echoText(argv[1:])
	case "printf":
		if len(argv) < 2 || strings.HasPrefix(argv[1].val(), "-") {
			return
		}
		text = printfText(argv[1], argv[2:])
	case "cat":
		if len(argv) > 1 || stdin == nil {
			return // cat of files copies them: their text is not here
		}
		text = stdin.s
	case "tee":
		if stdin == nil {
			return
		}
		text = stdin.s
		_, targets = rules.SplitArgs(vals(argv[1:]), []string{"--output-error"})
	default:
		return
	}
	for _, r := range s.Redirs {
		if r == nil {
			continue
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob:
			if ws := a.evalWord(r.Word, fr); len(ws) > 0 && len(ws[0]) == 1 {
				targets = append(targets, ws[0][0].val())
			}
		}
	}
	for _, p := range targets {
		if p == "" || p == "/dev/null" || strings.HasPrefix(p, "-") {
			continue
		}
		p = path.Clean(p)
		if rules.Known(p) {
			if a.written == nil {
				a.written = map[string]*source.Text{}
			}
			a.written[p] = text
		}
		if k := placeKind(p); k != writtenData {
			cc := &CmdCtx{Frame: fr, Start: start, End: end}
			a.runWritten(text, k, cc, "written to "+p)
		}
	}
}

// runWritten judges text the system runs: a script, a crontab's commands, a unit's Exec*=
// lines.
func (a *Analyzer) runWritten(text *source.Text, k writtenKind, cc *CmdCtx, via string) {
	if !a.Spend() {
		return
	}
	switch k {
	case writtenScript:
		if source.ShebangKind([]byte(text.Text)) == source.KindPython {
			fr := cc.Frame.Child()
			fr.Src, fr.Depth, fr.Via = text, fr.Depth+1, append(fr.Via, via)
			if fr.Outer == nil {
				fr.Outer = &Span{cc.Frame.Src.FileOff(cc.Start), cc.Frame.Src.FileEnd(cc.End)}
			}
			a.RunPython(fr)
			return
		}
		a.quietShell(text, cc, via)
	case writtenCrontab, writtenUserCrontab:
		for _, ln := range textLines(text) {
			if cmd, ok := crontabCommand(ln, k == writtenCrontab); ok {
				a.quietShell(cmd, cc, via)
			}
		}
	case writtenUnit:
		for _, ln := range textLines(text) {
			if cmd, ok := unitExec(ln); ok {
				a.quietShell(cmd, cc, via)
			}
		}
	}
}

// quietShell runs text as a nested script without parse warnings: written text need not
// be a script the guard can parse, and what it can parse is still judged.
func (a *Analyzer) quietShell(text *source.Text, cc *CmdCtx, via string) {
	c := *cc
	c.Frame = cc.Frame.Child()
	c.Frame.Quiet = true
	a.NestedShell(text, &c, via, syntax.LangBash, nil, false)
}

// textLines splits a text into its lines, each mapped.
func textLines(t *source.Text) []*source.Text {
	var out []*source.Text
	for o := 0; o < len(t.Text); {
		e := strings.IndexByte(t.Text[o:], '\n')
		if e < 0 {
			e = len(t.Text) - o
		}
		out = append(out, t.Sub(o, o+e))
		o += e + 1
	}
	return out
}

// crontabCommand is the command of a crontab line: after five time fields (or an @word)
// and, in a system crontab, the user.
func crontabCommand(ln *source.Text, withUser bool) (*source.Text, bool) {
	t := ln.Text
	trimmed := strings.TrimSpace(t)
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return nil, false
	}
	if name, _, ok := strings.Cut(trimmed, "="); ok && rules.IsAssignment(name+"=") && !strings.ContainsAny(name, " \t") {
		return nil, false // SHELL=/bin/bash, MAILTO=...
	}
	fields := 5
	if strings.HasPrefix(trimmed, "@") {
		fields = 1
	}
	if withUser {
		fields++
	}
	i := 0
	for f := 0; f < fields; f++ {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		for i < len(t) && t[i] != ' ' && t[i] != '\t' {
			i++
		}
	}
	if i >= len(t) {
		return nil, false
	}
	return ln.Sub(i, len(t)), true
}

// unitExec is the command line of a unit's Exec*= line (ExecStart=, ExecStop=, ...),
// without systemd's prefixes (-, @, +, !, :).
func unitExec(ln *source.Text) (*source.Text, bool) {
	t := ln.Text
	i := 0
	for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
		i++
	}
	key, _, ok := strings.Cut(t[i:], "=")
	if !ok || !strings.HasPrefix(key, "Exec") || strings.ContainsAny(key, " \t") {
		return nil, false
	}
	i += len(key) + 1
	for i < len(t) && strings.IndexByte("-@+!: \t", t[i]) >= 0 {
		i++
	}
	if i >= len(t) {
		return nil, false
	}
	return ln.Sub(i, len(t)), true
}

// runWrittenFile runs the text the script wrote to p, when a command runs p by its path.
func (a *Analyzer) runWrittenFile(p string, cc *CmdCtx) {
	p = path.Clean(p)
	text, ok := a.written[p]
	if !ok || a.runningWritten[p] {
		return
	}
	if a.runningWritten == nil {
		a.runningWritten = map[string]bool{}
	}
	a.runningWritten[p] = true
	a.runWritten(text, writtenScript, cc, "runs "+p+", written above")
	delete(a.runningWritten, p)
}

// crontabCmd handles `crontab [-u user] FILE` and `crontab -` (the table on standard
// input): the table installed is judged as a user's crontab.
func (a *Analyzer) crontabCmd(args []Field, cc *CmdCtx) {
	i, stopped, _ := rules.Options{Short: "u", Stop: "lreiT"}.CommandStart(vals(args))
	if stopped || i >= len(args) {
		return
	}
	if p := args[i].val(); p == "-" {
		if cc.stdin != nil {
			a.runWritten(cc.stdin.s, writtenUserCrontab, cc, stdinVia("crontab", cc.stdin))
		}
	} else if text, ok := a.written[path.Clean(p)]; ok {
		a.runWritten(text, writtenUserCrontab, cc, "crontab "+p+", written above")
	}
}
