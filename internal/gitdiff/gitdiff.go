package gitdiff

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// Range is a run of added lines, both ends included (1-based).
type Range struct{ Start, End int }

// Change is one file as it is after the change, with the lines the change added. A new file
// has every line added.
type Change struct {
	Path  string
	Added []Range
	// Hunks are the lines of the file after the change that the diff shows, its context
	// lines included (with Changes, whose diff has no context, the added lines).
	Hunks []Range
}

// Touches reports whether any line in [start, end] was added.
func (c Change) Touches(start, end int) bool {
	if end < start {
		end = start
	}
	for _, r := range c.Added {
		if start <= r.End && end >= r.Start {
			return true
		}
	}
	return false
}

// Spec is what --diff names: "BASE..HEAD" (the two commits) or "BASE...HEAD" (from their
// merge base, as a pull request shows it). A lone "BASE" means BASE..HEAD.
type Spec struct {
	Base, Head string
	MergeBase  bool
}

// ParseSpec reads a --diff argument.
func ParseSpec(s string) (Spec, error) {
	if s == "" || strings.HasPrefix(s, "-") {
		return Spec{}, fmt.Errorf("--diff %q: want BASE..HEAD or BASE...HEAD", s)
	}
	if base, head, ok := strings.Cut(s, "..."); ok {
		return spec(base, head, true, s)
	}
	if base, head, ok := strings.Cut(s, ".."); ok {
		return spec(base, head, false, s)
	}
	return Spec{Base: s, Head: "HEAD"}, nil
}

func spec(base, head string, mb bool, s string) (Spec, error) {
	if base == "" {
		return Spec{}, fmt.Errorf("--diff %q: no base commit", s)
	}
	if head == "" {
		head = "HEAD"
	}
	return Spec{Base: base, Head: head, MergeBase: mb}, nil
}

// timeout bounds each git command.
const timeout = 2 * time.Minute

// DefaultContext is how many unchanged lines git shows around a change (git diff's default,
// and what a pull request's diff shows).
const DefaultContext = 3

// Changes lists the files the change adds or modifies (deleted files are gone: nothing to
// judge) with their added lines.
func Changes(ctx context.Context, dir string, s Spec) ([]Change, error) {
	return ChangesWithContext(ctx, dir, s, 0)
}

// ChangesWithContext is Changes from a diff with lines unchanged lines around each change:
// each Change's Hunks are then the lines a reader of that diff sees.
func ChangesWithContext(ctx context.Context, dir string, s Spec, lines int) ([]Change, error) {
	var changes []Change
	err := gitStream(ctx, dir, func(r io.Reader) error {
		var err error
		changes, err = parseDiff(r)
		return err
	}, "diff", "--no-color", "--no-ext-diff", "--unified="+strconv.Itoa(max(lines, 0)), "--diff-filter=ACMRT",
		"--find-renames", "--src-prefix=a/", "--dst-prefix=b/", s.rangeArg(), "--")
	return changes, err
}

// Files lists the paths (as they are after the change) of every file the change adds,
// modifies, renames or retypes, also those whose content it does not change (a pure rename).
func Files(ctx context.Context, dir string, s Spec) ([]string, error) {
	var files []string
	err := gitStream(ctx, dir, func(r io.Reader) error {
		sc := nulScanner(r)
		for sc.Scan() {
			if sc.Text() != "" {
				files = append(files, sc.Text())
			}
		}
		return sc.Err()
	}, "diff", "--no-color", "--no-ext-diff", "--name-only", "-z", "--diff-filter=ACMRT", "--find-renames", s.rangeArg(), "--")
	return files, err
}

