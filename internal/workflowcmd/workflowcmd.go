// Package workflowcmd has one job: writing GitHub Actions workflow commands to a step's log
// (annotations, masks, groups, step outputs, the job summary) so that untrusted text — kernel
// names, tool output, messages quoting input lines — can never start a command or alter one.
//
// How the runner reads a log (actions/runner, src/Runner.Common/ActionCommand.cs and
// src/Runner.Worker/Handlers/ProcessInvoker.cs), which every function here is written against:
//
//   - stdout and stderr are both read line by line, a line ending at '\n', '\r' or "\r\n";
//   - a line is a command when, after its leading white space is trimmed, it starts with "::"
//     (::name prop=value,prop=value::data), or when it contains "##[" anywhere (the legacy
//     ##[name prop=value;prop=value]data form);
//   - both checks use .NET's culture-sensitive StartsWith and IndexOf, which under ICU may
//     skip "ignorable" characters (zero-width joiners, the BOM): an invisible character put
//     into "##[" or before "::" is not a reliable way to hide it;
//   - data is unescaped %0D → CR, %0A → LF, %25 → '%'; property values also %3A → ':' and
//     %2C → ','.
//
// Text printed as-is goes through Neutralize (or StopCommands for a whole relayed output);
// text inside a command goes through EscapeData or EscapeProperty.
package workflowcmd

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// EscapeData escapes the data of a command (what follows its second "::") as the runner
// unescapes it, so that it cannot end the line: '%' → %25, CR → %0D, LF → %0A. A "%0A"
// already in s becomes "%250A" and reaches the log as the four characters "%0A".
func EscapeData(s string) string { return dataEscaper().Replace(s) }

// EscapeProperty escapes a property value of a command: as EscapeData, and also ':' → %3A
// (which would end the properties) and ',' → %2C (which would start another property).
func EscapeProperty(s string) string { return propertyEscaper().Replace(s) }

func dataEscaper() *strings.Replacer {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
}

func propertyEscaper() *strings.Replacer {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
}

// The look-alikes Neutralize puts in place of one character of a would-be command.
//
// Why visible look-alikes and not an invisible character such as a zero-width joiner:
//   - the runner finds "::" and "##[" with .NET's culture-sensitive StartsWith/IndexOf, and
//     ICU collation ignores zero-width and other format characters, so "##\u200d[error]"
//     may still match "##[": an invisible character is not reliably inert;
//   - U+2236 RATIO and U+266F MUSIC SHARP SIGN are ordinary symbols with their own primary
//     collation weights and no decomposition, so no culture comparison, NFC or NFKC
//     normalisation (which would turn a fullwidth '：' back into ':') or tool that strips
//     "invisible" characters turns them back into ':' or '#': text copied from the log and
//     pasted into another log stays inert;
//   - they look like what they replace, in the common monospace fonts, so the line still
//     reads as the tool printed it, while a search for the exact text shows it was changed.
const (
	colonLookalike = '\u2236' // ∶ replaces the first ':' of a line's leading "::"
	hashLookalike  = '\u266f' // ♯ replaces the second '#' of "##["
)

// Neutralize returns s with every workflow command in it made inert, for untrusted text
// that is printed to the log as-is (tool output, error messages quoting input lines, kernel
// names): on every line, a leading "::" (after white space) becomes "∶:", and "##["
// anywhere becomes "#♯[". Lines are split wherever the runner splits them (LF, CR) and also
// at VT, FF, NEL, U+2028 and U+2029; format and control characters between the characters
// of "::" or "##[", or before a line's "::", are looked through, as ICU does. Everything
// else is returned byte for byte, invalid UTF-8 included.
func Neutralize(s string) string {
	if !strings.ContainsAny(s, ":#") {
		return s
	}
	var marks []int // byte offsets of the characters to replace, ascending
	lineStart := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isLineBreak(r) {
			lineStart = true
			i += size
			continue
		}
		if lineStart {
			if unicode.IsSpace(r) || lookedThrough(r) {
				i += size
				continue
			}
			lineStart = false
			if r == ':' {
				if j := skipLookedThrough(s, i+1); j < len(s) && s[j] == ':' {
					marks = append(marks, i)
				}
			}
		}
		if r == '#' {
			if j := skipLookedThrough(s, i+1); j < len(s) && s[j] == '#' {
				if k := skipLookedThrough(s, j+1); k < len(s) && s[k] == '[' {
					marks = append(marks, j)
				}
			}
		}
		i += size
	}
	if len(marks) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*len(marks))
	last := 0
	for _, m := range marks {
		b.WriteString(s[last:m])
		if s[m] == ':' {
			b.WriteRune(colonLookalike)
		} else {
			b.WriteRune(hashLookalike)
		}
		last = m + 1
	}
	b.WriteString(s[last:])
	return b.String()
}

