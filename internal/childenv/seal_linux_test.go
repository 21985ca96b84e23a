//go:build linux

package childenv

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// What a sealed process reads back: only a pipe, only credentials; anything else that
// KG_SECRETS_FD names is refused, and never taken for credentials.
func TestReadPassed(t *testing.T) {
	pipe := func(content string) string {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString(content)
		w.Close()
		// Held until the test ends: an *os.File that nothing refers to is closed by its
		// finalizer, and its descriptor number then names whatever opens next (a flake).
		t.Cleanup(func() { r.Close() })
		return strconv.Itoa(int(r.Fd()))
	}
	got, err := readPassed(pipe(`{"GITHUB_TOKEN":"t1","PATH":"/evil","INPUT_GITHUB-TOKEN":"t2"}`))
	if err != nil || len(got) != 2 || got["GITHUB_TOKEN"] != "t1" || got["INPUT_GITHUB-TOKEN"] != "t2" {
		t.Errorf("a pipe of credentials: %v, %v (PATH must be dropped)", got, err)
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // held open: its descriptor is the test's input
	f.WriteString(`{"GITHUB_TOKEN":"t"}`)
	f.Seek(0, 0)
	for _, tc := range []struct{ name, fd, want string }{
		{"a regular file", strconv.Itoa(int(f.Fd())), "is not the pipe"},
		{"standard input", "0", "is not a descriptor"},
		{"not a number", "x", "is not a descriptor"},
		{"not JSON", pipe("GITHUB_TOKEN=t"), "is not kernel-gate's"},
		{"too much", pipe(`{"GITHUB_TOKEN":"` + strings.Repeat("x", maxPassed) + `"}`), "is not kernel-gate's"},
	} {
		if got, err := readPassed(tc.fd); err == nil || !strings.Contains(err.Error(), tc.want) || len(got) != 0 {
			t.Errorf("%s: %v, %v; want an error saying %q", tc.name, got, err, tc.want)
		}
	}
}
