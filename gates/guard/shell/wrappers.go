package shell

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// CmdCtx is one command being resolved: where it is and what it has passed through.
type CmdCtx struct {
	Frame      *Frame
	Start, End int // the command's span in fr.src
	stdin      *input
	Via        []string // wrappers passed at this level (sudo, env, ...)
	canFunc    bool     // the program may still be an alias or a function
	aliasSeen  map[string]bool
	skipRules  map[string]bool // rules an alias reports where it is defined
	scriptRef  bool            // the program is a script a shell reads (already recorded)
}

// Resolve unwraps a command (aliases, functions, sudo, env, bash -c, ssh, ...) and
// matches what finally runs against the rules.
func (a *Analyzer) Resolve(argv []Field, cc *CmdCtx) {
	for steps := 0; steps < 64; steps++ {
		if len(argv) == 0 || !a.Spend() {
			return
		}
		prog := argv[0].val()
		if prog == "" || !rules.Known(prog) {
			a.unknownProgram(argv, cc)
			return // an unknown program is never a finding, unless its arguments say which it is
		}
		if argv[0].from != "" {
			cc.Via = append(cc.Via, argv[0].from)
			argv[0].from = ""
		}
		if cc.canFunc {
			if al := a.Env.aliases[prog]; al != nil && !argv[0].Quoted && !cc.aliasSeen[prog] {
				words, ok := a.aliasWords(al)
				if !ok {
					return // not a simple command: analysed where it is defined
				}
				if cc.aliasSeen == nil {
					cc.aliasSeen = map[string]bool{}
				}
				cc.aliasSeen[prog] = true
				skip := map[string]bool{}
				for id := range cc.skipRules {
					skip[id] = true
				}
				for id := range a.aliasDefHits(al) {
					skip[id] = true
				}
				cc.skipRules = skip
				cc.Via = append(cc.Via, "alias "+prog)
				argv = append(slices.Clone(words), argv[1:]...)
				continue
			}
			if fn := a.Env.funcs[prog]; fn != nil && !slices.Contains(cc.Frame.fnStack, prog) {
				a.callFunc(fn, argv, cc)
				return
			}
		}
		next, done := a.wrapper(rules.ProgName(prog), argv, cc)
		if done {
			return
		}
		if next == nil {
			a.match(argv, cc)
			return
		}
		argv = next
		cc.canFunc = false
	}
}

// match compares what finally runs with the rules.
func (a *Analyzer) match(argv []Field, cc *CmdCtx) {
	vals := make([]string, len(argv))
	for i, f := range argv {
		vals[i] = f.val()
	}
	prog := rules.ProgName(vals[0])
	if strings.Contains(vals[0], "/") && !cc.scriptRef {
		a.ref(vals[0], source.KindNone, cc) // a file run by its path: its own shebang (or sh) reads it
	}
	local := append(append([]string(nil), cc.Via...), prog)
	matched := false
	for _, r := range a.File.Rules.CommandRules(prog) {
		if cc.skipRules[r.ID] {
			continue
		}
		if r.MatchCommand(vals) {
			a.Report(cc.Frame, r, cc.Start, cc.End, local)
			matched = true
		}
	}
	if u := a.File.Rules.Unresolved; !matched && u != nil && !cc.skipRules[u.ID] && !a.definitionOnly(cc.Frame) {
		for _, r := range a.File.Rules.Families[prog] {
			if r.MatchPossibly(vals) {
				a.Report(cc.Frame, u, cc.Start, cc.End, local)
				break
			}
		}
	}
	switch prog {
	case "tee":
		_, pos := rules.SplitArgs(vals[1:], []string{"--output-error"})
		for _, p := range pos {
			a.WriteTo(p, cc.Frame, cc.Start, cc.End, cc.Via, "tee "+p)
		}
	case "dd":
		for _, v := range vals[1:] {
			if p, ok := strings.CutPrefix(v, "of="); ok {
				a.WriteTo(p, cc.Frame, cc.Start, cc.End, cc.Via, "dd of="+p)
			}
		}
	}
}

// Report records a hit of rule r on the command at fr.src[start:end].
func (a *Analyzer) Report(fr *Frame, r *rules.Rule, start, end int, local []string) {
	fs, fe := fr.Src.FileOff(start), fr.Src.FileEnd(end)
	key := hitKey{fs, r.ID}
	if fr.site != nil && fr.site.skip[key] {
		return // the function does this on its own: reported at its definition
	}
	if a.collect != nil {
		*a.collect = append(*a.collect, key)
		return
	}
	h := Hit{Rule: r, Inner: Span{fs, max(fe, fs)}}
	h.Via = append(append([]string(nil), fr.Via...), local...)
	switch {
	case fr.site != nil:
		h.At, h.Outer = fr.site.at, fr.site.outer
	case fr.Outer != nil:
		h.At, h.Outer = h.Inner, *fr.Outer
	default:
		h.At, h.Outer = h.Inner, h.Inner
	}
	a.File.Add(h)
}

