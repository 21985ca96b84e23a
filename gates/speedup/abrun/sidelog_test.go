package abrun

import (
	"bytes"
	"testing"
)

// Lines of processes writing at once are marked and never run into each other: a line cut
// by another process's output goes on, marked again, on a line of its own.
func TestSideLogKeepsProcessesApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(l *sideLog)
		want  string
	}{
		{"whole lines", func(l *sideLog) {
			l.process(1).Write([]byte("a\nb\n"))
			l.process(2).Write([]byte("c\n"))
		}, "[1] a\n[1] b\n[2] c\n"},
		{"a line cut by another process", func(l *sideLog) {
			one, two := l.process(1), l.process(2)
			one.Write([]byte("start of"))
			two.Write([]byte("other\n"))
			one.Write([]byte(" the line\n"))
		}, "[1] start of\n[2] other\n[1]  the line\n"},
		{"one process's chunks join", func(l *sideLog) {
			one := l.process(1)
			one.Write([]byte("ab"))
			one.Write([]byte("cd\nef"))
			one.Write([]byte("\n"))
		}, "[1] abcd\n[1] ef\n"},
		{"a header ends a cut line", func(l *sideLog) {
			l.process(3).Write([]byte("no newline"))
			l.header("==> %s <==", "next")
			l.process(0).Write([]byte("alone\n"))
		}, "[3] no newline\n==> next <==\nalone\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.write(newSideLog(&b))
			if b.String() != tc.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tc.want)
			}
		})
	}
}
