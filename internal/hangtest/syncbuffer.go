package hangtest

import (
	"bytes"
	"sync"
)

// SyncBuffer is a log that goroutines may write at once (retries, a client's requests in
// flight) while the test reads it; the zero value is empty and ready.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
