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
// kept (at most MaxGroups), not with the file.
func ParseXMLWith(r io.Reader, name string, o ParseOptions) (Run, error) {
	if o.Tool != "" && !validTool(o.Tool) {
		return Run{}, fmt.Errorf("sanitizer: %s: unknown tool %q (want one of %s)", name, o.Tool, strings.Join(AllTools(), ", "))
	}
	run := Run{Source: SourceXML, Input: name, Records: []Record{}}
	br := bufio.NewReader(r)
	if peek, _ := br.Peek(512); len(bytes.TrimSpace(peek)) == 0 {
		return Run{}, fmt.Errorf("sanitizer: %s: %w: the XML file is empty (compute-sanitizer writes it when the run ends: it did not finish, or never started)", name, ErrNotSanitizerLog)
	}
	in := &xmlInput{r: br, limit: MaxXMLSize}
	d := xml.NewDecoder(in)
	groups := map[recordKey]int{}
	evidence := map[string]bool{}
	rootSeen, rootClosed, stopped := false, false, false
	records, levelless := 0, 0
	problem := func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); len(run.Problems) < maxNotes && !slices.Contains(run.Problems, msg) {
			run.Problems = append(run.Problems, msg)
		}
	}
	tooLarge := func() error {
		return fmt.Errorf("sanitizer: %s: %w: the XML record file is larger than %d MiB, far more than compute-sanitizer writes (--print-limit bounds it): not read", name, ErrTooLarge, MaxXMLSize>>20)
	}
	// where names the decoder's position: "line 12 (byte 345)".
	where := func() string {
		line, _ := d.InputPos()
		return fmt.Sprintf("line %d (byte offset %d)", line, d.InputOffset())
	}
	// broken reports a read that failed inside the root and stops the parse.
	broken := func(what string, err error) {
		line, _ := d.InputPos()
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			line = se.Line
		}
		switch {
		case errors.Is(err, errElementTooLarge):
			if what == "" {
				what = "a token"
			}
			problem("the XML record file holds %s larger than %d KiB at line %d (byte offset %d), far more than compute-sanitizer writes: the file cannot be judged", what, MaxXMLElement>>10, line, d.InputOffset())
		case strings.Contains(err.Error(), "unexpected EOF") && what == "":
			problem("the XML record file is truncated after %d records (line %d): the run did not finish writing it", records, line)
		case strings.Contains(err.Error(), "unexpected EOF"):
			problem("the XML record file is truncated inside %s (line %d): the run did not finish writing it", what, line)
		case what == "":
			problem("the XML record file is malformed at line %d after %d records: %v", line, records, err)
		default:
			problem("the XML record file is malformed in %s (line %d): %v", what, line, err)
		}
		stopped = true
	}
	for !stopped {
		in.bound(MaxXMLElement)
		startLine, _ := d.InputPos()
		startOff := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrTooLarge) {
			return Run{}, tooLarge()
		}
		if err != nil {
			if !rootSeen {
				if errors.Is(err, errElementTooLarge) {
					return Run{}, fmt.Errorf("sanitizer: %s: %w: no XML element in its first %d KiB", name, ErrNotSanitizerLog, MaxXMLElement>>10)
				}
				return Run{}, fmt.Errorf("sanitizer: %s: %w: not XML (%v)", name, ErrNotSanitizerLog, err)
			}
			broken("", err)
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !rootSeen {
				if t.Name.Local != "ComputeSanitizerOutput" {
					return Run{}, fmt.Errorf("sanitizer: %s: %w: the XML root is <%s>, not <ComputeSanitizerOutput>", name, ErrNotSanitizerLog, clip(t.Name.Local, 80))
				}
				rootSeen = true
				continue
			}
			if rootClosed {
				problem("an element <%s> at %s after </ComputeSanitizerOutput>: are two record files concatenated? The file cannot be judged", clip(t.Name.Local, 80), where())
				stopped = true
				continue
			}
			switch t.Name.Local {
			case "record":
				var xr xmlRecord
				in.bound(MaxXMLElement)
				if err := d.DecodeElement(&xr, &t); err != nil {
					if errors.Is(err, ErrTooLarge) {
						return Run{}, tooLarge()
					}
					broken(fmt.Sprintf("record %d", records+1), err)
					continue
				}
				records++
				if xr.Kind == "Hazard" && xr.Level == "" {
					levelless++
				}
				var nums numbers
				rec, tool := xr.record(&nums)
				for _, b := range nums.bad {
					line, _ := d.InputPos()
					problem("record %d (ending at line %d): %s: kernel-gate cannot judge the record", records, line, b)
				}
				if tool != "" {
					evidence[tool] = true
				}
				if xr.launch() {
					run.LaunchSeen = true
				}
				if rec.Severity == SeverityWarning {
					run.Warnings++
				} else {
					run.Errors++
				}
				k := rec.key()
				switch i, ok := groups[k]; {
				case ok:
					run.Records[i].Count++
					run.Records[i].Hazards += rec.Hazards
				case len(run.Records) >= MaxGroups:
					problem("%s", tooManyGroups())
				default:
					groups[k] = len(run.Records)
					run.Records = append(run.Records, rec)
				}
			case "session":
				in.bound(MaxXMLElement)
				if err := d.Skip(); err != nil {
					if errors.Is(err, ErrTooLarge) {
						return Run{}, tooLarge()
					}
					broken("<session>", err)
				}
			default:
				// An element kernel-gate does not know may hold the errors of a newer
				// compute-sanitizer: it cannot pass unread.
				problem("an unknown element <%s> under <ComputeSanitizerOutput> at %s: kernel-gate cannot judge it (records of a newer compute-sanitizer?), so the run fails", clip(t.Name.Local, 80), where())
				in.bound(MaxXMLElement)
				if err := d.Skip(); err != nil {
					if errors.Is(err, ErrTooLarge) {
						return Run{}, tooLarge()
					}
					broken(fmt.Sprintf("<%s>", clip(t.Name.Local, 80)), err)
				}
			}
		case xml.EndElement:
			if t.Name.Local == "ComputeSanitizerOutput" {
				rootClosed = true
			}
		case xml.CharData:
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
			case !rootSeen:
				return Run{}, fmt.Errorf("sanitizer: %s: %w: text before any XML element (%q)", name, ErrNotSanitizerLog, clip(string(text), 80))
			case rootClosed:
				problem("text after </ComputeSanitizerOutput> at %s (%q): the file cannot be judged", at, clip(string(text), 80))
				stopped = true
			default:
				problem("text under <ComputeSanitizerOutput> at %s (%q), which holds only elements: the file cannot be judged", at, clip(string(text), 80))
			}
		}
	}
	if !rootSeen {
		return Run{}, fmt.Errorf("sanitizer: %s: %w: no <ComputeSanitizerOutput> element", name, ErrNotSanitizerLog)
	}
	if !rootClosed && !stopped {
		problem("the XML record file is truncated after %d records (no closing </ComputeSanitizerOutput>): the run did not finish writing it", records)
	}
	var tools []string
	for _, t := range AllTools() {
		if evidence[t] {
			tools = append(tools, t)
		}
	}
	switch {
	case len(tools) == 1:
		run.Tool = tools[0]
		if o.Tool != "" && o.Tool != run.Tool {
			problem("the XML holds %s records but the run was given as %s", run.Tool, o.Tool)
		}
	case len(tools) > 1:
		run.Tool = o.Tool
		if run.Tool == "" {
			run.Tool = tools[0]
		}
		problem("one XML file holds the records of several tools (%s)", strings.Join(tools, ", "))
	default:
		run.Tool = o.Tool
	}
	for i := range run.Records {
		run.Records[i].Tool = run.Tool
	}
	if levelless > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("%d racecheck hazard records carry no level in the XML (--racecheck-report hazard): all are counted as errors; the text output says which are warnings", levelless))
	}
	for _, rec := range run.Records {
		if rec.Kind == KindRace || rec.Kind == KindRaceRAW || rec.Kind == KindRaceWAR || rec.Kind == KindRaceWAW {
			if rec.Hazards > 0 {
				run.RacecheckReport = mergeReport(run.RacecheckReport, "analysis")
			} else {
				run.RacecheckReport = mergeReport(run.RacecheckReport, "hazard")
			}
		}
	}
	return run, nil
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
func (x *xmlRecord) site() string {
	for _, f := range x.HostStack.Frames {
		fn := strings.TrimSpace(f.Func)
		if fn == "" || isRuntimeFrame(fn) {
			continue
		}
		return frameName(fn) + "+" + strings.TrimSpace(f.PC)
	}
	return ""
}

// record converts the XML record and says which tool it proves (or "").
// Numbers that do not parse are noted in n.
func (x *xmlRecord) record(n *numbers) (Record, string) {
	w := &x.What
	r := Record{Severity: SeverityError, Count: 1, Message: clip(strings.TrimSpace(w.Text), 300)}
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
		if s := x.site(); s != "" {
			r.Access += " allocated at " + s
		}
		r.HeldBy = HeldByOf(x.site())
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
		if s := x.site(); s != "" {
			r.Access += " at " + s
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
			var dests []string
			for _, d := range w.Destinations {
				c := n.optional("<destination><count>", d.Count)
				r.Hazards += c
				kinds[pairKind(w.Source.Direction, d.Direction)] = true
				dests = append(dests, fmt.Sprintf("%s access at %s [%d hazards]", d.Direction, locString(d.Where.Path, n.optional("<destination><line>", d.Where.Line)), c))
			}
			r.Access = first
			if len(dests) > 0 {
				r.Access += " and " + strings.Join(dests, ", ")
			}
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
		r.Access = clip(strings.TrimSpace(x.Kind+" "+strings.TrimSpace(w.Text)), 160)
	}
	r.Function = fullName(r.Kernel)
	return r, tool
}
