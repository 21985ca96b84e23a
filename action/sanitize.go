package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/action/config"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
)

// harnessOut names the file a harness writes in sanitize mode for one tool's run.
func harnessOut(dir, tool string) string { return filepath.Join(dir, "harness-"+tool+".json") }

func runSanitize(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var tools, artifacts, bin, timeout string
	var logs, xmls, harness multiFlag
	fs := newFlagSet("sanitize", e, &c)
	fs.StringVar(&tools, "tools", "", "comma-separated `TOOLS` to run (default: the config's, else memcheck,racecheck,initcheck,synccheck)")
	fs.StringVar(&artifacts, "artifacts", "", "keep each tool's log, XML and the harness's output in `DIR`")
	fs.StringVar(&bin, "sanitizer", "compute-sanitizer", "compute-sanitizer `PATH`")
	fs.StringVar(&timeout, "timeout", "", "per-tool `DURATION` before the command is killed with its process group (default: the config's, else 2m)")
	fs.Var(&logs, "log", "read a compute-sanitizer (or cuda-memcheck) text `FILE` instead of running (repeatable)")
	fs.Var(&xmls, "xml", "read a compute-sanitizer --xml --save `FILE` instead of running (repeatable)")
	fs.Var(&harness, "harness", "with --log/--xml: the harness's KG_OUT `FILE` of that run, which says how many kernels it launched")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, `Usage: kernel-gate sanitize [flags] -- CMD [ARGS...]
       kernel-gate sanitize [flags] --log FILE... --xml FILE...

Runs compute-sanitizer once per tool on CMD (the kernel harness on a small shape) with
KG_MODE=sanitize and KG_OUT set, or reads logs made elsewhere, and applies the sanitizer gate.

`)
		fs.PrintDefaults()
	}
	cmd, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage, err
	}
	cfg, fmtr, err := setup(c)
	if err != nil {
		return exitUsage, err
	}
	if tools != "" {
		// The tools asked for are the tools expected: a listed tool without a run fails.
		cfg.Sanitizer.Tools = strings.Split(tools, ",")
	}
	reading := len(logs)+len(xmls) > 0
	switch {
	case reading && len(cmd) > 0:
		return exitUsage, usagef("give either a command to run or --log/--xml files to read, not both")
	case !reading && len(cmd) == 0:
		return exitUsage, usagef("nothing to sanitize: give a command after -- (kernel-gate sanitize -- ./harness) or --log/--xml files")
	case !reading && len(harness) > 0:
		return exitUsage, usagef("--harness goes with --log/--xml; a run reads the harness's output itself")
	}
	var g result.Gate
	if reading {
		g, err = sanitizeRead(logs, xmls, harness, e.stdin, cfg)
	} else {
		var o sanitizer.RunOptions
		o, err = sanitizeOptions(cfg, tools, timeout, bin)
		if err == nil {
			g, err = sanitizeRun(ctx, cmd, o, artifacts, cfg, e)
		}
	}
	if err != nil {
		return exitUsage, err
	}
	return emit(result.New(toolName(), g), c, fmtr, e)
}

// sanitizeOptions merges the config with the flags, which win.
func sanitizeOptions(cfg config.Config, tools, timeout, bin string) (sanitizer.RunOptions, error) {
	o, err := cfg.Sanitizer.RunOptions()
	if err != nil {
		return o, usageError{err}
	}
	o.Sanitizer = bin
	if tools != "" {
		o.Tools = strings.Split(tools, ",")
	}
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 {
			return o, usagef("--timeout %q: want a positive duration such as 90s or 5m", timeout)
		}
		o.Timeout = d
	}
	return o, nil
}

