package guard

import (
	"github.com/kernel-gate/kernel-gate/gates/guard/finding"
	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// The gate's results and rule table, defined where the front ends can use them without
// importing the gate.
type (
	// Finding is one dangerous command (see package finding).
	Finding = finding.Finding
	// Warning is something the guard could not check (see package finding).
	Warning = finding.Warning
	// Rule is one pattern of the rule table (see package rules).
	Rule = rules.Rule
	// Kind is how the guard reads a file (see Classify).
	Kind = source.Kind
)

// The kinds of file Classify tells apart.
const (
	KindShell      = source.KindShell
	KindWorkflow   = source.KindWorkflow
	KindAction     = source.KindAction
	KindMakefile   = source.KindMakefile
	KindDockerfile = source.KindDockerfile
	KindPython     = source.KindPython
	KindDoc        = source.KindDoc
	KindNone       = source.KindNone
)

// DefaultRules returns the built-in rule table (package rules).
func DefaultRules() []Rule { return rules.DefaultRules() }
