package sanitizer

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
)

// ParseXML reads the record file of `compute-sanitizer --xml --save FILE`. See ParseXMLWith.
func ParseXML(r io.Reader, name string) (Run, error) {
	return ParseXMLWith(r, name, ParseOptions{})
}

// ParseXMLWith reads a --xml --save record file: a <ComputeSanitizerOutput> root with one
// <record> per printed error (the print limit applies to it as to the text) and, with
// --save-session-details, a <session>. The file has no summary, no count of the errors
// past the print limit and no trace of kernel launches, so the Run's Summary is false and
// its counts are what the records add up to; RunTools and Combine take those from the text
// output of the same run.
//
// Input that is empty or not sanitizer XML returns an error wrapping ErrNotSanitizerLog;
// input larger than MaxXMLSize an error wrapping ErrTooLarge. A file that stops before its
// closing tag (the run was killed while writing it) or breaks off in malformed XML returns
// the records read so far and a Problem; so does an element under the root that is not a
// <record> or <session>, text under the root, content after it, a number that does not
// parse, a record or any other element larger than MaxXMLElement, and more than MaxGroups
// distinct error sites: whatever kernel-gate cannot judge fails the run.
//
// It streams: the decoder reads one token at a time straight from the input (no
// read-ahead), each element is bounded, and memory grows with the distinct error sites
// kept (at most MaxGroups), not with the file. Its steps: read the tokens under the root
// (xmlParse.token), each record grouped by its error site (xmlParse.record), then the tool
// the records name (xmlParse.setTool) and the notes on what the XML leaves out (xmlParse.racecheckNotes).
func ParseXMLWith(r io.Reader, name string, o ParseOptions) (Run, error) {
	if o.Tool != "" && !validTool(o.Tool) {
		return Run{}, fmt.Errorf("sanitizer: %s: unknown tool %q (want one of %s)", name, o.Tool, strings.Join(AllTools(), ", "))
	}
	br := bufio.NewReader(r)
	if peek, _ := br.Peek(512); len(bytes.TrimSpace(peek)) == 0 {
		return Run{}, fmt.Errorf("sanitizer: %s: %w: the XML file is empty (compute-sanitizer writes it when the run ends: it did not finish, or never started)", name, ErrNotSanitizerLog)
	}
	in := &xmlInput{r: br, limit: MaxXMLSize}
	p := &xmlParse{name: name, in: in, d: xml.NewDecoder(in), run: Run{Source: SourceXML, Input: name, Records: []Record{}},
		groups: map[recordKey]int{}, evidence: map[string]bool{}}
	for !p.stopped {
		done, err := p.token()
		if err != nil {
			return Run{}, err
		}
		if done {
			break
		}
	}
	if !p.rootSeen {
		return Run{}, fmt.Errorf("sanitizer: %s: %w: no <ComputeSanitizerOutput> element", name, ErrNotSanitizerLog)
	}
	if !p.rootClosed && !p.stopped {
		p.problem("the XML record file is truncated after %d records (no closing </ComputeSanitizerOutput>): the run did not finish writing it", p.records)
	}
	p.setTool(o.Tool)
	p.racecheckNotes()
	return p.run, nil
}

// xmlParse is one ParseXMLWith under way: the decoder, the Run it fills and where it is
// in the file.
type xmlParse struct {
	name string
	in   *xmlInput
	d    *xml.Decoder
	run  Run
	// groups is each error site's index in run.Records; evidence the tools the records
	// name.
	groups   map[recordKey]int
	evidence map[string]bool
	// stopped: the file cannot be read on (a Problem says why).
	rootSeen, rootClosed, stopped bool
	// records counts the records read, levelless the racecheck hazards without a level.
	records, levelless int
}

// problem adds a Problem once, up to maxNotes of them.
func (p *xmlParse) problem(format string, args ...any) {
	if msg := fmt.Sprintf(format, args...); len(p.run.Problems) < maxNotes && !slices.Contains(p.run.Problems, msg) {
		p.run.Problems = append(p.run.Problems, msg)
	}
}

