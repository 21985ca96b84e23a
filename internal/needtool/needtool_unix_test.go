//go:build unix

package needtool

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPath(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "widget-browser")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv(Env, "")
	var got string
	ft := call(t, func(tb testing.TB) { got = Path(tb, "apt-get install widget", "widget", "widget-browser") })
	if ft.skip != "" || got != tool {
		t.Errorf("Path found %q (skip %q), want %s", got, ft.skip, tool)
	}
	ft = call(t, func(tb testing.TB) { Path(tb, "apt-get install gadget", "gadget") })
	if want := "gadget is not on PATH: apt-get install gadget"; ft.skip != want {
		t.Errorf("Skip %q, want %q", ft.skip, want)
	}
	t.Setenv(Env, "1")
	ft = call(t, func(tb testing.TB) { Path(tb, "apt-get install gadget", "gadget") })
	if ft.fatal == "" || ft.skip != "" {
		t.Errorf("with %s set: Fatal %q, Skip %q; want a failure", Env, ft.fatal, ft.skip)
	}
}
