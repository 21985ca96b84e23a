package goldentest

import (
	"path/filepath"
	"testing"
)

// fakeT records what Check reported, instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Fatal(...any)          { f.failed = true }

// With update, Check writes the golden file (and its directory); then the same output
// matches it, and other output does not; without a golden file, Check fails.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "out.golden")
	for _, tc := range []struct {
		got    string
		update bool
		fails  bool
	}{
		{"one\n", false, true},
		{"one\n", true, false},
		{"one\n", false, false},
		{"two\n", false, true},
	} {
		f := &fakeT{TB: t}
		Check(f, path, []byte(tc.got), tc.update)
		if f.failed != tc.fails {
			t.Errorf("Check(%q, update %v) failed %v, want %v", tc.got, tc.update, f.failed, tc.fails)
		}
	}
}