// vals are the words of fields.
func vals(fs []Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.val()
	}
	return out
}

func IsShell(name string) bool {
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "rbash":
		return true
	}
	return false
}

func IsPython(name string) bool {
	return name == "python" || strings.HasPrefix(name, "python2") || strings.HasPrefix(name, "python3") ||
		strings.HasPrefix(name, "pypy")
}

// wrapper handles a program that runs another command. It returns the wrapped command
// to go on with, or done when it has dealt with the command itself (a nested script) or
// nothing runs; (nil, false) means name is no wrapper.
func (a *Analyzer) wrapper(name string, argv []Field, cc *CmdCtx) (next []Field, done bool) {
	args := argv[1:]
	if sp, ok := rules.Wrapper(name); ok {
		i, stopped, shell := sp.CommandStart(vals(args))
		if stopped {
			return nil, true
		}
		if name == "xargs" {
			cc.stdin = nil // xargs turns its input into arguments
		}
		cc.Via = append(cc.Via, name)
		if i >= len(args) {
			if shell && cc.stdin != nil {
				a.NestedShell(cc.stdin.s, cc, stdinVia("sh", cc.stdin), syntax.LangBash, nil, false)
			}
			return nil, true
		}
		return args[i:], false
	}
	switch {
	case IsShell(name):
		return a.shellCmd(name, args, cc)
	case IsPython(name):
		return nil, a.pythonCmd(name, args, cc)
	}
	switch name {
	case "env":
		return a.envCmd(args, cc)
	case "source", ".":
		if len(args) > 0 {
			a.ref(args[0].val(), source.KindShell, cc)
		}
		return nil, true
	case "eval":
		if slices.ContainsFunc(args, func(f Field) bool { return f.opaque }) {
			a.opaqueScript(cc, "eval")
			return nil, true
		}
		if len(args) > 0 {
			a.NestedShell(joinFields(args), cc, "eval", cc.Frame.Lang, cc.Frame.params, cc.Frame.paramsKnown)
		}
		return nil, true
	case "trap":
		if len(args) > 0 && args[0].val() == "--" {
			args = args[1:]
		}
		if len(args) > 0 && !strings.HasPrefix(args[0].val(), "-") {
			a.NestedShell(args[0].Src, cc, "trap", cc.Frame.Lang, nil, false)
		}
		return nil, true
	case "alias":
		for _, f := range args {
			if n, _, ok := strings.Cut(f.val(), "="); ok && n != "" {
				a.NestedShell(f.Src.Sub(len(n)+1, len(f.val())), cc, "alias "+n, cc.Frame.Lang, nil, false)
			}
		}
		return nil, true
	case "ssh":
		a.sshCmd(args, cc, "ssh")
		return nil, true
	case "gcloud":
		return nil, a.gcloudSSH(args, cc)
	case "su", "runuser":
		return a.suCmd(name, args, cc)
	case "flock":
		return a.flockCmd(args, cc)
	case "watch":
		return a.watchCmd(args, cc)
	case "at", "batch":
		_, stopped, _ := rules.Options{Short: "qt", Stop: "fldrc"}.CommandStart(vals(args))
		if !stopped && cc.stdin != nil {
			a.NestedShell(cc.stdin.s, cc, stdinVia(name, cc.stdin), syntax.LangBash, nil, false)
		}
		for i, f := range args { // at -f FILE runs the file
			if f.val() == "-f" && i+1 < len(args) {
				a.ref(args[i+1].val(), source.KindShell, cc)
			}
		}
		return nil, true
	case "crontab":
		a.crontabCmd(args, cc)
		return nil, true
	case "docker", "podman", "nerdctl":
		return a.containerCmd(name, args, cc)
	case "kubectl", "oc":
		return a.kubectlDebug(args, cc)
	case "screen":
		return a.screenCmd(args, cc)
	case "tmux":
		return a.tmuxCmd(args, cc)
	case "script":
		for i, f := range args {
			if v := f.val(); (v == "-c" || v == "--command") && i+1 < len(args) {
				a.NestedShell(args[i+1].Src, cc, "script -c", syntax.LangBash, nil, false)
			} else if strings.HasPrefix(v, "--command=") {
				a.NestedShell(f.Src.Sub(len("--command="), len(v)), cc, "script -c", syntax.LangBash, nil, false)
			}
		}
		return nil, true
	case "sg":
		if len(args) < 2 {
			return nil, true
		}
		if args[1].val() == "-c" && len(args) > 2 {
			a.NestedShell(args[2].Src, cc, "sg -c", syntax.LangBash, nil, false)
		} else {
			a.NestedShell(joinFields(args[1:]), cc, "sg", syntax.LangBash, nil, false)
		}
		return nil, true
	case "chroot":
		i, _, _ := rules.Options{Long: []string{"--userspec", "--groups"}, Skip: 1}.CommandStart(vals(args))
		cc.Via = append(cc.Via, name)
		if i >= len(args) {
			if cc.stdin != nil {
				a.NestedShell(cc.stdin.s, cc, stdinVia("sh", cc.stdin), syntax.LangBash, nil, false)
			}
			return nil, true
		}
		return args[i:], false
	}
	return nil, false
}

