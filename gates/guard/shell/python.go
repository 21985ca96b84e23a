package shell

import (
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// pythonCmd handles `python -c CODE` and a Python script on standard input.
func (a *Analyzer) pythonCmd(name string, args []Field, cc *CmdCtx) bool {
	for i := 0; i < len(args); i++ {
		w := args[i].val()
		switch {
		case w == "-c" && i+1 < len(args):
			a.nestedPython(args[i+1].Src, cc, name+" -c")
			return true
		case strings.HasPrefix(w, "-c") && len(w) > 2:
			a.nestedPython(args[i].Src.Sub(2, len(w)), cc, name+" -c")
			return true
		case w == "-m" || !rules.Known(w):
			return true
		case w == "-W" || w == "-X" || w == "-Q":
			i++
		case w == "-":
			i = len(args)
		case strings.HasPrefix(w, "-"):
		default:
			a.ref(w, source.KindPython, cc)
			return true // a script file
		}
	}
	if cc.stdin != nil {
		a.nestedPython(cc.stdin.s, cc, stdinVia(name, cc.stdin))
	}
	return true
}

func (a *Analyzer) nestedPython(s *source.Text, cc *CmdCtx, via string) {
	if cc.stdin != nil && cc.stdin.opaque && cc.stdin.s == s {
		a.opaqueScript(cc, via)
		return
	}
	fr := cc.Frame.Child()
	fr.Src = s
	fr.params, fr.paramsKnown = nil, false
	fr.Via = append(append(fr.Via, cc.Via...), via)
	fr.Depth++
	if fr.Outer == nil {
		fr.Outer = &Span{cc.Frame.Src.FileOff(cc.Start), cc.Frame.Src.FileEnd(cc.End)}
	}
	a.RunPython(fr)
}