// tooLarge is the error for a file past MaxXMLSize: it is not read at all.
func (p *xmlParse) tooLarge() error {
	return fmt.Errorf("sanitizer: %s: %w: the XML record file is larger than %d MiB, far more than compute-sanitizer writes (--print-limit bounds it): not read", p.name, ErrTooLarge, MaxXMLSize>>20)
}

// where names the decoder's position: "line 12 (byte offset 345)".
func (p *xmlParse) where() string {
	line, _ := p.d.InputPos()
	return fmt.Sprintf("line %d (byte offset %d)", line, p.d.InputOffset())
}

// broken reports a read that failed inside the root (in what: "" for between elements)
// and stops the parse.
func (p *xmlParse) broken(what string, err error) {
	line, _ := p.d.InputPos()
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		line = se.Line
	}
	switch {
	case errors.Is(err, errElementTooLarge):
		if what == "" {
			what = "a token"
		}
		p.problem("the XML record file holds %s larger than %d KiB at line %d (byte offset %d), far more than compute-sanitizer writes: the file cannot be judged", what, MaxXMLElement>>10, line, p.d.InputOffset())
	case strings.Contains(err.Error(), "unexpected EOF") && what == "":
		p.problem("the XML record file is truncated after %d records (line %d): the run did not finish writing it", p.records, line)
	case strings.Contains(err.Error(), "unexpected EOF"):
		p.problem("the XML record file is truncated inside %s (line %d): the run did not finish writing it", what, line)
	case what == "":
		p.problem("the XML record file is malformed at line %d after %d records: %v", line, p.records, err)
	default:
		p.problem("the XML record file is malformed in %s (line %d): %v", what, line, err)
	}
	p.stopped = true
}

// token reads the next token, bounded, and handles it: done at the end of the input. The
// error is for input that is not sanitizer XML or is too large: no Run at all.
func (p *xmlParse) token() (done bool, err error) {
	p.in.bound(MaxXMLElement)
	startLine, _ := p.d.InputPos()
	startOff := p.d.InputOffset()
	tok, err := p.d.Token()
	if err == io.EOF {
		return true, nil
	}
	if errors.Is(err, ErrTooLarge) {
		return true, p.tooLarge()
	}
	if err != nil {
		if !p.rootSeen {
			if errors.Is(err, errElementTooLarge) {
				return true, fmt.Errorf("sanitizer: %s: %w: no XML element in its first %d KiB", p.name, ErrNotSanitizerLog, MaxXMLElement>>10)
			}
			return true, fmt.Errorf("sanitizer: %s: %w: not XML (%v)", p.name, ErrNotSanitizerLog, err)
		}
		p.broken("", err)
		return true, nil
	}
	switch t := tok.(type) {
	case xml.StartElement:
		return false, p.element(t)
	case xml.EndElement:
		if t.Name.Local == "ComputeSanitizerOutput" {
			p.rootClosed = true
		}
	case xml.CharData:
		return false, p.text(t, startLine, startOff)
	}
	return false, nil
}

// element handles an element: the root, then under it each <record> and <session>; any
// other element, or one after the root, is a Problem.
func (p *xmlParse) element(t xml.StartElement) error {
	if !p.rootSeen {
		if t.Name.Local != "ComputeSanitizerOutput" {
			return fmt.Errorf("sanitizer: %s: %w: the XML root is <%s>, not <ComputeSanitizerOutput>", p.name, ErrNotSanitizerLog, msgtext.Clip(t.Name.Local, 80))
		}
		p.rootSeen = true
		return nil
	}
	if p.rootClosed {
		p.problem("an element <%s> at %s after </ComputeSanitizerOutput>: are two record files concatenated? The file cannot be judged", msgtext.Clip(t.Name.Local, 80), p.where())
		p.stopped = true
		return nil
	}
	switch t.Name.Local {
	case "record":
		return p.record(t)
	case "session":
		return p.skip(t, "<session>")
	}
	// An element kernel-gate does not know may hold the errors of a newer
	// compute-sanitizer: it cannot pass unread.
	p.problem("an unknown element <%s> under <ComputeSanitizerOutput> at %s: kernel-gate cannot judge it (records of a newer compute-sanitizer?), so the run fails", msgtext.Clip(t.Name.Local, 80), p.where())
	return p.skip(t, fmt.Sprintf("<%s>", msgtext.Clip(t.Name.Local, 80)))
}