// shellCmd handles bash/sh/zsh: -c STRING, a script file with arguments, or a script on
// standard input (a here-document, a pipe).
func (a *Analyzer) shellCmd(name string, args []Field, cc *CmdCtx) ([]Field, bool) {
	cflag, sflag := false, false
	i := 0
	for i < len(args) {
		w := args[i].val()
		if !rules.Known(w) {
			break
		}
		if w == "--" || w == "-" {
			i++
			break
		}
		if strings.HasPrefix(w, "--") {
			if w == "--rcfile" || w == "--init-file" {
				i++
			}
			i++
			continue
		}
		if len(w) > 1 && (w[0] == '-' || w[0] == '+') {
			takes := 0
			for _, c := range w[1:] {
				switch c {
				case 'c':
					cflag = true
				case 's':
					sflag = true
				case 'o', 'O':
					takes++
				}
			}
			i += 1 + takes
			continue
		}
		break
	}
	rest := args[min(i, len(args)):]
	lang := syntax.LangBash
	if name == "zsh" {
		lang = syntax.LangZsh
	}
	switch {
	case cflag:
		if len(rest) > 0 && rest[0].opaque {
			a.opaqueScript(cc, name+" -c")
			return nil, true
		}
		if len(rest) > 0 {
			var params []Field
			if len(rest) > 2 {
				params = rest[2:]
			}
			a.NestedShell(rest[0].Src, cc, name+" -c", lang, params, true)
		}
		return nil, true
	case len(rest) > 0 && !sflag:
		cc.Via = append(cc.Via, name)
		a.ref(rest[0].val(), source.KindShell, cc)
		cc.scriptRef = true
		return rest, false // a script file: its name is the program
	case cc.stdin != nil:
		a.NestedShell(cc.stdin.s, cc, stdinVia(name, cc.stdin), lang, rest, true)
	}
	return nil, true
}

// NestedShell analyses s, a script that the current command runs.
func (a *Analyzer) NestedShell(s *source.Text, cc *CmdCtx, via string, lang syntax.LangVariant, params []Field, paramsKnown bool) {
	if cc.stdin != nil && cc.stdin.opaque && cc.stdin.s == s {
		a.opaqueScript(cc, via)
		return
	}
	fr := cc.Frame.Child()
	fr.Src, fr.Lang = s, lang
	fr.params, fr.paramsKnown = params, paramsKnown
	fr.Via = append(append(fr.Via, cc.Via...), via)
	fr.Depth++
	fr.What = "the script given to " + via
	fr.stdin = nil
	if cc.stdin != nil && cc.stdin.s != s {
		fr.stdin = cc.stdin // the script's commands read what the command reads
	}
	if fr.Outer == nil {
		fr.Outer = &Span{cc.Frame.Src.FileOff(cc.Start), cc.Frame.Src.FileEnd(cc.End)}
	}
	a.RunShell(fr)
}

func (a *Analyzer) envCmd(args []Field, cc *CmdCtx) ([]Field, bool) {
	var split []Field
	i := 0
loop:
	for i < len(args) {
		w := args[i].val()
		switch {
		case rules.IsAssignment(w):
			i++ // NAME=VALUE, its value maybe unknown ("PATH=$PATH")
		case !rules.Known(w):
			break loop
		case w == "--":
			i++
			break loop
		case w == "-":
			i++
		case w == "-S" || w == "--split-string":
			if i+1 < len(args) {
				split = append(split, splitField(args[i+1])...)
			}
			i += 2
		case strings.HasPrefix(w, "--split-string="):
			f := args[i]
			split = append(split, splitField(Field{Src: f.Src.Sub(len("--split-string="), len(w))})...)
			i++
		case strings.HasPrefix(w, "-S"):
			split = append(split, splitField(Field{Src: args[i].Src.Sub(2, len(w))})...)
			i++
		case w == "-u" || w == "-C" || w == "-P" || w == "--unset" || w == "--chdir":
			i += 2
		case strings.HasPrefix(w, "-"):
			i++
		default:
			break loop
		}
	}
	cc.Via = append(cc.Via, "env")
	rest := append(split, args[min(i, len(args)):]...)
	if len(rest) == 0 {
		return nil, true
	}
	return rest, false
}

