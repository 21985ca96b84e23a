package cli

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// storeFlags are the flags that name a baseline store; each overrides the config's
// baseline section (config.StoreChoice).
type storeFlags = config.StoreChoice

// addStoreFlags adds --store and --branch.
func addStoreFlags(fs *flag.FlagSet, s *storeFlags) {
	fs.StringVar(&s.Store, "store", "", "the baseline store: a `DIR`, or git for the repository's baseline branch through the GitHub API (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL); default: the config's baseline.store, else git inside GitHub Actions")
	fs.StringVar(&s.Branch, "branch", "", "the git store's `BRANCH` (default: the config's baseline.branch, else "+baseline.DefaultBranch+")")
}

// openStore opens the store the flags, else the config's baseline section, name; nil when
// neither names one (inside Actions, git is the default where defaultGit says so).
func openStore(ctx context.Context, e env, set config.BaselineSettings, f storeFlags, defaultGit bool) (baseline.Store, error) {
	f.DefaultGit = defaultGit && underActions(e)
	return set.OpenStore(ctx, f, githubapi.Options{APIURL: e.getenv("GITHUB_API_URL"),
		Token: e.getenv("GITHUB_TOKEN"), Repository: e.getenv("GITHUB_REPOSITORY"), Log: e.stderr})
}

// readOnlyStore is the store `kernel-gate run --baseline-store` reads when there is no
// base build: the flag's, else the config's baseline.store; nil when neither names one.
func readOnlyStore(ctx context.Context, e env, cfg config.Config, spec string) (baseline.Reader, error) {
	set, err := cfg.Baseline.Settings()
	if err != nil {
		return nil, exitcode.BadInput(err)
	}
	s, err := openStore(ctx, e, set, storeFlags{Store: spec}, false)
	if s == nil || err != nil {
		return nil, err
	}
	return s, nil
}

// baselineFlags are the flags of `kernel-gate baseline SUB`.
type baselineFlags struct {
	c                                common
	sf                               storeFlags
	commit, key, from, to, artifacts string
	n                                int
}

// baselineFlagSet is the flag set of baseline sub: show and diff write text or json (and
// take --out), update and prune print a line and take neither.
func baselineFlagSet(sub string, e env, f *baselineFlags) *flag.FlagSet {
	formats := []string{"text", "json"}
	if sub == "update" || sub == "prune" {
		formats = nil
	}
	fs := flagSet("baseline "+sub, e, &f.c, formats)
	addStoreFlags(fs, &f.sf)
	keyHelp := "the `GPU` whose entries to compare: \"NVIDIA H200 (sm_90)\" as show prints it, NVIDIA H200/sm_90 as trend takes it, or its file's name (nvidia-h200.sm_90); needed when the store holds several"
	switch sub {
	case "update":
		fs.StringVar(&f.commit, "commit", "", "the commit the result is of, `SHA` (default: the result's trigger, else GITHUB_SHA)")
		fs.StringVar(&f.artifacts, "artifacts", "", "the run's artifacts `DIR` (kernel-gate run --artifacts): head's timings are read from DIR/<target>/bench/head.json")
		fs.IntVar(&f.sf.Keep, "keep", 0, "entries kept per GPU (default: the config's baseline.keep, else "+fmt.Sprint(baseline.DefaultKeep)+")")
	case "prune":
		fs.IntVar(&f.sf.Keep, "keep", 0, "keep the newest `N` entries per GPU (default: the config's baseline.keep, when it sets one; without either prune refuses)")
	case "show":
		fs.IntVar(&f.n, "n", 10, "show the newest `N` entries per GPU")
	case "diff":
		fs.StringVar(&f.key, "key", "", keyHelp)
		fs.StringVar(&f.from, "from", "", "the older entry: its commit `SHA` or a prefix (default: the entry before --to, or with a RESULT.json the newest comparable one)")
		fs.StringVar(&f.to, "to", "", "the newer entry: its commit `SHA` or a prefix (default: the newest)")
		fs.StringVar(&f.commit, "commit", "", "with a RESULT.json: the commit it is of, `SHA` (default: the result's trigger, else its file name)")
	}
	return fs
}

// runBaseline is `kernel-gate baseline show|update|prune|diff`: the baseline store by hand.
func runBaseline(ctx context.Context, args []string, e env) (int, error) {
	subs := []string{"show", "update", "prune", "diff"}
	if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		fmt.Fprint(e.stderr, usageText("baseline"))
		return failed(flag.ErrHelp)
	}
	if len(args) == 0 || !slices.Contains(subs, args[0]) {
		return failed(usagef("usage: kernel-gate baseline show|update|prune|diff --store DIR|git [flags]"))
	}
	sub := args[0]
	var f baselineFlags
	fs := baselineFlagSet(sub, e, &f)
	rest, err := parse(fs, args[1:], e)
	if err != nil {
		return failed(err)
	}
	if f.sf.Keep < 0 || f.n < 0 {
		return failed(usagef("--keep and -n take a positive number"))
	}
	switch {
	case sub == "update" && len(rest) != 1:
		return failed(usagef("baseline update takes one RESULT.json, got %d", len(rest)))
	case sub == "prune" && len(rest) > 0:
		return failed(usagef("baseline prune takes no arguments (got %q)", rest))
	case sub == "show" && len(rest) > 0:
		return failed(usagef("baseline show takes no arguments (got %q)", rest))
	}
	if sub == "show" || sub == "diff" {
		if err := checkListingFormat(sub, f.c.format); err != nil {
			return failed(err)
		}
	}
	cfg, err := findConfig(f.c.config, e)
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	if err := outfile.Check(f.c.out, outfile.Reads{Files: append(slices.Clone(rest), cfg.Path)}); err != nil {
		return failed(err)
	}
	set, err := cfg.Baseline.Settings()
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	store, err := openStore(ctx, e, set, f.sf, true)
	if err != nil {
		return failed(err)
	}
	if store == nil {
		return failed(usagef("--store DIR (a directory) or --store git (the repository's %s branch) is needed, or baseline.store in the config", set.Branch))
	}
	switch sub {
	case "update":
		return failed(baselineUpdate(ctx, store, f, rest[0], e))
	case "prune":
		return failed(baselinePrune(ctx, store, f.sf.Keep, cfg.Baseline.Keep != nil, set.Keep))
	case "show":
		return failed(baselineShow(ctx, store, f, e))
	}
	return failed(baselineDiff(ctx, store, set.Constraints, f, rest, e))
}

