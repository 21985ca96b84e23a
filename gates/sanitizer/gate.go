package sanitizer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The gate from end to end: run every tool on a harness (RunGate), read logs made elsewhere
// (ReadGate), or read back what a run kept in its artifacts (ReadKept). Each takes the
// harness's launch counts from the kernel-gate/bench/v1 file it writes per tool, since
// compute-sanitizer cannot say whether a kernel ran at all.

// HarnessOut names the file a harness writes in sanitize mode (its KG_OUT) for one tool's run.
func HarnessOut(dir, tool string) string { return filepath.Join(dir, "harness-"+tool+".json") }

// RunGate runs each tool on cmd (with KG_MODE=sanitize and a KG_OUT of its own) and judges
// the runs. Logs, XML and harness files are kept in artifacts, or in a temporary directory
// removed afterwards when artifacts is empty. A missing compute-sanitizer fails the gate.
// Progress lines go to progress.
func RunGate(ctx context.Context, cmd []string, o RunOptions, artifacts string, cfg Config, progress io.Writer) (result.Gate, error) {
	dir := artifacts
	if dir == "" {
		tmp, err := os.MkdirTemp("", "kernel-gate-sanitize-")
		if err != nil {
			return result.Gate{}, exitcode.CouldNotRun(err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return result.Gate{}, exitcode.BadInputf("--artifacts: %v", err)
	}
	tools := o.Tools
	if len(tools) == 0 {
		tools = AllTools()
	}
	runs, launches, err := runEach(ctx, cmd, o, dir, tools, progress)
	if errors.Is(err, ErrSanitizerMissing) {
		return missingGate(err)
	}
	if err != nil {
		return result.Gate{}, err
	}
	return Evaluate(runs, launches, cfg)
}

// missingGate is the gate when compute-sanitizer cannot run: a failure, never a pass.
func missingGate(err error) (result.Gate, error) {
	g := result.Gate{Name: Name, Findings: []result.Finding{{
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
	f, err := input.Open(path) // a regular file only: a FIFO would block the open
	if err != nil {
		return 0, false
	}
	defer f.Close()
	bf, err := benchfile.Read(io.LimitReader(f, input.JSON.Bytes))
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

// ReadGate judges logs made elsewhere: text and XML of the same tool are combined, and
// each harness file's launch count counts for every tool.
func ReadGate(logs, xmls, harness []string, stdin io.Reader, cfg Config) (result.Gate, error) {
	runs, err := ReadLogs(logs, xmls, stdin)
	if err != nil {
		return result.Gate{}, err
	}
	var launches map[string]int
	for _, h := range harness {
		n, ok := harnessLaunches(h)
		if !ok {
			return result.Gate{}, exitcode.BadInputf("--harness %s: not a kernel-gate/bench/v1 file with launch counts", h)
		}
		if launches == nil {
			launches = map[string]int{}
		}
		launches["*"] += n
	}
	return Evaluate(runs, launches, cfg)
}

// ReadLogs parses text and XML logs, each with the tool its name says, and pairs the text
// and XML of the same tool.
func ReadLogs(logs, xmls []string, stdin io.Reader) ([]Run, error) {
	var texts, records []Run
	err := input.Files(logs, stdin, func(r io.Reader, name string) error {
		rs, err := ParseTextWith(r, name, ParseOptions{Tool: toolNamedIn(name)})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		texts = append(texts, rs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = input.Files(xmls, stdin, func(r io.Reader, name string) error {
		run, err := ParseXMLWith(r, name, ParseOptions{Tool: toolNamedIn(name)})
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

// toolNamedIn finds the tool in a file name ("racecheck.log", "xml_memcheck_oob.xml"): a
// clean memcheck, initcheck or synccheck log prints the same lines, so only its name can
// tell. Empty when the name names no tool or more than one.
func toolNamedIn(name string) string {
	base := strings.ToLower(filepath.Base(name))
	found := ""
	for _, t := range AllTools() {
		if strings.Contains(base, t) {
			if found != "" {
				return ""
			}
			found = t
		}
	}
	return found
}

// combineByTool pairs each text run with the XML of the same tool; unpaired runs stay as
// they are.
func combineByTool(texts, records []Run) []Run {
	var runs []Run
	used := make([]bool, len(records))
	for _, t := range texts {
		i := slices.IndexFunc(records, func(x Run) bool { return x.Tool == t.Tool })
		if i >= 0 && !used[i] {
			used[i] = true
			runs = append(runs, Combine(records[i], t))
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

// ReadKept judges what RunGate kept in dir: per tool its log, its XML and the harness's
// output, whose launch count counts for that tool alone. ok is false when dir holds no
// tool's log.
func ReadKept(dir string, cfg Config) (g result.Gate, ok bool, err error) {
	var logs, xmls []string
	launches := map[string]int{}
	for _, tool := range AllTools() {
		log := filepath.Join(dir, tool+".log")
		if !input.Exists(log) {
			continue
		}
		logs = append(logs, log)
		if x := filepath.Join(dir, tool+".xml"); input.Exists(x) {
			xmls = append(xmls, x)
		}
		if n, ok := harnessLaunches(HarnessOut(dir, tool)); ok {
			launches[tool] = n
		}
	}
	if len(logs) == 0 {
		return result.Gate{}, false, nil
	}
	runs, err := ReadLogs(logs, xmls, nil)
	if err != nil {
		return result.Gate{}, true, err
	}
	g, err = Evaluate(runs, launches, cfg)
	return g, true, err
}
