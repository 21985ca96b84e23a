package sanitizer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/linescan"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
)

// ParseOptions tune ParseTextWith and ParseXMLWith.
type ParseOptions struct {
	// Tool names the tool when the input cannot show it: a clean initcheck, synccheck or
	// memcheck run (without --leak-check) prints nothing but "ERROR SUMMARY: 0 errors".
	// Evidence in the input wins; a contradiction is a Problem.
	Tool string
}

// ParseText reads compute-sanitizer's (or the older cuda-memcheck's) text output: one run
// per "========= COMPUTE-SANITIZER" header, so a log that concatenates several runs gives
// several Runs. See ParseTextWith.
func ParseText(r io.Reader, name string) ([]Run, error) {
	return ParseTextWith(r, name, ParseOptions{})
}

// ParseTextWith is ParseText with options. Lines that are not the sanitizer's own (the
// program's output, "+ command" echoes, make or CI noise) are skipped, except that a
// "+ ... compute-sanitizer --tool T ..." echo names the tool of the run that follows and
// an "exit=N" line gives the exit code of the run before it. The tool is read from the
// records and summaries (racecheck's summary, "Barrier error", "Uninitialized ... read",
// leaks); when nothing shows it, from o.Tool, else it stays "".
//
// An input that is empty or holds no compute-sanitizer output returns an error wrapping
// ErrNotSanitizerLog that says what it holds instead, except a log that shows the process
// was killed before the sanitizer printed anything (exit=137, a shell's "Killed"): that is
// a Run with TimedOut set and a Problem, because a hang must fail the gate. Problems found
// in a run (no summary, counts that disagree, a crashed target) are in Run.Problems, not
// in the error; the error is only for input that cannot be read at all.
func ParseTextWith(r io.Reader, name string, o ParseOptions) ([]Run, error) {
	return parseText(r, name, textOptions{ParseOptions: o})
}

// textOptions carries what RunTools knows beyond the log.
type textOptions struct {
	ParseOptions
	// errorExitCode is the --error-exitcode RunTools passed (0: unknown).
	errorExitCode int
	// killedAfter is set when RunTools killed the run at its timeout (or cancelled it).
	killedAfter time.Duration
	// exit is the exit status RunTools saw, for a log without an exit= line.
	exit *int
}

// maxLine bounds one line; longer lines are cut.
const maxLine = 64 << 10

// maxNotes bounds the notes and problems kept per run.
const maxNotes = 20

func parseText(r io.Reader, name string, o textOptions) ([]Run, error) {
	if o.Tool != "" && !validTool(o.Tool) {
		return nil, fmt.Errorf("sanitizer: %s: unknown tool %q (want one of %s)", name, o.Tool, strings.Join(AllTools(), ", "))
	}
	p := &textParser{name: name, opts: o}
	if err := linescan.Each(r, maxLine, p.line); err != nil {
		return nil, fmt.Errorf("sanitizer: reading %s: %w", name, err)
	}
	return p.finish()
}

