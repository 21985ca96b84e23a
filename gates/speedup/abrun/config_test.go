package abrun

import (
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

// A section that sets nothing resolves to the defaults (config's tests read every key).
func TestDefaults(t *testing.T) {
	s, err := Config{}.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Samples != DefaultSamples || s.Timeout != DefaultTimeout || s.BuildTimeout != DefaultBuildTimeout || s.BaseRef != DefaultBaseRef || s.RoundsBudget != 0 || s.Harness != "" ||
		s.Serve != ServeAuto || s.RestartEvery != DefaultRestartEvery || s.Servers != DefaultServers || s.RoundTimeout != DefaultRoundTimeout || s.WallBudget != DefaultWallBudget || s.RunWallBudget != DefaultRunWallBudget {
		t.Errorf("%+v", s)
	}
}

// The harness commands of the flags and the config run through sh -c, each checked first:
// a pipe or && is a command like any other, a quote left open or an empty one is bad input
// naming its flag.
func TestSidesApply(t *testing.T) {
	for _, tc := range []struct {
		sides      Sides
		base, head []string // want; nil: the worktree form
		harness    string   // the worktree's harness
		bad        string
	}{
		{sides: Sides{BaseCmd: `./harness --x "a b"`, HeadCmd: "python3 kernels/sdpa_reference.py"},
			base: []string{"sh", "-c", `./harness --x "a b"`}, head: []string{"sh", "-c", "python3 kernels/sdpa_reference.py"}},
		{sides: Sides{BaseCmd: "cd base && ./h | tee log", HeadCmd: "cd head && ./h"},
			base: []string{"sh", "-c", "cd base && ./h | tee log"}, head: []string{"sh", "-c", "cd head && ./h"}},
		{sides: Sides{Harness: "make -s harness && ./build/harness"}, harness: "make -s harness && ./build/harness"},
		{sides: Sides{}, harness: "./from/config"},
		{sides: Sides{BaseCmd: `./h "open`, HeadCmd: "./h"}, bad: "--base-cmd: "},
		{sides: Sides{BaseCmd: "./h", HeadCmd: " "}, bad: "--head-cmd: an empty command"},
		{sides: Sides{Harness: "./h &&"}, bad: "--harness: "},
		{sides: Sides{BaseCmd: "./h"}, bad: "go together"},
	} {
		var o Options
		err := tc.sides.Apply(&o, Settings{Harness: "./from/config"})
		switch {
		case tc.bad != "":
			if err == nil || !strings.Contains(err.Error(), tc.bad) || exitcode.Of(err) != exitcode.Usage {
				t.Errorf("%+v: got %v, want bad input saying %q", tc.sides, err, tc.bad)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc.sides, err)
		case tc.base != nil:
			if !slices.Equal(o.Base.Argv, tc.base) || !slices.Equal(o.Head.Argv, tc.head) || o.Worktree != nil {
				t.Errorf("%+v: base %q head %q", tc.sides, o.Base.Argv, o.Head.Argv)
			}
		default:
			if o.Worktree == nil || o.Worktree.Harness != tc.harness {
				t.Errorf("%+v: worktree %+v", tc.sides, o.Worktree)
			}
		}
	}
}
