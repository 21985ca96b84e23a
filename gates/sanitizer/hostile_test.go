package sanitizer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// mutate returns a capture with old replaced by new, failing when old is not there.
func mutate(t *testing.T, file, old, new string) []byte {
	t.Helper()
	data := readCapture(t, file)
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s has no %q", file, old)
	}
	return bytes.Replace(data, []byte(old), []byte(new), 1)
}

// gateOf judges runs of one tool, with one launch, so that only what the parse found
// decides.
func gateOf(t *testing.T, runs []Run, tool string) result.Gate {
	t.Helper()
	return evaluate(t, runs, map[string]int{"*": 1}, Config{Tools: []string{tool}})
}

// TestNumbersFailClosed: every number the text parser reads must parse; one that does not
// (past any integer, misplaced commas) is a problem that fails the run, never a 0 that
// passes. Each input is a real capture with one number changed.
func TestNumbersFailClosed(t *testing.T) {
	const huge = "9223372036854775808" // one past the largest int64
	cases := []struct {
		file, old, new string
	}{
		// The report: a clean run whose count does not fit parsed as 0 errors and passed.
		{"sanitizer-h200-cuda13.0/cs_synccheck_clean.txt", "ERROR SUMMARY: 0 errors", "ERROR SUMMARY: " + huge + " errors"},
		{"sanitizer-h200-cuda13.0/cs_synccheck_clean.txt", "ERROR SUMMARY: 0 errors", "ERROR SUMMARY: 0,00 errors"},
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", "ERROR SUMMARY: 257 errors", "ERROR SUMMARY: 99999999999999999999999 errors"},
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", "157 errors were not printed", huge + " errors were not printed"},
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", "write of size 4 bytes", "write of size " + huge + " bytes"},
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", "in bugs.cu:10\n", "in bugs.cu:" + huge + "\n"},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "1 hazard displayed", huge + " hazard displayed"},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "(1 error,", "(" + huge + " error,"},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "0 warnings)", huge + " warnings)"},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "[264 hazards]", "[" + huge + " hazards]"},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "in bugs.cu:14\n", "in bugs.cu:" + huge + "\n"},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "in bugs.cu:15 [", "in bugs.cu:" + huge + " ["},
		{"sanitizer-h200-cuda13.0/cs_racecheck_hazard.txt", "(32,0,0) at smem_race(float *)+0xa0 in bugs.cu:14", "(32,0,0) at smem_race(float *)+0xa0 in bugs.cu:" + huge},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "exit=0", "exit=" + huge},
		{"sanitizer-h200-cuda13.0/cs_memcheck_leak.txt", "Leaked 1,024 bytes", "Leaked 1,0240 bytes"},
		{"probe/h200-cuda13.0/ic_uninitcopy.txt", "of size 256 bytes", "of size " + huge + " bytes"},
		{"probe/h200-cuda13.0/ic_uninitcopy.txt", "--error-exitcode 86", "--error-exitcode " + huge},
		{"probe/h200-cuda13.0/ic_unused.txt", "Unused memory in allocation", "Unused memory in allocation"},
	}
	for _, tc := range cases {
		t.Run(tc.file+": "+tc.new, func(t *testing.T) {
			if tc.old == tc.new {
				// ic_unused: its size, whatever it is.
				data := readCapture(t, tc.file)
				i := bytes.Index(data, []byte(" of size "))
				j := bytes.Index(data[i+9:], []byte(" bytes"))
				tc.old = string(data[i : i+9+j])
				tc.new = " of size " + huge
			}
			tool := toolFromName(tc.file)
			orig, err := ParseTextWith(bytes.NewReader(readCapture(t, tc.file)), tc.file, ParseOptions{Tool: tool})
			if err != nil {
				t.Fatal(err)
			}
			runs, err := ParseTextWith(bytes.NewReader(mutate(t, tc.file, tc.old, tc.new)), tc.file, ParseOptions{Tool: tool})
			if err != nil {
				t.Fatal(err)
			}
			var added []string
			for i, r := range runs {
				for _, p := range r.Problems {
					if i >= len(orig) || !contains(orig[i].Problems, p) {
						added = append(added, p)
					}
				}
			}
			if len(added) == 0 || !strings.Contains(strings.Join(added, "\n"), "out of range") && !strings.Contains(strings.Join(added, "\n"), "misplaced commas") {
				t.Fatalf("no problem for the number: %q", added)
			}
			if !strings.Contains(added[0], "line ") {
				t.Errorf("the problem does not say the line: %q", added[0])
			}
			if g := gateOf(t, runs, tool); g.Verdict != result.Fail {
				t.Errorf("verdict %s, findings %q", g.Verdict, findings(g))
			}
		})
	}
	for _, s := range []string{"", ",", "1,", ",1", "1,00", "12,3456", "-1", "+1", "1 0", "0x10", huge, "18446744073709551616"} {
		if n, err := parseCount(s); err == nil {
			t.Errorf("parseCount(%q) = %d", s, n)
		}
	}
	for s, want := range map[string]int{"0": 0, "1,024": 1024, "1,234,567": 1234567, "007": 7, "9007199254740992": 1 << 53} {
		if n, err := parseCount(s); err != nil || n != want {
			t.Errorf("parseCount(%q) = %d, %v", s, n, err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestGluedPrefix: the program printed a line without its newline and compute-sanitizer's
// line went on behind it (a PyTorch harness's progress output); the run reads as the
// original.
func TestGluedPrefix(t *testing.T) {
	cases := []struct{ file, old, new string }{
		{"sanitizer-h200-cuda13.0/cs_synccheck_clean.txt", "done clean\n========= ERROR SUMMARY", "done clean\nprogress 50%========= ERROR SUMMARY"},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "done race\n========= RACECHECK", "done race\n[rank0] step 3/4 ========= RACECHECK"},
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", "\n========= Invalid", "\nloss=0.25\r========= Invalid"},
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", "\n=========     at oob_write", "\ntqdm 10%|#=========     at oob_write"},
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", "\n========= \n", "\nepoch 1 =========\n"},
	}
	for _, tc := range cases {
		t.Run(tc.new, func(t *testing.T) {
			tool := toolFromName(tc.file)
			orig, err := ParseTextWith(bytes.NewReader(readCapture(t, tc.file)), "x.log", ParseOptions{Tool: tool})
			if err != nil {
				t.Fatal(err)
			}
			runs, err := ParseTextWith(bytes.NewReader(mutate(t, tc.file, tc.old, tc.new)), "x.log", ParseOptions{Tool: tool})
			if err != nil {
				t.Fatal(err)
			}
			if err := matchLines(renderAll(runs), renderAll(orig)); err != nil {
				t.Error(err)
			}
		})
	}
	// The bug: the clean run's summary behind the program's output was never read, and the
	// run failed for want of a summary. Longer runs of '=' are the program's.
	runs := mustParse(t, "========= COMPUTE-SANITIZER\nprogress 50%========= ERROR SUMMARY: 0 errors\n", ToolMemcheck)
	if !runs[0].Summary || len(runs[0].Problems) != 0 {
		t.Errorf("glued summary: %+v", runs[0])
	}
	runs = mustParse(t, "========= COMPUTE-SANITIZER\n==== results ==========\nx =========== y\n========= ERROR SUMMARY: 0 errors\n", ToolMemcheck)
	if len(runs[0].Notes) != 0 || len(runs[0].Problems) != 0 {
		t.Errorf("banners read as the sanitizer's: %+v", runs[0])
	}
	for i, want := range map[string]int{"a=========": 1, "=========": -1, "a==========": -1, "a========= x": 1, "ab=========x": -1, "a ==========b ========= c": 14} {
		if got := gluedPrefix(i); got != want {
			t.Errorf("gluedPrefix(%q) = %d, want %d", i, got, want)
		}
	}
}

// TestPastedSnippets: logs pasted without the prefix, in the shapes people post: a record
// and the summary alone; the program's own lines around them stay the program's.
func TestPastedSnippets(t *testing.T) {
	race := "Error: Race reported between Write access at smem_race(float *)+0xa0 in bugs.cu:25\n" +
		"    and Read access at smem_race(float *)+0xc0 in bugs.cu:27 [264 hazards]\n\n" +
		"RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
	runs := mustParse(t, race, "")
	if err := matchLines(renderAll(runs), []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race-raw error x1 h264 bugs.cu:25 - smem_race(float *) | Write access at bugs.cu:25 and Read access at bugs.cu:27 [264 hazards]",
	}); err != nil {
		t.Error(err)
	}
	// Program output that looks like the sanitizer's but is not: a device banner, its own
	// "Error:" and "Warning:" lines, an indented table. The record count must still agree.
	noisy := "Device 0: NVIDIA H200\nWarning: falling back to the slow path\n   col1  col2\n" +
		"Invalid __global__ write of size 4 bytes\n    at oob_write(float *, int)+0x90 in bugs.cu:10\n    by thread (0,0,0) in block (1,0,0)\n" +
		"Error: the reference is slow\n    Access to 0x7ff41c800400 is out of bounds\n\n" +
		"done oob\nERROR SUMMARY: 1 error\n"
	runs = mustParse(t, noisy, ToolMemcheck)
	if err := matchLines(renderAll(runs), []string{
		"memcheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x1 bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
	}); err != nil {
		t.Error(err)
	}
	// A pasted log that lost a record still fails: the summary disagrees.
	runs = mustParse(t, "ERROR SUMMARY: 2 errors\n", ToolMemcheck)
	if len(runs[0].Problems) != 1 || !strings.Contains(runs[0].Problems[0], "ERROR SUMMARY says 2 errors but the log holds 0 records") {
		t.Errorf("problems %q", runs[0].Problems)
	}
	// Lines only a program prints are not a log.
	for _, in := range []string{"Device 0: NVIDIA H200\nWarning: x\n", "Error: something\n    at foo\n", "INFO: ok\n"} {
		if _, err := ParseText(strings.NewReader(in), "prog.log"); !errors.Is(err, ErrNotSanitizerLog) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestXMLUnknownElements: what kernel-gate cannot read under the root fails the run and
// is named with its line: an element of a newer compute-sanitizer that may hold errors,
// text, content after the root, a number that does not parse.
func TestXMLUnknownElements(t *testing.T) {
	const file = "sanitizer-h200-cuda13.0/xml_racecheck_race.xml"
	const empty = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComputeSanitizerOutput>\n</ComputeSanitizerOutput>\n"
	cases := []struct {
		name    string
		in      []byte
		records int
		problem string
	}{
		// The report: error records under another element name were skipped and passed.
		{"errors under an unknown element", []byte("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComputeSanitizerOutput>\n  <error>\n    <kind>Precise</kind>\n  </error>\n</ComputeSanitizerOutput>\n"),
			0, "an unknown element <error> under <ComputeSanitizerOutput> at line 3"},
		{"a record renamed in a real file", mutate(t, file, "<record>", "<hazardRecord>"), 0, "unknown element <hazardRecord> under <ComputeSanitizerOutput> at line 3"},
		{"beside the real records", mutate(t, file, "</ComputeSanitizerOutput>", "<analysis><kind>Race</kind></analysis>\n</ComputeSanitizerOutput>"), 1, "unknown element <analysis>"},
		{"a nested root", []byte(strings.Replace(empty, "\n</C", "\n<ComputeSanitizerOutput><record/></ComputeSanitizerOutput>\n</C", 1)), 0, "unknown element <ComputeSanitizerOutput>"},
		{"text under the root", []byte(strings.Replace(empty, "\n</C", "\n1 error\n</C", 1)), 0, "text under <ComputeSanitizerOutput> at line 3"},
		{"a second root", append(readCapture(t, file), []byte("<ComputeSanitizerOutput>\n<record/>\n</ComputeSanitizerOutput>\n")...), 1, "after </ComputeSanitizerOutput>"},
		{"text after the root", append(readCapture(t, file), []byte("ERROR SUMMARY: 3 errors\n")...), 1, "text after </ComputeSanitizerOutput>"},
		{"a line past any integer", mutate(t, file, "<line>14</line>", "<line>9223372036854775808</line>"), 1, "<line>: \"9223372036854775808\" is out of range"},
		{"a hazard count that is not a number", mutate(t, file, "<count>94</count>", "<count>94.5</count>"), 1, "<destination><count>: \"94.5\" is not a number"},
		{"a size", mutate(t, "sanitizer-h200-cuda13.0/xml_memcheck_oobpad.xml", "<size>4</size>", "<size>-4</size>"), 100, "<size>: \"-4\" is not a number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseXMLWith(bytes.NewReader(tc.in), "x.xml", ParseOptions{Tool: ToolRacecheck})
			if err != nil {
				t.Fatal(err)
			}
			if r.Printed() != tc.records || len(r.Problems) == 0 || !strings.Contains(r.Problems[0], tc.problem) {
				t.Fatalf("printed %d, problems %q; want %d and %q", r.Printed(), r.Problems, tc.records, tc.problem)
			}
			r.Tool = ToolRacecheck
			if g := gateOf(t, []Run{r}, ToolRacecheck); g.Verdict != result.Fail || !strings.Contains(strings.Join(findings(g), "\n"), tc.problem) {
				t.Errorf("verdict %s, findings %q", g.Verdict, findings(g))
			}
		})
	}
	// The session element of --save-session-details is known.
	r, err := ParseXML(bytes.NewReader(readCapture(t, "probe/h200-cuda13.0/mc_fine_session.xml")), "s.xml")
	if err != nil || len(r.Problems) != 0 {
		t.Errorf("session: %v %q", err, r.Problems)
	}
}

// endlessXML streams a record file of n records over sites distinct lines, or, with
// text set, one record whose <text> never ends, without holding it.
type endlessXML struct {
	n, sites, i int
	text        bool
	buf         []byte
	size        int64
	// peakHeap samples the heap every MiB read.
	peakHeap uint64
	sampled  int
}

func (s *endlessXML) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) && s.i <= s.n+1 {
		switch {
		case s.i == 0:
			s.buf = append(s.buf, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComputeSanitizerOutput>\n"...)
			if s.text {
				s.buf = append(s.buf, "<record><kind>Precise</kind><what><text>"...)
			}
		case s.i <= s.n && s.text:
			s.buf = append(s.buf, "Invalid __global__ write of size 4 bytes "...)
		case s.i <= s.n:
			s.buf = fmt.Appendf(s.buf, "  <record><kind>Precise</kind><level>Error</level><who><threadIdx><x>%d</x><y>0</y><z>0</z></threadIdx><blockIdx><x>1</x><y>0</y><z>0</z></blockIdx></who>"+
				"<what><text>Invalid __global__ write of size 4 bytes is out of bounds</text><space>__global__</space><size>4</size><direction>write</direction><error>out of bounds</error></what>"+
				"<where><func>oob_write</func><path>/src/bugs.cu</path><line>%d</line><pc>0x90</pc></where>"+
				"<hostStack><saveLocation>kernel launch time</saveLocation><frame><func>__device_stub__Z9oob_writePfi</func><pc>0x8d6e</pc></frame><frame><func>main</func><pc>0x8f5b</pc></frame></hostStack></record>\n",
				s.i%1024, 10+s.i%s.sites)
		default:
			if s.text {
				s.buf = append(s.buf, "</text></what></record>"...)
			}
			s.buf = append(s.buf, "</ComputeSanitizerOutput>\n"...)
		}
		s.i++
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	c := copy(p, s.buf)
	s.buf = s.buf[:copy(s.buf, s.buf[c:])]
	s.size += int64(c)
	s.sampled += c
	if s.sampled >= 1<<20 {
		s.sampled = 0
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.peakHeap = max(s.peakHeap, ms.HeapInuse)
	}
	return c, nil
}

// TestXMLBounds: the file's size is capped (an error naming the file), one record or
// token is bounded (a problem), and so are the distinct sites kept (a problem).
func TestXMLBounds(t *testing.T) {
	defer func(s, e int64) { MaxXMLSize, MaxXMLElement = s, e }(MaxXMLSize, MaxXMLElement)
	MaxXMLSize = 1 << 20
	src := &endlessXML{n: 1 << 30, sites: 10}
	_, err := ParseXML(src, "endless.xml")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "endless.xml") || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("error %v", err)
	}
	if src.size > 2<<20 {
		t.Errorf("read %d bytes past a 1 MiB cap", src.size)
	}
	// A file of exactly the cap is read.
	exact := readCapture(t, "sanitizer-h200-cuda13.0/xml_memcheck_oobpad.xml")
	MaxXMLSize = int64(len(exact))
	if r, err := ParseXML(bytes.NewReader(exact), "exact.xml"); err != nil || len(r.Problems) != 0 || r.Printed() != 100 {
		t.Errorf("a file of the cap's size: %v %q", err, r.Problems)
	}
	MaxXMLSize = 1 << 30

	MaxXMLElement = 64 << 10
	r, err := ParseXML(&endlessXML{n: 1 << 30, text: true}, "text.xml")
	if err != nil || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "record 1 larger than 64 KiB at line 3") {
		t.Errorf("an endless record: %v %q", err, r.Problems)
	}
	r, err = ParseXML(strings.NewReader("<ComputeSanitizerOutput>"+strings.Repeat("x", 100<<10)), "t.xml")
	if err != nil || len(r.Problems) != 2 || !strings.Contains(r.Problems[1], "a token larger than 64 KiB at line 1") {
		t.Errorf("an endless text: %v %q", err, r.Problems)
	}
	r, err = ParseXML(strings.NewReader("<ComputeSanitizerOutput><x>"+strings.Repeat("<y/>", 100<<10)), "t.xml")
	if err != nil || len(r.Problems) != 2 || !strings.Contains(r.Problems[1], "<x> larger than 64 KiB") {
		t.Errorf("an endless unknown element: %v %q", err, r.Problems)
	}
	if _, err := ParseXML(strings.NewReader("<!--"+strings.Repeat("x", 100<<10)), "c.xml"); !errors.Is(err, ErrNotSanitizerLog) {
		t.Errorf("an endless comment before the root: %v", err)
	}

	r, err = ParseXML(&endlessXML{n: MaxGroups + 5, sites: MaxGroups + 5}, "many.xml")
	if err != nil || len(r.Records) != MaxGroups || r.Errors != MaxGroups+5 || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "more than 10000 distinct error sites") {
		t.Errorf("too many sites: %v, %d records, %d errors, %q", err, len(r.Records), r.Errors, r.Problems)
	}
	runs, err := ParseText(&siteLog{n: MaxGroups + 5, sites: MaxGroups + 5}, "many.log")
	if err != nil || len(runs[0].Records) != MaxGroups || !contains(runs[0].Problems, tooManyGroups()) {
		t.Errorf("too many sites in text: %v %q", err, runs[0].Problems)
	}
}
