// Package hangtest is for tests of code that must not block for ever: FIFO makes a named
// pipe with no writer (an open of it for reading blocks until one comes), Within bounds a
// call so that a hang fails the test instead of hanging the suite, RefusesFIFO checks both
// ways that a reader refuses a FIFO at once, and WaitGone checks that a killed command
// left no process running (Alive: a zombie is not); ExitCode says how a child that had
// to end by itself ended, and SyncBuffer is a log goroutines write at once. It is for tests
// only: no package of the product imports it.
package hangtest

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Within returns what fn returns, and fails the test, saying "what still waits after d",
// when fn has not returned after d. The call it gave up on is left running.
func Within[T any](t testing.TB, d time.Duration, what string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-done:
		return v
	case <-timer.C:
		t.Fatalf("%s still waits after %s", what, d)
		panic("unreachable")
	}
}

// RefusesFIFO makes a FIFO named name in a temporary directory and fails the test unless
// read, given its path, returns within 10 seconds a text (an error's message, the problems
// found) that names it a FIFO: a reader that opened it would wait for a writer for ever.
func RefusesFIFO(t testing.TB, name string, read func(path string) string) {
	t.Helper()
	fifo := FIFO(t, filepath.Join(t.TempDir(), name))
	got := Within(t, 10*time.Second, "reading the FIFO "+name, func() string { return read(fifo) })
	if !strings.Contains(got, "FIFO") {
		t.Errorf("got %q, want a refusal naming the FIFO", got)
	}
}
