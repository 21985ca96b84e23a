package workflowcmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		in, data, prop string
	}{
		{"", "", ""},
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"},
		// Already escaped text must stay text: double-escaped, it decodes to itself.
		{"%0A::add-mask::x", "%250A::add-mask::x", "%250A%3A%3Aadd-mask%3A%3Ax"},
		{"%25%0D%3A%2C", "%2525%250D%253A%252C", "%2525%250D%253A%252C"},
		{"kg::flash_fwd<64, 64, false>", "kg::flash_fwd<64, 64, false>", "kg%3A%3Aflash_fwd<64%2C 64%2C false>"},
		{"file=x,line=1", "file=x,line=1", "file=x%2Cline=1"},
	}
	for _, tt := range tests {
		if got := EscapeData(tt.in); got != tt.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := EscapeProperty(tt.in); got != tt.prop {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tt.in, got, tt.prop)
		}
		if got := unescapeData(EscapeData(tt.in)); got != tt.in {
			t.Errorf("runner decodes EscapeData(%q) to %q", tt.in, got)
		}
		if got := unescapeProperty(EscapeProperty(tt.in)); got != tt.in {
			t.Errorf("runner decodes EscapeProperty(%q) to %q", tt.in, got)
		}
	}
}

// neutralized reports why out could still hold a command: a line that starts with "::"
// after white space and looked-through characters, or "##[" with looked-through characters
// removed. "" when none.
func neutralized(out string) string {
	for _, line := range strings.FieldsFunc(out, isLineBreak) {
		trimmed := strings.TrimLeftFunc(line, unicode.IsSpace)
		if strings.HasPrefix(trimmed, "::") {
			return fmt.Sprintf("line %q starts with ::", line)
		}
		if strings.Contains(line, "##[") {
			return fmt.Sprintf("line %q contains ##[", line)
		}
		// As ICU sees it: ignorable characters removed.
		icu := strings.Map(func(r rune) rune {
			if lookedThrough(r) {
				return -1
			}
			return r
		}, line)
		if strings.HasPrefix(strings.TrimLeftFunc(icu, unicode.IsSpace), "::") || strings.Contains(icu, "##[") {
			return fmt.Sprintf("line %q is a command once ignorable characters are skipped", line)
		}
	}
	if cmds := parseRunner(out); len(cmds) > 0 {
		return fmt.Sprintf("the runner parses %v", cmds)
	}
	return ""
}

func TestNeutralize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain: text # no [command]", "plain: text # no [command]"},
		{"::add-mask::x", "∶:add-mask::x"},
		{"  ::add-mask::x", "  ∶:add-mask::x"},
		{"\t::set-output name=a::b", "\t∶:set-output name=a::b"},
		{"foo ##[error]bar", "foo #♯[error]bar"},
		{"::stop-commands::t", "∶:stop-commands::t"},
		{"ok\n::error::x\r::warning::y\r\n  ::notice::z", "ok\n∶:error::x\r∶:warning::y\r\n  ∶:notice::z"},
		{"a ##[group]b ##[endgroup]", "a #♯[group]b #♯[endgroup]"},
		{"###[error]", "##♯[error]"},
		{"#\u200d#[error]", "#\u200d♯[error]"},
		{"#\u200b#\ufeff[add-mask]x", "#\u200b♯\ufeff[add-mask]x"},
		{"\u200d::error::x", "\u200d∶:error::x"},
		{"\ufeff ::error::x", "\ufeff ∶:error::x"},
		{"\u00a0\u3000::error::x", "\u00a0\u3000∶:error::x"},
		{":\u200b:error::x", "∶\u200b:error::x"},
		{"foo::error::x", "foo::error::x"},         // not at the start: not a command
		{"x\u2028::error::y", "x\u2028∶:error::y"}, // a line separator starts a line
		{": :error::x", ": :error::x"},             // one colon is not a command
		{"\xff::error::x", "\xff::error::x"},       // the runner reads U+FFFD first
		{"kg::flash_fwd<64>", "kg::flash_fwd<64>"}, // kernel names keep their colons
		{"::", "∶:"},
	}
	for _, tt := range tests {
		got := Neutralize(tt.in)
		if got != tt.want {
			t.Errorf("Neutralize(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if why := neutralized(got); why != "" {
			t.Errorf("Neutralize(%q) = %q: %s", tt.in, got, why)
		}
	}
}

func TestNeutralizeKeepsOtherText(t *testing.T) {
	in := "kernel-gate: 3 errors\nlog line\twith tab # and [brackets]\n"
	if got := Neutralize(in); got != in {
		t.Errorf("Neutralize changed harmless text: %q", got)
	}
}

