package workflow

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/guard/rules"
	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// A workflow step can stop the runner with no shell at all, through an action. The guard
// reads a `uses:` step three ways:
//
//   - inputs that hold a script (script, run, command, inlineScript, ...) are read as
//     shell: an ssh action's script runs on the remote machine, a retry action's command
//     runs on the runner. Only actions known to take another language (github-script)
//     are skipped, and pwsh ones cannot be judged;
//   - an action that wraps a CLI (an aws-cli action's `args:`, pulumi's `command:`) runs
//     that CLI with the input as its arguments;
//   - the step itself, as the pseudo-command `uses OWNER/REPO[/PATH] KEY=VALUE...`: the
//     built-in vm-action-stop pattern matches an action about machines (its name says
//     runner, ec2, vm, instance, server, pod, ...) told to stop, terminate or delete one
//     (mode: stop, action: delete, stop-instance: true, or a stop sub-action such as
//     .../stop@v1); config rules with `command: [uses]` match the pseudo-command too.

var (
	// vmTokens are words of an action's name that say it manages machines.
	vmTokens = []string{"runner", "runners", "ec2", "gce", "gcp", "vm", "vms", "instance", "instances", "server", "servers",
		"hcloud", "hetzner", "droplet", "droplets", "compute", "pod", "pods", "runpod", "vast", "vastai", "lambda", "lambdalabs",
		"azure", "aws", "machine", "machines", "node", "nodes", "cloud", "gpu", "cirun", "lightsail", "linode", "scaleway",
		"openstack", "paperspace", "oci", "tpu", "tpus"}
	// stopVerbs are words that, for such an action, mean taking a machine down.
	stopVerbs = []string{"stop", "terminate", "delete", "destroy", "remove", "deallocate", "shutdown", "poweroff",
		"power-off", "halt", "teardown", "tear-down", "down", "kill", "suspend", "hibernate", "deprovision", "release", "off"}
	// modeKeys are the inputs that usually select what an action does.
	modeKeys = []string{"mode", "action", "command", "operation", "state", "cmd", "task", "verb", "power", "power_state",
		"power-state", "desired_state", "desired-state", "instance_state", "instance-state", "instance-action", "instance_action"}
	// scriptKeys are the inputs that usually hold a script.
	scriptKeys = []string{"script", "scripts", "run", "command", "commands", "cmd", "inlinescript", "inline_script",
		"inline-script", "shell-script", "shell_script"}
	// iacTokens mark infrastructure-as-code actions: their destroy is terraform-destroy.
	iacTokens = []string{"terraform", "tofu", "opentofu", "terragrunt", "pulumi"}
	// actionCLIs are the CLIs an action may wrap, by a word of its name.
	actionCLIs = []string{"aws", "gcloud", "doctl", "hcloud", "kubectl", "pulumi", "terraform", "tofu", "oci", "runpodctl", "vastai"}
)

// actionTokens splits an action reference (owner/repo/path, lower case) into words.
func actionTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '-' || r == '_' || r == '.' })
}

func anyIn(words, set []string) bool {
	for _, w := range words {
		if slices.Contains(set, w) {
			return true
		}
	}
	return false
}

// actionInput is one `with:` input of a step.
type actionInput struct {
	key  string
	node *yaml.Node
}

// uses reads a step that runs an action.
func (w *wfScan) uses(n *yaml.Node, ref string, c wfCtx) {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "docker://") || !rules.Known(ref) {
		return // local actions are files of the repository, judged where they are
	}
	name, _, _ := strings.Cut(ref, "@")
	lname := strings.ToLower(name)
	tokens := actionTokens(lname)
	var inputs []actionInput
	if with := MapGet(n, "with"); with != nil && with.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(with.Content); i += 2 {
			if v := deref(with.Content[i+1]); v != nil && v.Kind == yaml.ScalarNode {
				inputs = append(inputs, actionInput{strings.ToLower(with.Content[i].Value), v})
			}
		}
	}
	usesNode := MapGet(n, "uses")
	w.actionScripts(name, tokens, inputs, c)
	w.actionStop(name, tokens, inputs, usesNode, c)
}

// actionScripts reads the inputs that hold scripts or CLI arguments.
func (w *wfScan) actionScripts(name string, tokens []string, inputs []actionInput, c wfCtx) {
	lname := strings.ToLower(name)
	if strings.Contains(lname, "github-script") {
		return // JavaScript
	}
	pwsh := anyIn(tokens, []string{"powershell", "pwsh"})
	remote := anyIn(tokens, []string{"ssh", "remote", "scp"})
	retry := anyIn(tokens, []string{"retry", "wretry"})
	cli := ""
	for _, t := range tokens {
		if slices.Contains(actionCLIs, t) {
			cli = t
			break
		}
	}
	if slices.Contains(tokens, "azure") && slices.Contains(tokens, "cli") {
		cli = "az"
	}
	for _, in := range inputs {
		isScript := slices.Contains(scriptKeys, in.key)
		isArgs := cli != "" && (in.key == "args" || in.key == "arguments" || in.key == "command" || in.key == "cmd")
		if !isScript && !isArgs {
			continue
		}
		if pwsh {
			w.fc.Unjudged(nil, in.node.Line, "this step's "+in.key+" input runs in PowerShell ("+name+"), which the guard does not analyse, so it cannot judge it: check it by hand")
			continue
		}
		via := "uses " + name + " " + in.key + ":"
		quiet := !remote && !retry && cli == ""
		for _, s := range expandExpressions(w.scalarSrc(in.node), c.exprCtx()) {
			if isArgs && (in.key == "args" || in.key == "arguments" || !strings.HasPrefix(strings.TrimSpace(s.Text), cli+" ")) {
				// The CLI runs with the input as its arguments: read "CLI <input>".
				var b source.Builder
				at := s.FileOff(0)
				b.Synth(at, at, cli+" ")
				b.From(s, 0, len(s.Text))
				s = b.Text()
			}
			w.scriptVia(in.node, s, c, "the "+in.key+": input of "+name, quiet, via)
		}
	}
}