// splitField splits a field's value at blanks, keeping the mapping.
func splitField(f Field) []Field {
	var w wordState
	w.appendSplit(f.Src, "")
	w.finish()
	return w.done
}

// sshCmd handles `ssh [options] host [command...]`: the command words, joined with
// spaces, are a script for the remote shell; without them the remote shell reads the
// standard input.
func (a *Analyzer) sshCmd(args []Field, cc *CmdCtx, via string) {
	sp := rules.Options{Short: "BbcDEeFIiJLlmOopQRSWw"}
	i, _, _ := sp.CommandStart(vals(args))
	if i >= len(args) {
		if via != "ssh" && cc.stdin != nil { // gcloud compute ssh -- (no host in the ssh part)
			a.NestedShell(cc.stdin.s, cc, stdinVia(via, cc.stdin), syntax.LangBash, nil, false)
		}
		return
	}
	rest := args[i+1:]
	if via != "ssh" {
		rest = args[i:] // after gcloud's "--" the host is already given
	}
	j, _, _ := sp.CommandStart(vals(rest))
	rest = rest[j:]
	if len(rest) == 0 {
		if cc.stdin != nil {
			a.NestedShell(cc.stdin.s, cc, stdinVia(via, cc.stdin), syntax.LangBash, nil, false)
		}
		return
	}
	a.NestedShell(joinFields(rest), cc, via, syntax.LangBash, nil, false)
}

// gcloudSSH handles `gcloud compute ssh VM --command '...'` (and tpu-vm ssh); other
// gcloud commands are matched against the rules.
func (a *Analyzer) gcloudSSH(args []Field, cc *CmdCtx) bool {
	vals := make([]string, len(args))
	for i, f := range args {
		vals[i] = f.val()
	}
	dd := slices.Index(vals, "--")
	head := vals
	if dd >= 0 {
		head = vals[:dd]
	}
	_, pos := rules.SplitArgs(head, append(slices.Clone(rules.GcloudValueFlags), "--command", "--ssh-flag", "--ssh-key-file", "--container"))
	ci, si := slices.Index(pos, "compute"), slices.Index(pos, "ssh")
	if ci < 0 || si < ci {
		return false
	}
	via := "gcloud compute ssh"
	for i, v := range head {
		switch {
		case v == "--command" && i+1 < len(head):
			a.NestedShell(args[i+1].Src, cc, via+" --command", syntax.LangBash, nil, false)
			return true
		case strings.HasPrefix(v, "--command="):
			a.NestedShell(args[i].Src.Sub(len("--command="), len(v)), cc, via+" --command", syntax.LangBash, nil, false)
			return true
		}
	}
	if dd >= 0 {
		a.sshCmd(args[dd+1:], cc, via+" --")
		return true
	}
	if cc.stdin != nil {
		a.NestedShell(cc.stdin.s, cc, stdinVia(via, cc.stdin), syntax.LangBash, nil, false)
	}
	return true
}

// suCmd handles `su [-] [user] -c '...'` and `runuser -u user -- cmd`.
func (a *Analyzer) suCmd(name string, args []Field, cc *CmdCtx) ([]Field, bool) {
	direct := false
	i := 0
	for i < len(args) {
		w := args[i].val()
		if !rules.Known(w) {
			i++
			continue
		}
		switch {
		case w == "-c" || w == "--command" || w == "--session-command":
			if i+1 < len(args) {
				a.NestedShell(args[i+1].Src, cc, name+" -c", syntax.LangBash, nil, false)
			}
			return nil, true
		case strings.HasPrefix(w, "--command=") || strings.HasPrefix(w, "--session-command="):
			eq := strings.IndexByte(w, '=')
			a.NestedShell(args[i].Src.Sub(eq+1, len(w)), cc, name+" -c", syntax.LangBash, nil, false)
			return nil, true
		case strings.HasPrefix(w, "-c") && len(w) > 2 && !strings.HasPrefix(w, "--"):
			a.NestedShell(args[i].Src.Sub(2, len(w)), cc, name+" -c", syntax.LangBash, nil, false)
			return nil, true
		case w == "--" && direct:
			cc.Via = append(cc.Via, name)
			return args[i+1:], false
		case w == "-u" && name == "runuser":
			direct = true
			i += 2
		case w == "-s" || w == "--shell" || w == "-g" || w == "--group" || w == "-G" || w == "--supp-group" || w == "-w" || w == "--whitelist-environment":
			i += 2
		case strings.HasPrefix(w, "-"):
			i++
		default:
			if direct {
				cc.Via = append(cc.Via, name)
				return args[i:], false
			}
			i++ // the user, or arguments for the shell
		}
	}
	if cc.stdin != nil {
		a.NestedShell(cc.stdin.s, cc, stdinVia(name, cc.stdin), syntax.LangBash, nil, false)
	}
	return nil, true
}

