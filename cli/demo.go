package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/demo"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/report"
)

// trendDemoLines is how many lines of the trend the demo prints per GPU.
const trendDemoLines = 12

func runDemo(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var dir, caseName string
	var trendDemo bool
	fs := newFlagSet("demo", e, &c)
	fs.StringVar(&dir, "dir", demo.Dir, "`DIR` holding the recorded cases")
	fs.StringVar(&caseName, "case", demo.DefaultCase, "recorded `CASE` to replay (a directory under --dir)")
	fs.BoolVar(&trendDemo, "trend", false, "store every recorded case in a temporary baseline store, one commit each, and write its trend page to --out (default: a new file in the temporary directory); --format does not apply")
	rest, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	if len(rest) > 0 {
		return failed(usagef("demo takes no arguments (got %q); choose a recording with --case", rest))
	}
	if trendDemo {
		if err := ignored(fs, "--trend", "case", "config", "format"); err != nil {
			return failed(err)
		}
	}
	cases, err := demo.Cases(dir)
	if err != nil {
		return failed(err)
	}
	if trendDemo {
		return demoTrend(ctx, dir, cases, c, e)
	}
	if !slices.Contains(cases, caseName) {
		return failed(usagef("no recorded case %q in %s (recorded: %s)", caseName, dir, strings.Join(cases, ", ")))
	}
	if c.config == "" {
		c.config = demo.CaseConfig(caseName)
	}
	cfg, fmtr, err := setup(c, e, outfile.Reads{Dirs: []string{filepath.Join(dir, caseName)}})
	if err != nil {
		return failed(err)
	}
	res, err := demo.Replay(ctx, filepath.Join(dir, caseName), cfg, toolName())
	if err != nil {
		return failed(err)
	}
	code, err := emit(res, c, fmtr, e)
	if others := slices.DeleteFunc(cases, func(o string) bool { return o == caseName }); err == nil && c.out == "" && fmtr == report.Text && len(others) > 0 {
		fmt.Fprintf(e.stdout, "\nAlso recorded: %s (kernel-gate demo --case NAME)\n", strings.Join(others, ", "))
	}
	return code, err
}

// demoTrend is `kernel-gate demo --trend`: the trend page of every recorded case (demo.Trend)
// written to --out, or to a new file in the temporary directory, and a few lines of it
// printed.
func demoTrend(ctx context.Context, dir string, cases []string, c common, e env) (int, error) {
	if err := outfile.Check(c.out, outfile.Reads{Dirs: []string{dir}}); err != nil {
		return failed(err)
	}
	page, err := demo.Trend(ctx, dir, cases)
	if err != nil {
		return failed(err)
	}
	out := c.out
	if out == "" {
		if out, err = tempFile("kernel-gate-trend-*.html"); err != nil {
			return failed(exitcode.CouldNotRunf("the trend page: %w", err))
		}
	}
	if err := outfile.Write(e.ctx, e.getenv("GITHUB_WORKSPACE"), out, page.HTML); err != nil {
		return failed(err)
	}
	fmt.Fprintf(e.stdout, "Trend of %d recorded replays (synthetic commit order: %s), no GPU used now\n", len(page.Order), strings.Join(page.Order, ", "))
	fmt.Fprintf(e.stdout, "Page: %s (%d charts; open it in a browser)\n\n", out, strings.Count(string(page.HTML), `<svg class="chart"`))
	if err := trend.WriteText(e.stdout, page.Histories, trendDemoLines); err != nil {
		return failed(exitcode.CouldNotRun(err))
	}
	return exitPass, nil
}

// tempFile is the name of a new empty file in the temporary directory.
func tempFile(pattern string) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}
