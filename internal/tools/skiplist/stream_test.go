package main

import (
	"os"
	"strings"
	"testing"
)

// testdata/fixture.json is go test -count=1 -json ./... of the module testdata/fixture
// (its checkout's path replaced by /home/dev/kernel-gate): tests that pass, fail, skip with
// and without a reason, in parallel and as subtests, a package that does not build, one
// whose test panics and one without tests. testdata/fixture.want is what skiplist shows.
func TestStreamShowsFailuresThenSkips(t *testing.T) {
	raw, err := os.Open("testdata/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var b strings.Builder
	s := newStream(&b, "fixture")
	if err := s.read(raw); err != nil {
		t.Fatal(err)
	}
	s.printSkips()
	want, err := os.ReadFile("testdata/fixture.want")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("got:\n%s\nwant (testdata/fixture.want):\n%s", b.String(), want)
	}
}

// A failed subtest's output is shown under its parent's, indented, as go test shows it;
// a passed one's is not. A line that is not an event is shown at once; a package's
// failures when it ends.
func TestFailedSubtestUnderItsParent(t *testing.T) {
	stream := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA/ok","Output":"    a_test.go:3: fine\n"}
{"Action":"pass","Package":"p","Test":"TestA/ok"}
{"Action":"output","Package":"p","Test":"TestA/bad","Output":"=== NAME  TestA/bad\n"}
{"Action":"output","Package":"p","Test":"TestA/bad","Output":"    a_test.go:9: got 2\n"}
{"Action":"output","Package":"p","Test":"TestA/bad","Output":"--- FAIL: TestA/bad (0.01s)\n"}
{"Action":"fail","Package":"p","Test":"TestA/bad"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.02s)\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
not an event: go test's own words
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.03s\n"}
{"Action":"fail","Package":"p"}
`
	var b strings.Builder
	s := newStream(&b, "")
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	s.printSkips()
	want := `not an event: go test's own words
--- FAIL: TestA (0.02s)
    --- FAIL: TestA/bad (0.01s)
        a_test.go:9: got 2
FAIL	p	0.03s
skipped: no test
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"    a_test.go:3: no act", "--- SKIP: TestA (0.00s)"}, "a_test.go:3: no act"},
		{[]string{"    a_test.go:2: logged first", "    a_test.go:3: no act", "        on PATH", "--- SKIP: TestA (0.00s)"}, "a_test.go:3: no act\n    on PATH"},
		{[]string{"--- SKIP: TestA (0.00s)"}, "(no reason given)"},
		{[]string{"printed by the test", "--- SKIP: TestA (0.00s)"}, "(no reason given)"},
	} {
		if got := reason(tc.lines); got != tc.want {
			t.Errorf("reason(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}

func TestShort(t *testing.T) {
	s := newStream(nil, "github.com/kernel-gate/kernel-gate")
	for pkg, want := range map[string]string{
		"github.com/kernel-gate/kernel-gate":             ".",
		"github.com/kernel-gate/kernel-gate/gates/guard": "./gates/guard",
		"github.com/kernel-gate/kernel-gate-other":       "github.com/kernel-gate/kernel-gate-other",
	} {
		if got := s.short(pkg); got != want {
			t.Errorf("short(%q) = %q, want %q", pkg, got, want)
		}
	}
}
