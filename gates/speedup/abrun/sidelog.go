package abrun

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// sideLog is one side's harness log, written by several serving processes at once: each
// line a process prints is marked with the process ("[2] "), and when another process
// wrote in the middle of one of its lines, the rest goes on a marked line of its own, so
// no process's output runs into another's.
type sideLog struct {
	mu          sync.Mutex
	w           io.Writer
	last        int  // the process that wrote last: its number, 0 for one that runs alone, -1 the runner
	atLineStart bool // the file's last byte ended a line
}

func newSideLog(w io.Writer) *sideLog { return &sideLog{w: w, last: -1, atLineStart: true} }

// header writes a line of the runner's own.
func (l *sideLog) header(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.atLineStart {
		fmt.Fprintln(l.w)
	}
	fmt.Fprintf(l.w, format+"\n", a...)
	l.last, l.atLineStart = -1, true
}

// process is the writer for serving process n's output (n ≥ 1), or with n = 0 for a
// process that runs alone (one round's), whose lines are not marked.
func (l *sideLog) process(n int) io.Writer {
	p := &processLog{log: l, n: n}
	if n > 0 {
		p.prefix = []byte(fmt.Sprintf("[%d] ", n))
	}
	return p
}

type processLog struct {
	log    *sideLog
	n      int
	prefix []byte
}

func (p *processLog) Write(b []byte) (int, error) {
	l := p.log
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	if l.last != p.n && !l.atLineStart {
		out = append(out, '\n') // another process's line was cut: it goes on below
		l.atLineStart = true
	}
	rest := b
	for len(rest) > 0 {
		if l.atLineStart {
			out = append(out, p.prefix...)
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			out = append(out, rest...)
			l.atLineStart = false
			break
		}
		out = append(out, rest[:i+1]...)
		rest = rest[i+1:]
		l.atLineStart = true
	}
	l.last = p.n
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
