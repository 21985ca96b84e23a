package gitdiff

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/gittest"
)

func TestChanges(t *testing.T) {
	r := repo(t, map[string]string{"ci.sh": "echo build\nmake\necho done\n", "gone.sh": "echo bye\n", "old name.sh": "echo a\necho b\n"})
	dir := r.Dir
	r.Write(map[string]string{"ci.sh": "echo build\nmake\nsudo shutdown -h now\necho done\ngcloud compute instances stop vm\n", "new.sh": "reboot\n"})
	os.Remove(filepath.Join(dir, "gone.sh"))
	r.Git("mv", "old name.sh", "new name.sh")
	r.Commit("head")

	s, err := ParseSpec("HEAD~1..HEAD")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Changes(context.Background(), dir, s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Path+" "+strings.Join(ranges(c), ","))
	}
	slices.Sort(got)
	want := []string{"ci.sh 3-3,5-5", "new.sh 1-1"} // a pure rename adds nothing
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
	ci := cs[slices.IndexFunc(cs, func(c Change) bool { return c.Path == "ci.sh" })]
	if !ci.Touches(3, 3) || ci.Touches(1, 2) || !ci.Touches(4, 6) || ci.Touches(4, 4) {
		t.Errorf("Touches is wrong for %+v", ci.Added)
	}
	b, err := Show(context.Background(), dir, "HEAD", "ci.sh")
	if err != nil || !strings.Contains(string(b), "shutdown") {
		t.Errorf("Show: %q, %v", b, err)
	}
	if _, err := Changes(context.Background(), dir, Spec{Base: "nope", Head: "HEAD"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("a bad revision must be an error naming it: %v", err)
	}
}

func ranges(c Change) []string {
	var out []string
	for _, r := range c.Added {
		out = append(out, strconv.Itoa(r.Start)+"-"+strconv.Itoa(r.End))
	}
	return out
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		bad  bool
	}{
		{"main..HEAD", Spec{"main", "HEAD", false}, false},
		{"origin/main...feature", Spec{"origin/main", "feature", true}, false},
		{"abc123", Spec{"abc123", "HEAD", false}, false},
		{"main..", Spec{"main", "HEAD", false}, false},
		{"..HEAD", Spec{}, true},
		{"", Spec{}, true},
		{"--output=/tmp/x", Spec{}, true},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseSpec(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

func TestParseDiffHunks(t *testing.T) {
	in := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -5,2 +5,0 @@\n-c\n-d\n@@ -9,0 +8,3 @@\n+e\n+f\n+g\n"
	cs, err := parseDiff(strings.NewReader(in))
	if err != nil || len(cs) != 1 || !slices.Equal(cs[0].Added, []Range{{1, 1}, {8, 10}}) {
		t.Errorf("got %+v, %v", cs, err)
	}
	if _, err := parseDiff(strings.NewReader("+++ b/x\n@@ garbage @@\n")); err == nil {
		t.Error("a bad hunk header must be an error")
	}
}

// repo makes a git repository with one commit per map of files (path → content).
func repo(t *testing.T, commits ...map[string]string) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	for i, files := range commits {
		r.Write(files)
		r.Commit("commit " + strconv.Itoa(i))
	}
	return r
}

func numbered(n int, format string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strings.ReplaceAll(format, "N", strconv.Itoa(i)) + "\n")
	}
	return b.String()
}

// An added line that begins "++ " is shown by git as "+++ ...": it is a line of the file,
// not the header of another one. Read as a header, the hunks after it went to the file it
// named (here an unchanged README.md), and the guard never saw the shutdown added below it.
func TestAddedLineThatLooksLikeAFileHeader(t *testing.T) {
	base := numbered(20, "echo step N")
	lines := strings.Split(strings.TrimSuffix(base, "\n"), "\n")
	lines[1] = "++ README.md"
	lines[14] = "sudo shutdown -h now"
	dir := repo(t, map[string]string{"ci.sh": base, "README.md": "hello\n"},
		map[string]string{"ci.sh": strings.Join(lines, "\n") + "\n"}).Dir
	for _, ctxLines := range []int{0, DefaultContext} {
		cs, err := ChangesWithContext(context.Background(), dir, Spec{Base: "HEAD~1", Head: "HEAD"}, ctxLines)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].Path != "ci.sh" || !slices.Equal(cs[0].Added, []Range{{2, 2}, {15, 15}}) {
			t.Errorf("context %d: changes %+v, want ci.sh with lines 2 and 15 added", ctxLines, cs)
		}
	}
}

// With context, Hunks are the lines a reader of the diff sees around each change; Files
// also names a file that was only renamed.
func TestHunksWithContextAndFiles(t *testing.T) {
	base := numbered(30, "line N")
	lines := strings.Split(strings.TrimSuffix(base, "\n"), "\n")
	lines[9] = "changed 10"
	lines = append(lines[:20], append([]string{"inserted"}, lines[20:]...)...)
	r := repo(t, map[string]string{"k.cu": base, "old.cu": "a\nb\n"},
		map[string]string{"k.cu": strings.Join(lines, "\n") + "\n"})
	r.Git("mv", "old.cu", "new.cu")
	r.Commit("rename")
	dir := r.Dir
	s := Spec{Base: "HEAD~2", Head: "HEAD", MergeBase: true}
	cs, err := ChangesWithContext(context.Background(), dir, s, DefaultContext)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || !slices.Equal(cs[0].Added, []Range{{10, 10}, {21, 21}}) || !slices.Equal(cs[0].Hunks, []Range{{7, 13}, {18, 24}}) {
		t.Errorf("changes %+v", cs)
	}
	files, err := Files(context.Background(), dir, s)
	slices.Sort(files)
	if err != nil || !slices.Equal(files, []string{"k.cu", "new.cu"}) {
		t.Errorf("files %q, %v", files, err)
	}
	if _, err := Files(context.Background(), dir, Spec{Base: "nope", Head: "HEAD"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("a bad revision: %v", err)
	}
}

// A diff that does not hold what its hunk headers count is an error, never a shorter list.
func TestParseDiffRefusesBrokenHunks(t *testing.T) {
	for _, in := range []string{
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n+b\n",                // cut short
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-a\n+b\n+c\n",            // one added line too many
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\nrubbish\n b\n",       // a line no hunk has
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,1 +1,99999999999999999999 @@\n+a\n", // a count that does not parse
	} {
		if cs, err := parseDiff(strings.NewReader(in)); err == nil {
			t.Errorf("%q: %+v, want an error", in, cs)
		}
	}
}

// A pull request file's patch as GitHub's API gives it: its hunks (three lines of context)
// without file headers; an added line that begins "++ " is a line of the file.
func TestParsePatch(t *testing.T) {
	patch := "@@ -1,3 +1,4 @@\n a\n+b\n c\n d\n@@ -10,2 +11,3 @@ func\n x\n++++ y\n-z\n+w\n\\ No newline at end of file"
	c, err := ParsePatch("kernels/a.cu", patch)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != "kernels/a.cu" || !slices.Equal(c.Added, []Range{{2, 2}, {12, 13}}) || !slices.Equal(c.Hunks, []Range{{1, 4}, {11, 13}}) {
		t.Errorf("%+v", c)
	}
	if _, err := ParsePatch("a", "@@ -1,2 +1,2 @@\n a\n"); err == nil {
		t.Error("a cut patch was read")
	}
}
