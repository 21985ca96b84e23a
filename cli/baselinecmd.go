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
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// storeFlags are the flags that name a baseline store; each overrides the config's
// baseline section.
type storeFlags struct {
	store, branch string
	keep          int
}

func (s *storeFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&s.store, "store", "", "the baseline store: a `DIR`, or git for the repository's baseline branch through the GitHub API (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL); default: the config's baseline.store, else git inside GitHub Actions")
	fs.StringVar(&s.branch, "branch", "", "the git store's `BRANCH` (default: the config's baseline.branch, else "+baseline.DefaultBranch+")")
}

// openStore opens the store the flags, else the config's baseline section, name; nil when
// neither names one (inside Actions, git is the default where defaultGit says so).
func openStore(ctx context.Context, e env, set config.BaselineSettings, f storeFlags, defaultGit bool) (baseline.Store, error) {
	spec := cmp.Or(strings.TrimSpace(f.store), set.Store)
	if spec == "" && defaultGit && underActions(e) {
		spec = baseline.GitSpec
	}
	if spec == "" {
		return nil, nil
	}
	branch := cmp.Or(strings.TrimSpace(f.branch), set.Branch)
	if err := baseline.CheckBranch(branch); err != nil {
		return nil, usagef("--branch: %v", err)
	}
	keep := set.Keep
	if f.keep > 0 {
		keep = f.keep
	}
	s, err := baseline.Open(ctx, spec, baseline.GitOptions{Options: githubapi.Options{APIURL: e.getenv("GITHUB_API_URL"),
		Token: e.getenv("GITHUB_TOKEN"), Repository: e.getenv("GITHUB_REPOSITORY"), Log: e.stderr}, Branch: branch, Keep: keep})
	if err != nil {
		return nil, exitcode.BadInput(err)
	}
	return s, nil
}

// readOnlyStore is the store `kernel-gate run --baseline-store` reads when there is no
// base build: the flag's, else the config's baseline.store; nil when neither names one.
func readOnlyStore(ctx context.Context, e env, cfg config.Config, spec string) (baseline.Reader, error) {
	set, err := cfg.Baseline.Settings()
	if err != nil {
		return nil, exitcode.BadInput(err)
	}
	s, err := openStore(ctx, e, set, storeFlags{store: spec}, false)
	if s == nil || err != nil {
		return nil, err
	}
	return s, nil
}

