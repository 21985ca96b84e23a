package ncu

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/linescan"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
)

// ErrNotNCU reports input that holds neither an ncu CSV table nor any ncu message: an
// empty file, another tool's output.
var ErrNotNCU = errors.New("not Nsight Compute output")

// maxLine bounds one input line; ncu's longest rows (C++ template signatures, rule
// descriptions) are a few KiB.
const maxLine = 256 << 10

// cutMarker starts the line procgroup writes where it stopped keeping a log.
const cutMarker = "[kernel-gate: output cut here"

// maxMessages bounds the ==ERROR== and ==WARNING== lines and the problems kept; the rest
// are counted.
const maxMessages = 50

// Kind says what a metric's printed value is.
type Kind string

const (
	// Number: Value holds it, thousands separators removed.
	Number Kind = "number"
	// NA: ncu printed "n/a", it could not collect the metric.
	NA Kind = "n/a"
	// Empty: the field is empty.
	Empty Kind = "empty"
	// Text: anything else ("CachePreferNone", "1.2;3.4" instances, "nan").
	Text Kind = "text"
)

// Report is what Parse read from ncu's output, or what Run got from ncu.
type Report struct {
	// Inputs name what was read.
	Inputs []string
	// Launches are the profiled kernel launches, in input order.
	Launches []Launch
	// Errors are ncu's ==ERROR== lines, without the prefix.
	Errors []string
	// Warnings are ncu's ==WARNING== lines, without the prefix.
	Warnings []string
	// NoKernels is set when ncu said "No kernels were profiled."
	NoKernels bool
	// Problems are what makes the report prove less than it seems: a truncated or
	// malformed table, a CSV layout this package cannot read, a run that failed or hung.
	// Evaluate fails the gate on any of them.
	Problems []string
	// Headers counts the table headers read (ncu prints one per profiled process).
	Headers int
	// OtherLines counts lines that are neither ncu's messages nor its table: the program's
	// own output.
	OtherLines int

	// The fields below are set by Run.

	// Args is ncu's command line, the program included.
	Args []string
	// ExitCode is ncu's exit status; nil when it did not exit (killed) or was not run.
	ExitCode *int
	// TimedOut is set when the run was killed at its timeout.
	TimedOut bool
	// Log is the kept log of the run (empty when not kept).
	Log string
	// Limit is the -c the run used: when as many launches were profiled, a kernel that
	// launched later was not.
	Limit int

	// index maps a launch's key to its index in Launches.
	index map[launchKey]int
	// dropped counts messages and problems past maxMessages.
	droppedErrors, droppedWarnings, droppedProblems int
}

// Launch is one profiled kernel launch ("ID" of ncu's table) with its metrics.
type Launch struct {
	// Input names the file it was read from.
	Input string
	// ID is ncu's result ID.
	ID        int
	ProcessID string
	Process   string
	Host      string
	// Kernel is the kernel's name as ncu printed it: a demangled signature by default
	// ("void flash_fwd<64, 64, 0>(const __half *, ...)"), the mangled name with
	// --print-kernel-base mangled (as Run asks).
	Kernel string
	// Name is Kernel in the forms a glob matches (kernelname).
	Name      kernelname.Name
	Context   string
	Stream    string
	BlockSize string
	GridSize  string
	Device    string
	// CC is the compute capability, e.g. "9.0".
	CC string
	// Invocations is set for a row of ncu's summary (--print-summary per-kernel or
	// per-gpu): the launches of this kernel, block and grid the metrics summarise. Zero for
	// a launch ncu printed on its own.
	Invocations int
	Metrics     []Metric
	// Rules are ncu's rule results (section mode): its advice, not the gate's rules.
	Rules []RuleResult
	// Line is the line of the launch's first row.
	Line int
}

// Metric is one metric row.
type Metric struct {
	Section string
	Name    string
	// Unit as printed: "%", "byte", "ns", "register/thread"; empty for counts.
	Unit string
	// Raw is the value as printed ("3,176,448", "n/a").
	Raw   string
	Kind  Kind
	Value float64 // set when Kind is Number; in a summary, the average
	// Min and Max are a summary's Minimum and Maximum over the invocations (set when Kind
	// is Number and the launch has Invocations); a summary row whose three values are not
	// all numbers is Text.
	Min, Max float64
	Line     int
}