// checkListingFormat refuses a --format that show and diff do not write.
func checkListingFormat(sub, format string) error {
	if format != "text" && format != "json" {
		return usagef("baseline %s writes text or json, not %q", sub, format)
	}
	return nil
}

// baselineUpdate stores the result in file as an entry of its commit.
func baselineUpdate(ctx context.Context, store baseline.Store, f baselineFlags, file string, e env) error {
	res, err := readResult(ctx, file, e)
	if err != nil {
		return err
	}
	commit := f.commit
	if res.Trigger != nil {
		commit = cmp.Or(commit, res.Trigger.SHA)
	}
	commit = cmp.Or(commit, e.getenv("GITHUB_SHA"))
	if commit == "" {
		return usagef("--commit SHA: the result names no commit")
	}
	entry, err := baseline.EntryFromResult(res, commit, time.Now())
	if err != nil {
		return exitcode.BadInput(err)
	}
	if f.artifacts != "" {
		if err := entry.AddArtifacts(ctx, f.artifacts); err != nil {
			return exitcode.BadInput(err)
		}
	}
	if err := store.Update(ctx, entry); err != nil {
		return exitcode.CouldNotRun(err)
	}
	fmt.Fprintf(e.stdout, "stored %s\n", entry.Describe())
	return nil
}

// baselinePrune keeps the newest entries of every GPU: --keep's number, else the config's
// baseline.keep where the config sets one. It never prunes to the built-in default by
// itself: a number that removes entries is one a person chose.
func baselinePrune(ctx context.Context, store baseline.Store, flagKeep int, configSets bool, configKeep int) error {
	keep := flagKeep
	if keep == 0 && configSets {
		keep = configKeep
	}
	if keep == 0 {
		return usagef("baseline prune needs --keep N (or baseline.keep in the config)")
	}
	return exitcode.CouldNotRun(store.Prune(ctx, keep))
}

// baselineShow lists the newest entries of every GPU.
func baselineShow(ctx context.Context, store baseline.Store, f baselineFlags, e env) error {
	l, err := baseline.List(ctx, store, f.n)
	if err != nil {
		return exitcode.BadInput(err)
	}
	return writeListing(f.c, l.WriteJSON, l.WriteText, e)
}

// writeListing writes a listing as --format says, where --out says (deliver).
func writeListing(c common, writeJSON, writeText func(io.Writer) error, e env) error {
	write := writeText
	if c.format == "json" {
		write = writeJSON
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return exitcode.CouldNotRun(err)
	}
	return deliver(c.out, b.Bytes(), e)
}

// baselineDiff compares the two entries the flags (and a RESULT.json) choose.
func baselineDiff(ctx context.Context, store baseline.Store, cons baseline.Constraints, f baselineFlags, rest []string, e env) error {
	if len(rest) > 1 {
		return usagef("baseline diff takes at most one RESULT.json, got %d", len(rest))
	}
	choice := baseline.DiffChoice{Key: f.key, From: f.from, To: f.to}
	if len(rest) == 1 {
		if f.to != "" {
			return usagef("--to and a RESULT.json both name the newer entry: give one")
		}
		if f.key != "" {
			return usagef("--key does not apply with a RESULT.json, which names its GPU: leave out --key")
		}
		entry, err := resultEntry(ctx, rest[0], f.commit, e)
		if err != nil {
			return err
		}
		choice.Newer = &entry
	} else if f.commit != "" {
		return usagef("--commit goes with a RESULT.json: it names the result's commit")
	}
	d, err := baseline.PickDiff(ctx, store, cons, choice)
	if err != nil {
		return err
	}
	return writeListing(f.c, d.WriteJSON, d.WriteText, e)
}

// resultEntry is the entry a result file would be: of the commit --commit names, else its
// trigger's, else its file's name.
func resultEntry(ctx context.Context, file, commit string, e env) (baseline.Entry, error) {
	res, err := readResult(ctx, file, e)
	if err != nil {
		return baseline.Entry{}, err
	}
	if res.Trigger != nil {
		commit = cmp.Or(commit, res.Trigger.SHA)
	}
	entry, err := baseline.EntryFromResult(res, cmp.Or(commit, filepath.Base(file)), time.Now())
	return entry, exitcode.BadInput(err)
}

func readResult(ctx context.Context, path string, e env) (result.Result, error) {
	var res result.Result
	err := input.Read(ctx, []string{path}, e.stdin, input.JSON, func(r io.Reader, name string) error {
		var err error
		res, err = result.Read(r)
		return err
	})
	return res, err
}