// skip passes over an element (what names it in a Problem), bounded like any other.
func (p *xmlParse) skip(t xml.StartElement, what string) error {
	p.in.bound(MaxXMLElement)
	if err := p.d.Skip(); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return p.tooLarge()
		}
		p.broken(what, err)
	}
	return nil
}

// record decodes one <record> and adds it to the Run: counted as an error or a warning,
// and grouped with the records of the same error site (at most MaxGroups sites).
func (p *xmlParse) record(t xml.StartElement) error {
	var xr xmlRecord
	p.in.bound(MaxXMLElement)
	if err := p.d.DecodeElement(&xr, &t); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return p.tooLarge()
		}
		p.broken(fmt.Sprintf("record %d", p.records+1), err)
		return nil
	}
	p.records++
	if xr.Kind == "Hazard" && xr.Level == "" {
		p.levelless++
	}
	var nums numbers
	rec, tool := xr.record(&nums)
	for _, b := range nums.bad {
		line, _ := p.d.InputPos()
		p.problem("record %d (ending at line %d): %s: kernel-gate cannot judge the record", p.records, line, b)
	}
	if tool != "" {
		p.evidence[tool] = true
	}
	if xr.launch() {
		p.run.LaunchSeen = true
	}
	if rec.Severity == SeverityWarning {
		p.run.Warnings++
	} else {
		p.run.Errors++
	}
	k := rec.key()
	switch i, ok := p.groups[k]; {
	case ok:
		p.run.Records[i].absorb(rec)
	case len(p.run.Records) >= MaxGroups:
		p.problem("%s", tooManyGroups())
	default:
		p.groups[k] = len(p.run.Records)
		p.run.Records = append(p.run.Records, rec)
	}
	return nil
}

// text handles character data (t, which starts at startLine and startOff): white space is
// nothing; text before the root means the input is not sanitizer XML; text under or after
// the root is a Problem, since the root holds only elements.
func (p *xmlParse) text(t xml.CharData, startLine int, startOff int64) error {
	text := bytes.TrimSpace(t)
	if len(text) > 0 {
		// Where the text starts, not where the decoder stopped after it.
		lead := bytes.IndexFunc(t, func(r rune) bool { return !unicode.IsSpace(r) })
		startLine += bytes.Count(t[:lead], []byte("\n"))
		startOff += int64(lead)
	}
	at := fmt.Sprintf("line %d (byte offset %d)", startLine, startOff)
	switch {
	case len(text) == 0:
	case !p.rootSeen:
		return fmt.Errorf("sanitizer: %s: %w: text before any XML element (%q)", p.name, ErrNotSanitizerLog, msgtext.Clip(string(text), 80))
	case p.rootClosed:
		p.problem("text after </ComputeSanitizerOutput> at %s (%q): the file cannot be judged", at, msgtext.Clip(string(text), 80))
		p.stopped = true
	default:
		p.problem("text under <ComputeSanitizerOutput> at %s (%q), which holds only elements: the file cannot be judged", at, msgtext.Clip(string(text), 80))
	}
	return nil
}

// racecheckNotes says what the XML leaves out of racecheck's records: a hazard's level
// (without it every hazard counts as an error), and which --racecheck-report the run used
// (hazard records, analysis records with hazard counts, or both).
func (p *xmlParse) racecheckNotes() {
	if p.levelless > 0 {
		p.run.Notes = append(p.run.Notes, fmt.Sprintf("%d racecheck hazard records carry no level in the XML (--racecheck-report hazard): all are counted as errors; the text output says which are warnings", p.levelless))
	}
	for _, rec := range p.run.Records {
		if rec.Kind == KindRace || rec.Kind == KindRaceRAW || rec.Kind == KindRaceWAR || rec.Kind == KindRaceWAW {
			if rec.Hazards > 0 {
				p.run.RacecheckReport = mergeReport(p.run.RacecheckReport, "analysis")
			} else {
				p.run.RacecheckReport = mergeReport(p.run.RacecheckReport, "hazard")
			}
		}
	}
}

