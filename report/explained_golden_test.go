package report

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/explain"
	"github.com/kernel-gate/kernel-gate/internal/goldentest"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/pipeline"
)

// TestExplainedReplayGolden renders the recordings of issue 24's defects as a replay
// judges them today, explanations included (the recorded result.json files predate them
// and stay as recorded), in text and markdown: testdata/golden/CASE/explained.{txt,md}.
// Against the same result rendered without explanations, the only lines that differ are
// the explained findings'. go test -update rewrites them.
func TestExplainedReplayGolden(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"spill", "occupancy", "slow5"} {
		res, err := pipeline.Run(context.Background(), cfg, pipeline.Options{
			Replay: filepath.Join("..", "testdata", "replay", name), Dir: "..", Tool: "kernel-gate test"})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []struct {
			format Format
			file   string
		}{{Text, "explained.txt"}, {Markdown, "explained.md"}} {
			t.Run(name+"/"+string(g.format), func(t *testing.T) {
				var buf bytes.Buffer
				if err := Render(&buf, res, g.format, Options{}); err != nil {
					t.Fatal(err)
				}
				goldentest.Check(t, filepath.Join("testdata", "golden", name, g.file), buf.Bytes(), *update)
				var plain bytes.Buffer
				if err := Render(&plain, withoutExplanations(res), g.format, Options{}); err != nil {
					t.Fatal(err)
				}
				got, want := strings.Split(buf.String(), "\n"), strings.Split(plain.String(), "\n")
				if len(got) != len(want) {
					t.Fatalf("explanations changed the report's lines: %d, without them %d", len(got), len(want))
				}
				explainedLines := 0
				for i := range got {
					if got[i] != want[i] {
						explainedLines++
						if !strings.Contains(got[i], "why: ") {
							t.Errorf("line %d differs from the report without explanations, and not by one:\n%s\n%s", i+1, got[i], want[i])
						}
					}
				}
				if explainedLines == 0 {
					t.Error("no finding is explained")
				}
			})
		}
	}
}

// withoutExplanations is a copy of r whose findings carry no explanation.
func withoutExplanations(r result.Result) result.Result {
	r.Gates = slices.Clone(r.Gates)
	for gi := range r.Gates {
		r.Gates[gi].Findings = slices.Clone(r.Gates[gi].Findings)
		for fi := range r.Gates[gi].Findings {
			r.Gates[gi].Findings[fi].Explain = nil
		}
	}
	return r
}

// RenderExplained shows a hostile kernel name as text: never a terminal escape, in
// markdown never markup.
func TestRenderExplainedHostile(t *testing.T) {
	e := explain.Explained{Schema: explain.Schema, Kernels: []explain.Kernel{{
		Kernel: "k<script>|x\x1b[31m", Arch: "sm_90a",
		Explain: result.Explanation{Sentence: "registers 1 → 2; [link](http://x) @someone"},
	}}, Notes: []string{"# heading"}}
	for f, bads := range map[Format][]string{
		Text:     {"\x1b"},
		Markdown: {"\x1b", "<script>", "[link](", "\n# heading"},
	} {
		var buf bytes.Buffer
		if err := RenderExplained(&buf, e, f); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, bad := range bads {
			if strings.Contains(out, bad) {
				t.Errorf("%s shows %q:\n%s", f, bad, out)
			}
		}
	}
	if err := RenderExplained(io.Discard, e, SARIF); err == nil {
		t.Error("SARIF is not a format of kernel-gate explain")
	}
}