// RuleResult is a row of an ncu rule (section mode): its name, type (OPT, WRN, INF, ERR)
// and description, with the estimated speedup when given.
type RuleResult struct {
	Section     string
	Name        string
	Type        string
	Description string
	SpeedupType string
	Speedup     string
	Line        int
}

// Metric returns the launch's first row of the named metric.
func (l Launch) Metric(name string) (Metric, bool) {
	for _, m := range l.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

type launchKey struct {
	input, pid, kernel string
	id                 int
	// block and grid tell a summary's rows apart (they have no ID).
	block, grid string
}

// Column names of ncu's --csv table (details page).
const (
	colID          = "ID"
	colPID         = "Process ID"
	colProcess     = "Process Name"
	colHost        = "Host Name"
	colKernel      = "Kernel Name"
	colContext     = "Context"
	colStream      = "Stream"
	colBlock       = "Block Size"
	colGrid        = "Grid Size"
	colDevice      = "Device"
	colCC          = "CC"
	colSection     = "Section Name"
	colMetric      = "Metric Name"
	colUnit        = "Metric Unit"
	colValue       = "Metric Value"
	colRule        = "Rule Name"
	colRuleType    = "Rule Type"
	colRuleDesc    = "Rule Description"
	colSpeedupType = "Estimated Speedup Type"
	colSpeedup     = "Estimated Speedup"
	// --print-summary's columns in place of ID and Metric Value.
	colInvocations = "Invocations"
	colMinimum     = "Minimum"
	colMaximum     = "Maximum"
	colAverage     = "Average"
)

// header maps column names to their index in the current table.
type header struct {
	layout layout
	cols   map[string]int
	need   int // fields a row needs: the last required column's index + 1 (raw: every column)
	width  int
	// metrics are the raw page's metric columns: every column that does not describe the
	// launch.
	metrics []int
	// names are the columns' names, in order.
	names []string
	// units is the raw page's second line, the unit of each column; nil until it is read.
	units []string
}

func (h header) get(rec []string, col string) string {
	if i, ok := h.cols[col]; ok && i < len(rec) {
		return rec[i]
	}
	return ""
}

// parser is the state of one Parse.
type parser struct {
	rep      *Report
	name     string
	hdr      *header
	line     int
	ncuLines int // ==PROF==, ==WARNING==, ==ERROR== and other ==X== lines
	cutLines int
	// summaryIDs numbers a summary's kernels (kernel, block, grid) in order of appearance.
	summaryIDs map[launchKey]int
}

// Parse reads ncu --csv output (details page, metrics or sections; --page raw;
// --print-summary per-kernel or per-gpu: see layout) as a stream. ncu's
// messages (==PROF==, ==WARNING==, ==ERROR==) and the profiled program's own output may be
// mixed in: only the lines that belong to the table are read as CSV. The table's header
// may appear again (one per profiled process); rows may have fewer fields than the header
// (section mode ends metric rows after "Metric Value"). Values lose their thousands
// separators; "n/a" is kept as such, never as a number. CRLF line ends are accepted.
//
// The error is ErrNotNCU (wrapped) when the input holds neither a table header nor any
// ncu message, or a read error. Anything else wrong (a truncated last row, a malformed
// row, an unsupported table layout, ncu's own errors, no rows at all) is kept in the
// Report for Evaluate, which fails the gate on it.
func Parse(r io.Reader, name string) (*Report, error) {
	p := &parser{rep: &Report{Inputs: []string{name}}, name: name}
	var pending []byte // the previous line, handled once we know whether it was the last
	pendingEnded := false
	err := linescan.Each(r, maxLine, func(line []byte) {
		if pending != nil {
			p.handle(pending, pendingEnded)
		}
		ended := bytes.HasSuffix(line, []byte("\n"))
		if len(line) == maxLine && !ended {
			p.cutLines++ // cut by linescan, not the end of the input
			ended = true
		}
		pending = append(pending[:0], line...)
		pendingEnded = ended
	})
	if pending != nil {
		p.handle(pending, pendingEnded)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	rep := p.rep
	if rep.Headers == 0 && p.ncuLines == 0 {
		if p.line == 0 {
			return nil, fmt.Errorf("%s: %w: the input is empty", name, ErrNotNCU)
		}
		return nil, fmt.Errorf("%s: %w: no ncu --csv table and no ==PROF==/==ERROR== line in %d lines", name, ErrNotNCU, p.line)
	}
	if p.cutLines > 0 {
		rep.problem(fmt.Sprintf("%s: %d lines are longer than %d KiB and were cut", name, p.cutLines, maxLine>>10))
	}
	return rep, nil
}

// handle reads one line; ended says whether it had a line end (only the last may not).
func (p *parser) handle(raw []byte, ended bool) {
	p.line++
	s := string(bytes.TrimRight(raw, "\r\n"))
	if p.line == 1 {
		s = strings.TrimPrefix(s, "\ufeff")
	}
	rep := p.rep
	switch {
	case strings.HasPrefix(s, "==ERROR=="):
		p.ncuLines++
		rep.addMessage(&rep.Errors, &rep.droppedErrors, strings.TrimSpace(strings.TrimPrefix(s, "==ERROR==")))
		return
	case strings.HasPrefix(s, "==WARNING=="):
		p.ncuLines++
		msg := strings.TrimSpace(strings.TrimPrefix(s, "==WARNING=="))
		if strings.Contains(msg, "No kernels were profiled") {
			rep.NoKernels = true
		}
		rep.addMessage(&rep.Warnings, &rep.droppedWarnings, msg)
		return
	case ncuMessage(s):
		p.ncuLines++
		return
	case strings.HasPrefix(s, `"ID","`), strings.HasPrefix(s, `"Process ID","`):
		p.header(s)
		return
	case p.hdr != nil && p.hdr.layout == layoutRaw && p.hdr.units == nil && strings.HasPrefix(s, `"",`):
		p.units(s)
		return
	case strings.HasPrefix(s, cutMarker):
		rep.problem(fmt.Sprintf("%s:%d: the log was cut here (it reached kernel-gate's size limit): what followed is lost", p.name, p.line))
		return
	}
	if p.hdr == nil || !rowStart(s) {
		rep.OtherLines++
		return
	}
	p.row(s, ended)
}

// ncuMessage reports a line of ncu's own ("==PROF== Connected to process 581").
func ncuMessage(s string) bool {
	if !strings.HasPrefix(s, "==") {
		return false
	}
	end := strings.Index(s[2:], "==")
	if end <= 0 {
		return false
	}
	for _, c := range []byte(s[2 : 2+end]) {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// rowStart reports whether s begins like a row of the table: a quoted result ID.
func rowStart(s string) bool {
	if len(s) < 3 || s[0] != '"' || s[1] < '0' || s[1] > '9' {
		return false
	}
	i := 1
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return strings.HasPrefix(s[i:], `",`) || (i+1 == len(s) && s[i] == '"')
}

func readRecord(s string) ([]string, error) {
	r := csv.NewReader(strings.NewReader(s))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	rec, err := r.Read()
	if err != nil {
		return nil, err
	}
	if _, err := r.Read(); err != io.EOF {
		return nil, errors.New("more than one record on the line")
	}
	return rec, nil
}

func (p *parser) header(s string) {
	rec, err := readRecord(s)
	if err != nil {
		p.rep.problem(fmt.Sprintf("%s:%d: unreadable ncu CSV header: %v", p.name, p.line, err))
		p.hdr = nil
		return
	}
	h := header{cols: map[string]int{}, width: len(rec), names: rec}
	for i, c := range rec {
		if _, dup := h.cols[c]; !dup {
			h.cols[c] = i
		}
	}
	h.layout = layoutOf(h.cols)
	var missing []string
	for _, c := range h.layout.required() {
		i, ok := h.cols[c]
		if !ok {
			missing = append(missing, c)
			continue
		}
		h.need = max(h.need, i+1)
	}
	if h.layout == layoutRaw {
		for i, c := range rec {
			if c != "" && !launchColumns[c] && h.cols[c] == i { // a nameless or repeated column names no metric
				h.metrics = append(h.metrics, i)
			}
		}
		h.need = h.width
		if len(h.metrics) == 0 {
			missing = append(missing, "metric")
		}
	}
	p.rep.Headers++
	if len(missing) > 0 {
		p.rep.problem(fmt.Sprintf("%s:%d: the ncu CSV table has no %s column: kernel-gate reads ncu --csv's details page (one metric per row), --page raw (one launch per row) and --print-summary per-kernel or per-gpu",
			p.name, p.line, quoteList(missing)))
		p.hdr = nil
		return
	}
	p.hdr = &h
}

func (p *parser) row(s string, ended bool) {
	rep, h := p.rep, p.hdr
	rec, err := readRecord(s)
	if err == nil && strings.Count(s, `"`)%2 != 0 {
		// ncu quotes every field and doubles quotes inside them; LazyQuotes would read an
		// unterminated field to the end of the line.
		err = errors.New("unbalanced quotes")
	}
	complete := err == nil && len(rec) >= h.need && len(rec) <= h.width+1
	if !ended && (!complete || !strings.HasSuffix(s, `"`)) {
		rep.problem(fmt.Sprintf("%s:%d: the last line is a partial table row (the output was cut off): %s", p.name, p.line, msgtext.Clip(s, 120)))
		return
	}
	if !complete {
		why := "too few fields"
		if err != nil {
			why = err.Error()
		} else if len(rec) > h.width+1 {
			why = "more fields than the header"
		}
		rep.problem(fmt.Sprintf("%s:%d: malformed ncu CSV row (%s): %s", p.name, p.line, why, msgtext.Clip(s, 120)))
		return
	}
	if h.layout == layoutSummary {
		p.summaryRow(rec)
		return
	}
	id, err := strconv.Atoi(h.get(rec, colID))
	if err != nil {
		rep.problem(fmt.Sprintf("%s:%d: malformed ncu CSV row (ID %q): %s", p.name, p.line, h.get(rec, colID), msgtext.Clip(s, 120)))
		return
	}
	l := p.launch(rec, launchKey{input: p.name, pid: h.get(rec, colPID), kernel: h.get(rec, colKernel), id: id})
	if h.layout == layoutRaw {
		p.rawMetrics(l, rec)
		return
	}
	section := h.get(rec, colSection)
	if metric := h.get(rec, colMetric); metric != "" {
		m := Metric{Section: section, Name: metric, Unit: h.get(rec, colUnit), Raw: h.get(rec, colValue), Line: p.line}
		m.Kind, m.Value = parseValue(m.Raw)
		l.Metrics = append(l.Metrics, m)
		return
	}
	if rule := h.get(rec, colRule); rule != "" {
		l.Rules = append(l.Rules, RuleResult{
			Section: section, Name: rule, Type: h.get(rec, colRuleType), Description: h.get(rec, colRuleDesc),
			SpeedupType: h.get(rec, colSpeedupType), Speedup: h.get(rec, colSpeedup), Line: p.line,
		})
		return
	}
	rep.problem(fmt.Sprintf("%s:%d: ncu CSV row with neither a metric nor a rule name: %s", p.name, p.line, msgtext.Clip(s, 120)))
}

// launch returns the report's launch of key, added (from rec's launch columns) the first
// time a row names it.
func (p *parser) launch(rec []string, key launchKey) *Launch {
	rep, h := p.rep, p.hdr
	if rep.index == nil {
		rep.index = map[launchKey]int{}
	}
	li, ok := rep.index[key]
	if !ok {
		li = len(rep.Launches)
		rep.index[key] = li
		rep.Launches = append(rep.Launches, Launch{
			Input: p.name, ID: key.id, ProcessID: key.pid, Process: h.get(rec, colProcess), Host: h.get(rec, colHost),
			Kernel: key.kernel, Name: signatureName(key.kernel), Context: h.get(rec, colContext), Stream: h.get(rec, colStream),
			BlockSize: h.get(rec, colBlock), GridSize: h.get(rec, colGrid), Device: h.get(rec, colDevice), CC: h.get(rec, colCC),
			Line: p.line,
		})
	}
	return &rep.Launches[li]
}

// parseValue reads a printed value: "3,176,448" is 3176448, "1.80" is 1.8; "n/a", empty
// and anything that is not a plain decimal number (a misplaced comma, "nan", "inf", a list
// of instance values) are not numbers.
func parseValue(raw string) (Kind, float64) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return Empty, 0
	case strings.EqualFold(s, "n/a"):
		return NA, 0
	}
	digits, ok := stripThousands(s)
	if !ok {
		return Text, 0
	}
	v, err := strconv.ParseFloat(digits, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Text, 0
	}
	return Number, v
}

// stripThousands removes the commas of a number printed with thousands separators and
// checks that what is left is a plain decimal number: [sign] digits [. digits] [e exp],
// with commas only between groups of three digits of the integer part.
func stripThousands(s string) (string, bool) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	start := i
	var b strings.Builder
	b.WriteString(s[:i])
	group, commas := 0, 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			group++
			b.WriteByte(c)
			continue
		}
		if c != ',' {
			break
		}
		if group == 0 || (commas == 0 && group > 3) || (commas > 0 && group != 3) {
			return "", false
		}
		commas++
		group = 0
	}
	if i == start || (commas > 0 && group != 3) {
		return "", false
	}
	rest := s[i:]
	if rest != "" {
		if rest[0] == '.' {
			j := 1
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			if j == 1 {
				return "", false
			}
			b.WriteString(rest[:j])
			rest = rest[j:]
		}
		if rest != "" {
			if rest[0] != 'e' && rest[0] != 'E' {
				return "", false
			}
			j := 1
			if j < len(rest) && (rest[j] == '-' || rest[j] == '+') {
				j++
			}
			k := j
			for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
				k++
			}
			if k == j || k != len(rest) {
				return "", false
			}
			b.WriteString(rest)
		}
	}
	return b.String(), true
}