// runBaseline is `kernel-gate baseline show|update|prune|diff`: the baseline store by hand.
func runBaseline(ctx context.Context, args []string, e env) (int, error) {
	subs := []string{"show", "update", "prune", "diff"}
	if len(args) == 0 || !slices.Contains(subs, args[0]) {
		return failed(usagef("usage: kernel-gate baseline show|update|prune|diff --store DIR|git [flags]"))
	}
	sub := args[0]
	var c common
	var sf storeFlags
	var commit, key, from, to, artifacts string
	var n int
	fs := newFlagSet("baseline "+sub, e, &c)
	sf.add(fs)
	switch sub {
	case "update":
		fs.StringVar(&commit, "commit", "", "the commit the result is of, `SHA` (default: the result's trigger, else GITHUB_SHA)")
		fs.StringVar(&artifacts, "artifacts", "", "the run's artifacts `DIR` (kernel-gate run --artifacts): head's timings are read from DIR/<target>/bench/head.json")
		fs.IntVar(&sf.keep, "keep", 0, "entries kept per GPU (default: the config's baseline.keep, else "+fmt.Sprint(baseline.DefaultKeep)+")")
	case "prune":
		fs.IntVar(&sf.keep, "keep", 0, "keep the newest `N` entries per GPU (default: the config's baseline.keep, when it sets one)")
	case "show":
		fs.IntVar(&n, "n", 10, "show the newest `N` entries per GPU")
	case "diff":
		fs.StringVar(&key, "key", "", "the `GPU` whose entries to compare, as show prints it (\"NVIDIA H200 (sm_90)\") or its file's name (nvidia-h200.sm_90); needed when the store holds several")
		fs.StringVar(&from, "from", "", "the older entry: its commit `SHA` or a prefix (default: the entry before --to, or with a RESULT.json the newest comparable one)")
		fs.StringVar(&to, "to", "", "the newer entry: its commit `SHA` or a prefix (default: the newest)")
		fs.StringVar(&commit, "commit", "", "with a RESULT.json: the commit it is of, `SHA` (default: the result's trigger, else its file name)")
	}
	fs.Usage = usage(e, fs, `Usage: kernel-gate baseline update --store DIR|git [--commit SHA] RESULT.json
       kernel-gate baseline show --store DIR|git [--format text|json] [-n N]
       kernel-gate baseline prune --store DIR|git --keep N
       kernel-gate baseline diff --store DIR|git [--key GPU] [--from SHA] [--to SHA] [--format text|json]
       kernel-gate baseline diff --store DIR|git [--from SHA] RESULT.json

The baseline store keeps, per GPU and arch, the entries of gated results on the default
branch: PTXAS records, SASS counts and digests, timings, correctness errors, sanitizer
status. The config's baseline section names the store, the branch, how many entries to
keep and which entries are comparable; the flags override it. diff compares two entries of
one GPU (the newest two by default), or a result with the newest stored entry that the
config's baseline.compatible_cuda and compatible_driver allow.

`)
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return failed(err)
	}
	if sf.keep < 0 || n < 0 {
		return failed(usagef("--keep and -n take a positive number"))
	}
	if (sub == "show" || sub == "diff") && c.format != "text" && c.format != "json" {
		return failed(usagef("baseline %s writes text or json, not %q", sub, c.format))
	}
	cfg, err := config.Find(c.config)
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	if err := checkOut(c.out, reads{files: append(slices.Clone(rest), cfg.Path)}); err != nil {
		return failed(err)
	}
	set, err := cfg.Baseline.Settings()
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	store, err := openStore(ctx, e, set, sf, true)
	if err != nil {
		return failed(err)
	}
	if store == nil {
		return failed(usagef("--store DIR (a directory) or --store git (the repository's %s branch) is needed, or baseline.store in the config", set.Branch))
	}
	switch sub {
	case "update":
		if len(rest) != 1 {
			return failed(usagef("baseline update takes one RESULT.json, got %d", len(rest)))
		}
		res, err := readResult(ctx, rest[0], e)
		if err != nil {
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
		if artifacts != "" {
			if err := entry.AddArtifacts(ctx, artifacts); err != nil {
				return failed(exitcode.BadInput(err))
			}
		}
		if err := store.Update(ctx, entry); err != nil {
			return failed(exitcode.CouldNotRun(err))
		}
		fmt.Fprintf(e.stdout, "stored %s\n", entry.Describe())
	case "prune":
		keep := sf.keep
		if keep == 0 && cfg.Baseline.Keep != nil {
			keep = set.Keep
		}
		if keep == 0 {
			return failed(usagef("baseline prune needs --keep N (or baseline.keep in the config)"))
		}
		if err := store.Prune(ctx, keep); err != nil {
			return failed(exitcode.CouldNotRun(err))
		}
	case "show":
		l, err := baseline.List(ctx, store, n)
		if err != nil {
			return failed(exitcode.BadInput(err))
		}
		// failed(nil) is a pass.
		return failed(writeListing(c, e, func(w io.Writer) error {
			if c.format == "json" {
				return l.WriteJSON(w)
			}
			return l.WriteText(w)
		}))
	case "diff":
		if len(rest) > 1 {
			return failed(usagef("baseline diff takes at most one RESULT.json, got %d", len(rest)))
		}
		d, err := diffEntries(ctx, store, set.Constraints, diffArgs{key: key, from: from, to: to, commit: commit, result: rest}, e)
		if err != nil {
			return failed(err)
		}
		return failed(writeListing(c, e, func(w io.Writer) error {
			if c.format == "json" {
				return d.WriteJSON(w)
			}
			return d.WriteText(w)
		}))
	}
	return exitPass, nil
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

// writeListing writes what write writes where --out says, or to standard output (inside
// Actions between stop-commands markers: kernel names come from the repository).
func writeListing(c common, e env, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return exitcode.CouldNotRun(err)
	}
	if c.out != "" {
		return writeOut(e.ctx, e.getenv("GITHUB_WORKSPACE"), c.out, b.Bytes())
	}
	if underActions(e) {
		err := workflowcmd.StopCommands(e.stdout, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err })
		return exitcode.CouldNotRun(err)
	}
	_, err := e.stdout.Write(b.Bytes())
	return exitcode.CouldNotRun(err)
}

type diffArgs struct {
	key, from, to, commit string
	result                []string // none or one RESULT.json
}

