// Package ptxas reads the per-kernel resource usage that NVIDIA's tools print — ptxas -v
// (nvcc -Xptxas -v, nvcc --resource-usage, ptxas itself, clang -Xcuda-ptxas -v), nvlink's
// --resource-usage report after device linking, and cuobjdump --dump-resource-usage — and
// applies the PTXAS gate: limits on registers, spills, stack frame, local and shared memory
// per kernel × arch, and regressions against a baseline.
//
// Parsing streams: a log is read line by line and memory grows with the number of distinct
// kernel records, never with the length of the log.
//
// Parsing fails closed. Every count is read strictly (decimal digits only, at most 2^53):
// one that overflows, is negative, carries a thousands separator ("1,676") or is not a
// number is an error diagnostic, never a value. A record cut short is an error too: a
// Used line item without its unit or with half of one, a stack frame or cuobjdump REG line
// without all its fields, a function with no closing line (Used, stack frame or REG), a
// log whose last line is a resource line without a line end. So is a build step that
// failed other than by a compiler error: a tool killed or crashed (Killed, Segmentation
// fault, std::bad_alloc, an internal compiler error), a failed link, a missing shared
// library, make, ninja or CMake reporting a failed step. Each is found on its own line and
// printed into another one, as parallel builds interleave their output ("..., 376 bytes
// cmem[0]Segmentation fault (core dumped)"), and at the end of a line too long to read
// whole. The gate fails on every error diagnostic and names its input and line.
package ptxas

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/linescan"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
)

// Record sources.
const (
	SourcePtxas     = "ptxas"
	SourceNvlink    = "nvlink"
	SourceCuobjdump = "cuobjdump"
	// SpillsFromSASS marks spill figures counted in the SASS (Kernel.SpillsFrom).
	SpillsFromSASS = "sass"
)

// Kernel is one function's resource usage for one arch. A field the input does not give
// is nil (absent in JSON), never 0.
type Kernel struct {
	Name            string           `json:"name"`
	Demangled       string           `json:"demangled"`
	Arch            string           `json:"arch"`
	Entry           *bool            `json:"entry,omitempty"`
	Registers       *int64           `json:"registers,omitempty"`
	Barriers        *int64           `json:"barriers,omitempty"`
	StackFrame      *int64           `json:"stack_frame,omitempty"`
	SpillStores     *int64           `json:"spill_stores,omitempty"`
	SpillLoads      *int64           `json:"spill_loads,omitempty"`
	CumulativeStack *int64           `json:"cumulative_stack,omitempty"`
	Smem            *int64           `json:"smem,omitempty"`
	Cmem            map[string]int64 `json:"cmem,omitempty"`
	Lmem            *int64           `json:"lmem,omitempty"`
	Gmem            *int64           `json:"gmem,omitempty"`
	Source          string           `json:"source"`
	// SpillsFrom says where SpillStores and SpillLoads came from when Source prints no
	// spill figure: SpillsFromSASS when they are the bytes of the function's STL and LDL
	// instructions in its SASS (kernel-gate run does this for cuobjdump records). Empty
	// when they are the record's own or absent.
	SpillsFrom string `json:"spills_from,omitempty"`
	// File is the translation unit, when the log says which one was compiled.
	File string `json:"file,omitempty"`
	// Input and Line locate the record's first line in the input, for messages.
	Input string `json:"input,omitempty"`
	Line  int    `json:"line,omitempty"`
}

// KindLogCut is the kind of the error for a log cut at kernel-gate's size cap.
const KindLogCut = "log-cut"

// Diagnostic is something the build said besides resource usage: ptxas warnings and
// errors, compiler errors, a failed build step.
type Diagnostic struct {
	Severity string `json:"severity"` // "error", "warning" or "notice"
	Kind     string `json:"kind"`     // e.g. "ptxas-fatal", "compile-error", "build-failed"
	Kernel   string `json:"kernel,omitempty"`
	File     string `json:"file,omitempty"`   // source file the message points at
	Line     int    `json:"line,omitempty"`   // line in that source file
	Column   int    `json:"column,omitempty"` // byte column on Line, 1-based; clang and gcc give one, nvcc not
	Input    string `json:"input"`
	InputLn  int    `json:"input_line"`
	Text     string `json:"text"`
	// Count is how many times the same message appeared (a log concatenated from reruns).
	Count int `json:"count"`
}

// Input summarises one parsed input.
type Input struct {
	Name    string `json:"name"`
	Lines   int    `json:"lines"`
	Records int    `json:"records"`
}

