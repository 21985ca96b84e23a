package needtool

import (
	"fmt"
	"runtime"
	"testing"
)

// fakeT records Fatal and Skip, and ends the goroutine at either as the real ones do.
type fakeT struct {
	testing.TB
	fatal, skip string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatal(args ...any) {
	f.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fakeT) Skip(args ...any) {
	f.skip = fmt.Sprint(args...)
	runtime.Goexit()
}

// call runs fn with a fakeT in a goroutine of its own, as a test runs, and returns it.
func call(t *testing.T, fn func(testing.TB)) *fakeT {
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ft)
	}()
	<-done
	return ft
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		name, env   string
		fatal, skip string
	}{
		{"a developer's machine skips", "", "", "no widget: apt-get install widget"},
		{"CI fails", "1", "no widget: apt-get install widget (KG_REQUIRE_TOOLS is set: a missing tool is a failure)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(Env, tc.env)
			ft := call(t, func(tb testing.TB) { Missing(tb, "no widget: apt-get install widget") })
			if ft.fatal != tc.fatal || ft.skip != tc.skip {
				t.Errorf("Fatal %q and Skip %q, want %q and %q", ft.fatal, ft.skip, tc.fatal, tc.skip)
			}
		})
	}
}