// flockCmd handles `flock [opts] FILE cmd...` and `flock FILE -c '...'`.
func (a *Analyzer) flockCmd(args []Field, cc *CmdCtx) ([]Field, bool) {
	for i, f := range args {
		if v := f.val(); (v == "-c" || v == "--command") && i+1 < len(args) {
			a.NestedShell(args[i+1].Src, cc, "flock -c", syntax.LangBash, nil, false)
			return nil, true
		}
	}
	i, _, _ := rules.Options{Short: "wE", Long: []string{"--timeout", "--wait", "--conflict-exit-code"}, Skip: 1}.CommandStart(vals(args))
	if i >= len(args) {
		return nil, true
	}
	cc.Via = append(cc.Via, "flock")
	return args[i:], false
}

// watchCmd handles `watch [opts] command...`: the words are joined and run by sh -c
// (with -x they are the command itself).
func (a *Analyzer) watchCmd(args []Field, cc *CmdCtx) ([]Field, bool) {
	exec := false
	i := 0
	for i < len(args) {
		w := args[i].val()
		if !rules.Known(w) || !strings.HasPrefix(w, "-") {
			break
		}
		i++
		switch {
		case w == "--":
			goto done
		case w == "-x" || w == "--exec":
			exec = true
		case w == "-n" || w == "--interval" || w == "-q" || w == "--equexit":
			i++
		}
	}
done:
	rest := args[min(i, len(args)):]
	if len(rest) == 0 {
		return nil, true
	}
	if exec {
		cc.Via = append(cc.Via, "watch")
		return rest, false
	}
	a.NestedShell(joinFields(rest), cc, "watch", syntax.LangBash, nil, false)
	return nil, true
}

// aliasWords expands an alias's value when it is one simple command.
func (a *Analyzer) aliasWords(al *aliasDef) ([]Field, bool) {
	f, err := a.parse(al.value, al.fr.Lang)
	if err != nil || f == nil || len(f.Stmts) != 1 || f.Stmts[0] == nil || len(f.Stmts[0].Redirs) > 0 {
		return nil, false
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil, false
	}
	fr := al.fr.Child()
	fr.Src, fr.params, fr.paramsKnown = al.value, nil, false
	alts := a.evalArgs(c.Args, fr)
	if len(alts) == 0 {
		return nil, false
	}
	return alts[0], true
}

// aliasDefHits are the rules an alias's value matches on its own (reported where the
// alias is defined, so not again where it is used).
func (a *Analyzer) aliasDefHits(al *aliasDef) map[string]bool {
	if h, ok := a.Env.aliasHits[al.name]; ok {
		return h
	}
	a.Env.aliasHits[al.name] = map[string]bool{}
	var got []hitKey
	saved := a.collect
	a.collect = &got
	fr := al.fr.Child()
	fr.Src, fr.params, fr.paramsKnown, fr.site, fr.Outer, fr.stdin = al.value, nil, false, nil, nil, nil
	fr.Depth++
	a.RunShell(fr)
	a.collect = saved
	set := map[string]bool{}
	for _, k := range got {
		set[k.rule] = true
	}
	a.Env.aliasHits[al.name] = set
	return set
}

