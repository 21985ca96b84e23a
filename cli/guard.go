package cli

import (
	"context"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

func runGuard(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var diff, repo string
	fs := newFlagSet("guard", e, &c)
	fs.StringVar(&diff, "diff", "", "judge only what the change `BASE..HEAD` (or BASE...HEAD, from the merge base) adds or modifies")
	fs.StringVar(&repo, "repo", ".", "a directory of the git repository `DIR` for --diff (its top level is used)")
	paths, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Files: paths})
	if err != nil {
		return failed(err)
	}
	var g result.Gate
	switch {
	case diff != "" && len(paths) > 0:
		return failed(usagef("--diff judges the change's files; give no PATHS with it"))
	case diff != "":
		spec, err := gitdiff.ParseSpec(diff)
		if err != nil {
			return failed(exitcode.BadInput(err))
		}
		judge, note, err := config.GuardForChange(ctx, repo, spec, cfg)
		if err != nil {
			return failed(exitcode.BadInput(err))
		}
		g, err = guard.ScanDiff(ctx, repo, spec, judge)
		if err != nil {
			return failed(err)
		}
		guard.AddNotice(&g, cfg.Path, note)
	default:
		if err := ignored(fs, "PATHS (no --diff)", "repo"); err != nil {
			return failed(err)
		}
		if len(paths) == 0 {
			paths = []string{"."}
		}
		if g, err = guard.ScanPaths(paths, cfg.Guard); err != nil {
			return failed(err)
		}
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}
