package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// NoBaseRef as Options.BaseRef (--base none, the action's base-ref: none) is NoBase: head
// is built alone, and the ptxas gate's baseline comes from the baseline store, if any.
const NoBaseRef = "none"

// resolveBase finds head (the repository's top level) and checks out the merge base of
// the base ref and HEAD in a git worktree. There is no base with --no-base or --base none
// (also outside a git repository), and when HEAD is the merge base (a push to the default
// branch): then everything is gated and nothing compared. A replay repeats the recording's
// base.
func (p *pipeline) resolveBase(ctx context.Context, replaying bool) error {
	if replaying {
		if p.hasBase() {
			p.progress("base: %s (merge base with %s)", abrun.ShortRev(p.decided.BaseRev), p.decided.BaseRef)
		} else {
			p.progress("no base: %s", p.decided.NoBase)
		}
		return nil
	}
	dir := cmp.Or(p.o.Dir, ".")
	noBase := ""
	switch {
	case p.o.NoBase:
		noBase = "--no-base"
	case p.o.BaseRef == NoBaseRef:
		noBase = "--base " + NoBaseRef
	}
	top, err := abrun.Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		p.headDir = dir
		if noBase != "" {
			p.decided.NoBase = noBase
			return nil
		}
		return exitcode.BadInputf("kernel-gate run builds head from the git working tree and base from its merge base, but this is not a git repository (%v); pass --no-base to build the current directory alone", err)
	}
	p.headDir = top
	if noBase != "" {
		p.decided.NoBase = noBase
		p.progress("no base: %s", noBase)
		return nil
	}
	bench, err := p.cfg.Speedup.ABRun.Settings() // validated when the config was loaded
	if err != nil {
		return exitcode.BadInput(err)
	}
	ref := cmp.Or(p.o.BaseRef, bench.BaseRef)
	p.decided.BaseRef = ref
	// Why: docs/threat-model.md, threat-model T12.
	if p.o.BaseMayBeGone {
		_, missing := abrun.Git(ctx, top, "cat-file", "-e", ref+"^{commit}")
		// A shallow clone lacks it for want of fetching: that stays an error with its hint.
		if shallow, err := abrun.Git(ctx, top, "rev-parse", "--is-shallow-repository"); missing != nil && err == nil && shallow == "false" {
			p.decided.NoBase = fmt.Sprintf("the base %s is not in the repository (a force-push replaced it): head is gated alone", abrun.ShortRev(ref))
			p.progress("no base: %s", p.decided.NoBase)
			return nil
		}
	}
	mb, err := abrun.Git(ctx, top, "merge-base", ref, "HEAD")
	if err != nil {
		return exitcode.BadInputf("finding the base: %v (is %s fetched? actions/checkout needs fetch-depth: 0; or pass --base REV, or --no-base)", err, ref)
	}
	headRev, _ := abrun.Git(ctx, top, "rev-parse", "HEAD")
	dirty, _ := abrun.Git(ctx, top, "status", "--porcelain", "--untracked-files=no")
	if mb == headRev && dirty == "" {
		p.decided.NoBase = fmt.Sprintf("HEAD is the merge base of %s and HEAD (%s): nothing to compare with", ref, abrun.ShortRev(mb))
		p.progress("no base: %s", p.decided.NoBase)
		return nil
	}
	started := time.Now()
	in := p.fixedDir(ctx, top, mb, baseDirPrefix)
	dir, rev, _, cleanup, err := abrun.CheckoutBaseIn(ctx, top, ref, in)
	if err != nil {
		cleanup()
		if in != "" {
			_ = os.RemoveAll(in) // kernel-gate's own, made for this checkout
		}
		return exitcode.CouldNotRunf("checking out the base: %v", err)
	}
	p.x.note("base", time.Since(started), procgroup.ShellJoin([]string{"git", "-C", top, "worktree", "add", "--detach", dir, rev})+" >/dev/null 2>&1")
	p.baseDir, p.decided.BaseRev = dir, rev
	p.cleanupBase = func() {
		started := time.Now()
		cleanup()
		p.x.note("base-cleanup", time.Since(started), procgroup.ShellJoin([]string{"git", "-C", top, "worktree", "remove", "--force", dir}), "rm -rf "+procgroup.ShellQuote(filepath.Dir(dir)))
	}
	p.progress("base: %s (merge base of %s and HEAD) in %s", abrun.ShortRev(rev), ref, dir)
	return nil
}