// Merge returns one report holding every launch, message and problem of reps (launches
// of different inputs stay apart). Run fields are taken from the first report that has
// them.
func Merge(reps ...*Report) *Report {
	out := &Report{}
	for _, r := range reps {
		if r == nil {
			continue
		}
		out.Inputs = append(out.Inputs, r.Inputs...)
		out.Launches = append(out.Launches, r.Launches...)
		out.Errors = append(out.Errors, r.Errors...)
		out.Warnings = append(out.Warnings, r.Warnings...)
		out.Problems = append(out.Problems, r.Problems...)
		out.NoKernels = out.NoKernels || r.NoKernels
		out.Headers += r.Headers
		out.OtherLines += r.OtherLines
		out.droppedErrors += r.droppedErrors
		out.droppedWarnings += r.droppedWarnings
		out.droppedProblems += r.droppedProblems
		if out.Args == nil && r.Args != nil {
			out.Args, out.ExitCode, out.TimedOut, out.Log, out.Limit = r.Args, r.ExitCode, r.TimedOut, r.Log, r.Limit
		}
	}
	return out
}

func (r *Report) addMessage(to *[]string, dropped *int, msg string) {
	if len(*to) >= maxMessages {
		*dropped++
		return
	}
	*to = append(*to, msg)
}