// Log is everything parsed from one or more inputs.
type Log struct {
	Kernels     []Kernel     `json:"kernels"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	Inputs      []Input      `json:"inputs"`

	index     map[string]int // dedupe key → position in Kernels
	diagIndex map[string]int // dedupe key → position in Diagnostics
	// foreign remembers a few lines that were not resource usage, to explain empty input.
	foreign []string
}

// ErrNoKernels reports an input with no kernel records at all and no build error to explain it.
var ErrNoKernels = errors.New("no kernel resource usage found")

// maxLine bounds one line; longer lines are cut (a mangled CUTLASS name is a few KiB), and
// the last cutTailBytes of one are still read for a failure printed at its end.
const (
	maxLine      = 1 << 20
	cutTailBytes = 4 << 10
)

// Observer sees every line that is not resource usage (e.g. to find `nvcc --version`).
type Observer func(input string, lineNo int, line string)

// Parse reads one input and adds its records to l. name labels the input in messages.
func (l *Log) Parse(r io.Reader, name string, observe Observer) error {
	if l.index == nil {
		l.index, l.diagIndex = map[string]int{}, map[string]int{}
	}
	p := parser{log: l, input: name, observe: observe}
	if err := linescan.EachTail(r, maxLine, cutTailBytes, p.longLine); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	p.finish()
	l.Inputs = append(l.Inputs, Input{Name: name, Lines: p.lineNo, Records: p.records})
	return nil
}

// Check returns ErrNoKernels (wrapped with what was seen instead) when nothing at all was
// found: no kernel records and no build error that would explain their absence.
func (l *Log) Check() error {
	if len(l.Kernels) > 0 {
		return nil
	}
	var said []string
	for _, d := range l.Diagnostics {
		if d.Severity == "error" && d.Kind != "tool-missing" && d.Kind != "incomplete-record" {
			return nil // a failed build: the gate fails and names it
		}
		if len(said) < 5 {
			said = append(said, d.Text)
		}
	}
	if len(said) > 0 {
		return fmt.Errorf("%w; the input says:\n  %s", ErrNoKernels, strings.Join(said, "\n  "))
	}
	lines := 0
	for _, in := range l.Inputs {
		lines += in.Lines
	}
	switch {
	case lines == 0:
		return fmt.Errorf("%w: the input is empty", ErrNoKernels)
	case len(l.foreign) == 0:
		return fmt.Errorf("%w: %d blank lines", ErrNoKernels, lines)
	}
	return fmt.Errorf("%w in %d lines; instead the input starts with:\n  %s\n(build with `nvcc -Xptxas -v` or `--resource-usage`, or pass `cuobjdump --dump-resource-usage` output)",
		ErrNoKernels, lines, strings.Join(l.foreign, "\n  "))
}

type parser struct {
	log     *Log
	input   string
	observe Observer
	lineNo  int
	records int

	arch string // arch of the ptxas run or cuobjdump ELF being read
	// archless are a ptxas run's device functions printed before its first "Compiling
	// entry function ... for 'sm_XX'" line, which names the run's arch: they are filed
	// with it then (or as they are at the run's end).
	archless []*Kernel
	cmdArchs []string
	file     string // translation unit, when known
	gmem     *int64 // module-level global memory of the current ptxas run / ELF
	cuobjRes bool   // inside a cuobjdump "Resource usage:" listing
	cur      *Kernel
	curEntry bool // cur came from "Compiling entry function" and awaits its Used line
	curBad   bool // an error was filed about cur: flush does not add that it is incomplete
	// cutLine is the line number of the latest line when it was a resource line without a
	// line end: the last line of a cut log (checked when the input ends).
	cutLine int
	buf     []byte
	// Of the line being read: what it is (lineClass), and whether an error was filed about
	// it (errLine is its number then).
	class   lineClass
	errLine int
}

// lineClass is what a line was read as, which decides where a failure printed into it is
// looked for (parser.glued).
type lineClass int

const (
	// classForeign: not resource usage (build output, messages, source lines a compiler
	// quotes): only forms that no prose or path ends with count as a failure in it.
	classForeign lineClass = iota
	// classNamed: a tool's line that may end with a kernel's name ("Function properties
	// for NAME"): a signal's name glued right after a letter of it is taken for the name.
	classNamed
	// classRecord: a resource record line that names nothing (Used ..., the stack frame
	// line, REG:, GLOBAL:): no signal's name belongs anywhere in it.
	classRecord
)

var (
	// Shell xtrace of a command that runs nvcc: "+ nvcc ...", "++ /usr/local/cuda/bin/nvcc ...".
	xtraceNvcc = regexp.MustCompile(`^\++ .*\bnvcc\b`)
	// Line prefixes that CI systems add: GitHub Actions timestamps, BuildKit step and time.
	linePrefix = regexp.MustCompile(`^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z |#\d+ \d+(?:\.\d+)? )`)
	// nvcc's front end (EDG): "fa.cu(12): error: identifier "x" is undefined".
	edgError = regexp.MustCompile(`^(.*?\S)\((\d+)\): (?:catastrophic error|fatal error|error)\s*:?\s*(.*)$`)
	// clang / gcc: "fa.cu:12:5: error: use of undeclared identifier".
	clangError = regexp.MustCompile(`^(.*?\S):(\d+):(?:(\d+):)? (?:fatal |internal compiler )?error: (.*)$`)
	// ptxas on a PTX file: "ptxas /tmp/x.ptx, line 5; error   : Unknown symbol".
	ptxSyntax = regexp.MustCompile(`ptxas (.*?), line (\d+); (error|warning|fatal)\s*: (.*)$`)
	// A function ptxas names in a message: "... for function '_Z8few_regsPd', ...",
	// "Entry function '_Z...' uses too much shared data". Other quoted words are values
	// ("register count of '64'", "Value 'sm_80' is not defined for option 'gpu-name'").
	quotedFunction = regexp.MustCompile(`[Ff]unction '([^']+)'`)
	// "... at line 154 in function _Z9wmma_tilePK6__halfS1_Pf. Try ..."
	inFunction = regexp.MustCompile(`in function (\S+?)\.?(?:\s|$)`)
	archFlag   = regexp.MustCompile(`(?:-arch[= ]|--gpu-architecture[= ]|code=\[?)(sm_\d+[a-z]?)`)
	cuFile     = regexp.MustCompile(`(\S+\.cu)\b`)

	// Failed build steps besides the compilers' own errors. GNU make names a failed recipe
	// "make[2]: *** [x.o] Error 1" and one killed by a signal "make: *** [all] Killed".
	makeFailed = regexp.MustCompile(`^(?:\S*/)?(?:g|mingw32-)?make(?:\[\d+\])?: \*\*\* `)
	// The linker: "collect2: error: ld returned 1 exit status", "/usr/bin/ld: cannot find
	// -lcudart: ...", "clang: error: linker command failed ...", an undefined symbol.
	linkFailed = regexp.MustCompile(`\bld returned \d+ exit status|cannot find -l|linker command failed|\bundefined reference to\b|\blibrary not found for -l`)
	// A process that died: the shell's report of a signal, alone on its line ("Killed",
	// "Segmentation fault (core dumped)") or with the script line and the process ID
	// ("/bin/sh: line 1: 4242 Killed   nvcc ..."); an uncaught C++ exception ("terminate
	// called after throwing an instance of 'std::bad_alloc'", "  what():  std::bad_alloc");
	// a compiler out of memory or crashed.
	crashed = regexp.MustCompile(`^(?:(?:\S+: )?(?:line )?\d+:\s+\d+\s+` + signals + `(?: \(core dumped\))?(?:\s|$)|` + signals + `(?: \(core dumped\))?$)` +
		`|\bterminate called (?:after throwing|without an active exception)|what\(\):\s+std::bad_alloc|virtual memory exhausted|out of memory allocating|internal compiler error|\bdumped core\b`)
	// A driver or tool that says it failed: "gcc: error: x.o: No such file or directory",
	// "c++: fatal error: Killed signal terminated program cc1plus".
	toolError = regexp.MustCompile(`^[\w.+/-]+: (?:fatal )?error: `)
)

// signals are how bash reports a process a signal ended: signalNames as an expression.
var signals = `(?:` + strings.Join(signalNames, "|") + `)`

// failureHints are what every line that names a failed build holds; lines with none of
// them (nearly all of a big build log) are not matched against the expressions above.
var failureHints = [][]byte{
	[]byte("rror"), []byte("fatal"), []byte("FAILED"), []byte("not found"), []byte("build stopped"), []byte("***"),
	[]byte("Killed"), []byte("fault"), []byte("Aborted"), []byte("Terminated"), []byte("Illegal instruction"),
	[]byte("exception"), []byte("terminate called"), []byte("bad_alloc"), []byte("exhausted"), []byte("out of memory"),
	[]byte("dumped"), []byte("exit status"), []byte("cannot find -l"), []byte("linker"), []byte("undefined reference"),
	[]byte("library not found"), []byte("shared libraries"), []byte("died due to signal"), []byte("Bus error"),
	[]byte(logCutMarker),
}