// withRandom makes randomHex return the given values in turn (then real ones).
func withRandom(t *testing.T, values ...string) {
	t.Helper()
	orig := randomHex
	t.Cleanup(func() { randomHex = orig })
	randomHex = func() string {
		if len(values) == 0 {
			return orig()
		}
		v := values[0]
		values = values[1:]
		return v
	}
}

func TestStopCommands(t *testing.T) {
	hostile := "::add-mask::x\n##[error]y\n::set-output name=a::b\n::endgroup::\n"
	var buf bytes.Buffer
	if err := StopCommands(&buf, func(w io.Writer) error {
		_, err := io.WriteString(w, hostile)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	token, ok := strings.CutPrefix(lines[0], "::stop-commands::")
	if !ok || len(token) != 32 || strings.Trim(token, "0123456789abcdef") != "" {
		t.Fatalf("first line %q: want ::stop-commands:: and 32 hex digits", lines[0])
	}
	if last := lines[len(lines)-1]; last != "::"+token+"::" {
		t.Errorf("last line %q, want ::%s::", last, token)
	}
	if !strings.Contains(out, "\n"+hostile+"::"+token+"::\n") {
		t.Errorf("content not relayed as is:\n%s", out)
	}
	cmds := parseRunner(out + "::error::after\n")
	if len(cmds) != 2 || cmds[0].name != "stop-commands" || cmds[1].name != "error" || cmds[1].data != "after" {
		t.Errorf("the runner sees %v; want stop-commands, then (commands resumed) error", cmds)
	}

	// A second run draws a new token.
	var again bytes.Buffer
	StopCommands(&again, func(w io.Writer) error { return nil })
	if strings.Contains(again.String(), token) {
		t.Errorf("token reused: %s", again.String())
	}
}

func TestStopCommandsTokenInContent(t *testing.T) {
	const first = "0123456789abcdef0123456789abcdef"
	const second = "fedcba9876543210fedcba9876543210"
	withRandom(t, first, second)
	var buf bytes.Buffer
	StopCommands(&buf, func(w io.Writer) error {
		_, err := io.WriteString(w, "::"+strings.ToUpper(first)+"::\n::error::x\n")
		return err
	})
	out := buf.String()
	if !strings.HasPrefix(out, "::stop-commands::"+second+"\n") || !strings.HasSuffix(out, "::"+second+"::\n") {
		t.Errorf("a token found in the content was used:\n%s", out)
	}
	if cmds := parseRunner(out); len(cmds) != 1 {
		t.Errorf("the runner sees %v; want only stop-commands", cmds)
	}
}

func TestStopCommandsNoFinalNewline(t *testing.T) {
	for _, content := range []string{"last line without newline", "ends in CR\r", ""} {
		var buf bytes.Buffer
		wantErr := errors.New("tool failed")
		err := StopCommands(&buf, func(w io.Writer) error {
			io.WriteString(w, content)
			return wantErr
		})
		if err != wantErr {
			t.Errorf("error %v, want fn's", err)
		}
		out := buf.String()
		cmds := parseRunner(out + "::error::after\n")
		if len(cmds) != 2 || cmds[1].name != "error" {
			t.Errorf("content %q: commands not resumed after it (runner sees %v):\n%q", content, cmds, out)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestStopCommandsWriteError(t *testing.T) {
	if err := StopCommands(failWriter{}, func(io.Writer) error { return nil }); err == nil {
		t.Error("write error lost")
	}
}

func TestMaskAndGroup(t *testing.T) {
	var buf bytes.Buffer
	Mask(&buf, "s3cr%0Aet")
	Mask(&buf, "")
	Mask(&buf, "line1\n  \nline2\r\n")
	Group(&buf, "build kg::flash_fwd\n::error::injected ##[error]x")
	EndGroup(&buf)
	cmds := parseRunner(buf.String())
	want := []command{
		{name: "add-mask", data: "s3cr%0Aet"},
		{name: "add-mask", data: "line1\n  \nline2\r\n"},
		{name: "add-mask", data: "line1"},
		{name: "add-mask", data: "line2"},
		{name: "group", data: "build kg::flash_fwd ::error::injected #♯[error]x"},
		{name: "endgroup"},
	}
	if len(cmds) != len(want) {
		t.Fatalf("runner sees %d commands, want %d:\n%s", len(cmds), len(want), buf.String())
	}
	for i := range want {
		if cmds[i].name != want[i].name || cmds[i].data != want[i].data {
			t.Errorf("command %d = %s %q, want %s %q", i, cmds[i].name, cmds[i].data, want[i].name, want[i].data)
		}
	}
}