// scriptVia is scriptIn with a first step in Via.
func (w *wfScan) scriptVia(node *yaml.Node, s *source.Text, c wfCtx, what string, quiet bool, via string) {
	a := shell.NewAnalyzer(w.fc)
	for _, e := range c.env {
		a.Env.Vars[e.name] = append(a.Env.Vars[e.name], shell.VarDef{Lit: e.value})
	}
	a.RunShell(&shell.Frame{Src: s, Lang: shell.LangOf("bash"), What: what, Quiet: quiet, Via: []string{via}})
}

// actionStop judges the step as the pseudo-command `uses NAME KEY=VALUE...`.
func (w *wfScan) actionStop(name string, tokens []string, inputs []actionInput, usesNode *yaml.Node, c wfCtx) {
	rs := w.fc.Rules
	rules := rs.CommandRules("uses")
	if len(rules) == 0 || usesNode == nil {
		return
	}
	// Each input's possible values (expressions evaluated).
	type kv struct {
		in   actionInput
		vals []string
	}
	var kvs []kv
	for _, in := range inputs {
		var vals []string
		for _, s := range expandExpressions(w.scalarSrc(in.node), c.exprCtx()) {
			vals = append(vals, s.Text)
		}
		kvs = append(kvs, kv{in, vals})
	}
	nameOnly := tokens
	if len(nameOnly) > 1 {
		nameOnly = nameOnly[1:] // the owner's name says nothing of what the action does
	}
	for _, r := range rules {
		if !r.IsVMAction() {
			for _, kvAlt := range kvs {
				for _, v := range kvAlt.vals {
					argv := []string{"uses", name, kvAlt.in.key + "=" + v}
					if r.MatchCommand(argv) {
						w.reportNode(r, kvAlt.in.node, usesNode, []string{"uses " + name})
					}
				}
			}
			if r.MatchCommand([]string{"uses", name}) {
				w.reportNode(r, usesNode, usesNode, []string{"uses " + name})
			}
			continue
		}
		// The built-in: an action about machines told to take one down.
		vm := anyIn(tokens, vmTokens)
		iac := anyIn(tokens, iacTokens)
		if !vm && !iac {
			continue
		}
		target := r
		if iac {
			target = rs.ByID["terraform-destroy"]
			if target == nil {
				continue
			}
		}
		isStop := func(v string) bool {
			v = strings.ToLower(strings.Trim(strings.TrimSpace(v), "'\""))
			return slices.Contains(stopVerbs, v) || iac && v == "destroy"
		}
		for _, t := range nameOnly {
			if isStop(t) && t != "off" && t != "down" {
				w.reportNode(target, usesNode, usesNode, []string{"uses " + name})
				return
			}
		}
		for _, kvAlt := range kvs {
			key := kvAlt.in.key
			keyTokens := actionTokens(key)
			if slices.Contains(modeKeys, key) {
				for _, v := range kvAlt.vals {
					if isStop(v) {
						w.reportNode(target, kvAlt.in.node, usesNode, []string{"uses " + name, key + ": " + strings.TrimSpace(v)})
						return
					}
				}
				continue
			}
			// stop-instance: true, terminate: true, delete-vm: yes
			verb, other := false, false
			for _, t := range keyTokens {
				switch {
				case slices.Contains(stopVerbs, t) && t != "off" && t != "down":
					verb = true
				case slices.Contains(vmTokens, t):
				default:
					other = true
				}
			}
			if !verb || other {
				continue
			}
			for _, v := range kvAlt.vals {
				switch strings.ToLower(strings.TrimSpace(v)) {
				case "true", "yes", "1", "on":
					w.reportNode(target, kvAlt.in.node, usesNode, []string{"uses " + name, key + ": " + strings.TrimSpace(v)})
					return
				}
			}
		}
	}
}

// reportNode records a hit of rule r at a YAML node, with the command text from outer
// through at.
func (w *wfScan) reportNode(r *rules.Rule, at, outer *yaml.Node, via []string) {
	s := w.scalarSrc(at)
	span0 := shell.Span{Start: s.FileOff(0), End: s.FileEnd(len(s.Text))}
	o := w.scalarSrc(outer)
	out := shell.Span{Start: o.FileOff(0), End: max(o.FileEnd(len(o.Text)), span0.End)}
	if span0.Start < out.Start {
		out.Start = span0.Start
	}
	h := shell.Hit{Rule: r, At: span0, Inner: span0, Outer: out, Via: via}
	w.fc.Add(h)
}
