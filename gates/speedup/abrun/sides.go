package abrun

import (
	"cmp"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
)

// Sides say what base and head are, as `kernel-gate speedup run` is given them: two harness
// commands (BaseCmd, HeadCmd, each run by sh -c in the current directory), or a harness
// built from two git trees (BaseRef, Build, Harness; each empty one the settings' own).
type Sides struct {
	BaseCmd, HeadCmd, BaseRef, Build, Harness string
}

// Apply sets o's Base and Head, or its Worktree, from s. A mix of the two forms, or a
// form without its harness, is exitcode.BadInput naming the flags.
func (s Sides) Apply(o *Options, set Settings) error {
	if s.BaseCmd == "" && s.HeadCmd == "" {
		w := Worktree{Dir: ".", BaseRef: cmp.Or(s.BaseRef, set.BaseRef), Build: cmp.Or(s.Build, set.Build), Harness: cmp.Or(s.Harness, set.Harness)}
		if w.Harness == "" {
			return exitcode.BadInputf("nothing to run: give --base-cmd and --head-cmd, or --harness (with --build to build it), or set speedup.harness and speedup.build in the config")
		}
		if err := shellcmd.Check(w.Harness); err != nil {
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
	for _, c := range []struct{ flag, line string }{{"--base-cmd", s.BaseCmd}, {"--head-cmd", s.HeadCmd}} {
		if err := shellcmd.Check(c.line); err != nil {
			return exitcode.BadInputf("%s: %v", c.flag, err)
		}
	}
	o.Base, o.Head = Command{Argv: shellcmd.Argv(s.BaseCmd)}, Command{Argv: shellcmd.Argv(s.HeadCmd)}
	return nil
}
