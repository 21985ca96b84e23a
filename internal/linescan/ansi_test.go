package linescan

import (
	"bytes"
	"testing"
)

func TestStripANSI(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "ptxas info    : Used 128 registers", "ptxas info    : Used 128 registers"},
		{"empty", "", ""},
		{"sgr", "\x1b[1;32mptxas info\x1b[0m: x", "ptxas info: x"},
		{"sgr without parameters", "\x1b[32mFunction\x1b[m : k", "Function : k"},
		{"private parameters", "\x1b[?25lhidden\x1b[?25h", "hidden"},
		{"charset", "\x1b[2mNOP\x1b(B\x1b[0m ;", "NOP ;"},
		{"two-byte", "a\x1b7b\x1b8c", "abc"},
		{"osc bel", "\x1b]0;title\x07text", "text"},
		{"osc hyperlink", "fa.cu:3:5: error: \x1b]8;;https://x/y\x1b\\-Wfoo\x1b]8;;\x1b\\ here", "fa.cu:3:5: error: -Wfoo here"},
		{"sanitizer", "\x1b[31m========= ERROR SUMMARY: 1,024 errors\x1b[0m", "========= ERROR SUMMARY: 1,024 errors"},
		{"lone escape at the end", "text\x1b", "text"},
		{"csi cut short", "text\x1b[1;3", "text"},
		{"osc cut short", "text\x1b]8;;http://x", "text"},
		{"csi broken off", "a\x1b[1\tb", "a\tb"},
		{"utf-8 kept", "kg::f × long\x1b[0m", "kg::f × long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StripANSI([]byte("keep:"), []byte(tt.in))
			if string(got) != "keep:"+tt.want {
				t.Errorf("StripANSI(%q) = %q, want %q", tt.in, got[len("keep:"):], tt.want)
			}
			if bytes.IndexByte([]byte(tt.want), 0x1b) >= 0 {
				t.Errorf("want holds an escape")
			}
		})
	}
}

func FuzzStripANSI(f *testing.F) {
	f.Add([]byte("\x1b[1;31mHMMA\x1b[0m\x1b(B\x1b]8;;u\x1b\\x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := StripANSI(nil, b)
		if len(got) > len(b) || bytes.IndexByte(got, 0x1b) >= 0 {
			t.Errorf("StripANSI(%q) = %q", b, got)
		}
	})
}