// logCutMarker begins the line kernel-gate writes where it cut a log at its size cap: what
// followed (a spill report, a crash) was never read, so the log cannot pass.
const logCutMarker = "[kernel-gate: output cut here"

// hintStarts maps the first two bytes of the failure hints to the hints that begin with
// them (their index in hintGroups, plus one), so that failureHint compares a hint only
// where it may begin: one table lookup a byte for the lines (nearly all) that hold none.
// Every line is looked at: a failure can be printed into a resource line.
var hintStarts, hintGroups = func() (t [1 << 16]uint8, groups [][][]byte) {
	for _, h := range failureHints {
		k := uint16(h[0])<<8 | uint16(h[1])
		if t[k] == 0 {
			groups = append(groups, nil)
			t[k] = uint8(len(groups))
		}
		groups[t[k]-1] = append(groups[t[k]-1], h)
	}
	return t, groups
}()

// Why: docs/threat-model.md, threat-model T4.
func failureHint(t []byte) bool {
	for i := 0; i+1 < len(t); i++ {
		g := hintStarts[uint16(t[i])<<8|uint16(t[i+1])]
		if g == 0 {
			continue
		}
		for _, h := range hintGroups[g-1] {
			if bytes.HasPrefix(t[i:], h) {
				return true
			}
		}
	}
	return false
}

// longLine reads a line; tail is the end of one longer than maxLine (nil for others),
// whose middle was skipped. A tool's or a record's line cut so may have lost items: an
// error. Any other is read as far as it goes, and its end for a failure printed there
// (progress output without line ends, then a crash).
func (p *parser) longLine(raw, tail []byte) {
	p.line(raw)
	if tail == nil {
		return
	}
	if p.class != classForeign {
		p.recordError("incomplete-record", fmt.Sprintf("line %d is longer than %d MiB: it is cut there, and the record it holds may have lost items", p.lineNo, maxLine>>20))
		return
	}
	t := bytes.TrimRight(tail, "\r\n")
	if bytes.IndexByte(t, 0x1b) >= 0 {
		t = linescan.StripANSI(nil, t)
	}
	if !failureHint(t) {
		return
	}
	if at, kind := gluedAt(t, -1, classForeign); at >= 0 {
		p.gluedDiag(kind, t[at:])
	}
}

func (p *parser) line(raw []byte) {
	p.lineNo++
	p.cutLine = 0
	ended := len(raw) > 0 && raw[len(raw)-1] == '\n'
	line := bytes.TrimRight(raw, "\r\n")
	if bytes.IndexByte(line, 0x1b) >= 0 {
		p.buf = linescan.StripANSI(p.buf[:0], line)
		line = p.buf
	}
	if len(line) > 0 && (line[0] == '#' || line[0] >= '0' && line[0] <= '9') {
		if m := linePrefix.Find(line); m != nil {
			line = line[len(m):]
		}
	}
	// A tool's or a record's line is read without a failure printed into it, which is filed
	// on its own; a foreign line is first read whole, as a failure line may quote another
	// ("make: *** [x] Segmentation fault (core dumped)").
	hint := failureHint(line)
	if hint {
		line = p.gluedIntoRecord(line)
	}
	p.class = classForeign
	p.dispatch(line, ended, hint)
	if hint && p.class == classForeign && p.errLine != p.lineNo {
		if at, kind := gluedAt(line, -1, classForeign); at >= 0 {
			p.gluedDiag(kind, line[at:])
		}
	}
}

// dispatch reads one line as what it is.
func (p *parser) dispatch(line []byte, ended, hint bool) {
	if k := bytes.Index(line, []byte("ptxas ")); k >= 0 {
		if p.tool(line[k+len("ptxas "):], SourcePtxas, line, ended) {
			return
		}
	}
	if k := bytes.Index(line, []byte("nvlink ")); k >= 0 {
		if p.tool(line[k+len("nvlink "):], SourceNvlink, line, ended) {
			return
		}
	}
	if k := bytes.Index(line, []byte("bytes stack frame")); k >= 0 {
		p.class = classRecord
		p.stackLine(line)
		return
	}
	if p.cuobjdump(line) {
		return
	}
	p.foreign(line, hint)
}

// tool handles "ptxas info    : ..." style lines; rest starts after "ptxas ".
func (p *parser) tool(rest []byte, source string, whole []byte, ended bool) bool {
	level, msg, ok := cutLevel(rest)
	if !ok {
		if source == SourcePtxas && bytes.Contains(rest, []byte(", line ")) {
			if m := ptxSyntax.FindSubmatch(whole); m != nil {
				sev := "error"
				if string(m[3]) == "warning" {
					sev = "warning"
				}
				p.diag(sev, "ptx-"+string(m[3]), "", string(m[1]), lineNumber(string(m[2])), "ptxas "+string(m[1])+", line "+string(m[2])+": "+string(m[4]))
				return true
			}
		}
		return false
	}
	p.class = classNamed
	switch level {
	case "info":
		if bytes.HasPrefix(msg, []byte("Used ")) || bytes.HasPrefix(msg, []byte("used ")) || bytes.Contains(msg, []byte("bytes gmem")) {
			p.class = classRecord
		}
		if p.info(msg, source) && !ended {
			p.cutLine = p.lineNo
		}
	case "warning":
		p.warning(msg, source)
	default: // error, fatal
		kernel := ""
		if m := quotedFunction.FindSubmatch(msg); m != nil {
			kernel = string(m[1])
		} else if m := inFunction.FindSubmatch(msg); m != nil {
			kernel = string(m[1])
		}
		p.diag("error", source+"-"+level, kernel, "", 0, source+" "+level+": "+string(msg))
	}
	return true
}

// cutLevel splits "info    : msg" into ("info", "msg").
func cutLevel(rest []byte) (string, []byte, bool) {
	for _, lv := range [...]string{"info", "warning", "error", "fatal"} {
		if after, ok := bytes.CutPrefix(rest, []byte(lv)); ok {
			after = bytes.TrimLeft(after, " \t")
			if msg, ok := bytes.CutPrefix(after, []byte(":")); ok {
				return lv, bytes.TrimSpace(msg), true
			}
		}
	}
	return "", nil, false
}