// Moved lists the paths (as they are after the change) of the files the change gives a new
// path, type or mode: renamed or copied (whatever else changed), retyped (a file made a
// link) or made executable. Such a file may run where it did not before, or run as
// another kind of file, although none of its lines was added, so a judge of the change
// reads it whole.
func Moved(ctx context.Context, dir string, s Spec) ([]string, error) {
	var moved []string
	err := gitStream(ctx, dir, func(r io.Reader) error {
		sc := nulScanner(r)
		for sc.Scan() {
			// --raw -z: ":OLDMODE NEWMODE OLDSHA NEWSHA STATUS", then the path, and for a
			// rename or copy the path before and the path after.
			head := sc.Text()
			f := strings.Fields(strings.TrimPrefix(head, ":"))
			if !strings.HasPrefix(head, ":") || len(f) != 5 || f[4] == "" {
				return fmt.Errorf("git diff --raw: unexpected record %q", head)
			}
			paths := 1
			if st := f[4][0]; st == 'R' || st == 'C' {
				paths = 2
			}
			var p string
			for range paths {
				if !sc.Scan() {
					return fmt.Errorf("git diff --raw: record %q ends before its path", head)
				}
				p = sc.Text()
			}
			if st := f[4][0]; st == 'R' || st == 'C' || st == 'T' || f[0] != f[1] {
				moved = append(moved, p)
			}
		}
		return sc.Err()
	}, "diff", "--no-color", "--no-ext-diff", "--raw", "-z", "--diff-filter=ACMRT", "--find-renames", "--find-copies", s.rangeArg(), "--")
	return moved, err
}

func (s Spec) rangeArg() string {
	if s.MergeBase {
		return s.Base + "..." + s.Head
	}
	return s.Base + ".." + s.Head
}

// nulScanner reads git's -z output one NUL-terminated path at a time, a path at most 1 MiB.
func nulScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Split(splitNUL)
	return sc
}

func splitNUL(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// TopLevel is the top directory of the git repository dir is in.
func TopLevel(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s is not in a git repository (%w)", dir, err)
	}
	top := strings.TrimRight(string(out), "\r\n")
	if top == "" {
		return "", fmt.Errorf("%s: git rev-parse --show-toplevel named no directory (a bare repository?)", dir)
	}
	return top, nil
}

