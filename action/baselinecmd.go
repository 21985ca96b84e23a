package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kernel-gate/kernel-gate/action/githubapi"
	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// runBaseline is `kernel-gate baseline show|update|prune`: the baseline store by hand.
func runBaseline(ctx context.Context, args []string, e env) (int, error) {
	if len(args) == 0 || (args[0] != "show" && args[0] != "update" && args[0] != "prune") {
		return failed(usagef("usage: kernel-gate baseline show|update|prune --store DIR|git [flags]"))
	}
	sub := args[0]
	var c common
	var storeArg, commit, branch string
	var keep, n int
	fs := newFlagSet("baseline "+sub, e, &c)
	fs.StringVar(&storeArg, "store", "", "the store: a `DIR`, or git for the repository's baseline branch through the GitHub API (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL); default git inside GitHub Actions")
	fs.StringVar(&branch, "branch", baseline.DefaultBranch, "the git store's `BRANCH`")
	fs.IntVar(&keep, "keep", 0, "entries kept per GPU (update, prune; default "+fmt.Sprint(baseline.DefaultKeep)+")")
	switch sub {
	case "update":
		fs.StringVar(&commit, "commit", "", "the commit the result is of, `SHA` (default: the result's trigger, else GITHUB_SHA)")
	case "show":
		fs.IntVar(&n, "n", 10, "show the newest `N` entries per GPU")
	}
	fs.Usage = usage(e, fs, `Usage: kernel-gate baseline update --store DIR|git [--commit SHA] RESULT.json
       kernel-gate baseline show --store DIR|git [--format text|json] [-n N]
       kernel-gate baseline prune --store DIR|git --keep N

The baseline store keeps, per GPU and arch, the entries of gated results on the default
branch: PTXAS records, SASS counts, timings, correctness errors, sanitizer status.

`)
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return failed(err)
	}
	if storeArg == "" && underActions(e) {
		storeArg = "git"
	}
	if storeArg == "" {
		return failed(usagef("--store DIR (a directory) or --store git (the repository's %s branch) is needed", baseline.DefaultBranch))
	}
	if keep < 0 || n < 0 {
		return failed(usagef("--keep and -n take a positive number"))
	}
	var store baseline.Store
	if storeArg == "git" {
		store, err = baseline.NewGit(ctx, baseline.GitOptions{Options: githubapi.Options{APIURL: e.getenv("GITHUB_API_URL"),
			Token: e.getenv("GITHUB_TOKEN"), Repository: e.getenv("GITHUB_REPOSITORY"), Log: e.stderr}, Branch: branch, Keep: keep})
		if err != nil {
			return failed(exitcode.BadInput(err))
		}
	} else {
		store = baseline.NewDir(storeArg, keep)
	}
	switch sub {
	case "update":
		if len(rest) != 1 {
			return failed(usagef("baseline update takes one RESULT.json, got %d", len(rest)))
		}
		var res result.Result
		if err := input.Read(ctx, rest, e.stdin, input.JSON, func(r io.Reader, name string) error {
			res, err = result.Read(r)
			return err
		}); err != nil {
			return failed(err)
		}
		if res.Trigger != nil {
			commit = cmp.Or(commit, res.Trigger.SHA)
		}
		commit = cmp.Or(commit, e.getenv("GITHUB_SHA"))
		if commit == "" {
			return failed(usagef("--commit SHA: the result names no commit"))
		}
		entry, err := baseline.EntryFromResult(res, commit, time.Now())
		if err != nil {
			return failed(exitcode.BadInput(err))
		}
		if err := store.Update(ctx, entry); err != nil {
			return failed(exitcode.CouldNotRun(err))
		}
		fmt.Fprintf(e.stdout, "stored %s\n", entry.Describe())
	case "prune":
		if keep == 0 {
			return failed(usagef("baseline prune needs --keep N"))
		}
		if err := store.Prune(ctx, keep); err != nil {
			return failed(exitcode.CouldNotRun(err))
		}
	case "show":
		l, err := baseline.List(ctx, store, n)
		if err != nil {
			return failed(exitcode.BadInput(err))
		}
		if c.format == "json" {
			err = l.WriteJSON(e.stdout)
		} else {
			err = l.WriteText(e.stdout)
		}
		if err != nil {
			return failed(exitcode.CouldNotRun(err))
		}
	}
	return exitPass, nil
}
