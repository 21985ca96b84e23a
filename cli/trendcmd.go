package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
)

// trendFormats are what trend writes: the page, or a few lines of it.
var trendFormats = []string{"html", "text"}

// runTrend is `kernel-gate trend`: the baseline store's history as one HTML page.
func runTrend(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var sf storeFlags
	var keyArg string
	var n int
	fs := flagSet("trend", e, &c, trendFormats)
	addStoreFlags(fs, &sf)
	fs.StringVar(&keyArg, "key", "", "draw only this `GPU`'s history: NVIDIA H200/sm_90, or \"NVIDIA H200 (sm_90)\" as baseline show prints it, or its file's name (nvidia-h200.sm_90); default every GPU the store holds")
	fs.IntVar(&n, "n", 0, "draw the newest `N` entries per GPU (default all the store keeps)")
	rest, err := parse(fs, args, e)
	switch {
	case err != nil:
		return failed(err)
	case len(rest) > 0:
		return failed(usagef("trend takes no arguments (got %q)", rest))
	case !slices.Contains(trendFormats, c.format):
		return failed(usagef("trend --format %q: html (the default) or text", c.format))
	case n < 0:
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
	store, source, err := trendStore(ctx, c, sf, e)
	if err != nil {
		return failed(err)
	}
	hs, err := trend.Load(ctx, store, only, n)
	if err != nil {
		return failed(exitcode.BadInput(fmt.Errorf("%s: %w", source, err)))
	}
	var out bytes.Buffer
	if c.format == "text" {
		err = trend.WriteText(&out, hs, 0)
	} else {
		err = trend.WriteHTML(&out, hs, trend.PageOptions{Source: source})
	}
	if err != nil {
		return failed(exitcode.CouldNotRun(err))
	}
	return failed(deliver(c.out, out.Bytes(), e))
}

// trendStore opens the store trend draws, the flags' else the config's (inside Actions git
// by default), after checking --out against it, and says where it is for the page.
func trendStore(ctx context.Context, c common, sf storeFlags, e env) (baseline.Store, string, error) {
	cfg, err := findConfig(c.config, e)
	if err != nil {
		return nil, "", exitcode.BadInput(err)
	}
	set, err := cfg.Baseline.Settings()
	if err != nil {
		return nil, "", exitcode.BadInput(err)
	}
	sf.DefaultGit = underActions(e)
	if sf.Store = set.StoreSpec(sf); sf.Store == "" {
		return nil, "", usagef("--store DIR (a directory) or --store git (the repository's %s branch) is needed, or the config's baseline.store", baseline.DefaultBranch)
	}
	var reading []string
	source := fmt.Sprintf("branch %s of %s", cmp.Or(strings.TrimSpace(sf.Branch), set.Branch), e.getenv("GITHUB_REPOSITORY"))
	if sf.Store != baseline.GitSpec {
		reading, source = []string{sf.Store}, "directory "+sf.Store
	}
	if err := outfile.Check(c.out, outfile.Reads{Dirs: reading, Files: []string{cfg.Path}}); err != nil {
		return nil, "", err
	}
	store, err := openStore(ctx, e, set, sf, false)
	return store, source, err
}