// info handles an info line; it reports whether the line was a resource line (Used),
// whose items a cut could shorten without a trace.
func (p *parser) info(msg []byte, source string) bool {
	switch {
	case bytes.HasPrefix(msg, []byte("Compiling entry function ")):
		// Compiling entry function 'NAME' for 'sm_90a'
		rest := msg[len("Compiling entry function "):]
		name, arch := rest, []byte(nil)
		if k := bytes.LastIndex(rest, []byte("' for '")); k >= 0 {
			name, arch = rest[:k], bytes.Trim(rest[k+len("' for '"):], "'")
		}
		name = bytes.Trim(name, "'")
		p.flush()
		if len(arch) > 0 {
			p.arch = string(arch)
		}
		p.fileArchless()
		p.start(string(name), source, true)
		p.curEntry = true
	case bytes.HasPrefix(msg, []byte("Function properties for ")):
		name := string(bytes.TrimSuffix(bytes.Trim(bytes.TrimSuffix(msg[len("Function properties for "):], []byte(":")), "'"), []byte(":")))
		if p.cur != nil && p.cur.Name == name && p.cur.Source == source && p.cur.StackFrame == nil {
			return false // the properties of the entry function just announced
		}
		p.flush()
		p.start(name, source, source == SourceNvlink)
	case bytes.HasPrefix(msg, []byte("Used ")) || bytes.HasPrefix(msg, []byte("used ")):
		if p.cur == nil {
			p.diag("warning", "unattributed", "", "", 0, fmt.Sprintf("resource line with no function before it: %q", msg))
			return true
		}
		p.usage(msg[len("Used "):])
		if p.curEntry || source == SourceNvlink {
			p.flush()
		}
		return true
	case bytes.HasSuffix(msg, []byte("bytes gmem")) || bytes.Contains(msg, []byte("bytes gmem,")):
		// Module level: "0 bytes gmem" or "4096 bytes gmem, 1024 bytes cmem[3]". It opens a
		// new ptxas run (another arch or translation unit), whose arch its first entry
		// function will name.
		p.flush()
		p.fileArchless()
		p.gmem, p.arch = nil, ""
		if f := bytes.Fields(msg); len(f) >= 1 {
			if v, err := parseCount(f[0]); err == nil {
				p.gmem = &v
			} else {
				p.badNumber("", "global memory", err)
			}
		}
	}
	// Other info lines ("Compile time", "Overriding maximum register limit") carry nothing to gate.
	return false
}

// warning handles "ptxas warning : ...". Spill and local-memory warnings repeat what the
// function's properties say (the limits judge those), so they are notices.
func (p *parser) warning(msg []byte, source string) {
	kernel := ""
	if m := quotedFunction.FindSubmatch(msg); m != nil {
		kernel = string(m[1])
	}
	sev, kind := "warning", source+"-warning"
	if bytes.HasPrefix(msg, []byte("Registers are spilled")) || bytes.HasPrefix(msg, []byte("Local memory used")) {
		sev, kind = "notice", source+"-spill-warning"
	}
	p.diag(sev, kind, kernel, "", 0, source+" warning: "+string(msg))
}

func (p *parser) start(name, source string, entry bool) {
	k := &Kernel{Name: name, Arch: p.arch, Source: source, File: p.file, Input: p.input, Line: p.lineNo, Gmem: p.gmem}
	if source == SourceNvlink && len(p.cmdArchs) == 1 {
		k.Arch = p.cmdArchs[0] // nvlink does not print the arch; the nvcc command named one
	}
	if source != SourceCuobjdump {
		k.Entry = &entry
	}
	p.cur, p.curEntry, p.curBad = k, false, false
}

// usage parses the items after "Used ": "22 registers, used 0 barriers, 512 bytes smem,
// 376 bytes cmem[0], 2048 bytes cumulative stack size, 8 bytes lmem", nvlink's "0 stack".
// Every item is "N unit": a count without its unit, or with the start of one, is a cut
// line (or a count printed with a thousands separator, "1,676", which the comma splits);
// a count that does not parse is an error; an item of a unit no toolkit printed so far
// is a notice.
func (p *parser) usage(items []byte) {
	k := p.cur
	for item := range splitItems(items) {
		f := bytes.Fields(item)
		if len(f) > 0 && string(f[0]) == "used" {
			f = f[1:]
		}
		if len(f) < 2 {
			p.recordError("incomplete-record", fmt.Sprintf("resource item %q of %s (%s) has no unit: the line is cut, or a count was printed with a thousands separator",
				bytes.TrimSpace(item), k.Name, k.Arch))
			continue
		}
		v, err := parseSum(f[0])
		if err != nil {
			p.badNumber(k.Name, fmt.Sprintf("resource item %q", bytes.TrimSpace(item)), err)
			continue
		}
		unit := string(f[1])
		if unit == "bytes" && len(f) >= 3 {
			unit = string(bytes.Join(f[2:], []byte(" ")))
		}
		switch {
		case unit == "registers" || unit == "register":
			k.Registers = &v
		case unit == "barriers" || unit == "barrier":
			k.Barriers = &v
		case unit == "smem":
			k.Smem = &v
		case unit == "lmem":
			k.Lmem = &v
		case unit == "cumulative stack size":
			k.CumulativeStack = &v
		case unit == "stack": // nvlink: "0 stack" is the stack frame
			k.StackFrame = &v
		case strings.HasPrefix(unit, "cmem[") && strings.HasSuffix(unit, "]") && len(unit) > len("cmem[]"):
			bank := unit[5 : len(unit)-1]
			if _, err := parseCount([]byte(bank)); err != nil {
				p.badNumber(k.Name, fmt.Sprintf("constant bank of %q", bytes.TrimSpace(item)), err)
				continue
			}
			if k.Cmem == nil {
				k.Cmem = map[string]int64{}
			}
			k.Cmem[bank] = v
		case unit == "textures" || unit == "samplers" || unit == "surfaces" || unit == "texture" || unit == "sampler" || unit == "surface":
		case cutUnit(unit, usageUnits):
			p.recordError("incomplete-record", fmt.Sprintf("resource item %q of %s (%s) ends in the middle of its unit: the line is cut",
				bytes.TrimSpace(item), k.Name, k.Arch))
		default:
			p.diag("notice", "unknown-item", k.Name, "", 0, fmt.Sprintf("unrecognised resource item %q", bytes.TrimSpace(item)))
		}
	}
}

// splitItems splits a resource line at its item separators: a comma not followed by a
// digit. ptxas and nvlink print ", " between items, so "1,676 bytes spill stores" stays one
// item, whose count parseCount then refuses for its thousands separator, instead of
// becoming "1" and "676 bytes spill stores".
func splitItems(b []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		start := 0
		for i := 0; i < len(b); i++ {
			if b[i] == ',' && !(i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9') {
				if !yield(b[start:i]) {
					return
				}
				start = i + 1
			}
		}
		yield(b[start:])
	}
}

