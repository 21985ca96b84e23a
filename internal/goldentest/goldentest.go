// Package goldentest compares what a test rendered with its golden file, or rewrites the
// file when the test runs with -update (each test package declares its own flag). It is for
// tests only: no package of the product imports it.
package goldentest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with the golden file at path; with update it writes got there
// instead, making the file's directory when there is none.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