// BaseCommit is the commit the change s is measured from: the merge base of its base and
// head for BASE...HEAD, else its base, as a full commit name.
func BaseCommit(ctx context.Context, dir string, s Spec) (string, error) {
	args := []string{"rev-parse", "--verify", "--end-of-options", s.Base + "^{commit}"}
	if s.MergeBase {
		args = []string{"merge-base", "--end-of-options", s.Base, s.Head}
	}
	out, err := git(ctx, dir, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Exists reports whether rev holds path (a file or a link).
func Exists(ctx context.Context, dir, rev, path string) bool {
	_, err := git(ctx, dir, "cat-file", "-e", rev+":"+path)
	return err == nil
}

// Show returns a file as it is at rev.
func Show(ctx context.Context, dir, rev, path string) ([]byte, error) {
	return git(ctx, dir, "show", rev+":"+path)
}

// ParsePatch reads one file's hunks as GitHub's API gives them (a pull request file's
// "patch": the "@@" hunks of a unified diff, without the file headers) as the Change of
// path. A patch whose hunks do not hold what their headers count is an error.
func ParsePatch(path, patch string) (Change, error) {
	changes, err := parseDiff(strings.NewReader("+++ b/file\n" + strings.TrimSuffix(patch, "\n") + "\n"))
	if err != nil {
		return Change{}, fmt.Errorf("%s: %w", path, err)
	}
	c := Change{Path: path}
	if len(changes) == 1 {
		c.Added, c.Hunks = changes[0].Added, changes[0].Hunks
	}
	return c, nil
}

// parseDiff reads `git diff` output (any --unified): "+++ b/path" names the file, each
// "@@ -a,b +c,d @@" hunk shows lines c..c+d-1 of it, and its "+" lines are the added ones.
// A hunk is read for exactly the lines its header counts, so an added line that itself
// begins "++ " (shown as "+++ ...") is a line of the file, never the next file's header.
func parseDiff(r io.Reader) ([]Change, error) {
	var changes []Change
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var oldLeft, newLeft, next int // what the current hunk still holds; the new side's next line
	cur := -1                      // the file the hunks are of (-1: none, a deleted file's)
	for sc.Scan() {
		line := sc.Text()
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case strings.HasPrefix(line, "+"):
				if newLeft == 0 {
					return nil, fmt.Errorf("git diff: a hunk has more added lines than its header counts (at %q)", msgtext.Clip(line, 80))
				}
				if cur < 0 {
					next++
					newLeft--
					continue
				}
				c := &changes[cur]
				if n := len(c.Added); n > 0 && c.Added[n-1].End == next-1 {
					c.Added[n-1].End = next
				} else {
					c.Added = append(c.Added, Range{Start: next, End: next})
				}
				next++
				newLeft--
			case strings.HasPrefix(line, "-"):
				if oldLeft == 0 {
					return nil, fmt.Errorf("git diff: a hunk has more removed lines than its header counts (at %q)", msgtext.Clip(line, 80))
				}
				oldLeft--
			case strings.HasPrefix(line, " "), line == "":
				if oldLeft == 0 || newLeft == 0 {
					return nil, fmt.Errorf("git diff: a hunk has more context lines than its header counts (at %q)", msgtext.Clip(line, 80))
				}
				oldLeft--
				newLeft--
				next++
			case strings.HasPrefix(line, "\\"): // "\ No newline at end of file"
			default:
				return nil, fmt.Errorf("git diff: a hunk ends early, at %q", msgtext.Clip(line, 80))
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			cur = -1
		case strings.HasPrefix(line, "+++ "):
			cur = -1
			if name := strings.TrimPrefix(line, "+++ "); name != "/dev/null" {
				changes = append(changes, Change{Path: unquote(strings.TrimPrefix(unquote(name), "b/"))})
				cur = len(changes) - 1
			}
		case strings.HasPrefix(line, "@@ "):
			old, rg, err := hunk(line)
			if err != nil {
				return nil, err
			}
			if cur >= 0 && rg.End >= rg.Start {
				changes[cur].Hunks = append(changes[cur].Hunks, rg)
			}
			oldLeft, newLeft, next = old, rg.End-rg.Start+1, rg.Start
		case strings.HasPrefix(line, "--- "):
		case strings.HasPrefix(line, "+"), strings.HasPrefix(line, "-"), strings.HasPrefix(line, " "):
			return nil, fmt.Errorf("git diff: a changed line outside any hunk (at %q)", msgtext.Clip(line, 80))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("git diff: %w", err)
	}
	if oldLeft > 0 || newLeft > 0 {
		return nil, errors.New("git diff: the output ends inside a hunk")
	}
	return changes, nil
}

// hunk reads "@@ -12,3 +14,5 @@ context": how many lines of the old file it holds, and the
// new file's lines it shows.
func hunk(line string) (old int, shown Range, err error) {
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, Range{}, fmt.Errorf("git diff: cannot read hunk header %q", msgtext.Clip(line, 80))
	}
	_, o, err1 := span(f[1][1:])
	a, n, err2 := span(f[2][1:])
	if err1 != nil || err2 != nil {
		return 0, Range{}, fmt.Errorf("git diff: cannot read hunk header %q", msgtext.Clip(line, 80))
	}
	return o, Range{Start: a, End: a + n - 1}, nil
}

// span reads "start,count" or "start" (a count of 1).
func span(s string) (start, count int, err error) {
	st, c, ok := strings.Cut(s, ",")
	if !ok {
		c = "1"
	}
	start, err = strconv.Atoi(st)
	if err == nil {
		count, err = strconv.Atoi(c)
	}
	if err == nil && (start < 0 || count < 0 || count > 1<<30) {
		err = errors.New("out of range")
	}
	return start, count, err
}

// unquote undoes git's C-style quoting of unusual path names ("a/\303\251.sh").
func unquote(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var out []byte
	err := gitStream(ctx, dir, func(r io.Reader) error {
		var err error
		out, err = io.ReadAll(r)
		return err
	}, args...)
	return out, err
}

// gitStream runs one git command and hands its standard output to read as it comes, so a
// diff is parsed without being held whole. A read error stops git.
func gitStream(ctx context.Context, dir string, read func(io.Reader) error, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := procgroup.Command(ctx, nil, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: 8 << 10}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	readErr := read(stdout)
	if readErr != nil {
		cancel() // git may still be writing: stop it rather than wait on a full pipe
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if readErr != nil {
		return readErr
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return fmt.Errorf("git %s: %s", args[0], msg)
		}
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	return nil
}

// limited keeps the first n bytes written to it and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}
