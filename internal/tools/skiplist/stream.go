package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of go test -json (cmd/test2json's TestEvent; build-output events name
// the package by ImportPath).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// stream turns go test -json's events into go test's own output, package by package as
// each ends, and keeps the skips.
type stream struct {
	w      io.Writer
	module string // the module path, trimmed from the package names of the skip list
	pkgs   map[string]*pkgState
	skips  []skip
}

// pkgState is what a package printed until it ends.
type pkgState struct {
	out    []string              // the package's own lines (not a test's): ok, FAIL, a panic
	tests  map[string]*testState // tests that started and have not ended
	order  []string              // their names, as they started
	failed [][]string            // the output of each failed top-level test, as go test shows it
}

// testState is a running test's output, without test2json's === framing lines.
type testState struct {
	lines  []string
	failed [][]string // the output of its failed subtests
}

// skip is a skipped test: its package, its name and the last thing it logged (the
// message of t.Skip, with its file:line).
type skip struct {
	pkg, test, reason string
}

func newStream(w io.Writer, module string) *stream {
	return &stream{w: w, module: module, pkgs: map[string]*pkgState{}}
}

// read reads events until r ends. A line that is not an event (go test's own errors
// printed on standard output) is printed as it is.
func (s *stream) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20) // one test's output line can be long (a dumped result)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.w, sc.Text())
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *stream) event(e event) {
	if e.Action == "build-output" {
		// The compiler's errors, which go test prints on standard error without -json.
		fmt.Fprint(s.w, e.Output)
		return
	}
	p := s.pkgs[e.Package]
	if p == nil {
		p = &pkgState{tests: map[string]*testState{}}
		s.pkgs[e.Package] = p
	}
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.out = append(p.out, strings.TrimSuffix(e.Output, "\n"))
		case "pass", "skip", "fail":
			s.endPackage(e.Package, p, e.Action == "fail")
			delete(s.pkgs, e.Package)
		}
		return
	}
	t := p.tests[e.Test]
	if t == nil {
		t = &testState{}
		p.tests[e.Test] = t
		p.order = append(p.order, e.Test)
	}
	switch e.Action {
	case "output":
		if line := strings.TrimSuffix(e.Output, "\n"); !framing(line) {
			t.lines = append(t.lines, line)
		}
	case "pass":
		delete(p.tests, e.Test)
	case "skip":
		s.skips = append(s.skips, skip{pkg: s.short(e.Package), test: e.Test, reason: reason(t.lines)})
		delete(p.tests, e.Test)
	case "fail":
		block := t.failure(e.Test)
		delete(p.tests, e.Test)
		if i := strings.LastIndexByte(e.Test, '/'); i >= 0 && p.tests[e.Test[:i]] != nil {
			parent := p.tests[e.Test[:i]]
			parent.failed = append(parent.failed, block)
		} else {
			p.failed = append(p.failed, block)
		}
	}
}

// endPackage prints what go test prints of a package: for one that passed its summary
// line only; for one that failed each failed test's output, the output of tests that
// never ended (a panic or a timeout ended the binary under them), then the package's
// own lines.
func (s *stream) endPackage(name string, p *pkgState, failed bool) {
	if !failed {
		for _, line := range p.out {
			if strings.HasPrefix(line, "ok  ") || strings.HasPrefix(line, "?   ") {
				fmt.Fprintln(s.w, line)
			}
		}
		return
	}
	for _, block := range p.failed {
		printLines(s.w, block)
	}
	for _, test := range p.order {
		if t := p.tests[test]; t != nil && !strings.Contains(test, "/") {
			printLines(s.w, append([]string{"--- FAIL: " + test + " (did not end)"}, t.lines...))
		}
	}
	for _, line := range p.out {
		if line != "PASS" {
			fmt.Fprintln(s.w, line)
		}
	}
}

// failure is a failed test's output as go test shows it: its --- FAIL line first, then
// what it printed, then its failed subtests' output, indented.
func (t *testState) failure(name string) []string {
	head := "--- FAIL: " + name
	var body []string
	for _, line := range t.lines {
		if strings.HasPrefix(line, "--- FAIL: "+name+" ") {
			head = line
		} else {
			body = append(body, line)
		}
	}
	out := append([]string{head}, body...)
	for _, sub := range t.failed {
		for _, line := range sub {
			out = append(out, "    "+line)
		}
	}
	return out
}

// printSkips prints the skip list: each skipped test, and its reason indented under it.
func (s *stream) printSkips() {
	if len(s.skips) == 0 {
		fmt.Fprintln(s.w, "skipped: no test")
		return
	}
	fmt.Fprintf(s.w, "skipped: %d %s\n", len(s.skips), map[bool]string{true: "test", false: "tests"}[len(s.skips) == 1])
	for _, sk := range s.skips {
		fmt.Fprintf(s.w, "  %s %s\n", sk.pkg, sk.test)
		for _, line := range strings.Split(sk.reason, "\n") {
			fmt.Fprintf(s.w, "      %s\n", line)
		}
	}
}

// short is pkg relative to the module: "./gates/guard".
func (s *stream) short(pkg string) string {
	switch {
	case s.module == "":
		return pkg
	case pkg == s.module:
		return "."
	case strings.HasPrefix(pkg, s.module+"/"):
		return "./" + pkg[len(s.module)+1:]
	}
	return pkg
}

// framing says whether line is one of test2json's === RUN, PAUSE, CONT or NAME lines,
// which go test without -v does not print.
func framing(line string) bool {
	for _, w := range []string{"RUN", "PAUSE", "CONT", "NAME"} {
		if strings.HasPrefix(line, "=== "+w+" ") {
			return true
		}
	}
	return false
}

// reason is the last message a skipped test logged (t.Skip's, with its file:line): the
// last line indented by four spaces and the lines indented by eight after it, which are
// the same message's.
func reason(lines []string) string {
	var last []string
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "--- SKIP: "):
		case strings.HasPrefix(line, "        ") && last != nil:
			last = append(last, strings.TrimPrefix(line, "    "))
		case strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     "):
			last = []string{strings.TrimPrefix(line, "    ")}
		}
	}
	if last == nil {
		return "(no reason given)"
	}
	return strings.Join(last, "\n")
}

func printLines(w io.Writer, lines []string) {
	for _, line := range lines {
		fmt.Fprintln(w, line)
	}
}