// callFunc analyses a function's body with the call's arguments, reporting at the call
// what the arguments make dangerous.
func (a *Analyzer) callFunc(fn *funcDef, argv []Field, cc *CmdCtx) {
	a.calls++
	if a.calls > maxFuncCalls {
		if a.calls == maxFuncCalls+1 {
			a.File.Unjudged(a, a.File.Line(cc.Frame.Src.FileOff(cc.Start)), fmt.Sprintf("more than %d function and alias expansions: the file is too complex to analyse fully, so the guard cannot judge it", maxFuncCalls))
		}
		return
	}
	skip := a.funcDefHits(fn)
	fr := fn.fr.Child()
	fr.params, fr.paramsKnown = argv[1:], true
	fr.Via = append(append(append([]string(nil), cc.Frame.Via...), cc.Via...), "function "+fn.name)
	fr.Depth = cc.Frame.Depth + 1
	fr.fnStack = append(append([]string(nil), cc.Frame.fnStack...), fn.name)
	fr.What = "function " + fn.name
	var st site
	if cc.Frame.site != nil {
		st = *cc.Frame.site
		st.skip = map[hitKey]bool{}
		for k := range cc.Frame.site.skip {
			st.skip[k] = true
		}
		for k := range skip {
			st.skip[k] = true
		}
	} else {
		st.at = Span{cc.Frame.Src.FileOff(cc.Start), cc.Frame.Src.FileEnd(cc.End)}
		st.outer = st.at
		if cc.Frame.Outer != nil {
			st.outer = *cc.Frame.Outer
		}
		st.skip = skip
	}
	fr.site = &st
	fr.Outer = &st.outer
	if fr.Depth > MaxDepth {
		a.File.Unjudged(a, a.File.Line(cc.Frame.Src.FileOff(cc.Start)), fmt.Sprintf("functions and scripts nest more than %d deep here: the guard cannot judge this file", MaxDepth))
		return
	}
	a.stmt(fn.body, fr, cc.stdin)
}

// funcDefHits are the hits a function has with unknown arguments: reported where it is
// defined, so not again at its calls.
func (a *Analyzer) funcDefHits(fn *funcDef) map[hitKey]bool {
	if h, ok := a.Env.funcHits[fn.name]; ok {
		return h
	}
	a.Env.funcHits[fn.name] = map[hitKey]bool{}
	var got []hitKey
	saved := a.collect
	a.collect = &got
	fr := fn.fr.Child()
	fr.params, fr.paramsKnown, fr.site, fr.Outer, fr.stdin = nil, false, nil, nil, nil
	fr.fnStack = []string{fn.name}
	a.stmt(fn.body, fr, nil)
	a.collect = saved
	set := map[hitKey]bool{}
	for _, k := range got {
		set[k] = true
	}
	a.Env.funcHits[fn.name] = set
	return set
}

// stdinVia names a program reading a script from its input: "bash <<EOF", "echo | bash".
func stdinVia(name string, in *input) string {
	if w, ok := strings.CutPrefix(in.what, "| "); ok {
		return w + " | " + name
	}
	return name + " " + in.what
}

// isWrapperName reports whether a program runs another command or a script.
func isWrapperName(name string) bool {
	if _, ok := rules.Wrapper(name); ok || IsShell(name) || IsPython(name) {
		return true
	}
	switch name {
	case "env", "eval", "trap", "alias", "ssh", "gcloud", "su", "runuser", "flock", "watch", "at", "batch", "crontab", "chroot", "source", ".",
		"docker", "podman", "nerdctl", "kubectl", "oc", "screen", "tmux", "script", "sg":
		return true
	}
	return false
}

// definitionOnly reports whether the frame is a function body read on its own (at its
// definition) while the file also calls the function: its calls are judged with their
// arguments, so what only unknown arguments make possible is not reported here.
func (a *Analyzer) definitionOnly(fr *Frame) bool {
	return fr.site == nil && !fr.paramsKnown && len(fr.fnStack) > 0 && a.Env.called[fr.fnStack[len(fr.fnStack)-1]]
}

// unknownProgram judges a command whose program the guard cannot resolve ($GCLOUD, a
// variable set outside the file) by its arguments: when they are, word for word, the
// verb path of a lifecycle CLI's destructive command (compute instances delete, ec2
// terminate-instances), they are that command.
func (a *Analyzer) unknownProgram(argv []Field, cc *CmdCtx) {
	prog := argv[0].val()
	if prog == "" || strings.Trim(prog, string(source.UnknownByte)) != "" || len(argv) < 3 {
		return
	}
	vals := make([]string, len(argv)-1)
	for i, f := range argv[1:] {
		vals[i] = f.val()
	}
	name := argv[0].from
	if name == "" {
		name = "an unknown program"
	}
	for _, c := range rules.LifecycleCLIs {
		for _, r := range a.File.Rules.Families[c] {
			if len(r.Args) < 2 || len(r.AnyFlag) > 0 || cc.skipRules[r.ID] {
				continue
			}
			_, pos := rules.SplitArgs(vals, r.ValueFlags)
			if len(pos) < len(r.Args) {
				continue
			}
			ok := true
			for i, p := range r.Args {
				if !rules.Known(pos[i]) || !rules.GlobAny(p, pos[i]) {
					ok = false
					break
				}
			}
			if ok {
				a.Report(cc.Frame, r, cc.Start, cc.End, append(append([]string(nil), cc.Via...), name+" (as "+c+")"))
				return
			}
		}
	}
}