// setTool sets the Run's tool from the records (the tool given says which when they name
// none) and gives it to every record; records of several tools, or of another tool than
// the one given, are a Problem.
func (p *xmlParse) setTool(given string) {
	var tools []string
	for _, t := range AllTools() {
		if p.evidence[t] {
			tools = append(tools, t)
		}
	}
	switch {
	case len(tools) == 1:
		p.run.Tool = tools[0]
		if given != "" && given != p.run.Tool {
			p.problem("the XML holds %s records but the run was given as %s", p.run.Tool, given)
		}
	case len(tools) > 1:
		p.run.Tool = given
		if p.run.Tool == "" {
			p.run.Tool = tools[0]
		}
		p.problem("one XML file holds the records of several tools (%s)", strings.Join(tools, ", "))
	default:
		p.run.Tool = given
	}
	for i := range p.run.Records {
		p.run.Records[i].Tool = p.run.Tool
	}
}

// MaxXMLSize bounds an XML record file: compute-sanitizer's --print-limit (kernel-gate
// passes 10000) keeps real files to a few MiB, so a larger one is not a record file and
// reading on would only spend memory and time.
var MaxXMLSize int64 = 256 << 20

// MaxXMLElement bounds one <record> (or any other element under the root, or one token
// outside them). Real records are a few KiB: a host stack of some 30 frames, a racecheck
// report with a few destinations.
var MaxXMLElement int64 = 1 << 20

// errElementTooLarge is xmlInput's error past an element's bound.
var errElementTooLarge = errors.New("element too large")

// xmlInput is the decoder's input: an io.ByteReader, so that encoding/xml reads from it
// without a buffer of its own and what it has read is exactly what it has decoded. It
// stops at limit bytes (ErrTooLarge) and at the bound of the element being read
// (errElementTooLarge), so no token or record can grow without limit.
type xmlInput struct {
	r     *bufio.Reader
	n     int64 // bytes read
	limit int64
	stop  int64 // n at which the element being read is too large
}

// bound allows the next element (or token) max more bytes.
func (x *xmlInput) bound(max int64) { x.stop = x.n + max }

func (x *xmlInput) ReadByte() (byte, error) {
	if x.n >= x.limit {
		if _, err := x.r.Peek(1); err != nil {
			return 0, err // the file ends at the limit exactly
		}
		return 0, ErrTooLarge
	}
	if x.n >= x.stop {
		return 0, errElementTooLarge
	}
	b, err := x.r.ReadByte()
	if err == nil {
		x.n++
	}
	return b, err
}

func (x *xmlInput) Read(p []byte) (int, error) {
	// encoding/xml reads through ReadByte; Read is only for the io.Reader it wants.
	if len(p) == 0 {
		return 0, nil
	}
	b, err := x.ReadByte()
	if err != nil {
		return 0, err
	}
	p[0] = b
	return 1, nil
}

func mergeReport(have, add string) string {
	if have == "" || have == add {
		return add
	}
	return "all"
}

// The XML schema, as compute-sanitizer 2025.3 writes it.
type xmlRecord struct {
	Kind      string     `xml:"kind"`
	Level     string     `xml:"level"`
	Who       xmlWho     `xml:"who"`
	What      xmlWhat    `xml:"what"`
	Where     xmlWhere   `xml:"where"`
	HostStack xmlStack   `xml:"hostStack"`
	DevStack  []xmlFrame `xml:"deviceStack>frame"`
}

type xmlWho struct {
	Thread *xmlDim `xml:"threadIdx"`
	Block  *xmlDim `xml:"blockIdx"`
}

type xmlDim struct {
	X string `xml:"x"`
	Y string `xml:"y"`
	Z string `xml:"z"`
}

func (d *xmlDim) String() string {
	if d == nil {
		return ""
	}
	return "(" + strings.TrimSpace(d.X) + "," + strings.TrimSpace(d.Y) + "," + strings.TrimSpace(d.Z) + ")"
}