// Units of the items of a Used line and of the stack frame line, for cutUnit.
var (
	usageUnits = []string{"registers", "barriers", "bytes smem", "bytes lmem", "bytes cumulative stack size", "stack",
		"bytes cmem[", "textures", "samplers", "surfaces"}
	stackUnits = []string{"stack frame", "spill stores", "spill loads"}
)

// cutUnit reports whether unit is a proper start of a known unit ("regis", "bytes",
// "bytes cmem[0"): what is left of an item whose line was cut.
func cutUnit(unit string, known []string) bool {
	for _, u := range known {
		if strings.HasPrefix(u, unit) && len(unit) < len(u) {
			return true
		}
		if b, ok := strings.CutPrefix(u, "bytes "); ok && strings.HasPrefix(b, unit) && len(unit) < len(b) {
			return true // the unit after "bytes", which usage has already joined
		}
		if strings.HasSuffix(u, "[") && strings.HasPrefix(unit, strings.TrimPrefix(u, "bytes ")) && !strings.HasSuffix(unit, "]") {
			return true // "cmem[0" without its bracket
		}
	}
	return false
}

// stackLine parses "    2048 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads".
// ptxas prints all three items on every such line: one missing, cut or not a count is an
// error.
func (p *parser) stackLine(line []byte) {
	if p.cur == nil {
		p.diag("warning", "unattributed", "", "", 0, fmt.Sprintf("stack frame line with no function before it: %q", bytes.TrimSpace(line)))
		return
	}
	k := p.cur
	var seen [3]bool
	bad := false
	first := true
	for item := range splitItems(line) {
		f := bytes.Fields(item)
		// The value is the field before "bytes"; on the first item a prefix (a timestamp)
		// may precede it.
		at := -1
		for i := 1; i < len(f); i++ {
			if string(f[i]) == "bytes" {
				at = i
				break
			}
		}
		if at < 0 || (!first && at != 1) {
			bad = true
			p.recordError("incomplete-record", fmt.Sprintf("stack frame item %q of %s (%s) is not \"N bytes ...\": the line is cut, or a count was printed with a thousands separator",
				bytes.TrimSpace(item), k.Name, k.Arch))
			first = false
			continue
		}
		first = false
		what := string(bytes.Join(f[at+1:], []byte(" ")))
		v, err := parseCount(f[at-1])
		if err != nil {
			bad = true
			p.badNumber(k.Name, fmt.Sprintf("stack frame item %q", bytes.TrimSpace(item)), err)
			continue
		}
		switch what {
		case "stack frame":
			k.StackFrame, seen[0] = &v, true
		case "spill stores":
			k.SpillStores, seen[1] = &v, true
		case "spill loads":
			k.SpillLoads, seen[2] = &v, true
		default:
			bad = true
			p.recordError("incomplete-record", fmt.Sprintf("stack frame item %q of %s (%s) is not a stack frame, spill stores or spill loads: the line is cut or garbled",
				bytes.TrimSpace(item), k.Name, k.Arch))
		}
	}
	if bad {
		return
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, stackUnits[i])
		}
	}
	if len(missing) > 0 {
		p.recordError("incomplete-record", fmt.Sprintf("the stack frame line of %s (%s) has no %s: the line is cut",
			k.Name, k.Arch, strings.Join(missing, " or ")))
	}
}

// cuobjdump handles the --dump-resource-usage listing.
func (p *parser) cuobjdump(line []byte) bool {
	t := bytes.TrimSpace(line)
	switch {
	case bytes.Equal(t, []byte("Fatbin elf code:")) || bytes.Equal(t, []byte("Fatbin ptx code:")):
		p.flush()
		p.cuobjRes, p.gmem, p.arch = false, nil, ""
		return true
	case bytes.HasPrefix(t, []byte("arch = ")):
		p.class = classRecord
		p.arch = string(bytes.TrimSpace(t[len("arch = "):]))
		return true
	case bytes.HasPrefix(t, []byte("identifier = ")):
		p.file = string(bytes.TrimSpace(t[len("identifier = "):]))
		return true
	case bytes.Equal(t, []byte("Resource usage:")):
		p.flush()
		p.cuobjRes = true
		return true
	}
	if !p.cuobjRes {
		return false
	}
	switch {
	case bytes.Equal(t, []byte("Common:")):
		return true
	case bytes.HasPrefix(t, []byte("GLOBAL:")):
		p.class = classRecord
		p.commonLine(t)
		return true
	case bytes.HasPrefix(t, []byte("Function ")) && bytes.HasSuffix(t, []byte(":")):
		p.class = classNamed
		p.flush()
		p.start(string(t[len("Function "):len(t)-1]), SourceCuobjdump, true)
		return true
	case bytes.HasPrefix(t, []byte("REG:")):
		p.class = classRecord
		if p.cur == nil {
			p.diag("warning", "unattributed", "", "", 0, fmt.Sprintf("resource line with no function before it: %q", msgtext.Clip(string(t), 200)))
			return true
		}
		p.regLine(t)
		p.flush()
		return true
	}
	if len(t) > 0 {
		p.cuobjRes = false // anything else ends the listing
	}
	return false
}

// commonLine parses the module's own line under "Common:": "GLOBAL:0", or with the
// module's constant banks, "GLOBAL:28 CONSTANT[4]:224" (a PyTorch extension's). GLOBAL is
// the gmem of every kernel after it; a constant bank of the module is no kernel's.
func (p *parser) commonLine(t []byte) {
	p.gmem = nil
	for _, kv := range bytes.Fields(t) {
		key, val, ok := bytes.Cut(kv, []byte(":"))
		v, err := parseCount(val)
		switch {
		case !ok:
			p.diag("error", "incomplete-record", "", "", 0, fmt.Sprintf("field %q of the module's GLOBAL line is not KEY:COUNT: the line is cut or garbled", msgtext.Clip(string(kv), 80)))
		case err != nil:
			p.badNumber("", string(key), err)
		case string(key) == "GLOBAL":
			p.gmem = &v
		case bytes.HasPrefix(key, []byte("CONSTANT[")) && bytes.HasSuffix(key, []byte("]")):
		default:
			p.diag("notice", "unknown-item", "", "", 0, fmt.Sprintf("unrecognised module resource field %q", msgtext.Clip(string(kv), 80)))
		}
	}
}

// regFields are the fields every cuobjdump REG line has, in its order; CONSTANT[N] banks
// come between LOCAL and TEXTURE.
var regFields = [...]string{"REG", "STACK", "SHARED", "LOCAL", "TEXTURE", "SURFACE", "SAMPLER"}

