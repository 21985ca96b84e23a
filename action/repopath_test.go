package action

import (
	"slices"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// TestAnnotationPathsStayInTheRepository: a check-run annotation is posted only at a path
// inside the repository that displays as itself; a path that climbs out, is absolute, is a
// URI or a drive, or holds a bidirectional control (so that "txt\u202eexe.cu" shows as
// another file's name) is not annotated.
func TestAnnotationPathsStayInTheRepository(t *testing.T) {
	var fs []result.Finding
	for _, p := range []string{"kernels/a.cu", "../../etc/passwd", "/etc/passwd", "file:///etc/passwd", "C:\\x",
		"https://evil.example/x", "kernels/txt\u202eexe.cu", "kernels/a\u2066b.cu", "kernels/a\u200fb.cu", "kernels/a\u061cb.cu", "/w/repo/kernels/b.cu"} {
		fs = append(fs, result.Finding{Severity: result.Error, File: p, Line: 3, Message: "m"})
	}
	g := result.Gate{Name: "guard", Findings: fs}
	g.Decide(true)
	annots, _ := annotations(result.New("kernel-gate v1", g), "/w/repo", 100)
	var got []string
	for _, a := range annots {
		got = append(got, a.Path)
	}
	if want := []string{"kernels/a.cu", "kernels/b.cu"}; !slices.Equal(got, want) {
		t.Errorf("annotated %q, want %q", got, want)
	}
	for _, p := range []string{"kernels/txt\u202eexe.cu", "../x", "file:///etc/passwd"} {
		if got := safePath(p); got != "" {
			t.Errorf("safePath(%q) = %q, want it dropped", p, got)
		}
	}
}
