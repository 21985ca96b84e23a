package input

import (
	"context"
	"io"
)

// Stdin returns r read under ctx: once ctx is done, Read returns ctx's error at once, even
// while a read of r waits (on a pipe that never closes, a terminal); that read is left to
// end on its own, and what it brings is dropped. A nil r stays nil, and a reader Stdin made
// for ctx is returned as it is. Files reads named inputs under the context of a stdin made
// here.
func Stdin(ctx context.Context, r io.Reader) io.Reader {
	if r == nil {
		return nil
	}
	if s, ok := r.(*stdinReader); ok && s.ctx == ctx {
		return s
	}
	return &stdinReader{ctx: ctx, r: r}
}

type stdinReader struct {
	ctx     context.Context
	r       io.Reader
	pending chan chunk // the read in flight; nil when none
	buf     []byte     // reused: a read in flight owns it, then left points into it
	left    []byte     // what the last read brought past the caller's buffer
	err     error      // r's error, once met
}

type chunk struct {
	b   []byte
	err error
}

func (s *stdinReader) Read(p []byte) (int, error) {
	if len(s.left) > 0 {
		n := copy(p, s.left)
		s.left = s.left[n:]
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if s.pending == nil {
		ch := make(chan chunk, 1) // the reader never blocks on it, read or abandoned
		if n := min(len(p), 64<<10); cap(s.buf) < n {
			s.buf = make([]byte, n)
		}
		buf := s.buf[:min(len(p), cap(s.buf))]
		go func() {
			n, err := s.r.Read(buf)
			ch <- chunk{buf[:n], err}
		}()
		s.pending = ch
	}
	select {
	case c := <-s.pending:
		s.pending = nil
		n := copy(p, c.b)
		s.left = c.b[n:]
		if c.err != nil {
			s.err = c.err
			if len(s.left) == 0 {
				return n, c.err
			}
		}
		return n, nil
	case <-s.ctx.Done():
		s.buf = nil // the abandoned read still owns it
		return 0, s.ctx.Err()
	}
}