// isLineBreak reports the characters after which Neutralize treats the text as a new line:
// the runner's (LF, CR) and, to be safe with other readers of the log, VT, FF, NEL and the
// Unicode line and paragraph separators.
// NeutralWriter writes what it is given through Neutralize: for a log that code kernel-gate
// runs or reads may put text into (a gate's progress quoting the config's command, which
// may hold line breaks). Each Write is neutralized as if it began a line, so that a write
// that does is never missed (one that does not is at worst changed where it need not be).
type NeutralWriter struct{ W io.Writer }

func (n NeutralWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(n.W, Neutralize(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// lookedThrough reports the characters that a culture-sensitive comparison may ignore:
// controls, format characters (zero-width spaces and joiners, bidi controls, the BOM),
// combining marks, variation selectors and the other default-ignorable code points. It is
// wider than ICU's set on purpose: looking through one character too many only neutralizes
// text that was already odd.
func lookedThrough(r rune) bool {
	if r < 0x80 {
		return r < 0x20 && !isLineBreak(r) || r == 0x7f
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Mn, unicode.Me,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) && !isLineBreak(r)
}

// skipLookedThrough returns the offset of the first character at or after i that is not
// looked through (len(s) when there is none).
func skipLookedThrough(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !lookedThrough(r) {
			return i
		}
		i += size
	}
	return i
}

// randomHex returns 128 random bits in hex. It is a variable so that tests can force a
// collision with the content.
var randomHex = func() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand.Read crashes the program instead)
	return hex.EncodeToString(b[:])
}

// StopCommands writes what fn writes, wrapped in "::stop-commands::TOKEN" and "::TOKEN::",
// so that nothing in it is processed as a command: for output kernel-gate relays from
// tools. TOKEN is 128 random bits in hex, never derived from the content; since the runner
// resumes at a "::TOKEN::" or "##[TOKEN]" (case-insensitively), a token that occurs in the
// content, however unlikely, is drawn again. fn's output is therefore buffered and written
// once fn has returned, with a line break added before the closing line when it lacks one
// (the runner would otherwise never see the closing line, and commands would stay off for
// the rest of the step). fn's error is returned after its output is written; a write error
// is returned when fn has none.
func StopCommands(w io.Writer, fn func(io.Writer) error) error {
	var buf strings.Builder
	fnErr := fn(&buf)
	content := buf.String()
	lower := strings.ToLower(content)
	token := randomHex()
	for strings.Contains(lower, token) {
		token = randomHex()
	}
	var b strings.Builder
	b.Grow(len(content) + 2*len(token) + 24)
	b.WriteString("::stop-commands::" + token + "\n")
	b.WriteString(content)
	if content != "" && !strings.HasSuffix(content, "\n") && !strings.HasSuffix(content, "\r") {
		b.WriteByte('\n')
	}
	b.WriteString("::" + token + "::\n")
	_, err := io.WriteString(w, b.String())
	if fnErr != nil {
		return fnErr
	}
	return err
}

// Mask writes "::add-mask::" for secret, so that the runner replaces it with *** in the rest
// of the log. The runner masks line by line, so a secret of several lines is also masked one
// line at a time (lines that are blank are not: masking white space would mask every space
// in the log). An empty secret writes nothing.
func Mask(w io.Writer, secret string) error {
	if secret == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("::add-mask::" + EscapeData(secret) + "\n")
	if strings.ContainsAny(secret, "\r\n") {
		for _, line := range strings.FieldsFunc(secret, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if strings.TrimSpace(line) != "" {
				b.WriteString("::add-mask::" + EscapeData(line) + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Group starts a folded group of log lines titled title (one line: line breaks and other
// controls become spaces). EndGroup ends it.
func Group(w io.Writer, title string) error {
	_, err := io.WriteString(w, "::group::"+EscapeData(oneLine(title))+"\n")
	return err
}

// EndGroup ends the group Group started.
func EndGroup(w io.Writer) error {
	_, err := io.WriteString(w, "::endgroup::\n")
	return err
}

// oneLine makes untrusted text fit on one line of a title: C0 and C1 controls, DEL and the
// line and paragraph separators become spaces, and what is left is neutralized, because the
// runner copies titles and messages into the log it shows ("##[group]title").
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	return Neutralize(s)
}
