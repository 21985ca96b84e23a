package shell

import (
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// ref records a file the command runs by its name.
func (a *Analyzer) ref(p string, kind source.Kind, cc *CmdCtx) {
	if p == "" || !rules.Known(p) || strings.HasPrefix(p, "-") || strings.ContainsAny(p, "\n*?[") {
		return
	}
	line := a.File.Line(cc.Frame.Src.FileOff(cc.Start))
	if cc.Frame.site != nil {
		line = a.File.Line(cc.Frame.site.at.Start)
	}
	r := ScriptRef{Path: p, Kind: kind, Line: line}
	if a.File.refSeen == nil {
		a.File.refSeen = map[ScriptRef]bool{}
	}
	if !a.File.refSeen[r] {
		a.File.refSeen[r] = true
		a.File.Refs = append(a.File.Refs, r)
	}
}