// diffEntries chooses the two entries `baseline diff` compares and compares them. An entry
// chosen by hand that the config's constraints would not compare is compared, and the diff
// says so; one chosen for a result must be comparable.
func diffEntries(ctx context.Context, store baseline.Reader, cons baseline.Constraints, a diffArgs, e env) (baseline.Diff, error) {
	var newer *baseline.Entry
	var k baseline.Key
	if len(a.result) == 1 {
		if a.to != "" {
			return baseline.Diff{}, usagef("--to and a RESULT.json both name the newer entry: give one")
		}
		res, err := readResult(ctx, a.result[0], e)
		if err != nil {
			return baseline.Diff{}, err
		}
		commit := a.commit
		if res.Trigger != nil {
			commit = cmp.Or(commit, res.Trigger.SHA)
		}
		commit = cmp.Or(commit, filepath.Base(a.result[0]))
		entry, err := baseline.EntryFromResult(res, commit, time.Now())
		if err != nil {
			return baseline.Diff{}, exitcode.BadInput(err)
		}
		newer, k = &entry, entry.Key()
	} else {
		var err error
		if k, err = diffKey(ctx, store, a.key); err != nil {
			return baseline.Diff{}, err
		}
	}
	history, err := store.History(ctx, k, 0)
	if err != nil {
		return baseline.Diff{}, exitcode.BadInput(err)
	}
	if len(history) == 0 {
		return baseline.Diff{}, usagef("the store holds no entry of %s", k)
	}
	if newer == nil {
		i, err := findEntry(history, a.to, 0)
		if err != nil {
			return baseline.Diff{}, err
		}
		newer = &history[i]
		if a.from == "" {
			if i+1 >= len(history) {
				return baseline.Diff{}, usagef("%s has no entry before %s to compare it with", k, newer.Describe())
			}
			return withComparability(baseline.DiffEntries(history[i+1], *newer), history[i+1], cons), nil
		}
	}
	if a.from != "" {
		i, err := findEntry(history, a.from, -1)
		if err != nil {
			return baseline.Diff{}, err
		}
		return withComparability(baseline.DiffEntries(history[i], *newer), history[i], cons), nil
	}
	ch, err := baseline.NewestComparable(ctx, staticHistory{k, history}, k, cons)
	if err != nil {
		return baseline.Diff{}, exitcode.BadInput(err)
	}
	if ch.Entry == nil {
		return baseline.Diff{}, usagef("none of the %d entries of %s is comparable with the result; the newest: %s (--from SHA compares with one anyway)",
			ch.Entries, k, ch.Passed[0].Why)
	}
	d := baseline.DiffEntries(*ch.Entry, *newer)
	for _, p := range ch.Passed {
		d.Notes = append(d.Notes, "passed over as not comparable: "+p.Why)
	}
	return d, nil
}

// withComparability notes in d when the older entry, chosen by hand or by order, is one
// the config would not compare with.
func withComparability(d baseline.Diff, older baseline.Entry, cons baseline.Constraints) baseline.Diff {
	if ok, why := baseline.Comparable(older, cons); !ok {
		d.Notes = append(d.Notes, "the older entry is not comparable under the config: "+why)
	}
	return d
}

// staticHistory is a Reader of one key's history already read.
type staticHistory struct {
	k  baseline.Key
	es []baseline.Entry
}

func (s staticHistory) Latest(ctx context.Context, k baseline.Key) (baseline.Entry, bool, error) {
	if len(s.es) == 0 {
		return baseline.Entry{}, false, nil
	}
	return s.es[0], true, nil
}

func (s staticHistory) History(ctx context.Context, k baseline.Key, n int) ([]baseline.Entry, error) {
	if n > 0 && n < len(s.es) {
		return s.es[:n], nil
	}
	return s.es, nil
}

func (s staticHistory) Keys(ctx context.Context) ([]baseline.Key, error) {
	return []baseline.Key{s.k}, nil
}

// diffKey is the key --key names, or the store's only key.
func diffKey(ctx context.Context, store baseline.Reader, flag string) (baseline.Key, error) {
	keys, err := store.Keys(ctx)
	if err != nil {
		return baseline.Key{}, exitcode.BadInput(err)
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = fmt.Sprintf("%q", k.String())
	}
	if flag == "" {
		switch len(keys) {
		case 0:
			return baseline.Key{}, usagef("the store holds no baseline yet")
		case 1:
			return keys[0], nil
		}
		return baseline.Key{}, usagef("the store holds %d GPUs: pick one with --key (%s)", len(keys), strings.Join(names, ", "))
	}
	want, err := baseline.ParseKey(flag)
	if err != nil {
		return baseline.Key{}, usagef("--key %q: %v", flag, err)
	}
	for _, k := range keys {
		if k.File() == want.File() {
			return k, nil
		}
	}
	return baseline.Key{}, usagef("--key %q: the store holds no entry of %s (it holds %s)", flag, want, cmp.Or(strings.Join(names, ", "), "none"))
}

// findEntry returns the index in history (newest first) of the newest entry whose commit
// starts with sha; an empty sha is the entry at def (-1: none, an error). A prefix of two
// commits is ambiguous.
func findEntry(history []baseline.Entry, sha string, def int) (int, error) {
	sha = strings.ToLower(strings.TrimSpace(sha))
	if sha == "" {
		if def < 0 {
			return 0, usagef("no entry named")
		}
		return def, nil
	}
	found, commit := -1, ""
	for i, e := range history {
		if !strings.HasPrefix(strings.ToLower(e.Commit), sha) {
			continue
		}
		switch {
		case found < 0:
			found, commit = i, e.Commit
		case e.Commit != commit:
			return 0, usagef("%q names two entries, of %s and %s: give more of the commit", sha, commit, e.Commit)
		}
	}
	if found < 0 {
		return 0, usagef("no entry of commit %q among the %d of %s", sha, len(history), history[0].Key())
	}
	return found, nil
}