// Patterns of the sanitizer's own lines, matched against the text after the "=========" prefix.
var (
	reErrSummary   = regexp.MustCompile(`^ERROR SUMMARY: ([\d,]+) errors?$`)
	reNotPrinted   = regexp.MustCompile(`^ERROR SUMMARY: ([\d,]+) errors? (?:were|was) not printed`)
	reLeakSummary  = regexp.MustCompile(`^LEAK SUMMARY: ([\d,]+) bytes? leaked in ([\d,]+) allocations?`)
	reRaceSummary  = regexp.MustCompile(`^RACECHECK SUMMARY: ([\d,]+) hazards? displayed \(([\d,]+) errors?, ([\d,]+) warnings?\)`)
	reInvalid      = regexp.MustCompile(`^Invalid (\S+) (.+?) of size ([\d,]+)(?: bytes?)?\.?$`)
	reUninit       = regexp.MustCompile(`^Uninitialized (\S+) memory (\w+) of size ([\d,]+)(?: bytes?)?\.?$`)
	reHostAPI      = regexp.MustCompile(`^Host API memory access error at host access to 0x[0-9a-fA-F]+ of size ([\d,]+) bytes?`)
	reUnused       = regexp.MustCompile(`^Unused memory in allocation 0x[0-9a-fA-F]+ of size ([\d,]+) bytes?`)
	reLeaked       = regexp.MustCompile(`^Leaked ([\d,]+) bytes? at 0x[0-9a-fA-F]+`)
	reAPI          = regexp.MustCompile(`^Program hit (\S+) \(error (\d+)\) due to "(.*)" on CUDA API call to ([^.\s]+)`)
	reBarrier      = regexp.MustCompile(`^Barrier error detected\.?\s*(.*?)\.?$`)
	reLevel        = regexp.MustCompile(`^(Error|Warning|Info|ERROR|WARN|WARNING|INFO)\s*:\s*(.*)$`)
	reRace         = regexp.MustCompile(`^Race reported between (\w+) access at (.+)$`)
	reHazard       = regexp.MustCompile(`^(?:\(([^)]*)\)\s*)?Potential (RAW|WAR|WAW) hazard detected at (\S+) 0x[0-9a-fA-F]+ in block \(([\d, ]+)\)`)
	reMallocFree   = regexp.MustCompile(`^Malloc/Free error encountered\s*:?\s*(.*?)\.?$`)
	reException    = regexp.MustCompile(`^(?:(?:Warp|Lane|Device) \S.*|Illegal Instruction.*|Invalid PC.*|Hardware Exception.*|Out-of-range .*)$`)
	reSession      = regexp.MustCompile(`^[A-Z][A-Za-z ]+:\s+\S`)
	reAtNew        = regexp.MustCompile(`^(.+?)\+0x[0-9a-fA-F]+(?: in (.+):(\d+))?$`)
	reAtOld        = regexp.MustCompile(`^0x[0-9a-fA-F]+ in (?:(.+?):(\d+):)?(.+)$`)
	reByThread     = regexp.MustCompile(`^by thread \(([\d, ]+)\) in block \(([\d, ]+)\)`)
	reReason       = regexp.MustCompile(`^(?:Access to|Address) 0x[0-9a-fA-F]+ is (.+?)\.?$`)
	reDest         = regexp.MustCompile(`^and (\w+) access at (.+?)(?: \[([\d,]+) hazards?\])?$`)
	reHazardThread = regexp.MustCompile(`^(\w+) Thread \(([\d, ]+)\) at (.+)$`)
	reSaved        = regexp.MustCompile(`^Saved host backtrace up to driver entry point at (.+?)\.?$`)
	reHostFrame    = regexp.MustCompile(`^Host Frame:\s*(.*?) ?\[(0x[0-9a-fA-F]+)\](?: in (.*))?$`)
	reFrameSource  = regexp.MustCompile(` in \S[^\[]*:\d+$`)
	reHostFrameOld = regexp.MustCompile(`^Host Frame:(\S+) \((.+?) \+ (0x[0-9a-fA-F]+)\) \[0x[0-9a-fA-F]+\]$`)

	// Foreign lines.
	reExit      = regexp.MustCompile(`(?:^|\s)exit=(\d+)\s*$`)
	reCommand   = regexp.MustCompile(`^\+\s+(?:.*\s)?(?:\S*/)?(compute-sanitizer|cuda-memcheck)(\s.*)?$`)
	reToolFlag  = regexp.MustCompile(`\s--tool[= ](\S+)`)
	reExitFlag  = regexp.MustCompile(`\s--error-exitcode[= ](\d+)`)
	reRaceFlag  = regexp.MustCompile(`\s--racecheck-report[= ](\S+)`)
	reKillHint  = regexp.MustCompile(`\b(Killed|Segmentation fault|Aborted|Bus error|Terminated|core dumped)\b`)
	reTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z `)
)

const prefix = "========="

type textParser struct {
	name   string
	opts   textOptions
	lineNo int
	runs   []*runState
	cur    *runState
	// pend is the run a "+ compute-sanitizer ..." echo announced, until its header.
	pend *runState
	// Lines outside any run, for the messages of a log with no sanitizer output.
	firstForeign string
	usage        bool
	usageReason  string
	ptxas        bool
	nonBlank     int
	exit         *int // an exit=N line seen before any run
	killHint     string
	buf          []byte
	// orphanProblems wait for the next run (later).
	orphanProblems []string
	// prefixed is set once a line with the "=========" prefix was read; until then bare
	// is set once a line without it was taken as the sanitizer's (bareLine), and
	// weakBare while such a line is read that a program might print too.
	prefixed, bare, weakBare bool
}

type cmdInfo struct {
	seen          bool
	line          string // the echo, for messages
	tool          string
	errorExitCode int
	raceReport    string
}

// runState is one run being read.
type runState struct {
	run        Run
	startLine  int
	cmd        cmdInfo
	groups     map[recordKey]int
	rec        *pending
	printedErr int
	printedWrn int
	// displayed is racecheck's "N hazards displayed".
	displayed    int
	raceSummary  bool
	errSummary   bool
	evidence     map[string]int // tool -> line of the first evidence
	reports      map[string]bool
	targetFailed bool
	noCUDA       bool
	startFailed  bool
	badSummary   bool
	// orphan is set for a "+ compute-sanitizer" echo that no header followed: the
	// sanitizer printed its usage or an error and ran nothing.
	orphan       bool
	orphanFirst  string
	orphanReason string
	killHint     string
	// wrapped is a summary line that does not read as one, and wrappedLine its line,
	// until the next line says whether a terminal wrapped it.
	wrapped     string
	wrappedLine int
}

// pending is a record being assembled from its lines.
type pending struct {
	rec        Record
	kind       string // provisional kind: "access", "hostapi", "unknown" or a Kind
	reason     string
	uninit     bool
	hasLoc     bool
	launch     bool
	raceFirst  string // racecheck: direction of the first access
	raceKinds  map[string]bool
	dests      []string
	sides      []raceSide // an analysis report's other sides
	alloc      allocation
	hostKernel string
	size       string
	// weak: a line without the prefix that a program might print too started the
	// record; it counts only once a detail line places it.
	weak bool
}

func (p *textParser) line(raw []byte) {
	p.lineNo++
	b := bytes.TrimRight(raw, "\r\n")
	if bytes.IndexByte(b, 0x1b) >= 0 {
		p.buf = linescan.StripANSI(p.buf[:0], b)
		b = p.buf
	}
	s := string(b)
	if len(s) > 20 && s[0] >= '0' && s[0] <= '9' {
		if loc := reTimestamp.FindStringIndex(s); loc != nil {
			s = s[loc[1]:]
		}
	}
	if st := p.cur; st != nil && st.wrapped != "" && st.joinWrapped(p, s) {
		return
	}
	if strings.HasPrefix(s, prefix) {
		p.prefixed = true
		p.sanitizerLine(s[len(prefix):])
		return
	}
	if i := gluedPrefix(s); i > 0 {
		// The program printed a line without its newline and the sanitizer's line went
		// on behind it ("progress 50%========= ERROR SUMMARY: 0 errors").
		p.foreign(s[:i])
		p.prefixed = true
		p.sanitizerLine(s[i+len(prefix):])
		return
	}
	if !p.prefixed && p.bareLine(s) {
		return
	}
	p.foreign(s)
}

// gluedPrefix returns where a "=========" prefix starts inside s after other text, or -1:
// exactly nine '=' (not part of a longer run) followed by a blank or the end of the line.
func gluedPrefix(s string) int {
	from := 1
	for from < len(s) {
		i := strings.Index(s[from:], prefix)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(prefix)
		if s[i-1] != '=' && (end == len(s) || s[end] == ' ' || s[end] == '\t') {
			return i
		}
		for end < len(s) && s[end] == '=' {
			end++
		}
		from = end
	}
	return -1
}

// bareLine reads a line of a log whose "=========" prefix was stripped (as people paste
// logs into issues and READMEs), as long as no line of the input had the prefix. Only
// lines that only compute-sanitizer prints start or end such a run: its header, its
// summaries, the first lines of its records ("Invalid __global__ write of size 4 bytes",
// "Error: Race reported between ...", "Leaked 1,024 bytes at ...") and its messages
// about the target; then a record's indented detail lines belong to it and a blank line
// ends it. Every other line stays the program's. It reports whether it took the line.
func (p *textParser) bareLine(s string) bool {
	c := strings.TrimSpace(s)
	if c == "" {
		if p.bare && p.cur != nil {
			p.cur.flush(p)
		}
		return false
	}
	indent := len(s) - len(strings.TrimLeft(s, " \t"))
	if indent >= 3 {
		if p.bare && p.cur != nil && p.cur.rec != nil {
			p.sanitizerLine(s)
			return true
		}
		return false
	}
	weak, ok := bareTop(c)
	if !ok || weak && !(p.bare && p.cur != nil) {
		return false // a weak line does not start a log
	}
	p.bare = true
	p.weakBare = weak
	p.sanitizerLine(s)
	p.weakBare = false
	return true
}

// bareTop reports whether c, a line without the prefix, is one only compute-sanitizer
// prints. weak marks a line that a program might print too ("Device 0 ..." looks like
// an exception record): its record counts only once a detail line places it.
func bareTop(c string) (weak, ok bool) {
	switch {
	case c == "COMPUTE-SANITIZER", c == "CUDA-MEMCHECK",
		strings.HasPrefix(c, "ERROR SUMMARY:"), strings.HasPrefix(c, "RACECHECK SUMMARY:"), strings.HasPrefix(c, "LEAK SUMMARY:"),
		strings.HasPrefix(c, "Error: process didn't terminate successfully"),
		strings.HasPrefix(c, "Target application returned an error"),
		strings.HasPrefix(c, "Error: Target application terminated before first instrumented API call"),
		strings.HasPrefix(c, "Target application doesn't exist"),
		reInvalid.MatchString(c), reUninit.MatchString(c), reHostAPI.MatchString(c), reUnused.MatchString(c),
		reLeaked.MatchString(c), reAPI.MatchString(c), reBarrier.MatchString(c), reMallocFree.MatchString(c):
		return false, true
	}
	if m := reLevel.FindStringSubmatch(c); m != nil {
		return false, reRace.MatchString(m[2]) || reHazard.MatchString(m[2])
	}
	if reException.MatchString(c) {
		return true, true
	}
	return false, false
}

// foreign handles a line that is not the sanitizer's.
func (p *textParser) foreign(s string) {
	t := strings.TrimSpace(s)
	if t == "" {
		return
	}
	p.nonBlank++
	// Where the line belongs: the run being read, a command echo that no run followed
	// yet, or nothing.
	var st *runState
	switch {
	case p.cur != nil:
		st = p.cur
	case p.pend != nil:
		st = p.pend
	}
	if m := reExit.FindStringSubmatch(t); m != nil {
		n, err := parseCount(m[1])
		if err != nil {
			p.later("line %d: the exit status: %v: kernel-gate cannot tell how the run ended", p.lineNo, err)
			return
		}
		if st != nil {
			st.run.ExitCode = &n
		} else {
			p.exit = &n
		}
		return
	}
	if m := reCommand.FindStringSubmatch(t); m != nil {
		info := cmdInfo{seen: true, tool: ToolMemcheck, line: msgtext.Clip(t, 200)}
		args := " " + m[2]
		if f := reToolFlag.FindStringSubmatch(args); f != nil {
			info.tool = f[1]
		}
		badFlag := ""
		if f := reExitFlag.FindStringSubmatch(args); f != nil {
			n, err := parseCount(f[1])
			if err != nil {
				badFlag = fmt.Sprintf("line %d: --error-exitcode: %v: kernel-gate cannot tell an error exit from a crash", p.lineNo, err)
			}
			info.errorExitCode = n
		}
		if f := reRaceFlag.FindStringSubmatch(args); f != nil {
			info.raceReport = f[1]
		}
		// A new invocation ends the run before it.
		if p.cur != nil {
			p.cur.flush(p)
			p.cur = nil
		}
		p.pend = &runState{
			run:       Run{Source: SourceText, Input: p.name},
			startLine: p.lineNo,
			cmd:       info,
			orphan:    true,
			groups:    map[recordKey]int{},
			evidence:  map[string]int{},
			reports:   map[string]bool{},
		}
		p.runs = append(p.runs, p.pend)
		if badFlag != "" {
			p.pend.problem("%s", badFlag)
		}
		return
	}
	if reKillHint.MatchString(t) {
		if st != nil {
			st.killHint = msgtext.Clip(t, 160)
		} else {
			p.killHint = msgtext.Clip(t, 160)
		}
	}
	reason := ""
	if strings.Contains(t, "is invalid") || strings.Contains(t, "nrecognised option") ||
		strings.Contains(t, "nrecognized option") || strings.Contains(t, "no save location") {
		reason = msgtext.Clip(t, 160)
	}
	usage := strings.HasPrefix(t, "Usage: compute-sanitizer") || strings.HasPrefix(t, "Usage: cuda-memcheck")
	if st != nil {
		if st.orphan {
			if st.orphanFirst == "" {
				st.orphanFirst = msgtext.Clip(t, 160)
			}
			if st.orphanReason == "" {
				st.orphanReason = reason
			}
		}
		return
	}
	if p.firstForeign == "" {
		p.firstForeign = msgtext.Clip(t, 160)
	}
	p.usage = p.usage || usage
	if p.usageReason == "" {
		p.usageReason = reason
	}
	if strings.HasPrefix(t, "ptxas ") || strings.Contains(t, "bytes stack frame") {
		p.ptxas = true
	}
}

// sanitizerLine handles the text after the "=========" prefix.
func (p *textParser) sanitizerLine(rest string) {
	p.nonBlank++
	indent := len(rest) - len(strings.TrimLeft(rest, " \t"))
	content := strings.TrimSpace(rest)
	if content == "" {
		if p.cur != nil {
			p.cur.flush(p)
		}
		return
	}
	if content == "COMPUTE-SANITIZER" || content == "CUDA-MEMCHECK" {
		p.startRun()
		return
	}
	if p.cur == nil {
		p.startRun()
	}
	st := p.cur
	if indent >= 3 {
		if st.rec != nil {
			st.continuation(p, content)
		}
		return
	}
	st.top(p, content)
}

// joinWrapped reads s, the line after a summary line that did not read as one, as the
// rest of it that a terminal wrapped onto the next line ("RACECHECK SUMMARY: 16 hazards
// displayed (16 errors, 0" and "=========   warnings)", or a pasted "warnings)"), cut at a
// blank or inside a word. It reports whether the line was taken; when it is not the rest,
// the summary line is a problem.
func (st *runState) joinWrapped(p *textParser, s string) bool {
	head, ln := st.wrapped, st.wrappedLine
	st.wrapped = ""
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), prefix))
	if rest != "" {
		for _, joined := range []string{head + " " + rest, head + rest} {
			if isSummary(joined) {
				p.nonBlank++
				st.top(p, joined)
				return true
			}
		}
	}
	st.unreadSummary(head, ln)
	return false
}

func isSummary(c string) bool {
	for _, re := range []*regexp.Regexp{reErrSummary, reNotPrinted, reRaceSummary, reLeakSummary} {
		if re.MatchString(c) {
			return true
		}
	}
	return false
}

func (st *runState) unreadSummary(c string, ln int) {
	st.badSummary = true
	st.problem("a summary line kernel-gate cannot read: %q (line %d)", msgtext.Clip(c, 200), ln)
}

// later records a problem found outside any run's lines: on the run being read, else on
// the next run to start (an input with no run at all is an error anyway).
func (p *textParser) later(format string, args ...any) {
	switch {
	case p.cur != nil:
		p.cur.problem(format, args...)
	case p.pend != nil:
		p.pend.problem(format, args...)
	case len(p.orphanProblems) < maxNotes:
		p.orphanProblems = append(p.orphanProblems, fmt.Sprintf(format, args...))
	}
}

func (p *textParser) startRun() {
	if p.cur != nil {
		p.cur.flush(p)
	}
	if st := p.pend; st != nil {
		// The run the command echo announced.
		p.pend = nil
		st.orphan = false
		st.startLine = p.lineNo
		if st.cmd.raceReport != "" {
			st.run.RacecheckReport = st.cmd.raceReport
		}
		p.cur = st
		return
	}
	st := &runState{
		run:       Run{Source: SourceText, Input: p.name},
		startLine: p.lineNo,
		groups:    map[recordKey]int{},
		evidence:  map[string]int{},
		reports:   map[string]bool{},
	}
	p.runs = append(p.runs, st)
	p.cur = st
	for _, q := range p.orphanProblems {
		st.problem("%s", q)
	}
	p.orphanProblems = nil
}

func (st *runState) problem(format string, args ...any) {
	if len(st.run.Problems) >= maxNotes {
		return
	}
	msg := fmt.Sprintf(format, args...)
	for _, q := range st.run.Problems {
		if q == msg {
			return
		}
	}
	st.run.Problems = append(st.run.Problems, msg)
}

// num parses a number of the line being read; one that does not parse is a problem that
// fails the run, never a 0 that passes.
func (st *runState) num(p *textParser, what, s string) int {
	v, err := parseCount(s)
	if err != nil {
		st.problem("line %d: %s: %v: kernel-gate cannot judge the line", p.lineNo, what, err)
		return 0
	}
	return v
}

// lineNum parses a source line number, which may be absent ("").
func (st *runState) lineNum(p *textParser, s string) int {
	if s == "" {
		return 0
	}
	return st.num(p, "the source line number", s)
}

func (st *runState) note(format string, args ...any) {
	if len(st.run.Notes) >= maxNotes {
		return
	}
	msg := fmt.Sprintf(format, args...)
	for _, q := range st.run.Notes {
		if q == msg {
			return
		}
	}
	st.run.Notes = append(st.run.Notes, msg)
}

func (st *runState) evidenceFor(tool string, line int) {
	if _, ok := st.evidence[tool]; !ok {
		st.evidence[tool] = line
	}
}

// top handles a top-level message: a summary, a record's first line or a note.
func (st *runState) top(p *textParser, c string) {
	ln := p.lineNo
	if m := reNotPrinted.FindStringSubmatch(c); m != nil {
		st.flush(p)
		st.run.NotPrinted = st.num(p, "the count of errors not printed", m[1])
		return
	}
	if m := reErrSummary.FindStringSubmatch(c); m != nil {
		st.flush(p)
		if st.errSummary {
			st.problem("a second ERROR SUMMARY line in one run (line %d): are two logs concatenated without their headers?", ln)
		}
		st.errSummary = true
		st.run.Errors = st.num(p, "the ERROR SUMMARY count", m[1])
		return
	}
	if m := reRaceSummary.FindStringSubmatch(c); m != nil {
		st.flush(p)
		if st.raceSummary {
			st.problem("a second RACECHECK SUMMARY line in one run (line %d): are two logs concatenated without their headers?", ln)
		}
		st.raceSummary = true
		st.displayed = st.num(p, "the RACECHECK SUMMARY count of hazards displayed", m[1])
		st.run.Errors = st.num(p, "the RACECHECK SUMMARY count of errors", m[2])
		st.run.Warnings = st.num(p, "the RACECHECK SUMMARY count of warnings", m[3])
		st.evidenceFor(ToolRacecheck, ln)
		return
	}
	if reLeakSummary.MatchString(c) {
		st.flush(p)
		st.evidenceFor(ToolMemcheck, ln)
		return
	}
	switch {
	case strings.HasPrefix(c, "Error: process didn't terminate successfully"),
		strings.HasPrefix(c, "Target application returned an error"):
		st.flush(p)
		st.targetFailed = true
		return
	case strings.HasPrefix(c, "Error: Target application terminated before first instrumented API call"):
		st.flush(p)
		st.noCUDA = true
		st.problem("the target application exited before its first CUDA call (compute-sanitizer: %q): no kernel ran, nothing was checked", c)
		return
	case strings.HasPrefix(c, "Target application doesn't exist"):
		st.flush(p)
		st.startFailed = true
		st.problem("compute-sanitizer could not start the target: %q", c)
		return
	case strings.HasPrefix(c, "Internal") && strings.Contains(c, "Error"):
		st.flush(p)
		st.problem("compute-sanitizer failed: %q (line %d)", msgtext.Clip(c, 200), ln)
		return
	}
	if m := reLevel.FindStringSubmatch(c); m != nil {
		sev := SeverityError
		switch strings.ToUpper(m[1]) {
		case "WARNING", "WARN":
			sev = SeverityWarning
		case "INFO":
			sev = ""
		}
		body := m[2]
		if rm := reRace.FindStringSubmatch(body); rm != nil {
			st.flush(p)
			if sev == "" {
				return // info-level reports are not counted by the summary
			}
			st.evidenceFor(ToolRacecheck, ln)
			st.reports["analysis"] = true
			pd := &pending{kind: KindRace, raceFirst: rm[1], raceKinds: map[string]bool{}}
			pd.rec.Severity = sev
			pd.rec.Message = c
			var line string
			pd.rec.Kernel, pd.rec.File, line = parseLoc(rm[2])
			pd.rec.Line = st.lineNum(p, line)
			pd.hasLoc = true
			pd.launch = true
			st.rec = pd
			return
		}
		if hm := reHazard.FindStringSubmatch(body); hm != nil {
			st.flush(p)
			if sev == "" {
				return
			}
			st.evidenceFor(ToolRacecheck, ln)
			st.reports["hazard"] = true
			pd := &pending{kind: raceKind(hm[2]), raceFirst: ""}
			pd.rec.Severity = sev
			pd.rec.Message = c
			pd.rec.Block = normDim(hm[4])
			pd.launch = true
			st.rec = pd
			return
		}
		st.flush(p)
		switch sev {
		case SeverityError:
			st.problem("compute-sanitizer reported an error of its own: %q (line %d)", msgtext.Clip(c, 200), ln)
		case SeverityWarning:
			st.note("compute-sanitizer warned: %q (line %d)", msgtext.Clip(c, 200), ln)
		}
		return
	}
	if strings.HasPrefix(c, "ERROR SUMMARY") || strings.HasPrefix(c, "RACECHECK SUMMARY") || strings.HasPrefix(c, "LEAK SUMMARY") {
		st.flush(p)
		// A terminal may have wrapped it ("... (16 errors, 0" then "warnings)"): the next
		// line decides (joinWrapped).
		st.wrapped, st.wrappedLine = c, ln
		return
	}
	if reSession.MatchString(c) {
		st.flush(p)
		return // --print-session-details
	}
	st.flush(p)
	pd := &pending{}
	pd.rec.Severity = SeverityError
	pd.rec.Message = c
	switch {
	case reInvalid.MatchString(c):
		m := reInvalid.FindStringSubmatch(c)
		pd.kind = "access"
		pd.rec.Access = fmt.Sprintf("%s %s of size %d bytes", m[1], m[2], st.num(p, "the access size", m[3]))
		st.evidenceFor(ToolMemcheck, ln)
	case reUninit.MatchString(c):
		m := reUninit.FindStringSubmatch(c)
		pd.kind = KindUninitializedRead
		pd.rec.Access = fmt.Sprintf("%s %s of size %d bytes", m[1], m[2], st.num(p, "the access size", m[3]))
		st.evidenceFor(ToolInitcheck, ln)
	case reHostAPI.MatchString(c):
		m := reHostAPI.FindStringSubmatch(c)
		pd.kind = "hostapi"
		pd.rec.Access = fmt.Sprintf("host API access of size %d bytes", st.num(p, "the access size", m[1]))
	case reUnused.MatchString(c):
		m := reUnused.FindStringSubmatch(c)
		pd.kind = KindUnusedMemory
		pd.size = strconv.Itoa(st.num(p, "the allocation size", m[1]))
		st.evidenceFor(ToolInitcheck, ln)
	case reLeaked.MatchString(c):
		m := reLeaked.FindStringSubmatch(c)
		pd.kind = KindLeak
		pd.size = strconv.Itoa(st.num(p, "the leak size", m[1]))
		st.evidenceFor(ToolMemcheck, ln)
	case strings.HasPrefix(c, "Program hit "):
		pd.kind = KindAPIError
		if m := reAPI.FindStringSubmatch(c); m != nil {
			pd.rec.Access = m[4] + " returned " + m[1]
		} else {
			pd.rec.Access = strings.TrimSuffix(strings.TrimPrefix(c, "Program hit "), ".")
		}
	case reBarrier.MatchString(c):
		m := reBarrier.FindStringSubmatch(c)
		pd.kind = barrierKind(m[1])
		pd.rec.Access = m[1]
		st.evidenceFor(ToolSynccheck, ln)
	case reMallocFree.MatchString(c):
		m := reMallocFree.FindStringSubmatch(c)
		pd.kind = KindDeviceHeap
		pd.rec.Access = m[1]
		st.evidenceFor(ToolMemcheck, ln)
	case reException.MatchString(c):
		pd.kind = KindHardwareException
		if strings.Contains(strings.ToLower(c), "assert") {
			pd.kind = KindDeviceAssert
		}
		pd.rec.Access = strings.TrimSuffix(c, ".")
		pd.launch = true
		pd.weak = p.weakBare
	default:
		pd.kind = "unknown"
		pd.rec.Access = msgtext.Clip(strings.TrimSuffix(c, "."), 160)
	}
	st.rec = pd
}

// continuation adds a detail line to the record being assembled.
func (st *runState) continuation(p *textParser, c string) {
	pd := st.rec
	switch {
	case strings.HasPrefix(c, "at ") && !pd.hasLoc:
		k, f, l := parseLoc(c[3:])
		pd.rec.Kernel, pd.rec.File, pd.rec.Line = k, f, st.lineNum(p, l)
		pd.hasLoc = true
		pd.launch = true
	case strings.HasPrefix(c, "by thread "):
		if m := reByThread.FindStringSubmatch(c); m != nil && pd.rec.Thread == "" {
			pd.rec.Thread, pd.rec.Block = normDim(m[1]), normDim(m[2])
			pd.hasLoc = true
			pd.launch = true
		}
	case strings.HasPrefix(c, "Access to ") || strings.HasPrefix(c, "Address "):
		if m := reReason.FindStringSubmatch(c); m != nil && pd.reason == "" {
			pd.reason = m[1]
		}
	case strings.HasPrefix(c, "Uninitialized access"):
		pd.uninit = true
	case strings.HasPrefix(c, "and "):
		if pd.kind == KindRace {
			if m := reDest.FindStringSubmatch(c); m != nil {
				_, f, l := parseLoc(m[2])
				pd.raceKinds[pairKind(pd.raceFirst, m[1])] = true
				side := raceSide{dir: m[1], file: baseFile(f), line: st.lineNum(p, l)}
				if m[3] != "" {
					side.hazards, side.counted = st.num(p, "the hazard count", m[3]), true
					pd.rec.Hazards += side.hazards
				}
				pd.sides = addSide(pd.sides, side)
			}
		}
	case reHazardThread.MatchString(c):
		if pd.raceFirst != "" && pd.rec.Access != "" {
			return
		}
		m := reHazardThread.FindStringSubmatch(c)
		k, f, ls := parseLoc(m[3])
		l := st.lineNum(p, ls)
		if pd.raceFirst == "" && pd.rec.Thread == "" {
			pd.raceFirst = m[1]
			pd.rec.Thread = normDim(m[2])
			pd.rec.Kernel, pd.rec.File, pd.rec.Line = k, f, l
			pd.hasLoc = true
			pd.dests = []string{m[1] + " access at " + locString(f, l)}
			return
		}
		pd.dests = append(pd.dests, m[1]+" access at "+locString(f, l))
		pd.rec.Access = strings.Join(pd.dests, " and ")
	case strings.HasPrefix(c, "in ") && (pd.kind == KindLeak || pd.kind == KindUnusedMemory):
		// The module of the frame before ("=========                in /usr/lib/libcublas.so.12").
		pd.alloc.module(strings.TrimSpace(c[3:]))
	case strings.HasPrefix(c, "Saved host backtrace"):
		if m := reSaved.FindStringSubmatch(c); m != nil && strings.HasPrefix(m[1], "kernel launch") {
			pd.launch = true
		}
	case strings.HasPrefix(c, "Host Frame:"):
		fn, pc, module := "", "", ""
		if m := reHostFrameOld.FindStringSubmatch(c); m != nil {
			// cuda-memcheck: "Host Frame:./bugs (main + 0x1a4) [0x7c44]".
			module, fn, pc = m[1], m[2], m[3]
		} else if m := reHostFrame.FindStringSubmatch(c); m != nil {
			fn, pc, module = m[1], m[2], m[3]
			switch {
			case reFrameSource.MatchString(fn):
				// With the host's line info: "Host Frame: main in oob_demo.cu:25 [0x8a81]
				// in oob_demo" (CUDA 12.3: "Host Frame:main in src/catch_main.cpp:36
				// [0x11e0]", no blank, the module on the next line).
				fn = fn[:reFrameSource.FindStringIndex(fn)[0]]
			case strings.ContainsRune(fn, '/'):
				// cuda-memcheck's frames without a function name ("Host Frame:./bugs
				// [0x1b3c9]") name only their module.
				module, fn = fn, ""
			}
		}
		// A frame without a symbol ("Host Frame:  [0x41b5d] in libcudart.so.13") names
		// nothing but its module, which may be a library's.
		fn = strings.TrimSpace(fn)
		pd.alloc.frame(fn, pc, strings.TrimSpace(module))
		if fn == "" || isRuntimeFrame(fn) || libraryOf(fn, "") != nil {
			return
		}
		if pd.hostKernel == "" && fn != "main" && !strings.HasPrefix(fn, "main(") {
			pd.hostKernel = fn
		}
	}
}

// flush finishes the record being assembled and adds it to its group.
func (st *runState) flush(p *textParser) {
	pd := st.rec
	if pd == nil {
		return
	}
	st.rec = nil
	if pd.weak && !pd.hasLoc {
		return // the program's line after all
	}
	r := pd.rec
	switch pd.kind {
	case "access":
		r.Kind = accessKind(pd.reason)
	case "hostapi":
		switch {
		case pd.uninit:
			r.Kind = KindUninitializedRead
			st.evidenceFor(ToolInitcheck, p.lineNo)
		default:
			r.Kind = accessKind(pd.reason)
		}
	case KindRace:
		r.Kind = KindRace
		if len(pd.raceKinds) == 1 {
			for k := range pd.raceKinds {
				r.Kind = k
			}
		}
		r.Access = raceAccess(pd.raceFirst+" access at "+locString(r.File, r.Line), pd.sides)
		r.sides = pd.sides
		if r.sides == nil {
			r.sides = []raceSide{}
		}
	case KindRaceRAW, KindRaceWAR, KindRaceWAW:
		r.Kind = pd.kind
	case KindLeak:
		r.Kind = KindLeak
		r.Access = pd.size + " bytes"
		if a := pd.alloc.access(); a != "" {
			r.Access += " allocated " + a
		}
		r.HeldBy = HeldByOf(pd.alloc.site)
		if pd.alloc.lib != nil {
			r.Library = pd.alloc.lib.Name
		}
	case KindUnusedMemory:
		r.Kind = KindUnusedMemory
		r.Access = "allocation of " + pd.size + " bytes"
		if a := pd.alloc.access(); a != "" {
			r.Access += " " + a
		}
	case "unknown":
		if !pd.hasLoc {
			// A message without a location or thread is not an error record (a banner
			// line of a newer version, say): keep it as a note. If it was an error, the
			// summary count disagrees with the records and that is a Problem.
			st.note("compute-sanitizer printed %q", msgtext.Clip(r.Message, 200))
			return
		}
		r.Kind = KindUnspecified
	default:
		r.Kind = pd.kind
	}
	// A record at a device runtime function (__assertfail) names its kernel in the host
	// backtrace.
	if pd.hostKernel != "" && (r.Kernel == "" || strings.HasPrefix(r.Kernel, "__")) && pd.launch {
		r.Kernel = pd.hostKernel
	}
	if r.Kind == KindLeak || r.Kind == KindUnusedMemory || r.Kind == KindAPIError {
		if !pd.hasLoc {
			r.Kernel = ""
		}
	}
	r.Function = fullName(r.Kernel)
	if pd.launch && r.Kind != KindLeak && r.Kind != KindUnusedMemory {
		st.run.LaunchSeen = true
	}
	r.Count = 1
	st.add(r)
}

func (st *runState) add(r Record) {
	if r.Severity == SeverityWarning {
		st.printedWrn++
	} else {
		st.printedErr++
	}
	k := r.key()
	if i, ok := st.groups[k]; ok {
		st.run.Records[i].absorb(r)
		return
	}
	if len(st.run.Records) >= MaxGroups {
		st.problem("%s", tooManyGroups())
		return
	}
	st.groups[k] = len(st.run.Records)
	st.run.Records = append(st.run.Records, r)
}

func (p *textParser) finish() ([]Run, error) {
	if len(p.runs) == 0 {
		return p.noRuns()
	}
	out := make([]Run, 0, len(p.runs))
	for i, st := range p.runs {
		st.flush(p)
		if st.wrapped != "" {
			st.unreadSummary(st.wrapped, st.wrappedLine)
			st.wrapped = ""
		}
		last := i == len(p.runs)-1
		st.finish(p, last)
		out = append(out, st.run)
	}
	return out, nil
}

// noRuns explains an input without sanitizer lines.
func (p *textParser) noRuns() ([]Run, error) {
	if p.nonBlank == 0 {
		return nil, fmt.Errorf("sanitizer: %s: %w: the log is empty", p.name, ErrNotSanitizerLog)
	}
	if p.usage {
		if p.usageReason != "" {
			return nil, fmt.Errorf("sanitizer: %s: %w: compute-sanitizer printed its usage instead of running (%q)", p.name, ErrNotSanitizerLog, p.usageReason)
		}
		return nil, fmt.Errorf("sanitizer: %s: %w: it is compute-sanitizer's help text (Usage: ...), not a run", p.name, ErrNotSanitizerLog)
	}
	if p.usageReason != "" {
		return nil, fmt.Errorf("sanitizer: %s: %w: %q", p.name, ErrNotSanitizerLog, p.usageReason)
	}
	killed := p.exit != nil && (*p.exit == 137 || *p.exit == 124) || strings.Contains(p.killHint, "Killed")
	if killed {
		run := Run{Tool: p.opts.Tool, Source: SourceText, Input: p.name, ExitCode: p.exit, TimedOut: true, Records: []Record{}}
		why := "the process was killed"
		if p.exit != nil {
			why += " (" + exitMeaning(*p.exit) + ")"
		}
		if p.killHint != "" {
			why += fmt.Sprintf(" (%q)", p.killHint)
		}
		run.Problems = append([]string{why + " before compute-sanitizer printed anything: a hung kernel killed by a timeout, or the sanitizer never started; nothing was checked"}, p.orphanProblems...)
		return []Run{run}, nil
	}
	what := fmt.Sprintf("no compute-sanitizer lines (%q) in %d lines; the first is %q", prefix, p.lineNo, p.firstForeign)
	if p.ptxas {
		what = "it looks like a ptxas build log (" + what + ")"
	}
	return nil, fmt.Errorf("sanitizer: %s: %w: %s", p.name, ErrNotSanitizerLog, what)
}

// finish settles the run's tool, counts and problems.
func (st *runState) finish(p *textParser, last bool) {
	r := &st.run
	if st.orphan {
		st.finishOrphan(p)
		return
	}
	// The tool.
	var tools []string
	for _, t := range AllTools() {
		if _, ok := st.evidence[t]; ok {
			tools = append(tools, t)
		}
	}
	hint := p.opts.Tool
	if st.cmd.seen && validTool(st.cmd.tool) {
		if hint != "" && hint != st.cmd.tool {
			st.problem("the log's command runs --tool %s but the run was given as %s", st.cmd.tool, hint)
		}
		hint = st.cmd.tool
	}
	switch {
	case len(tools) == 1:
		r.Tool = tools[0]
		if hint != "" && hint != r.Tool {
			st.problem("the log holds %s output (line %d) but the run was given as %s", r.Tool, st.evidence[r.Tool], hint)
		}
	case len(tools) > 1:
		r.Tool = hint
		if r.Tool == "" {
			r.Tool = tools[0]
		}
		st.problem("one run holds the output of several tools (%s): are logs concatenated without their headers?", strings.Join(tools, ", "))
	default:
		r.Tool = hint
	}
	for i := range r.Records {
		r.Records[i].Tool = r.Tool
	}
	if r.Records == nil {
		r.Records = []Record{}
	}
	switch {
	case st.reports["analysis"] && st.reports["hazard"]:
		r.RacecheckReport = "all"
	case st.reports["analysis"]:
		r.RacecheckReport = "analysis"
	case st.reports["hazard"]:
		r.RacecheckReport = "hazard"
	}
	if p.opts.killedAfter > 0 {
		r.TimedOut = true
	}
	if r.ExitCode == nil && p.opts.exit != nil && last {
		code := *p.opts.exit
		r.ExitCode = &code
	}
	printed := st.printedErr + st.printedWrn
	if st.raceSummary && st.errSummary {
		st.problem("one run holds both a RACECHECK SUMMARY and an ERROR SUMMARY: are logs concatenated without their headers?")
	}
	switch {
	case st.raceSummary:
		r.Summary = true
		if printed != st.displayed {
			st.problem("RACECHECK SUMMARY says %d hazards displayed but the log holds %d reports: the log is cut or was edited", st.displayed, printed)
		}
		if st.printedErr > r.Errors || st.printedWrn > r.Warnings {
			st.problem("RACECHECK SUMMARY counts %d errors and %d warnings but the log holds %d error and %d warning reports", r.Errors, r.Warnings, st.printedErr, st.printedWrn)
		}
		// The summary counts every hazard (hazard mode) or report (analysis mode) found;
		// those past --print-limit are counted but not displayed.
		r.NotPrinted = max(0, r.Errors+r.Warnings-st.displayed)
	case st.errSummary:
		r.Summary = true
		if printed+r.NotPrinted != r.Errors {
			extra := ""
			if r.NotPrinted > 0 {
				extra = fmt.Sprintf(" and %d not printed", r.NotPrinted)
			}
			st.problem("ERROR SUMMARY says %d errors but the log holds %d records%s: the log is cut or was edited, or holds a record kernel-gate does not read", r.Errors, printed, extra)
		}
		// ERROR SUMMARY counts every record, whatever its level.
		r.Warnings = 0
	default:
		r.Errors, r.Warnings = st.printedErr, st.printedWrn
		if !st.noCUDA && !st.startFailed && !st.badSummary && p.opts.killedAfter == 0 {
			st.problem("%s", st.noSummaryCause(p, last))
		}
	}
	if st.targetFailed {
		msg := "the target application failed (compute-sanitizer: \"Target application returned an error\")"
		if r.ExitCode != nil && *r.ExitCode != 0 {
			msg += "; " + exitMeaning(*r.ExitCode)
		}
		st.problem("%s: its own error or crash, which may have skipped kernels", msg)
	}
	errorExit := st.cmd.errorExitCode
	if p.opts.errorExitCode != 0 {
		errorExit = p.opts.errorExitCode
	}
	if r.ExitCode != nil && r.Summary && !st.targetFailed {
		switch code := *r.ExitCode; {
		case code == 0:
			if errorExit != 0 && r.Errors > 0 {
				st.problem("compute-sanitizer exited 0 although it found %d errors and was run with --error-exitcode %d", r.Errors, errorExit)
			}
		case errorExit != 0 && code == errorExit:
			if r.Errors == 0 {
				st.problem("compute-sanitizer exited %d (its --error-exitcode) although the summary says 0 errors", code)
			}
		case r.Errors == 0 || errorExit != 0:
			st.problem("compute-sanitizer exited %d: %s", code, exitMeaning(code))
		}
	}
}

// finishOrphan settles a command echo that no sanitizer output followed.
func (st *runState) finishOrphan(p *textParser) {
	r := &st.run
	r.Records = []Record{}
	r.Tool = p.opts.Tool
	if validTool(st.cmd.tool) {
		r.Tool = st.cmd.tool
	}
	msg := fmt.Sprintf("compute-sanitizer ran nothing (%q)", st.cmd.line)
	switch {
	case st.orphanReason != "":
		msg += fmt.Sprintf(": %q", st.orphanReason)
	case st.orphanFirst != "":
		msg += fmt.Sprintf(": it printed %q", st.orphanFirst)
	default:
		msg += ": it printed nothing"
	}
	if st.killHint != "" && st.killHint != st.orphanFirst {
		msg += fmt.Sprintf(" (%q)", st.killHint)
	}
	if ec := r.ExitCode; ec != nil {
		msg += "; " + exitMeaning(*ec)
		if *ec == 137 || *ec == 124 {
			r.TimedOut = true
		}
	}
	st.problem("%s", msg)
}

// noSummaryCause says why a run has no summary line, as precisely as the log allows.
func (st *runState) noSummaryCause(p *textParser, last bool) string {
	name := "ERROR SUMMARY"
	if st.run.Tool == ToolRacecheck {
		name = "RACECHECK SUMMARY"
	}
	base := fmt.Sprintf("no %s line", name)
	if p.opts.killedAfter > 0 {
		return base + fmt.Sprintf(": the run was killed after %s", p.opts.killedAfter)
	}
	if ec := st.run.ExitCode; ec != nil {
		if *ec == 137 || *ec == 124 {
			st.run.TimedOut = true
			return base + ": the run was killed (" + exitMeaning(*ec) + "), a hung kernel killed by a timeout?"
		}
		if *ec != 0 {
			return base + ": the run ended with " + exitMeaning(*ec) + " before compute-sanitizer finished (it crashed or was killed)"
		}
	}
	if st.killHint != "" {
		return base + fmt.Sprintf(": the run was killed or crashed (%q)", st.killHint)
	}
	if st.targetFailed {
		return base + ": the target application failed and compute-sanitizer did not finish"
	}
	if !last {
		return base + fmt.Sprintf(": the run that starts at line %d ends without one (a crashed run, or logs spliced together)", st.startLine)
	}
	return base + fmt.Sprintf(": the log ends at line %d before compute-sanitizer finished: it is truncated, or the sanitizer was killed", p.lineNo)
}

// exitMeaning describes an exit status.
func exitMeaning(code int) string {
	switch {
	case code == 137:
		return "exit 137: SIGKILL, as `timeout -s KILL` or the OOM killer sends"
	case code == 124:
		return "exit 124: `timeout` stopped it"
	case code > 128 && code < 128+65:
		return fmt.Sprintf("exit %d: killed by signal %d (%s)", code, code-128, signalName(code-128))
	case code == 255:
		return "exit 255: compute-sanitizer could not run the target (a bad option, or a program that never used CUDA)"
	}
	return fmt.Sprintf("exit %d", code)
}

func signalName(sig int) string {
	switch sig {
	case 1:
		return "SIGHUP"
	case 2:
		return "SIGINT"
	case 3:
		return "SIGQUIT"
	case 4:
		return "SIGILL"
	case 6:
		return "SIGABRT"
	case 7:
		return "SIGBUS"
	case 8:
		return "SIGFPE"
	case 9:
		return "SIGKILL"
	case 11:
		return "SIGSEGV"
	case 13:
		return "SIGPIPE"
	case 15:
		return "SIGTERM"
	}
	return "signal " + strconv.Itoa(sig)
}

// parseLoc reads "func(args)+0x90 in bugs.cu:10" (compute-sanitizer), "0x00000148 in
// /src/bugs.cu:10:func(args)" or "0x00000148 in func(args)" (cuda-memcheck).
// The line number is returned as printed ("" when there is none), for the caller to parse.
func parseLoc(s string) (kernel, file, line string) {
	s = strings.TrimSpace(s)
	if m := reAtOld.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[3]), m[1], m[2]
	}
	if m := reAtNew.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1]), m[2], m[3]
	}
	if i := strings.LastIndex(s, " in "); i >= 0 {
		// "cp_async_bulk_cp_mask in cp_async_bulk.h:236": a frame without an offset.
		if m := reFileLine.FindStringSubmatch(s[i+4:]); m != nil {
			return strings.TrimSpace(s[:i]), m[1], m[2]
		}
		return strings.TrimSpace(s[:i]), "", ""
	}
	return s, "", ""
}

var reFileLine = regexp.MustCompile(`^(\S.*):(\d+)$`)

func locString(file string, line int) string {
	f := baseFile(file)
	switch {
	case f == "":
		return "unknown location"
	case line > 0:
		return f + ":" + strconv.Itoa(line)
	}
	return f
}

// maxCount bounds every number the parsers read: counts, sizes and line numbers far
// above anything compute-sanitizer prints, and low enough that sums of them cannot
// overflow.
const maxCount = 1 << 53

// parseCount reads a count, size or line number as compute-sanitizer prints it: decimal
// digits, optionally grouped by commas ("1,024"). Anything else — an empty string, a sign,
// misplaced commas, a number past maxCount (ERROR SUMMARY: 9223372036854775808 errors)
// — is an error: a number that does not parse must never read as 0.
func parseCount(s string) (int, error) {
	digits := s
	if strings.IndexByte(s, ',') >= 0 {
		if !reGrouped.MatchString(s) {
			return 0, fmt.Errorf("%q is not a number (misplaced commas)", msgtext.Clip(s, 40))
		}
		digits = strings.ReplaceAll(s, ",", "")
	}
	if digits == "" {
		return 0, errors.New("an empty number")
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, fmt.Errorf("%q is not a number", msgtext.Clip(s, 40))
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > maxCount {
		return 0, fmt.Errorf("%q is out of range (more than %d)", msgtext.Clip(s, 40), uint64(maxCount))
	}
	return int(n), nil
}

var reGrouped = regexp.MustCompile(`^\d{1,3}(?:,\d{3})+$`)

// numbers reads the numbers of one run or record and remembers those that do not parse,
// for the caller to turn into problems.
type numbers struct {
	bad []string
}

// count parses s (see parseCount); what names the number in the problem.
func (n *numbers) count(what, s string) int {
	v, err := parseCount(s)
	if err != nil {
		n.fail(what, err)
		return 0
	}
	return v
}

// optional parses s, which may be empty or absent (then 0).
func (n *numbers) optional(what, s string) int {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	return n.count(what, s)
}

func (n *numbers) fail(what string, err error) {
	if len(n.bad) < maxNotes {
		n.bad = append(n.bad, fmt.Sprintf("the %s: %v", what, err))
	}
}

// normDim turns "(0, 0, 0)" into "(0,0,0)".
func normDim(s string) string {
	s = strings.ReplaceAll(s, " ", "")
	if !strings.HasPrefix(s, "(") {
		s = "(" + s + ")"
	}
	return s
}

func accessKind(reason string) string {
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "out of bounds"):
		return KindOutOfBounds
	case strings.Contains(r, "misaligned"):
		return KindMisaligned
	}
	return KindInvalidAddress
}

func barrierKind(detail string) string {
	if strings.Contains(strings.ToLower(detail), "divergent") {
		return KindBarrierDivergence
	}
	return KindInvalidBarrier
}

func raceKind(t string) string {
	switch strings.ToUpper(t) {
	case "RAW":
		return KindRaceRAW
	case "WAR":
		return KindRaceWAR
	case "WAW":
		return KindRaceWAW
	}
	return KindRace
}

// pairKind names the hazard between a first and a second access.
func pairKind(first, second string) string {
	w1 := !strings.EqualFold(first, "Read")
	w2 := !strings.EqualFold(second, "Read")
	switch {
	case w1 && w2:
		return KindRaceWAW
	case w1:
		return KindRaceRAW
	case w2:
		return KindRaceWAR
	}
	return KindRace
}

// isRuntimeFrame reports host frames of the CUDA runtime and driver, which say nothing
// about where the program allocated or launched.
func isRuntimeFrame(fn string) bool {
	f := strings.TrimPrefix(fn, "cudaError ")
	return strings.HasPrefix(f, "cuda") || strings.HasPrefix(f, "cu") && len(f) > 2 && f[2] >= 'A' && f[2] <= 'Z' ||
		strings.HasPrefix(f, "libcudart") || strings.HasPrefix(f, "__cuda") || strings.HasPrefix(f, "__device_stub") ||
		strings.HasPrefix(f, "__wrapper__device_stub") || strings.HasPrefix(f, "void __wrapper__device_stub")
}

// frameName drops a frame's parameter list: "main" or "run(int)" -> "run", and
// "(anonymous namespace)::Attention::sanitize()" -> "(anonymous namespace)::Attention::sanitize"
// (the list is the parenthesised group that ends the name, not the first parenthesis).
func frameName(fn string) string {
	s := strings.TrimSuffix(fn, " const")
	if i := paramListStart(s); i > 0 {
		return s[:i]
	}
	return fn
}
