package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/kernel-gate/kernel-gate/action/githubapi"
	"github.com/kernel-gate/kernel-gate/action/trend"
	"github.com/kernel-gate/kernel-gate/action/workflowcmd"
	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

// runTrend is `kernel-gate trend`: the baseline store's history as one HTML page.
func runTrend(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var storeArg, branch, keyArg string
	var n int
	fs := newFlagSet("trend", e, &c)
	fs.StringVar(&storeArg, "store", "", "the store: a `DIR`, or git for the repository's baseline branch through the GitHub API (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL); default git inside GitHub Actions")
	fs.StringVar(&branch, "branch", baseline.DefaultBranch, "the git store's `BRANCH`")
	fs.StringVar(&keyArg, "key", "", "draw only this GPU's history, `GPU/arch` (\"NVIDIA H200/sm_90\"); default every GPU the store holds")
	fs.IntVar(&n, "n", 0, "draw the newest `N` entries per GPU (default all the store keeps)")
	fs.Usage = usage(e, fs, `Usage: kernel-gate trend --store DIR|git [--out trend.html] [--key GPU/arch] [-n N]

Draws the baseline store's history as one self-contained HTML page (inline SVG and
CSS, no script, nothing fetched): per GPU and commit, each kernel's registers, shared
memory and spills per arch, and each kernel × shape's median time with its interval
and max_err. --format text prints a few lines of it instead.

`)
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return failed(err)
	}
	if len(rest) > 0 {
		return failed(usagef("trend takes no arguments (got %q)", rest))
	}
	format := "html"
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "format" {
			format = c.format
		}
	})
	if format != "html" && format != "text" {
		return failed(usagef("trend --format %q: html (the default) or text", format))
	}
	if n < 0 {
		return failed(usagef("-n takes a positive number"))
	}
	var only *baseline.Key
	if keyArg != "" {
		k, err := trend.ParseKey(keyArg)
		if err != nil {
			return failed(usagef("%v", err))
		}
		only = &k
	}
	if storeArg == "" && underActions(e) {
		storeArg = "git"
	}
	if storeArg == "" {
		return failed(usagef("--store DIR (a directory) or --store git (the repository's %s branch) is needed", baseline.DefaultBranch))
	}
	if err := checkOut(c.out, reads{dirs: []string{storeDir(storeArg)}}); err != nil {
		return failed(err)
	}
	store, source, err := openStore(ctx, e, storeArg, branch)
	if err != nil {
		return failed(err)
	}
	hs, err := trend.Load(ctx, store, only, n)
	if err != nil {
		return failed(exitcode.BadInput(fmt.Errorf("%s: %w", source, err)))
	}
	var out bytes.Buffer
	if format == "text" {
		err = trend.WriteText(&out, hs, 0)
	} else {
		err = trend.WriteHTML(&out, hs, trend.PageOptions{Source: source})
	}
	if err != nil {
		return failed(exitcode.CouldNotRun(err))
	}
	switch {
	case c.out != "":
		if err := writeOut(e.ctx, c.out, out.Bytes()); err != nil {
			return failed(err)
		}
	case underActions(e):
		// Kernel names and reasons come from the repository: none may act as a workflow
		// command, should the page go to the step's log.
		if err := workflowcmd.StopCommands(e.stdout, func(w io.Writer) error { _, err := w.Write(out.Bytes()); return err }); err != nil {
			return failed(exitcode.CouldNotRun(err))
		}
	default:
		if _, err := e.stdout.Write(out.Bytes()); err != nil {
			return failed(exitcode.CouldNotRun(err))
		}
	}
	return exitPass, nil
}

// storeDir is the directory a --store argument reads, "" for the git store.
func storeDir(storeArg string) string {
	if storeArg == "git" {
		return ""
	}
	return storeArg
}

// openStore opens the store a --store argument names, for reading, and says which it is
// in words.
func openStore(ctx context.Context, e env, storeArg, branch string) (baseline.Store, string, error) {
	if storeArg != "git" {
		return baseline.NewDir(storeArg, 0), "directory " + storeArg, nil
	}
	repo := e.getenv("GITHUB_REPOSITORY")
	g, err := baseline.NewGit(ctx, baseline.GitOptions{Options: githubapi.Options{APIURL: e.getenv("GITHUB_API_URL"),
		Token: e.getenv("GITHUB_TOKEN"), Repository: repo, Log: e.stderr}, Branch: branch})
	if err != nil {
		return nil, "", exitcode.BadInput(err)
	}
	return g, fmt.Sprintf("branch %s of %s", branch, repo), nil
}
