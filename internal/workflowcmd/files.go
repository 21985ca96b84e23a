package workflowcmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/input"
)

// ErrUnset is wrapped by the errors of SetOutput and AppendSummary when their environment
// variable (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) is not set: the program is not running as a
// GitHub Actions step, or the runner is too old.
var ErrUnset = errors.New("not set")

// DefaultSummaryLimit is AppendSummary's limit when given none: GitHub refuses a step summary
// over 1 MiB (1,048,576 bytes), and this leaves room for what other steps' tools append.
const DefaultSummaryLimit = 1_000_000

// outputName is what GitHub accepts as an output name. Anything else could break the file's
// NAME<<DELIMITER line: a '=' before the "<<" makes it a NAME=VALUE line, and a line break
// starts another.
var outputName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// SetOutput sets the step output name to value by appending "name<<DELIMITER", value and
// DELIMITER, each on a line, to the file GITHUB_OUTPUT names (getenv looks it up; os.Getenv
// when nil). DELIMITER is "ghadelimiter_" and 128 random bits in hex, drawn again while
// value contains it, so no line of value can end the value early. It returns an error,
// never panics, when the variable is unset (wrapping ErrUnset), the file cannot be opened
// or written (a directory, read-only), or name is not a valid output name: the caller can
// say so once and keep its exit code.
func SetOutput(getenv func(string) string, name, value string) error {
	if !outputName.MatchString(name) {
		return fmt.Errorf("step output name %q: want letters, digits, '_' and '-', not starting with a digit or '-'", name)
	}
	path, err := envPath(getenv, "GITHUB_OUTPUT")
	if err != nil {
		return err
	}
	delim := "ghadelimiter_" + randomHex()
	for strings.Contains(value, delim) {
		delim = "ghadelimiter_" + randomHex()
	}
	err = appendFile(path, func(size int64, needNewline bool) (string, error) {
		s := name + "<<" + delim + "\n" + value + "\n" + delim + "\n"
		if needNewline {
			s = "\n" + s
		}
		return s, nil
	})
	if err != nil {
		return fmt.Errorf("setting step output %s: %w", name, err)
	}
	return nil
}

// AppendSummary appends markdown to the job summary: the file GITHUB_STEP_SUMMARY names
// (getenv looks it up; os.Getenv when nil). GitHub refuses a step summary over 1 MiB, so when
// what the file already holds and markdown together exceed limit bytes (0 or less means
// DefaultSummaryLimit), markdown is cut at a line boundary so that everything fits, any
// <details> block or code fence left open by the cut is closed, and a note says how much was
// cut. Errors are SetOutput's; when the file alone leaves no room for even the note, nothing
// is written and an error says so.
func AppendSummary(getenv func(string) string, markdown string, limit int) error {
	if limit <= 0 {
		limit = DefaultSummaryLimit
	}
	path, err := envPath(getenv, "GITHUB_STEP_SUMMARY")
	if err != nil {
		return err
	}
	err = appendFile(path, func(size int64, needNewline bool) (string, error) {
		prefix := ""
		if needNewline {
			prefix = "\n"
		}
		room := int64(limit) - size - int64(len(prefix))
		if int64(len(markdown)) <= room {
			return prefix + markdown, nil
		}
		avail := room - int64(len(cutNote(len(markdown), len(markdown)))) // the longest the note can be
		if avail < 0 {
			return "", fmt.Errorf("it already holds %d bytes, which leaves no room under the limit of %d bytes for the %d-byte report", size, limit, len(markdown))
		}
		kept, closers := cutMarkdown(markdown, int(avail))
		return prefix + kept + closers + cutNote(len(kept), len(markdown)), nil
	})
	if err != nil {
		return fmt.Errorf("appending to the job summary: %w", err)
	}
	return nil
}

// cutNote is the note that ends a summary cut to kept of total bytes.
func cutNote(kept, total int) string {
	return "\n> ✂️ kernel-gate cut this summary to " + strconv.Itoa(kept) + " of " + strconv.Itoa(total) +
		" bytes: GitHub refuses a step summary over 1 MiB. The JSON result has everything" +
		" (`kernel-gate report FILE` renders it).\n"
}

