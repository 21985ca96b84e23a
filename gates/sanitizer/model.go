package sanitizer

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Tools, in the order RunTools runs them by default.
const (
	ToolMemcheck  = "memcheck"
	ToolRacecheck = "racecheck"
	ToolInitcheck = "initcheck"
	ToolSynccheck = "synccheck"
)

// AllTools lists the four tools in their default order.
func AllTools() []string {
	return []string{ToolMemcheck, ToolRacecheck, ToolInitcheck, ToolSynccheck}
}

func validTool(t string) bool {
	switch t {
	case ToolMemcheck, ToolRacecheck, ToolInitcheck, ToolSynccheck:
		return true
	}
	return false
}

// Kinds of reported error sites: a closed list, so that suppressions and policies can name
// them. Each says which tool reports it and from what.
const (
	// KindOutOfBounds: memcheck "Invalid __global__ write of size 4 bytes ... Access to 0x..
	// is out of bounds" (shared, local and host-API accesses too). An address that is in no
	// allocation at all, such as a null pointer, is also reported as out of bounds.
	KindOutOfBounds = "out-of-bounds"
	// KindMisaligned: memcheck "... Access to 0x.. is misaligned".
	KindMisaligned = "misaligned"
	// KindInvalidAddress: a memcheck "Invalid ... of size N" access whose record names
	// neither out of bounds nor misaligned (another or a newer reason).
	KindInvalidAddress = "invalid-address"
	// KindRaceRAW, KindRaceWAR, KindRaceWAW: racecheck hazards or race reports between a
	// first access and a second of these directions (Write then Read is RAW).
	KindRaceRAW = "race-raw"
	KindRaceWAR = "race-war"
	KindRaceWAW = "race-waw"
	// KindRace: a racecheck analysis report whose pairs are of several directions
	// ("Race reported between Write access ... and Write access ... and Read access ...").
	KindRace = "race"
	// KindUninitializedRead: initcheck "Uninitialized __global__ memory read of size 4
	// bytes", or a host API call (cudaMemcpy) reading device memory never written.
	KindUninitializedRead = "uninitialized-read"
	// KindUnusedMemory: initcheck --track-unused-memory "Unused memory in allocation".
	KindUnusedMemory = "unused-memory"
	// KindBarrierDivergence: synccheck "Barrier error detected. Divergent thread(s) in
	// warp" (or block): a __syncthreads/__syncwarp that not every thread reaches.
	KindBarrierDivergence = "barrier-divergence"
	// KindInvalidBarrier: any other synccheck barrier error (invalid arguments, a missing
	// barrier initialization, ...).
	KindInvalidBarrier = "invalid-barrier"
	// KindLeak: memcheck --leak-check full "Leaked N bytes at 0x..": a device allocation
	// never freed. compute-sanitizer counts leaks in the ERROR SUMMARY.
	KindLeak = "leak"
	// KindAPIError: "Program hit cudaErrorX (error N) due to ... on CUDA API call to Y": a
	// CUDA API call that failed (often the launch failure that a device error causes).
	KindAPIError = "api-error"
	// KindDeviceAssert: a device-side assert() that failed ("Warp assert").
	KindDeviceAssert = "device-assert"
	// KindHardwareException: an imprecise device exception ("Warp Illegal Address",
	// "Illegal Instruction", "Hardware Exception", ...), reported without a precise access.
	KindHardwareException = "hardware-exception"
	// KindDeviceHeap: memcheck "Malloc/Free error encountered" on the device heap.
	KindDeviceHeap = "device-heap"
	// KindUnspecified: a record the parser does not recognise; it still counts, so that a
	// new kind of error never passes silently.
	KindUnspecified = "unspecified"
)

// Kinds lists every kind.
func Kinds() []string {
	return []string{KindOutOfBounds, KindMisaligned, KindInvalidAddress, KindRaceRAW, KindRaceWAR,
		KindRaceWAW, KindRace, KindUninitializedRead, KindUnusedMemory, KindBarrierDivergence,
		KindInvalidBarrier, KindLeak, KindAPIError, KindDeviceAssert, KindHardwareException,
		KindDeviceHeap, KindUnspecified}
}

func validKind(k string) bool {
	for _, v := range Kinds() {
		if k == v {
			return true
		}
	}
	return false
}