// containerValueFlags are the options of docker/podman run and exec that take a value.
var containerValueFlags = []string{"-a", "--attach", "--add-host", "--annotation", "--blkio-weight", "--cap-add", "--cap-drop",
	"--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-shares", "-c", "--cpus", "--cpuset-cpus",
	"--cpuset-mems", "--device", "--device-cgroup-rule", "--dns", "--dns-option", "--dns-search", "--domainname", "-e", "--env",
	"--env-file", "--entrypoint", "--expose", "--gpus", "--group-add", "--health-cmd", "--health-interval", "--health-retries",
	"--health-start-period", "--health-timeout", "-h", "--hostname", "--ip", "--ip6", "--ipc", "--isolation", "-l", "--label",
	"--label-file", "--link", "--log-driver", "--log-opt", "--mac-address", "-m", "--memory", "--memory-reservation",
	"--memory-swap", "--mount", "--name", "--network", "--net", "--network-alias", "--oom-score-adj", "--pid", "--pids-limit",
	"--platform", "-p", "--publish", "--pull", "--restart", "--runtime", "--security-opt", "--shm-size", "--stop-signal",
	"--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs", "--ulimit", "-u", "--user", "--userns", "--uts", "-v",
	"--volume", "--volumes-from", "-w", "--workdir", "--detach-keys"}

// containerCmd handles `docker run|exec ...` (and podman, nerdctl): a container that can
// reach the host (--privileged, the host's PID namespace, SYS_ADMIN or SYS_BOOT, the host's
// root mounted) runs its command against the host, so the command is judged as one run
// there (nsenter -t 1 ..., chroot /host ...); any other container's command stays inside.
func (a *Analyzer) containerCmd(name string, args []Field, cc *CmdCtx) ([]Field, bool) {
	if len(args) > 0 && args[0].val() == "container" {
		args = args[1:]
	}
	if len(args) == 0 {
		return nil, true
	}
	sub := args[0].val()
	if sub != "run" && sub != "exec" && sub != "create" {
		return nil, true
	}
	args = args[1:]
	privileged := false
	var entrypoint []Field
	i := 0
	for i < len(args) {
		w := args[i].val()
		if !rules.Known(w) || !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
		if w == "--" {
			i++
			break
		}
		flag, value, hasEq := strings.Cut(w, "=")
		if !hasEq && slices.Contains(containerValueFlags, flag) && i+1 < len(args) {
			value = args[i+1].val()
			if flag == "--entrypoint" {
				entrypoint = args[i+1 : i+2]
			}
			i += 2
		} else {
			if hasEq && flag == "--entrypoint" {
				entrypoint = []Field{{Src: args[i].Src.Sub(len("--entrypoint="), len(w)), Quoted: true}}
			}
			i++
		}
		switch {
		case flag == "--privileged" && (!hasEq || value == "true"):
			privileged = true
		case flag == "--pid" && value == "host":
			privileged = true
		case flag == "--cap-add" && strings.Contains(strings.ToUpper(value), "SYS_ADMIN") || flag == "--cap-add" && strings.Contains(strings.ToUpper(value), "SYS_BOOT") ||
			flag == "--cap-add" && strings.EqualFold(value, "ALL"):
			privileged = true
		case (flag == "-v" || flag == "--volume") && strings.HasPrefix(value, "/:"):
			privileged = true
		case flag == "--mount" && strings.Contains(value, "source=/,") || flag == "--mount" && strings.Contains(value, "src=/,"):
			privileged = true
		}
	}
	if !privileged || i >= len(args) {
		return nil, true // the container's own business
	}
	rest := args[i+1:] // after the image (run) or the container (exec)
	if sub == "exec" {
		entrypoint = nil
	}
	rest = append(slices.Clone(entrypoint), rest...)
	if len(rest) == 0 {
		return nil, true
	}
	cc.Via = append(cc.Via, name+" "+sub+" (host access)")
	return rest, false
}

// kubectlDebug handles `kubectl debug node/NAME ... -- CMD`: the command runs in a pod with
// the node's root at /host, so on the node (chroot /host ...).
func (a *Analyzer) kubectlDebug(args []Field, cc *CmdCtx) ([]Field, bool) {
	debug, node := false, false
	for i, f := range args {
		v := f.val()
		switch {
		case v == "debug" || v == "node-shell":
			debug = true
			if v == "node-shell" {
				node = true
			}
		case strings.HasPrefix(v, "node/") || strings.HasPrefix(v, "nodes/"):
			node = true
		case v == "--" && debug && node:
			if i+1 < len(args) {
				cc.Via = append(cc.Via, "kubectl debug node")
				return args[i+1:], false
			}
			return nil, true
		}
	}
	return nil, false // any other kubectl command: the rules judge it
}