// regLine parses cuobjdump's "REG:22 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:552 TEXTURE:0
// SURFACE:0 SAMPLER:0". Each field is KEY:COUNT; a line without all of regFields is cut
// (REG:12 of REG:127 ...), a count that does not parse is an error.
func (p *parser) regLine(t []byte) {
	k := p.cur
	var seen [len(regFields)]bool
	bad := false
	for _, kv := range bytes.Fields(t) {
		key, val, ok := bytes.Cut(kv, []byte(":"))
		if !ok {
			bad = true
			p.recordError("incomplete-record", fmt.Sprintf("field %q of the REG line of %s is not KEY:COUNT: the line is cut or garbled", msgtext.Clip(string(kv), 80), k.Name))
			continue
		}
		v, err := parseCount(val)
		if err != nil {
			bad = true
			p.badNumber(k.Name, string(key), err)
			continue
		}
		switch key := string(key); {
		case key == "REG":
			k.Registers = &v
		case key == "STACK":
			k.StackFrame = &v
		case key == "SHARED":
			k.Smem = &v
		case key == "LOCAL":
			k.Lmem = &v
		case strings.HasPrefix(key, "CONSTANT[") && strings.HasSuffix(key, "]"):
			bank := key[len("CONSTANT[") : len(key)-1]
			if _, err := parseCount([]byte(bank)); err != nil {
				bad = true
				p.badNumber(k.Name, key, err)
				continue
			}
			if k.Cmem == nil {
				k.Cmem = map[string]int64{}
			}
			k.Cmem[bank] = v
		case key == "TEXTURE" || key == "SURFACE" || key == "SAMPLER":
		default:
			p.diag("notice", "unknown-item", k.Name, "", 0, fmt.Sprintf("unrecognised resource field %q", msgtext.Clip(string(kv), 80)))
		}
		for i, f := range regFields {
			if f == string(key) {
				seen[i] = true
			}
		}
	}
	if bad {
		return
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, regFields[i])
		}
	}
	if len(missing) > 0 {
		p.recordError("incomplete-record", fmt.Sprintf("the REG line of %s (%s) has no %s: the listing is cut",
			k.Name, k.Arch, strings.Join(missing, ", ")))
	}
}

// recordError files an error about the record being read.
func (p *parser) recordError(kind, text string) {
	name := ""
	if p.cur != nil {
		name = p.cur.Name
		p.curBad = true
	}
	p.diag("error", kind, name, "", 0, text)
}

// badNumber files an error for a count that does not parse (what names it).
func (p *parser) badNumber(kernel, what string, err error) {
	if p.cur != nil {
		p.curBad = true
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	if kernel != "" {
		msg = fmt.Sprintf("%s of %s: %v", what, kernel, err)
	}
	p.diag("error", "bad-number", kernel, "", 0, msg)
}

// foreign handles a line that is not resource usage: build-tool output, compiler errors.
// It runs for most lines of a big build log, so it looks at bytes and makes a string only
// for the few lines that matter (hint: the line holds a failure hint, failureHint).
func (p *parser) foreign(line []byte, hint bool) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return
	}
	if p.observe != nil {
		p.observe(p.input, p.lineNo, string(t))
	}
	if len(p.log.foreign) < 5 {
		p.log.foreign = append(p.log.foreign, msgtext.Clip(string(t), 200))
	}
	// Which translation unit and arch come next: shell xtrace of nvcc ("+ nvcc ... -c fa.cu")
	// and ninja's "[1/3] Building CUDA object .../fa.cu.o" are printed right before their
	// output. Plain make echo lines are not used: with make -j they need not be.
	hasNvcc := bytes.Contains(t, []byte("nvcc"))
	if bytes.Contains(t, []byte("Building CUDA object ")) || hasNvcc && xtraceNvcc.Match(t) {
		// A command that compiles several files at once names no single one.
		if m := cuFile.FindAll(t, -1); len(m) == 1 {
			p.file = strings.TrimPrefix(cmakeObjectPath(string(m[0])), "./")
		} else {
			p.file = ""
		}
	}
	if hasNvcc {
		if m := archFlag.FindAllSubmatch(t, -1); m != nil {
			p.cmdArchs = p.cmdArchs[:0]
			for _, a := range m {
				p.cmdArchs = append(p.cmdArchs, string(a[1]))
			}
		}
	}
	if !hint {
		return
	}
	if d, ok := failureLine(string(t)); ok {
		p.addDiag(d)
	}
}

// failureLine reads s, a whole line, as a failed build step's report: an error diagnostic
// when it is one.
func failureLine(s string) (Diagnostic, bool) {
	d := Diagnostic{Severity: "error", Text: s}
	switch {
	case strings.HasPrefix(s, logCutMarker):
		d.Kind = KindLogCut
	case strings.HasPrefix(s, "nvcc fatal") || strings.HasPrefix(s, "nvcc error") || strings.HasPrefix(s, "cuobjdump fatal") || strings.HasPrefix(s, "nvlink error") || strings.HasPrefix(s, "nvlink fatal") ||
		strings.HasPrefix(s, "nvdisasm fatal") || strings.HasPrefix(s, "nvdisasm error"):
		d.Kind = "tool-error"
	case edgError.MatchString(s):
		m := edgError.FindStringSubmatch(s)
		d.Kind, d.File, d.Line = "compile-error", m[1], lineNumber(m[2])
	case clangError.MatchString(s):
		m := clangError.FindStringSubmatch(s)
		// m[3] is "" when the line has no column: 0
		d.Kind, d.File, d.Line, d.Column = "compile-error", m[1], lineNumber(m[2]), lineNumber(m[3])
	case strings.Contains(s, "error detected in the compilation of") || strings.Contains(s, "errors detected in the compilation of"):
		d.Kind = "compile-error"
	case strings.HasPrefix(s, "make") && strings.Contains(s, "***") && strings.Contains(s, "Error"),
		makeFailed.MatchString(s) && !strings.Contains(s, "Waiting for unfinished jobs"),
		strings.HasPrefix(s, "ninja: build stopped"), strings.HasPrefix(s, "FAILED: "), strings.HasPrefix(s, "CMake Error"):
		d.Kind = "build-failed"
	case linkFailed.MatchString(s):
		d.Kind = "link-error"
	case strings.Contains(s, "error while loading shared libraries"):
		d.Kind = "loader-error"
	case crashed.MatchString(s):
		d.Kind = "crashed"
	case toolError.MatchString(s):
		d.Kind = "build-failed"
	case strings.HasSuffix(s, "command not found") || strings.HasSuffix(s, ": not found"):
		for _, tool := range [...]string{"nvcc", "ptxas", "cuobjdump", "nvlink", "nvdisasm"} {
			if strings.Contains(s, tool+": ") {
				d.Kind = "tool-missing"
				return d, true
			}
		}
		return d, false
	default:
		return d, false
	}
	return d, true
}

