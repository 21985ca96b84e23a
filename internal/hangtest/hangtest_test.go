package hangtest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestWithinReturnsWhatTheCallReturns(t *testing.T) {
	if got := Within(t, time.Minute, "a quick call", func() int { return 7 }); got != 7 {
		t.Errorf("got %d, want 7", got)
	}
}

// A call that does not return in time fails the test, naming what waits.
func TestWithinFailsAHang(t *testing.T) {
	ft := &fakeT{TB: t}
	block := make(chan struct{})
	defer close(block)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Within(ft, 10*time.Millisecond, "the stuck call", func() error { <-block; return nil })
	}()
	<-done
	if want := "the stuck call still waits after 10ms"; ft.fatal != want {
		t.Errorf("fatal %q, want %q", ft.fatal, want)
	}
}

func TestFIFO(t *testing.T) {
	p := FIFO(t, filepath.Join(t.TempDir(), "pipe"))
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("FIFO made %q: %v, %v", p, fi, err)
	}
}

// A reader that says FIFO passes; one that reads nothing and says so fails the test.
func TestRefusesFIFO(t *testing.T) {
	RefusesFIFO(t, "x.log", func(p string) string { return p + " is a FIFO (named pipe), not a regular file" })
	ft := &fakeT{TB: t}
	RefusesFIFO(ft, "x.log", func(string) string { return "" })
	if ft.errorf != `got "", want a refusal naming the FIFO` {
		t.Errorf("Errorf %q", ft.errorf)
	}
}

// fakeT records Errorf and Fatalf, and ends the goroutine at Fatalf as FailNow would.
type fakeT struct {
	testing.TB
	fatal, errorf string
}

func (f *fakeT) Errorf(format string, args ...any) { f.errorf = fmt.Sprintf(format, args...) }

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
