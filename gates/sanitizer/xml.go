package sanitizer

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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
// Input that is empty or not sanitizer XML returns an error wrapping ErrNotSanitizerLog.
// A file that stops before its closing tag (the run was killed while writing it) or breaks
// off in malformed XML returns the records read so far and a Problem.
func ParseXMLWith(r io.Reader, name string, o ParseOptions) (Run, error) {
	if o.Tool != "" && !validTool(o.Tool) {
		return Run{}, fmt.Errorf("sanitizer: %s: unknown tool %q (want one of %s)", name, o.Tool, strings.Join(AllTools(), ", "))
	}
	run := Run{Source: SourceXML, Input: name, Records: []Record{}}
	br := bufio.NewReader(r)
	if peek, _ := br.Peek(512); len(bytes.TrimSpace(peek)) == 0 {
		return Run{}, fmt.Errorf("sanitizer: %s: %w: the XML file is empty (compute-sanitizer writes it when the run ends: it did not finish, or never started)", name, ErrNotSanitizerLog)
	}
	d := xml.NewDecoder(br)
	groups := map[recordKey]int{}
	evidence := map[string]bool{}
	rootSeen, rootClosed := false, false
	records, levelless := 0, 0
	problem := func(format string, args ...any) {
		if len(run.Problems) < maxNotes {
			run.Problems = append(run.Problems, fmt.Sprintf(format, args...))
		}
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			line := 0
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				line = se.Line
			}
			if !rootSeen {
				return Run{}, fmt.Errorf("sanitizer: %s: %w: not XML (%v)", name, ErrNotSanitizerLog, err)
			}
			if strings.Contains(err.Error(), "unexpected EOF") {
				problem("the XML record file is truncated after %d records (line %d): the run did not finish writing it", records, line)
			} else {
				problem("the XML record file is malformed at line %d after %d records: %v", line, records, err)
			}
			rootClosed = true // reported
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !rootSeen {
				if t.Name.Local != "ComputeSanitizerOutput" {
					return Run{}, fmt.Errorf("sanitizer: %s: %w: the XML root is <%s>, not <ComputeSanitizerOutput>", name, ErrNotSanitizerLog, t.Name.Local)
				}
				rootSeen = true
				continue
			}
			switch t.Name.Local {
			case "record":
				var xr xmlRecord
				if err := d.DecodeElement(&xr, &t); err != nil {
					line, _ := d.InputPos()
					if strings.Contains(err.Error(), "unexpected EOF") {
						problem("the XML record file is truncated inside record %d (line %d): the run did not finish writing it", records+1, line)
					} else {
						problem("the XML record file is malformed in record %d (line %d): %v", records+1, line, err)
					}
					rootClosed = true
					goto done
				}
				records++
				if xr.Kind == "Hazard" && xr.Level == "" {
					levelless++
				}
				rec, tool := xr.record()
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
				if i, ok := groups[k]; ok {
					run.Records[i].Count++
					run.Records[i].Hazards += rec.Hazards
				} else {
					groups[k] = len(run.Records)
					run.Records = append(run.Records, rec)
				}
			default:
				if err := d.Skip(); err != nil {
					problem("the XML record file is truncated or malformed in <%s>: %v", t.Name.Local, err)
					rootClosed = true
					goto done
				}
			}
		case xml.EndElement:
			if t.Name.Local == "ComputeSanitizerOutput" {
				rootClosed = true
			}
		case xml.CharData:
			if !rootSeen && len(bytes.TrimSpace(t)) > 0 {
				return Run{}, fmt.Errorf("sanitizer: %s: %w: text before any XML element (%q)", name, ErrNotSanitizerLog, clip(string(bytes.TrimSpace(t)), 80))
			}
		}
	}
done:
	if !rootSeen {
		return Run{}, fmt.Errorf("sanitizer: %s: %w: no <ComputeSanitizerOutput> element", name, ErrNotSanitizerLog)
	}
	if !rootClosed {
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
func (x *xmlRecord) record() (Record, string) {
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
		r.Line = atoi(strings.TrimSpace(wh.Line))
	}
	tool := ""
	switch x.Kind {
	case "Precise":
		tool = ToolMemcheck
		setWhere(x.Where)
		r.Kind = accessKind(w.Error)
		r.Access = fmt.Sprintf("%s %s of size %d bytes", strings.TrimSpace(w.Space), strings.TrimSpace(w.Direction), num(w.Size))
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
		r.Access = strconv.Itoa(num(w.Size)) + " bytes"
		if s := x.site(); s != "" {
			r.Access += " allocated at " + s
		}
	case "Initcheck":
		tool = ToolInitcheck
		setWhere(x.Where)
		r.Kind = KindUninitializedRead
		if m := reUninit.FindStringSubmatch(strings.TrimSpace(w.Text)); m != nil {
			r.Access = fmt.Sprintf("%s %s of size %d bytes", m[1], m[2], num(m[3]))
		} else {
			r.Access = "read of size " + strconv.Itoa(num(w.Size)) + " bytes"
		}
	case "InitcheckApiError":
		tool = ToolInitcheck
		r.Kind = KindUninitializedRead
		r.Access = fmt.Sprintf("host API access of size %d bytes", num(w.AccessSize))
	case "UnusedMemory":
		tool = ToolInitcheck
		r.Kind = KindUnusedMemory
		r.Access = "allocation of " + strconv.Itoa(num(w.Allocation.Size)) + " bytes"
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
				n := num(d.Count)
				r.Hazards += n
				kinds[pairKind(w.Source.Direction, d.Direction)] = true
				dests = append(dests, fmt.Sprintf("%s access at %s [%d hazards]", d.Direction, locString(d.Where.Path, atoi(strings.TrimSpace(d.Where.Line))), n))
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
				r.Access += " and " + w.Thread1.Access + " access at " + locString(w.Thread1.Where.Path, atoi(strings.TrimSpace(w.Thread1.Where.Line)))
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