type xmlWhere struct {
	Func string `xml:"func"`
	Path string `xml:"path"`
	Line string `xml:"line"`
	PC   string `xml:"pc"`
}

type xmlFrame struct {
	Func   string `xml:"func"`
	PC     string `xml:"pc"`
	Module string `xml:"module"`
}

type xmlStack struct {
	SaveLocation string     `xml:"saveLocation"`
	Frames       []xmlFrame `xml:"frame"`
}

type xmlAccess struct {
	Direction string   `xml:"direction"`
	Access    string   `xml:"access"`
	Where     xmlWhere `xml:"where"`
	Count     string   `xml:"count"`
	Thread    *xmlDim  `xml:"threadIdx"`
}

type xmlWhat struct {
	Text         string      `xml:"text"`
	Space        string      `xml:"space"`
	Size         string      `xml:"size"`
	Direction    string      `xml:"direction"`
	Error        string      `xml:"error"`
	Type         string      `xml:"type"`
	Exception    string      `xml:"exception"`
	API          string      `xml:"api"`
	AccessSize   string      `xml:"accessSize"`
	Allocation   xmlAlloc    `xml:"allocation"`
	Source       *xmlAccess  `xml:"source"`
	Destinations []xmlAccess `xml:"destination"`
	Common       xmlCommon   `xml:"common"`
	Thread0      *xmlAccess  `xml:"thread0"`
	Thread1      *xmlAccess  `xml:"thread1"`
}

type xmlAlloc struct {
	Size string `xml:"size"`
}

type xmlCommon struct {
	Type  string  `xml:"type"`
	Block *xmlDim `xml:"blockIdx"`
}

// launch reports whether the record proves a kernel ran.
func (x *xmlRecord) launch() bool {
	switch x.Kind {
	case "Leak", "UnusedMemory", "Api", "InitcheckApiError":
		return false
	}
	return strings.HasPrefix(x.HostStack.SaveLocation, "kernel launch") || x.Where.Func != "" ||
		x.What.Source != nil || x.What.Thread0 != nil
}

// kernel is the launched kernel's mangled name when the host stack has its device stub
// ("__device_stub__Z9oob_writePfi"), else the device function as the record names it.
func (x *xmlRecord) kernel() string {
	for _, f := range x.HostStack.Frames {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(f.Func), "__device_stub__"); ok && rest != "" {
			if strings.HasPrefix(rest, "Z") {
				return "_" + rest
			}
			return rest
		}
	}
	return strings.TrimSpace(x.Where.Func)
}

// site names the first host frame outside the CUDA runtime: "main+0x8ce0".
func (x *xmlRecord) site() allocation {
	var a allocation
	for _, f := range x.HostStack.Frames {
		a.frame(strings.TrimSpace(f.Func), strings.TrimSpace(f.PC), strings.TrimSpace(f.Module))
	}
	return a
}

