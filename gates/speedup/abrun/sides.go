package abrun

import (
	"cmp"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

// Sides say what base and head are, as `kernel-gate bench run` is given them: two harness
// commands (BaseCmd, HeadCmd), or a harness built from two git trees (BaseRef, Build,
// Harness; each empty one the settings' own).
type Sides struct {
	BaseCmd, HeadCmd, BaseRef, Build, Harness string
}

// Apply sets o's Base and Head, or its Worktree, from s. A mix of the two forms, or a
// form without its harness, is exitcode.BadInput naming the flags.
func (s Sides) Apply(o *Options, set Settings, getenv func(string) string) error {
	if s.BaseCmd == "" && s.HeadCmd == "" {
		w := Worktree{Dir: ".", BaseRef: cmp.Or(s.BaseRef, set.BaseRef), Build: cmp.Or(s.Build, set.Build), Harness: cmp.Or(s.Harness, set.Harness)}
		if w.Harness == "" {
			return exitcode.BadInputf("nothing to run: give --base-cmd and --head-cmd, or --harness (with --build to build it), or set bench.harness and bench.build in the config")
		}
		if _, err := SplitCommand(w.Harness, getenv); err != nil {
			return exitcode.BadInputf("--harness: %v", err)
		}
		o.Worktree = &w
		return nil
	}
	if s.BaseCmd == "" || s.HeadCmd == "" {
		return exitcode.BadInputf("--base-cmd and --head-cmd go together")
	}
	if s.BaseRef != "" || s.Build != "" || s.Harness != "" {
		return exitcode.BadInputf("give either --base-cmd and --head-cmd, or --base/--build/--harness, not both")
	}
	base, err := SplitCommand(s.BaseCmd, getenv)
	if err != nil {
		return exitcode.BadInputf("--base-cmd: %v", err)
	}
	head, err := SplitCommand(s.HeadCmd, getenv)
	if err != nil {
		return exitcode.BadInputf("--head-cmd: %v", err)
	}
	o.Base, o.Head = Command{Argv: base}, Command{Argv: head}
	return nil
}