// Severities of records, as the tool classified them.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Record is one reported error site after grouping: identical sites (same tool, kind,
// kernel, file, line and access) are one Record with a Count.
type Record struct {
	Tool     string `json:"tool"`
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	// Kernel is the function as the tool printed it: mangled (--demangle no, or taken from
	// the XML host stack) or demangled; Function is its demangled display form.
	Kernel   string `json:"kernel,omitempty"`
	Function string `json:"function,omitempty"`
	// File and Line are the source location, when the binary has line info (-lineinfo).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Thread and Block are those of the first occurrence, e.g. "(0,0,0)".
	Thread string `json:"thread,omitempty"`
	Block  string `json:"block,omitempty"`
	// Access describes what was done, e.g. "__global__ write of size 4 bytes" or
	// "Write access at bugs.cu:14 and Read access at bugs.cu:15".
	Access string `json:"access,omitempty"`
	// Count is how many records the log (or XML) printed for this site.
	Count int `json:"count"`
	// Hazards is what a racecheck analysis report says it stands for ("[264 hazards]").
	Hazards int `json:"hazards,omitempty"`
	// Message is the tool's own first line of the first occurrence.
	Message string `json:"message"`
	// HeldBy names the memory allocator a leak's allocation came from when it is a
	// framework's pool rather than the program's own cudaMalloc: "PyTorch" for PyTorch's
	// CUDA caching allocator, whose blocks (a tensor's storage, or the cached pool) a Python
	// process never frees before its CUDA context ends. See HeldByOf.
	HeldBy string `json:"held_by,omitempty"`
	// Library names the CUDA library a leak's memory was allocated inside ("cuBLAS"): a
	// handle or plan the program created and never destroyed (see libraries).
	Library string `json:"library,omitempty"`
	// sides are a racecheck analysis report's other sides, which the Access lists; nil for
	// every other record.
	sides []raceSide
}

// HeldByOf names the framework allocator of an allocation site (a leak's first host frame
// outside the CUDA runtime, "c10::cuda::CUDACachingAllocator::Native::...::allocate"), or
// "" for any other site.
func HeldByOf(site string) string {
	if strings.HasPrefix(site, "c10::cuda::CUDACachingAllocator::") {
		return "PyTorch"
	}
	return ""
}

// key is the grouping key. Racecheck analysis reports that differ only in their other
// sides are one group (absorb joins the sides): an unrolled loop's read races with each of
// its stores' instructions and racecheck reports every pair, so one missing barrier
// printed 8 reports at one line, each naming one store line 16 times.
func (r Record) key() recordKey {
	if r.sides != nil {
		return recordKey{r.Tool, r.Kind, r.Kernel, r.File, r.Line, r.raceFirst(), r.Severity}
	}
	return recordKey{r.Tool, r.Kind, r.Kernel, r.File, r.Line, r.Access, r.Severity}
}

type recordKey struct {
	tool, kind, kernel, file string
	line                     int
	access, severity         string
}

// Sources of a Run.
const (
	SourceXML  = "xml"
	SourceText = "text"
)

// Run is one tool's run over the command, as read from its XML record file, its text
// output, or both (RunTools, Combine).
type Run struct {
	Tool string `json:"tool"`
	// Errors and Warnings are the summary's counts (the truth when the print limit cut the
	// records); without a summary, what the records add up to.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	// NotPrinted counts errors the summary reports but the log does not show (print limit).
	NotPrinted int  `json:"not_printed"`
	ExitCode   *int `json:"exit_code,omitempty"`
	TimedOut   bool `json:"timed_out"`
	// Summary is set when the ERROR SUMMARY or RACECHECK SUMMARY line was seen.
	Summary bool `json:"summary"`
	// LaunchSeen is set when a record proves that a kernel ran (a device-side error, or a
	// host backtrace saved "at kernel launch time"). A clean run never proves it: the
	// sanitizer does not report launches.
	LaunchSeen bool `json:"launch_seen"`
	// Launches is the caller's count of kernel launches (the harness reports them); nil
	// when unknown. Evaluate's launches argument fills it.
	Launches *int   `json:"launches,omitempty"`
	Source   string `json:"source"`
	// Input names where the run was read from (a log's name).
	Input string `json:"input,omitempty"`
	// Log and XML are the artifact paths RunTools kept.
	Log string `json:"log,omitempty"`
	XML string `json:"xml,omitempty"`
	// RacecheckReport is the racecheck mode when known: analysis, hazard or all.
	RacecheckReport string   `json:"racecheck_report,omitempty"`
	Records         []Record `json:"records"`
	// Problems are fail-closed reasons found while reading: truncated, crashed, hung,
	// counts that disagree. Each becomes an error finding.
	Problems []string `json:"problems,omitempty"`
	// Notes are things the sanitizer said that are not error records (its own warnings,
	// lines kernel-gate does not know); each becomes a warning finding.
	Notes []string `json:"notes,omitempty"`
}

// Printed returns how many records the run printed (the sum of the Counts).
func (r Run) Printed() int {
	n := 0
	for _, rec := range r.Records {
		n += rec.Count
	}
	return n
}

