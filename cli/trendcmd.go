package cli

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// runTrend is `kernel-gate trend`: the baseline store's history as one HTML page.
func runTrend(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var sf storeFlags
	var keyArg string
	var n int
	fs := newFlagSet("trend", e, &c)
	sf.add(fs)
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
	cfg, err := config.Find(c.config)
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	set, err := cfg.Baseline.Settings()
	if err != nil {
		return failed(exitcode.BadInput(err))
	}
	spec := cmp.Or(strings.TrimSpace(sf.store), set.Store)
	if spec == "" && underActions(e) {
		spec = baseline.GitSpec
	}
	if spec == "" {
		return failed(usagef("--store DIR (a directory) or --store git (the repository's %s branch) is needed, or the config's baseline.store", baseline.DefaultBranch))
	}
	var reading []string
	source := fmt.Sprintf("branch %s of %s", cmp.Or(strings.TrimSpace(sf.branch), set.Branch), e.getenv("GITHUB_REPOSITORY"))
	if spec != baseline.GitSpec {
		reading, source = []string{spec}, "directory "+spec
	}
	if err := checkOut(c.out, reads{dirs: reading, files: []string{cfg.Path}}); err != nil {
		return failed(err)
	}
	sf.store = spec
	store, err := openStore(ctx, e, set, sf, false)
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
		if err := writeOut(e.ctx, e.getenv("GITHUB_WORKSPACE"), c.out, out.Bytes()); err != nil {
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