// screenCmd handles `screen [-dmS name] CMD...` and `screen -S name -X stuff 'TEXT'` (the
// text is typed into the session's shell).
func (a *Analyzer) screenCmd(args []Field, cc *CmdCtx) ([]Field, bool) {
	i := 0
	for i < len(args) {
		w := args[i].val()
		if !rules.Known(w) || !strings.HasPrefix(w, "-") {
			break
		}
		i++
		if w == "-X" {
			if i < len(args) && args[i].val() == "stuff" && i+1 < len(args) {
				a.NestedShell(typedText(args[i+1].Src), cc, "screen -X stuff", syntax.LangBash, nil, false)
			}
			return nil, true
		}
		if w == "-Logfile" {
			i++
			continue
		}
		// Short options, combined (-dmS name): those that take a value end the word.
		if last := w[len(w)-1]; len(w) > 1 && strings.IndexByte("ScteThp", last) >= 0 {
			i++
		}
	}
	if i >= len(args) {
		return nil, true
	}
	cc.Via = append(cc.Via, "screen")
	return args[i:], false
}

// tmuxCmd handles tmux's commands that run a shell command (new-session, new-window,
// split-window, respawn-pane, run-shell) and send-keys (the keys are typed into a shell).
func (a *Analyzer) tmuxCmd(args []Field, cc *CmdCtx) ([]Field, bool) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].val(), "-") { // tmux's own options
		if v := args[i].val(); v == "-L" || v == "-S" || v == "-f" || v == "-c" || v == "-T" {
			i++
		}
		i++
	}
	if i >= len(args) {
		return nil, true
	}
	sub := args[i].val()
	args = args[i+1:]
	valueFlags := "cdeFfHlnNpsStTxy"
	var rest []Field
	j := 0
	for j < len(args) {
		w := args[j].val()
		if !rules.Known(w) || !strings.HasPrefix(w, "-") || len(w) < 2 {
			break
		}
		j++
		if w == "--" {
			break
		}
		if strings.IndexByte(valueFlags, w[len(w)-1]) >= 0 && !(sub == "send-keys" || sub == "send") {
			j++
		} else if (sub == "send-keys" || sub == "send") && (w == "-t" || w == "-N") {
			j++
		}
	}
	rest = args[min(j, len(args)):]
	if len(rest) == 0 {
		return nil, true
	}
	switch sub {
	case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp",
		"respawn-window", "respawnw", "run-shell", "run":
		a.NestedShell(joinFields(rest), cc, "tmux "+sub, syntax.LangBash, nil, false)
	case "send-keys", "send":
		var b source.Builder
		for k, f := range rest {
			switch f.val() {
			case "Enter", "C-m", "KPEnter", "C-j":
				b.Synth(f.Src.FileOff(0), f.Src.FileEnd(len(f.val())), "\n")
				continue
			}
			if k > 0 {
				b.Synth(f.Src.FileOff(0), f.Src.FileOff(0), " ")
			}
			b.From(typedText(f.Src), 0, len(typedText(f.Src).Text))
		}
		a.NestedShell(b.Text(), cc, "tmux send-keys", syntax.LangBash, nil, false)
	}
	return nil, true
}

// typedText turns the escapes a terminal multiplexer types (\n, \r, ^M) into line breaks.
func typedText(s *source.Text) *source.Text {
	t := s.Text
	if !strings.Contains(t, "\\n") && !strings.Contains(t, "\\r") && !strings.Contains(t, "^M") {
		return s
	}
	var b source.Builder
	for i := 0; i < len(t); i++ {
		if i+1 < len(t) && (t[i] == '\\' && (t[i+1] == 'n' || t[i+1] == 'r') || t[i] == '^' && t[i+1] == 'M') {
			b.SynthAt(s, i, i+2, "\n")
			i++
			continue
		}
		b.From(s, i, i+1)
	}
	return b.Text()
}

// opaqueScript warns about a script decoded at run time that the guard could not decode.
func (a *Analyzer) opaqueScript(cc *CmdCtx, via string) {
	a.File.Warn(a, a.File.Line(cc.Frame.Src.FileOff(cc.Start)), "a script decoded at run time (base64, base32 or hex) is run by "+via+
		", and the guard cannot decode it: check what it runs by hand")
}
