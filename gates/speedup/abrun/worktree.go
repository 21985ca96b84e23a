package abrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
)

// gitTimeout bounds each git command.
const gitTimeout = 2 * time.Minute

// Worktree says how to make base and head from the repository: base is the merge base of
// BaseRef and HEAD, checked out in a temporary `git worktree add --detach` directory
// (removed afterwards, whatever happens); head is the working tree as it is. Build runs in
// each tree (sh -c), then Harness runs there.
type Worktree struct {
	// Dir is a directory of the repository; "" is the current one.
	Dir string
	// BaseRef is the branch base comes from (default DefaultBaseRef).
	BaseRef string
	// Build is a shell command; empty for no build step.
	Build string
	// Harness is the harness command, run by sh -c from each tree's root.
	Harness string
	// In, when set, is an empty directory the caller made for the worktree (removed with
	// it); else a new temporary one is made.
	In string
}

// tree is one side's checkout.
type tree struct {
	dir string
	rev string // the commit, for base
}

// Git runs one git command in dir (with a timeout, killed with its process group) and
// returns its standard output, trimmed; the error quotes git's standard error.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := procgroup.Command(ctx, nil, "git", args...)
	cmd.Dir = dir
	var stdout, stderr capBuffer
	stdout.max, stderr.max = 1<<20, 8<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	procgroup.KillRest(cmd)
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msgtext.Clip(msg, 500))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// checkoutBase finds the repository's top level and the merge base, and checks the merge
// base out in a temporary worktree. cleanup removes the worktree; it is never nil and
// must be called, also when the error is not nil.
func checkoutBase(ctx context.Context, w Worktree) (base, head tree, cleanup func(), err error) {
	cleanup = func() {}
	dir := w.Dir
	if dir == "" {
		dir = "."
	}
	top, err := Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return base, head, cleanup, fmt.Errorf("the working tree is not a git repository: %w", err)
	}
	ref := w.BaseRef
	if ref == "" {
		ref = DefaultBaseRef
	}
	if strings.HasPrefix(ref, "-") {
		return base, head, cleanup, fmt.Errorf("base %q is not a git revision", ref)
	}
	mb, err := Git(ctx, top, "merge-base", ref, "HEAD")
	if err != nil {
		return base, head, cleanup, fmt.Errorf("finding the base: %w (is %s fetched? actions/checkout needs fetch-depth: 0, or pass --base REV)", err, ref)
	}
	tmp := w.In
	if tmp == "" {
		if tmp, err = os.MkdirTemp("", "kernel-gate-base-"); err != nil {
			return base, head, cleanup, fmt.Errorf("a directory for the base worktree: %w", err)
		}
	}
	wt := filepath.Join(tmp, "base")
	cleanup = func() {
		// The run may have been cancelled: removing the worktree must not be.
		cctx := context.WithoutCancel(ctx)
		if _, err := Git(cctx, top, "worktree", "remove", "--force", wt); err != nil {
			_ = os.RemoveAll(tmp)
			_, _ = Git(cctx, top, "worktree", "prune")
		}
		_ = os.RemoveAll(tmp)
	}
	if _, err := Git(ctx, top, "worktree", "add", "--detach", wt, mb); err != nil {
		return base, head, cleanup, fmt.Errorf("checking out the base %s: %w", ShortRev(mb), err)
	}
	return tree{dir: wt, rev: mb}, tree{dir: top}, cleanup, nil
}

// ShortRev is rev cut to 12 hex digits, for messages: enough to be unique in any
// repository kernel-gate meets, short enough to read.
func ShortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// build runs the build command in one tree; a failure is a Failure, the error only for a
// cancelled run.
func build(ctx context.Context, side Side, command string, t tree, timeout time.Duration, environ []string, art *os.Root) (*Failure, error) {
	var logw *os.File
	logPath := ""
	if art != nil {
		name := "build-" + string(side) + ".log"
		logPath = filepath.Join(art.Name(), name)
		f, err := procgroup.CreateArtifactIn(art, name, 0o644)
		if err != nil {
			return nil, fmt.Errorf("the %s build log: %w", side, err)
		}
		defer f.Close()
		logw = f
		fmt.Fprintf(f, "==> kernel-gate A/B run: %s build in %s: %s <==\n", side, t.dir, command)
	}
	spec := runSpec{Argv: shellcmd.Argv(command), Dir: t.dir, Env: environ, Timeout: timeout, LogCap: buildLogBytes}
	if logw != nil {
		spec.Log = logw
	}
	res, err := execute(ctx, spec)
	if err != nil {
		return nil, err
	}
	if res.Why == "" {
		return nil, nil
	}
	return &Failure{Side: side, Stage: "build", Why: fmt.Sprintf("`%s` in %s: %s", command, t.dir, res.Why), Output: res.Output, Log: logPath}, nil
}

// harnessCommand is a side's harness: the configured command, run by sh -c in the tree (so
// that "./build/harness" is the tree's).
func harnessCommand(line string, t tree) Command {
	return Command{Argv: shellcmd.Argv(line), Dir: t.dir}
}

// describeCommand renders a command for messages and data: a harness command as written.
func describeCommand(c Command) string { return shellcmd.Show(c.Argv) }

// CheckoutBase checks out the merge base of baseRef (default DefaultBaseRef) and HEAD of the
// repository that holds dir in a temporary git worktree, for callers that build base
// themselves (kernel-gate run). It returns the worktree's directory, the merge base's
// commit and the repository's top level (head's tree). cleanup removes the worktree; it is
// never nil and must be called, also when the error is not nil.
func CheckoutBase(ctx context.Context, dir, baseRef string) (baseDir, baseRev, headDir string, cleanup func(), err error) {
	return CheckoutBaseIn(ctx, dir, baseRef, "")
}

// CheckoutBaseIn is CheckoutBase into in/base, in being an empty directory the caller made
// (removed by cleanup): a base at the same path in every run, for builds that record their
// sources' paths (kernel-gate run's base cache). "" is a new temporary directory.
func CheckoutBaseIn(ctx context.Context, dir, baseRef, in string) (baseDir, baseRev, headDir string, cleanup func(), err error) {
	base, head, cleanup, err := checkoutBase(ctx, Worktree{Dir: dir, BaseRef: baseRef, In: in})
	return base.dir, base.rev, head.dir, cleanup, err
}
