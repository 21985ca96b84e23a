package workflowcmd

import (
	"bytes"
	"strings"
	"testing"
)

// Each write goes out neutralized, whether a command begins it, follows a line break in
// it, or is split from its line's start by an earlier write; the count is of the bytes
// given, as io.Writer wants.
func TestNeutralWriter(t *testing.T) {
	var b bytes.Buffer
	w := NeutralWriter{W: &b}
	for _, s := range []string{"kernel-gate sanitize: memcheck sh -c ./h\n::error::forged\n", "::add-mask::x", "\r::warning::y\n", "a ::b:: stays\n"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	for line := range strings.FieldsFuncSeq(b.String(), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.HasPrefix(strings.TrimSpace(line), "::") {
			t.Errorf("a command went through: %q", line)
		}
	}
	if !strings.Contains(b.String(), "a ::b:: stays") {
		t.Errorf("text that is no command was changed: %q", b.String())
	}
}
