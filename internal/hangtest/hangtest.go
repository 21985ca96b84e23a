// Package hangtest is for tests of code that must not block for ever: FIFO makes a named
// pipe with no writer (an open of it for reading blocks until one comes), Within bounds a
// call so that a hang fails the test instead of hanging the suite. It is for tests only:
// no package of the product imports it.
package hangtest

import (
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
