package abrun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

const (
	// tailBytes is how much of a failed command's output a finding quotes.
	tailBytes = 2000
	// runLogBytes caps what one harness run adds to its side's log.
	runLogBytes = 1 << 20
	// buildLogBytes caps a build's log.
	buildLogBytes = 16 << 20
)

// Side is base or head.
type Side string

// The two sides.
const (
	Base Side = "base"
	Head Side = "head"
	// Reference is the optional third command: another implementation (PyTorch SDPA, say)
	// timed in each round beside head, whose timings become head's reference timings.
	Reference Side = "reference"
)

func (s Side) index() int {
	switch s {
	case Head:
		return 1
	case Reference:
		return 2
	}
	return 0
}

func sideOf(i int) Side {
	switch i {
	case 1:
		return Head
	case 2:
		return Reference
	}
	return Base
}

// Command is one side's harness: the program with its arguments (a harness command of the
// config or the flags is shellcmd.Argv of it: sh -c), the directory it runs in ("" is the
// current one), and variables ("NAME=value") added to its environment before the runner's
// own (a side's own cache directories, say: base and head must not share one).
type Command struct {
	Argv []string
	Dir  string
	Env  []string
}

// Failure is a harness run or a build that gave nothing usable: it fails the gate.
type Failure struct {
	Side Side `json:"side"`
	// Stage is "build" or "run".
	Stage string `json:"stage"`
	// Round is the round of a failed run, 1-based; 0 is the warm-up round.
	Round int `json:"round"`
	// Why says what went wrong: an exit status, a signal, a timeout, a missing or bad file.
	Why string `json:"why"`
	// Output is the end of what the command printed.
	Output string `json:"output,omitempty"`
	// File is the harness's file as it was left, kept in the artifacts.
	File string `json:"file,omitempty"`
	// Log is the command's log in the artifacts.
	Log string `json:"log,omitempty"`
}

// where names the failed step: "head, round 3", "base, warm-up round", "head build".
func (f *Failure) where() string {
	switch {
	case f.Stage == "build":
		return string(f.Side) + " build"
	case f.Round == 0:
		return string(f.Side) + " harness, warm-up round"
	}
	return fmt.Sprintf("%s harness, round %d", f.Side, f.Round)
}

// message is the finding's text.
func (f *Failure) message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the %s failed: %s", f.where(), f.Why)
	if f.Stage == "run" {
		b.WriteString("; nothing is judged from a run that failed, and the gate does not pass")
	}
	if f.Log != "" {
		fmt.Fprintf(&b, " (log: %s)", f.Log)
	}
	if f.File != "" {
		fmt.Fprintf(&b, " (its file: %s)", f.File)
	}
	if out := strings.TrimSpace(f.Output); out != "" {
		fmt.Fprintf(&b, "; its last output:\n%s", out)
	}
	return b.String()
}

// runSpec is one external command the runner starts.
type runSpec = procgroup.Spec

// execute runs a command through procgroup.Run (its own process group, killed whole at
// the timeout); the output's tail is tailBytes long.
func execute(ctx context.Context, s runSpec) (procgroup.Outcome, error) {
	s.TailBytes = tailBytes
	return procgroup.Run(ctx, s)
}

// harnessEnv is the environment of one harness run.
func harnessEnv(environ, extra []string, shapes []string, samples int, out string) []string {
	env := slices.Clone(environ)
	env = append(env, extra...)
	env = append(env, "KG_MODE="+benchfile.ModeBench, "KG_ROUNDS=1", "KG_SAMPLES="+strconv.Itoa(samples), "KG_OUT="+out)
	if len(shapes) > 0 {
		env = append(env, "KG_SHAPES="+strings.Join(shapes, ","))
	}
	return env
}

// readHarnessFile reads what a run wrote at KG_OUT; why is set when it is missing or bad.
func readHarnessFile(path string) (f *benchfile.File, why string) {
	// input.Open: the harness may have made KG_OUT a FIFO, whose open would block past
	// every timeout; it is refused as a file that cannot be read.
	fh, err := input.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "it wrote no file at KG_OUT (" + path + ")"
	}
	if err != nil {
		return nil, fmt.Sprintf("its file cannot be read: %v", err)
	}
	defer fh.Close()
	f, err = benchfile.Read(fh)
	if err != nil {
		return nil, fmt.Sprintf("it wrote an invalid file: %v", err)
	}
	return f, ""
}

// harnessErrors lists the errors a harness file reports, for a failed run's message.
func harnessErrors(path string) string {
	fh, err := input.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	f, err := benchfile.Read(fh)
	if err != nil {
		return ""
	}
	var msgs []string
	for _, r := range f.Results {
		if r.Error != "" {
			msgs = append(msgs, fmt.Sprintf("%s × %s: %s", r.Kernel, r.Shape, msgtext.Clip(strings.TrimSpace(r.Error), 300)))
		}
		if len(msgs) == 3 {
			msgs = append(msgs, "…")
			break
		}
	}
	return strings.Join(msgs, "; ")
}

// keepFile copies a failed run's file into the artifacts (art, held open; nil: none); ""
// when there is none, or a link or such has its name there.
func keepFile(src string, art *os.Root, name string) string {
	if art == nil {
		return ""
	}
	raw, err := input.ReadFile(context.Background(), src, input.JSON)
	if err != nil {
		return ""
	}
	if err := procgroup.WriteArtifactIn(art, name, raw, 0o644); err != nil {
		return ""
	}
	return filepath.Join(art.Name(), name)
}
