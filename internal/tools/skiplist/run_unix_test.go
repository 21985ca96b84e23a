//go:build unix

package main

import (
	"context"
	"strings"
	"testing"
)

// run keeps the command's exit status, and lists the skips after its output.
func TestRunKeepsTheExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		code int
		// before are in the output in any order, ahead of out: the go command runs packages
		// in parallel, so their blocks come in whichever order they end (one ordering of the
		// fixture's packages was a flake under load).
		before []string
		out    []string // in this order
	}{
		{"a recorded stream, exit 3", []string{"sh", "-c", "cat testdata/fixture.json; exit 3"}, 3, nil,
			[]string{"--- FAIL: TestFailsOnPurpose", "skipped: 5 tests\n  fixture TestSkipsWithAReason\n      fixture_test.go:12: no widget on PATH"}},
		{"no test at all", []string{"true"}, 0, nil, []string{"skipped: no test\n"}},
		// The fixture module under the go command that runs this test: its stream is the
		// recording's, build failure, panic and all.
		{"go test -json of the fixture", []string{"sh", "-c", "cd testdata/fixture && GOFLAGS= GOWORK=off GOTOOLCHAIN=local exec go test -count=1 -json ./..."}, 1,
			[]string{"cannot use \"one\"", "--- FAIL: TestFailsOnPurpose", "    fixture_test.go:21: got 2, want 1", "--- FAIL: TestPanics", "ok  \tfixture/sub"},
			[]string{"skipped: 5 tests\n", "  fixture TestSubtests/skips\n      fixture_test.go:28: needs gadget\n          and a second line\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs strings.Builder
			code := run(context.Background(), tc.argv, &out, &errs)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errs.String())
			}
			rest := out.String()
			skips := strings.Index(rest, "skipped: ")
			for _, w := range tc.before {
				if i := strings.Index(rest, w); i < 0 || i > skips {
					t.Errorf("the output lacks %q ahead of its skips:\n%s", w, rest)
				}
			}
			for _, w := range tc.out {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("the output lacks %q after what came before it:\n%s", w, out.String())
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestRunCannotStart(t *testing.T) {
	var out, errs strings.Builder
	if code := run(context.Background(), []string{"/nonexistent/go", "test"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "/nonexistent/go") {
		t.Errorf("exit %d, stderr %q; want 2 naming the command", code, errs.String())
	}
	if code := run(context.Background(), nil, &out, &errs); code != 2 || !strings.Contains(errs.String(), "usage: skiplist go test -json") {
		t.Errorf("no command: exit %d, stderr %q", code, errs.String())
	}
}

func TestModulePath(t *testing.T) {
	if got := modulePath("testdata/fixture/go.mod"); got != "fixture" {
		t.Errorf("modulePath = %q, want fixture", got)
	}
	if got := modulePath("testdata/nonexistent/go.mod"); got != "" {
		t.Errorf("modulePath of no file = %q", got)
	}
}