// Failures printed into another line. Parallel builds (make -j, ninja) write to one pipe,
// and a tool's output goes out in blocks that need not end at a line end: a crash report, a
// killed compiler's or a compiler error, which always ends its own line, can follow the
// start of another ("..., 376 bytes cmem[0]Segmentation fault (core dumped)"). Each
// expression's group 1 is where the failure begins.
var gluedFailures = []struct {
	re *regexp.Regexp
	// lits are words every match holds: re runs only on a line with one of them.
	lits [][]byte
	kind string
}{
	// nvcc, ptxas or another CUDA tool saying it failed: "nvcc error   : 'cicc' died due to
	// signal 9 (Kill signal)", "ptxas fatal   : Unresolved extern function 'f'".
	{regexp.MustCompile(`((?:nvcc|ptxas|nvlink|cuobjdump|fatbinary|nvdisasm|cicc|cudafe\+\+) +(?:error|fatal) *:)`), words("error", "fatal"), "tool-error"},
	{regexp.MustCompile(`(\S+ died due to signal \d+)`), words("died due to signal"), "crashed"},
	// The shell's report of a signal with the process ID: "line 1: 4242 Killed   nvcc ...".
	{regexp.MustCompile(`((?:line )?\d+:\s+\d+\s+` + signals + `)(?:\s|$)`), words(signalNames...), "crashed"},
	{regexp.MustCompile(`(` + signals + ` \(core dumped\))`), words("(core dumped)"), "crashed"},
	// A signal's name of several words ends no name and no prose without a space before it.
	{regexp.MustCompile(`\S((?:Segmentation fault|Bus error|Illegal instruction|Floating point exception))$`), words("Segmentation fault", "Bus error", "Illegal instruction", "Floating point exception"), "crashed"},
	{regexp.MustCompile(`(terminate called (?:after throwing|without an active exception)|what\(\):\s+std::bad_alloc|virtual memory exhausted|out of memory allocating|internal compiler error|dumped core)`),
		words("terminate called", "bad_alloc", "virtual memory exhausted", "out of memory allocating", "internal compiler error", "dumped core"), "crashed"},
	// nvcc's front end ("x.cu(12): error: ..."), clang and gcc ("x.cu:12:5: error: ...").
	// None starts at a word boundary: glued, it follows a letter as often as not.
	{regexp.MustCompile(`\S(\(\d+\): (?:catastrophic error|fatal error|error)\b|:\d+:(?:\d+:)? (?:fatal )?error: )|(errors? detected in the compilation of)`), words("error"), "compile-error"},
	{regexp.MustCompile(`(make(?:\[\d+\])?: \*\*\* |ninja: build stopped|CMake Error)`), words("***", "build stopped", "CMake Error"), "build-failed"},
	// The host compiler's driver: "cc1plus: fatal error: Killed signal terminated program".
	{regexp.MustCompile(`((?:cc1plus|cc1|gcc|g\+\+|c\+\+|clang\+\+|clang|collect2): (?:fatal )?error: )`), words("error"), "build-failed"},
	{regexp.MustCompile(`(ld returned \d+ exit status|cannot find -l\S|linker command failed|undefined reference to)`), words("exit status", "cannot find -l", "linker command failed", "undefined reference to"), "link-error"},
	{regexp.MustCompile(`(error while loading shared libraries)`), words("error while loading shared libraries"), "loader-error"},
}

// signalNames are how bash reports a process a signal ended.
var signalNames = []string{"Killed", "Segmentation fault", "Aborted", "Bus error", "Illegal instruction", "Floating point exception", "Terminated"}

func words(ws ...string) [][]byte {
	out := make([][]byte, len(ws))
	for i, w := range ws {
		out[i] = []byte(w)
	}
	return out
}

var (
	// A signal's name glued to the end of a tool's line right after a quote, bracket or
	// other mark that ends no kernel name ("for 'sm_90'Killed", "cmem[0]Aborted"). After a
	// letter or digit it could be the end of the name ("Function properties for isKilled").
	gluedSignalAfterMark = regexp.MustCompile(`[^\w$.\s](` + signals + `)$`)
	// Any signal's name in a record line, which holds only counts and units.
	signalWord = regexp.MustCompile(`(` + signals + `)`)
)

// classAt tells a tool's line and a record line from any other, before they are read
// (where a failure printed into them can be told from their own text depends on it), and
// where the tool's name begins on a tool's line ("ptxas info ..."), else -1.
func classAt(line []byte) (lineClass, int) {
	for _, tool := range [...]string{"ptxas ", "nvlink "} {
		k := bytes.Index(line, []byte(tool))
		if k < 0 {
			continue
		}
		level, msg, ok := cutLevel(line[k+len(tool):])
		if !ok {
			continue
		}
		if level == "info" && (bytes.HasPrefix(msg, []byte("Used ")) || bytes.HasPrefix(msg, []byte("used ")) || bytes.Contains(msg, []byte("bytes gmem"))) {
			return classRecord, k
		}
		return classNamed, k
	}
	t := bytes.TrimSpace(line)
	switch {
	case bytes.Contains(line, []byte("bytes stack frame")), bytes.HasPrefix(t, []byte("REG:")), bytes.HasPrefix(t, []byte("GLOBAL:")), bytes.HasPrefix(t, []byte("arch = ")):
		return classRecord, -1
	case bytes.HasPrefix(t, []byte("Function ")):
		return classNamed, -1
	}
	return classForeign, -1
}

// gluedIntoRecord files a failure printed into a tool's or a record's line, before it
// ("Killedptxas info    : Used ...") or after its start ("..., 376 bytes cmem[0]Segmentation
// fault (core dumped)"), and returns the line without it, to be read as the tool printed
// it. A tool's own error line ("ptxas fatal   : ...") is no failure inside itself.
func (p *parser) gluedIntoRecord(line []byte) []byte {
	class, toolAt := classAt(line)
	if class == classForeign {
		return line
	}
	if toolAt > 0 {
		if pre := bytes.TrimSpace(line[:toolAt]); len(pre) > 0 {
			if d, ok := failureLine(string(pre)); ok {
				p.gluedDiag(d.Kind, pre)
				return line[toolAt:]
			}
		}
	}
	at, kind := gluedAt(line, toolAt, class)
	switch {
	case at < 0:
		return line
	case at == 0 && toolAt < 0:
		// Before a record line with no tool's name (a stack frame line): the record reads
		// with it, as with any prefix.
		p.gluedDiag(kind, line)
		return line
	}
	p.gluedDiag(kind, line[at:])
	return line[:at]
}