func (r *Report) problem(msg string) { r.addMessage(&r.Problems, &r.droppedProblems, msg) }

// signatureName gives the forms of a kernel name as ncu prints it. A mangled name
// (--print-kernel-base mangled) is demangled like the other gates do; a printed signature
// ("void ns::flash_fwd<64, 64, 0>(const __half *, int)") loses its return type and
// parameters for Short ("ns::flash_fwd<64, 64, 0>") and its scope for Base.
func signatureName(s string) kernelname.Name {
	if strings.HasPrefix(s, "_Z") {
		return kernelname.Parse(s)
	}
	short := shortSignature(s)
	return kernelname.Name{Mangled: s, Demangled: s, Short: short, Base: stripScope(short)}
}

// shortSignature drops a leading "void " and the parameter list: the first top-level "("
// that is not "(anonymous namespace)".
func shortSignature(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "void ")
	angle := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			angle++
		case '>':
			if angle > 0 {
				angle--
			}
		case '(':
			if angle > 0 {
				continue
			}
			if strings.HasPrefix(s[i:], "(anonymous namespace)") {
				i += len("(anonymous namespace)") - 1
				continue
			}
			if i > 0 {
				return strings.TrimSpace(s[:i])
			}
			return s
		}
	}
	return s
}

// stripScope drops "ns::" qualifiers outside template arguments.
func stripScope(s string) string {
	angle, cut := 0, 0
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '<':
			angle++
		case '>':
			if angle > 0 {
				angle--
			}
		case ':':
			if angle == 0 && s[i+1] == ':' {
				cut = i + 2
				i++
			}
		}
	}
	if cut >= len(s) {
		return s
	}
	return s[cut:]
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
