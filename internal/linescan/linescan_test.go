package linescan

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func collect(t *testing.T, r io.Reader, max int) []string {
	t.Helper()
	var out []string
	if err := Each(r, max, func(l []byte) { out = append(out, string(l)) }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEach(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"lines keep their endings", "a\nb\r\nc", 100, []string{"a\n", "b\r\n", "c"}},
		{"empty", "", 100, nil},
		{"blank lines", "\n\n", 100, []string{"\n", "\n"}},
		{"cut short line", "abcdef\nxy\n", 3, []string{"abc", "xy\n"}},
		{"line longer than the buffer", long + "\nend\n", 1 << 20, []string{long + "\n", "end\n"}},
		{"line longer than the bound", long + "\nend\n", 1000, []string{long[:1000], "end\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(t, strings.NewReader(tt.in), tt.max)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("got %d lines %.80q, want %d %.80q", len(got), got, len(tt.want), tt.want)
			}
			// One byte at a time gives the same lines.
			if one := collect(t, iotest.OneByteReader(strings.NewReader(tt.in)), tt.max); strings.Join(one, "|") != strings.Join(got, "|") {
				t.Errorf("one-byte reads differ")
			}
		})
	}
}

func TestEachReadError(t *testing.T) {
	boom := errors.New("boom")
	err := Each(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(boom)), 10, func([]byte) {})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}

// EachTail gives the lines Each gives and, for a line it cuts, how the line ends.
func TestEachTail(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for _, tc := range []struct {
		name  string
		in    string
		max   int
		lines []string
		tails []string
	}{
		{"short lines", "a\nb\r\nc", 100, []string{"a\n", "b\r\n", "c"}, []string{"", "", ""}},
		{"cut in the buffer", "abcdefgh\nxy\n", 3, []string{"abc", "xy\n"}, []string{"defgh\n", ""}},
		{"cut past the buffer", long + "Segmentation fault\nend", 1000, []string{long[:1000], "end"}, []string{"fault\n", ""}},
		{"cut past the buffer, no line end", long + "Killed", 1000, []string{long[:1000]}, []string{"Killed"}},
		{"long, not cut", long + "\nend\n", 1 << 20, []string{long + "\n", "end\n"}, []string{"", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				var lines, tails []string
				err := EachTail(r, tc.max, 6, func(line, tail []byte) {
					lines, tails = append(lines, string(line)), append(tails, string(tail))
				})
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(lines, "|") != strings.Join(tc.lines, "|") || strings.Join(tails, "|") != strings.Join(tc.tails, "|") {
					t.Errorf("lines %.60q tails %q, want %.60q %q", lines, tails, tc.lines, tc.tails)
				}
				if each := collect(t, strings.NewReader(tc.in), tc.max); strings.Join(each, "|") != strings.Join(lines, "|") {
					t.Errorf("Each gives %.60q", each)
				}
			}
		})
	}
}