// cutMarkdown returns the longest prefix of md that ends at a line boundary and fits in
// avail bytes together with closers, the lines that close the <details> blocks and the
// code fence it leaves open.
func cutMarkdown(md string, avail int) (kept, closers string) {
	k := 0
	if avail > 0 {
		k = strings.LastIndexByte(md[:min(avail, len(md))], '\n') + 1
	}
	open := openBlocks(md[:k])
	for {
		closers = open.closers()
		if k == 0 || k+len(closers) <= avail {
			break
		}
		// Drop the last line and what it opened or closed.
		prev := strings.LastIndexByte(md[:k-1], '\n') + 1
		open = open.minus(openBlocks(md[prev:k]))
		k = prev
	}
	if k == 0 {
		return "", ""
	}
	return md[:k], closers
}

// blocks counts the <details> tags a text opens (net of those it closes) and its code
// fence lines (a fence is open after an odd number of them).
type blocks struct{ details, fences int }

func openBlocks(s string) blocks {
	b := blocks{details: strings.Count(s, "<details") - strings.Count(s, "</details>")}
	for line := range strings.Lines(s) {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) <= 3 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			b.fences++
		}
	}
	return b
}

func (b blocks) minus(c blocks) blocks {
	return blocks{details: b.details - c.details, fences: b.fences - c.fences}
}

func (b blocks) closers() string {
	var s string
	if b.fences%2 == 1 {
		s = "```\n"
	}
	if b.details > 0 {
		s += "\n" + strings.Repeat("</details>\n", b.details)
	}
	return s
}

// envPath returns the file the environment variable names.
func envPath(getenv func(string) string, name string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	path := getenv(name)
	if path == "" {
		return "", fmt.Errorf("%s is %w: not running as a GitHub Actions step", name, ErrUnset)
	}
	return path, nil
}

// appendFile appends what content returns to the file at path (creating it), in one write.
// content is told the file's size and whether it lacks a final line break (then what is
// appended must start with one, or its first line would join the file's last).
//
// The file is the runner's, but a step before kernel-gate's (the pull request's own code,
// in the same job) can put something else in its place. So it is opened through an
// os.Root of its directory, which refuses a symbolic link that leads out of it (to
// ~/.bashrc, the runner's .credentials), and without blocking; and anything but a regular
// file (a FIFO, whose open or write would wait for a reader for ever; a device; a
// directory) is refused, named, before anything is written.
// Why: docs/threat-model.md, threat-model T15.
func appendFile(path string, content func(size int64, needNewline bool) (string, error)) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if st, err := root.Stat(name); err == nil && !st.Mode().IsRegular() {
		return notRegular(path, st.Mode())
	}
	// Read and write, to see the file's last byte; write-only when that is all it allows.
	f, err := root.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE|input.NonBlock, 0o644)
	readable := err == nil
	if errors.Is(err, fs.ErrPermission) {
		f, err = root.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|input.NonBlock, 0o644)
	}
	if err != nil {
		if st, lerr := root.Lstat(name); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link that leads out of its directory: refusing to write through it (%w)", path, err)
		}
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() { // it changed since the Stat
		return notRegular(path, fi.Mode())
	}
	size := fi.Size()
	needNewline := size > 0 && readable && !endsWithNewline(f, size)
	s, err := content(size, needNewline)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, s)
	return err
}

// ErrNotRegular is wrapped by the errors of SetOutput and AppendSummary when their file is
// not a regular file (a FIFO, a device, a directory): they refuse to write to it.
var ErrNotRegular = input.ErrNotRegular

func notRegular(path string, m fs.FileMode) error {
	return fmt.Errorf("%s is %s, %w: refusing to write to it (the runner makes a regular file there; a step before this one replaced it)", path, input.KindOf(m), ErrNotRegular)
}

// endsWithNewline reports whether the file's last byte is a line break; true when it cannot
// be read, which appends as if it were.
func endsWithNewline(f *os.File, size int64) bool {
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return true
	}
	return b[0] == '\n'
}