// ErrNotSanitizerLog reports an input that is empty or is not compute-sanitizer output at
// all; the error wrapping it says what was seen instead.
var ErrNotSanitizerLog = errors.New("not compute-sanitizer output")

// ErrTooLarge reports an input larger than any real one (MaxXMLSize); the error wrapping
// it names the file.
var ErrTooLarge = errors.New("input too large")

// MaxGroups bounds the distinct error sites (Records) kept per run. kernel-gate runs the
// tools with --print-limit 10000, so a real run prints at most that many records; past
// the bound the records are still counted, but a Problem fails the run, since records
// that are not kept cannot be suppressed or judged by policy. It keeps memory bounded on
// endless input.
const MaxGroups = 10000

func tooManyGroups() string {
	return fmt.Sprintf("more than %d distinct error sites in one run: the rest are counted but not listed, so they cannot be judged one by one", MaxGroups)
}

// displayName returns a kernel's short display name: for a mangled name the demangled one
// without return type and parameters; for a printed signature such as
// "void tmpl_oob<float, (int)3>(T1 *, int)" the same cut.
func displayName(kernel string) string {
	if kernel == "" {
		return ""
	}
	if strings.HasPrefix(kernel, "_Z") {
		return kernelname.Parse(kernel).Short
	}
	return shortSignature(kernel)
}

// fullName returns the demangled signature of a kernel name (as printed when it is not
// mangled).
func fullName(kernel string) string {
	if strings.HasPrefix(kernel, "_Z") {
		return kernelname.Parse(kernel).Demangled
	}
	return kernel
}

// name returns the kernelname.Name that globs match against.
func name(kernel string) kernelname.Name {
	if strings.HasPrefix(kernel, "_Z") {
		return kernelname.Parse(kernel)
	}
	short := shortSignature(kernel)
	base := short
	depth := 0
	for i := 0; i+1 < len(short); i++ {
		switch short[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ':':
			if depth == 0 && short[i+1] == ':' {
				base = short[i+2:]
				i++
			}
		}
	}
	return kernelname.Name{Mangled: kernel, Demangled: kernel, Short: short, Base: base}
}

// paramListStart is where the parameter list that ends a printed signature or frame
// begins: the parenthesised group that ends s, not the first parenthesis, which may be
// part of the name ("(anonymous namespace)::k(int)"). -1 when s does not end in ")" or
// the group never opens.
func paramListStart(s string) int {
	if !strings.HasSuffix(s, ")") {
		return -1
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
		}
		if depth == 0 {
			return i
		}
	}
	return -1
}

// withoutQualifiers drops what follows a member function's parameter list ("() const",
// "() const &", "() volatile", "() noexcept"): a lambda's call operator is printed
// "main::{lambda(int)#1}::operator()(int) const", whose name is not "const".
func withoutQualifiers(s string) string {
	t := strings.TrimSpace(s)
	for {
		u := t
		for _, q := range []string{"const", "volatile", "noexcept", "&&", "&"} {
			before, ok := strings.CutSuffix(u, q)
			if ok && (q[0] == '&' || strings.HasSuffix(before, " ") || strings.HasSuffix(before, ")")) {
				u = strings.TrimSpace(before)
				break
			}
		}
		if u == t {
			break
		}
		t = u
	}
	if strings.HasSuffix(t, ")") {
		return t
	}
	return strings.TrimSpace(s)
}

// shortSignature drops a leading return type and the trailing parameter list of a printed
// signature: "void ns::k<float, 3>(float *, int)" becomes "ns::k<float, 3>".
func shortSignature(s string) string {
	s = withoutQualifiers(strings.TrimSpace(s))
	if i := paramListStart(s); i > 0 {
		s = strings.TrimSpace(s[:i])
	}
	// A return type is a top-level space before the name ("void k<int, 2>"); a space in
	// a lambda's or an unnamed type's braces ("{unnamed type#1}") is part of the name.
	angle, paren, brace := 0, 0, 0
	cut := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			angle++
		case '>':
			angle--
		case '(':
			paren++
		case ')':
			paren--
		case '{':
			brace++
		case '}':
			brace--
		case ' ':
			if angle == 0 && paren == 0 && brace == 0 {
				cut = i
			}
		}
	}
	if cut >= 0 && cut+1 < len(s) {
		s = s[cut+1:]
	}
	return s
}

// baseFile returns the last element of a slash path (the text form prints base names by
// default; the XML form prints full paths).
func baseFile(f string) string {
	if f == "" {
		return ""
	}
	return path.Base(strings.ReplaceAll(f, "\\", "/"))
}