// gluedAt is where the first failure printed into line after the tool's name at toolAt
// (-1: none) begins (gluedFailures; and, by the line's class, a signal's name alone), and
// its kind; -1 for none.
func gluedAt(line []byte, toolAt int, class lineClass) (int, string) {
	// After the tool's own words ("ptxas fatal   : ..."), which are no failure inside them.
	from := toolAt + 1
	rest := line[from:]
	at, kind := -1, ""
	for _, g := range gluedFailures {
		if !slices.ContainsFunc(g.lits, func(l []byte) bool { return bytes.Contains(rest, l) }) {
			continue
		}
		if m := g.re.FindSubmatchIndex(rest); m != nil {
			start := m[2]
			if start < 0 {
				start = m[4] // the expression's second group matched
			}
			if at < 0 || start < at {
				at, kind = start, g.kind
			}
		}
	}
	if at < 0 {
		var m []int
		switch class {
		case classRecord:
			m = signalWord.FindSubmatchIndex(rest)
		case classNamed:
			m = gluedSignalAfterMark.FindSubmatchIndex(rest)
		}
		if m == nil {
			return -1, ""
		}
		at, kind = m[2], "crashed"
	}
	return from + at, kind
}

// gluedDiag files a failure found inside another line, saying so.
func (p *parser) gluedDiag(kind string, text []byte) {
	p.diag("error", kind, "", "", 0, string(bytes.TrimSpace(text))+" "+gluedNote)
}

// gluedNote ends the text of a failure found inside another line.
const gluedNote = "(printed into another line of the log, without a line end between them, as the output of parallel builds interleaves)"

// cmakeObjectPath turns CMake's "CMakeFiles/t.dir/src/fa.cu" into "src/fa.cu".
func cmakeObjectPath(s string) string {
	if i := strings.Index(s, ".dir/"); i >= 0 && strings.Contains(s[:i], "CMakeFiles/") {
		return s[i+len(".dir/"):]
	}
	return s
}

func (p *parser) diag(sev, kind, kernel, file string, line int, text string) {
	p.addDiag(Diagnostic{Severity: sev, Kind: kind, Kernel: kernel, File: file, Line: line, Text: text})
}

// addDiag files d as read at the current input line, or counts it again when the same
// message came before (a log concatenated from reruns).
func (p *parser) addDiag(d Diagnostic) {
	if d.Severity == "error" {
		p.errLine = p.lineNo
	}
	d.Text = msgtext.Clip(d.Text, 2000)
	key := strings.Join([]string{d.Severity, d.Kind, d.Kernel, d.File, strconv.Itoa(d.Line), strconv.Itoa(d.Column), d.Text}, "\x00")
	if i, dup := p.log.diagIndex[key]; dup {
		p.log.Diagnostics[i].Count++
		return
	}
	p.log.diagIndex[key] = len(p.log.Diagnostics)
	d.Input, d.InputLn, d.Count = p.input, p.lineNo, 1
	p.log.Diagnostics = append(p.log.Diagnostics, d)
}

// flush files the record being read.
func (p *parser) flush() {
	k := p.cur
	if k == nil {
		return
	}
	bad := p.curBad
	p.cur, p.curEntry, p.curBad = nil, false, false
	switch {
	case bad: // its error is filed
	case k.Source == SourceCuobjdump && k.Registers == nil:
		p.diag("error", "incomplete-record", k.Name, "", 0,
			fmt.Sprintf("the record for %s (%s) that starts at line %d has no \"REG:\" line: the listing is truncated or garbled", k.Name, k.Arch, k.Line))
	case k.Entry != nil && *k.Entry && k.Registers == nil:
		p.diag("error", "incomplete-record", k.Name, "", 0,
			fmt.Sprintf("the record for %s (%s) that starts at line %d has no \"Used N registers\" line: the log is truncated or garbled", k.Name, k.Arch, k.Line))
	case k.Source == SourcePtxas && k.Entry != nil && !*k.Entry && k.StackFrame == nil:
		p.diag("error", "incomplete-record", k.Name, "", 0,
			fmt.Sprintf("the record for %s (%s) that starts at line %d has no \"bytes stack frame\" line: the log is truncated or garbled", k.Name, k.Arch, k.Line))
	}
	p.records++
	if k.Arch == "" && k.Source == SourcePtxas && k.Entry != nil && !*k.Entry {
		p.archless = append(p.archless, k)
		return
	}
	p.fileRecord(k)
}

// fileArchless files the device functions waiting for their run's arch, with p.arch.
func (p *parser) fileArchless() {
	for _, k := range p.archless {
		k.Arch = p.arch
		p.fileRecord(k)
	}
	p.archless = p.archless[:0]
}

// fileRecord adds a finished record to the log, once.
func (p *parser) fileRecord(k *Kernel) {
	key := k.key()
	if _, dup := p.log.index[key]; dup {
		return // the same record again (a concatenated or repeated log)
	}
	k.Demangled = kernelname.Parse(k.Name).Demangled
	p.log.index[key] = len(p.log.Kernels)
	p.log.Kernels = append(p.log.Kernels, *k)
}

// finish files the last record (flush reports it when it is incomplete) and refuses a
// log whose last line is a resource line without a line end: a cut there can drop whole
// items ("..., 45056 bytes smem" of "..., 45056 bytes smem, 392 bytes cmem[0]") and leave
// nothing else to see.
func (p *parser) finish() {
	p.flush()
	p.fileArchless()
	if p.cutLine > 0 {
		p.addDiag(Diagnostic{Severity: "error", Kind: "incomplete-record",
			Text: fmt.Sprintf("the last line (%d) is a resource line without a line end: the log is cut, and the record it ends may have lost items", p.cutLine)})
	}
}

// key identifies a record by everything it says, so identical repeats collapse and records
// that differ (the same kernel built twice with other flags) are both kept.
func (k *Kernel) key() string {
	var b strings.Builder
	b.WriteString(k.Source)
	b.WriteByte(0)
	b.WriteString(k.Name)
	b.WriteByte(0)
	b.WriteString(k.Arch)
	for _, v := range []*int64{k.Registers, k.Barriers, k.StackFrame, k.SpillStores, k.SpillLoads, k.CumulativeStack, k.Smem, k.Lmem, k.Gmem} {
		b.WriteByte(0)
		if v != nil {
			b.WriteString(strconv.FormatInt(*v, 10))
		}
	}
	for bank, v := range sortedBanks(k.Cmem) {
		fmt.Fprintf(&b, "\x00c%s=%d", bank, v)
	}
	return b.String()
}
