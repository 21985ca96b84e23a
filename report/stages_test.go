package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/goldentest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The clean recording's result with a few stages of a live run in place of its own (base
// and head built at once, the sanitizer's tools at once) shows where the time went in text
// and markdown, after the gates: the table, which stages ran at once, and the critical path.
// (The recording of 2026-11-27 keeps every step's stages, which TestReplayGolden's clean
// files show; a replay of it shows none.)
func TestStagesGolden(t *testing.T) {
	r := readReplay(t, "clean")
	r.Replay = ""
	r.Stages = []result.Stage{
		{ID: "gpu", Name: "gpu", StartSeconds: 0, WallSeconds: 0.1},
		{ID: "build/base/attention", Name: "build", Target: "attention", Side: "base", StartSeconds: 0.3, WallSeconds: 8.9},
		{ID: "build/head/attention", Name: "build", Target: "attention", Side: "head", StartSeconds: 0.3, WallSeconds: 9.4},
		{ID: "static gates", Name: "static gates", StartSeconds: 10.1, WallSeconds: 0.2},
		{ID: "sanitize/attention", Name: "sanitizer", Target: "attention", StartSeconds: 10.4, WallSeconds: 1.3},
		{ID: "sanitize/attention/memcheck", Name: "memcheck", Target: "attention", StartSeconds: 10.4, WallSeconds: 1.2},
		{ID: "sanitize/attention/racecheck", Name: "racecheck", Target: "attention", StartSeconds: 10.4, WallSeconds: 1.3},
		{ID: "check/attention", Name: "check", Target: "attention", Side: "head", StartSeconds: 11.8, WallSeconds: 1.1},
		{ID: "bench/attention", Name: "timing", Target: "attention", StartSeconds: 13, WallSeconds: 2.2},
	}
	r.CriticalPath = []string{"gpu", "build/head/attention", "static gates", "sanitize/attention", "check/attention", "bench/attention"}
	for _, c := range []struct {
		format Format
		file   string
	}{{Text, "report.txt"}, {Markdown, "report.md"}} {
		var buf bytes.Buffer
		if err := Render(&buf, r, c.format, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "build/base/attention") {
			t.Errorf("%s: no stage ran at once with head's build:\n%s", c.format, buf.String())
		}
		goldentest.Check(t, filepath.Join("testdata", "golden", "stages", c.file), buf.Bytes(), *update)
	}
}

// A stage's names come from the repository (target names): in a table cell they are
// escaped, one line each, and a workflow command cannot start a line of the text report.
func TestStagesHostileNames(t *testing.T) {
	evil := "x|<b>y</b>\n::error::z"
	r := result.Result{Schema: result.Schema, Verdict: result.Pass, Stages: []result.Stage{
		{ID: "build/head/" + evil, Name: "build", Target: evil, Side: "head", WallSeconds: 1},
		{ID: "build/base/" + evil, Name: "build", Target: evil, Side: "base", WallSeconds: 1},
	}, CriticalPath: []string{"build/head/" + evil}}
	for _, f := range []Format{Text, Markdown} {
		var buf bytes.Buffer
		if err := Render(&buf, r, f, Options{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "::error::") {
				t.Errorf("%s: a line starts a workflow command: %q", f, line)
			}
		}
		if f == Markdown && (strings.Contains(out, "<b>") || strings.Contains(out, "x|<")) {
			t.Errorf("markdown: a stage's name is not escaped:\n%s", out)
		}
	}
}