// sanitizeRun runs each tool on the command. Each run gets its own KG_OUT so the harness
// can say how many kernels it launched under that tool.
func sanitizeRun(ctx context.Context, cmd []string, o sanitizer.RunOptions, artifacts string, cfg config.Config, e env) (result.Gate, error) {
	dir := artifacts
	if dir == "" {
		tmp, err := os.MkdirTemp("", "kernel-gate-sanitize-")
		if err != nil {
			return result.Gate{}, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return result.Gate{}, usagef("--artifacts: %v", err)
	}
	tools := o.Tools
	if len(tools) == 0 {
		tools = sanitizer.AllTools()
	}
	var runs []sanitizer.Run
	launches := map[string]int{}
	for _, tool := range tools {
		one := o
		one.Tools, one.ArtifactDir = []string{tool}, dir
		out := harnessOut(dir, tool)
		os.Remove(out) // a file left from an earlier run must not speak for this one
		one.ExtraEnv = append(slices.Clone(o.ExtraEnv), "KG_MODE=sanitize", "KG_OUT="+out)
		fmt.Fprintf(e.stderr, "kernel-gate sanitize: %s %s\n", tool, strings.Join(cmd, " "))
		start := time.Now()
		rs, err := sanitizer.RunTools(ctx, cmd, one)
		if errors.Is(err, sanitizer.ErrSanitizerMissing) {
			return missingSanitizer(err, cfg)
		}
		if err != nil {
			return result.Gate{}, err
		}
		fmt.Fprintf(e.stderr, "kernel-gate sanitize: %s done in %s\n", tool, time.Since(start).Round(time.Millisecond))
		runs = append(runs, rs...)
		if n, ok := harnessLaunches(out); ok {
			launches[tool] = n
		}
		if len(rs) > 0 && rs[len(rs)-1].TimedOut {
			break // a hung kernel: the other tools would hang too
		}
	}
	return sanitizer.Evaluate(runs, launches, cfg.Sanitizer)
}

// missingSanitizer is the gate when compute-sanitizer cannot run: a failure, never a pass.
func missingSanitizer(err error, cfg config.Config) (result.Gate, error) {
	g := result.Gate{Name: "sanitizer", Findings: []result.Finding{{
		Severity: result.Error, Metric: "run",
		Message: fmt.Sprintf("%v: install the CUDA toolkit's compute-sanitizer or pass --sanitizer PATH; the gate cannot pass without running it", err),
	}}}
	if err := g.SetData(map[string]any{"runs": []any{}}); err != nil {
		return g, err
	}
	g.Decide(true)
	g.Summary = "compute-sanitizer did not run"
	return g, nil
}

// harnessLaunches reads how many kernels a harness launched in sanitize mode; false when
// the command does not speak the protocol (no file) or reports no launch counts.
func harnessLaunches(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	bf, err := benchfile.Read(f)
	if err != nil {
		return 0, false
	}
	n, known := 0, false
	for _, r := range bf.Results {
		if r.Launches != nil {
			n += *r.Launches
			known = true
		}
	}
	return n, known
}

// sanitizeRead judges logs made elsewhere: text and XML of the same tool are combined, and
// each harness file's launch count counts for every tool.
func sanitizeRead(logs, xmls, harness []string, stdin io.Reader, cfg config.Config) (result.Gate, error) {
	runs, err := readSanitizerLogs(logs, xmls, stdin)
	if err != nil {
		return result.Gate{}, err
	}
	var launches map[string]int
	for _, h := range harness {
		n, ok := harnessLaunches(h)
		if !ok {
			return result.Gate{}, usagef("--harness %s: not a kernel-gate/bench/v1 file with launch counts", h)
		}
		if launches == nil {
			launches = map[string]int{}
		}
		launches["*"] += n
	}
	return sanitizer.Evaluate(runs, launches, cfg.Sanitizer)
}

// readSanitizerLogs parses text and XML logs, each with the tool its name says, and pairs
// the text and XML of the same tool.
func readSanitizerLogs(logs, xmls []string, stdin io.Reader) ([]sanitizer.Run, error) {
	var texts, records []sanitizer.Run
	err := readFiles(logs, stdin, func(r io.Reader, name string) error {
		rs, err := sanitizer.ParseTextWith(r, name, sanitizer.ParseOptions{Tool: toolFromName(name)})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		texts = append(texts, rs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readFiles(xmls, stdin, func(r io.Reader, name string) error {
		run, err := sanitizer.ParseXMLWith(r, name, sanitizer.ParseOptions{Tool: toolFromName(name)})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		records = append(records, run)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return combineByTool(texts, records), nil
}

// toolFromName finds the tool in a file name ("racecheck.log", "xml_memcheck_oob.xml"): a clean
// memcheck, initcheck or synccheck log prints the same lines, so only its name can tell.
// Empty when the name names no tool or more than one.
func toolFromName(name string) string {
	base := strings.ToLower(filepath.Base(name))
	found := ""
	for _, t := range sanitizer.AllTools() {
		if strings.Contains(base, t) {
			if found != "" {
				return ""
			}
			found = t
		}
	}
	return found
}

// combineByTool pairs each text run with the XML of the same tool; unpaired runs stay as they are.
func combineByTool(texts, records []sanitizer.Run) []sanitizer.Run {
	var runs []sanitizer.Run
	used := make([]bool, len(records))
	for _, t := range texts {
		i := slices.IndexFunc(records, func(x sanitizer.Run) bool { return x.Tool == t.Tool })
		if i >= 0 && !used[i] {
			used[i] = true
			runs = append(runs, sanitizer.Combine(records[i], t))
			continue
		}
		runs = append(runs, t)
	}
	for i, x := range records {
		if !used[i] {
			runs = append(runs, x)
		}
	}
	return runs
}

// replaySanitizer reads what `kernel-gate sanitize --artifacts` kept: per tool its log,
// its XML and the harness's output, whose launch count counts for that tool alone.
func replaySanitizer(dir string, cfg config.Config) (result.Gate, bool, error) {
	var logs, xmls []string
	launches := map[string]int{}
	for _, tool := range sanitizer.AllTools() {
		log := filepath.Join(dir, tool+".log")
		if !fileExists(log) {
			continue
		}
		logs = append(logs, log)
		if x := filepath.Join(dir, tool+".xml"); fileExists(x) {
			xmls = append(xmls, x)
		}
		if n, ok := harnessLaunches(harnessOut(dir, tool)); ok {
			launches[tool] = n
		}
	}
	if len(logs) == 0 {
		return result.Gate{}, false, nil
	}
	runs, err := readSanitizerLogs(logs, xmls, nil)
	if err != nil {
		return result.Gate{}, true, err
	}
	g, err := sanitizer.Evaluate(runs, launches, cfg.Sanitizer)
	return g, true, err
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