// record converts the XML record and says which tool it proves (or "").
// Numbers that do not parse are noted in n.
func (x *xmlRecord) record(n *numbers) (Record, string) {
	w := &x.What
	r := Record{Severity: SeverityError, Count: 1, Message: msgtext.Clip(strings.TrimSpace(w.Text), 300)}
	if strings.EqualFold(x.Level, "warning") {
		r.Severity = SeverityWarning
	}
	r.Thread, r.Block = x.Who.Thread.String(), x.Who.Block.String()
	setWhere := func(wh xmlWhere) {
		r.Kernel = x.kernel()
		if r.Kernel == "" {
			r.Kernel = strings.TrimSpace(wh.Func)
		}
		r.File = strings.TrimSpace(wh.Path)
		r.Line = n.optional("<line>", wh.Line)
	}
	tool := ""
	switch x.Kind {
	case "Precise":
		tool = ToolMemcheck
		setWhere(x.Where)
		r.Kind = accessKind(w.Error)
		r.Access = fmt.Sprintf("%s %s of size %d bytes", strings.TrimSpace(w.Space), strings.TrimSpace(w.Direction), n.optional("<size>", w.Size))
	case "Imprecise":
		setWhere(x.Where)
		if strings.HasPrefix(r.Kernel, "__") {
			r.Kernel = "" // the device runtime function; kernel() found no stub
		}
		r.Kind = KindHardwareException
		exc := strings.TrimSpace(w.Exception)
		if strings.Contains(strings.ToLower(exc), "assert") {
			r.Kind = KindDeviceAssert
		}
		r.Access = exc
		if r.Message == "" {
			r.Message = exc
		}
	case "Api":
		r.Kind = KindAPIError
		r.Access = strings.TrimSpace(w.API) + " returned " + strings.TrimSpace(w.Error)
	case "Leak":
		tool = ToolMemcheck
		r.Kind = KindLeak
		r.Access = strconv.Itoa(n.optional("<size>", w.Size)) + " bytes"
		a := x.site()
		if s := a.access(); s != "" {
			r.Access += " allocated " + s
		}
		r.HeldBy = HeldByOf(a.site)
		if a.lib != nil {
			r.Library = a.lib.Name
		}
	case "Initcheck":
		tool = ToolInitcheck
		setWhere(x.Where)
		r.Kind = KindUninitializedRead
		if m := reUninit.FindStringSubmatch(strings.TrimSpace(w.Text)); m != nil {
			r.Access = fmt.Sprintf("%s %s of size %d bytes", m[1], m[2], n.count("access size in <text>", m[3]))
		} else {
			r.Access = "read of size " + strconv.Itoa(n.optional("<size>", w.Size)) + " bytes"
		}
	case "InitcheckApiError":
		tool = ToolInitcheck
		r.Kind = KindUninitializedRead
		r.Access = fmt.Sprintf("host API access of size %d bytes", n.optional("<accessSize>", w.AccessSize))
	case "UnusedMemory":
		tool = ToolInitcheck
		r.Kind = KindUnusedMemory
		r.Access = "allocation of " + strconv.Itoa(n.optional("<allocation><size>", w.Allocation.Size)) + " bytes"
		if s := x.site().access(); s != "" {
			r.Access += " " + s
		}
	case "Synccheck":
		tool = ToolSynccheck
		setWhere(x.Where)
		detail := strings.TrimSuffix(strings.TrimSpace(w.Type), ".")
		r.Kind = barrierKind(detail)
		r.Access = detail
		if detail != "" {
			r.Message = strings.TrimSpace(w.Text) + ": " + detail
		}
	case "Analysis":
		tool = ToolRacecheck
		r.Kind = KindRace
		if w.Source != nil {
			setWhere(w.Source.Where)
			first := w.Source.Direction + " access at " + locString(r.File, r.Line)
			kinds := map[string]bool{}
			sides := []raceSide{}
			for _, d := range w.Destinations {
				c := n.optional("<destination><count>", d.Count)
				r.Hazards += c
				kinds[pairKind(w.Source.Direction, d.Direction)] = true
				sides = addSide(sides, raceSide{dir: d.Direction, file: baseFile(d.Where.Path), line: n.optional("<destination><line>", d.Where.Line), hazards: c, counted: true})
			}
			r.Access = raceAccess(first, sides)
			r.sides = sides
			if len(kinds) == 1 {
				for k := range kinds {
					r.Kind = k
				}
			}
		}
	case "Hazard":
		tool = ToolRacecheck
		r.Kind = raceKind(w.Common.Type)
		r.Block = w.Common.Block.String()
		if w.Thread0 != nil {
			setWhere(w.Thread0.Where)
			r.Thread = w.Thread0.Thread.String()
			r.Access = w.Thread0.Access + " access at " + locString(r.File, r.Line)
			if w.Thread1 != nil {
				r.Access += " and " + w.Thread1.Access + " access at " + locString(w.Thread1.Where.Path, n.optional("<thread1><line>", w.Thread1.Where.Line))
			}
		}
	default:
		setWhere(x.Where)
		r.Kind = KindUnspecified
		r.Access = msgtext.Clip(strings.TrimSpace(x.Kind+" "+strings.TrimSpace(w.Text)), 160)
	}
	r.Function = fullName(r.Kernel)
	return r, tool
}
