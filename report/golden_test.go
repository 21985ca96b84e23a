package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/goldentest"
)

// goldenFiles are the golden files of one recorded result, one per format, in
// testdata/golden/CASE. The JSON format's is the recording's own result.json: the
// recordings were written by result.Write, which the JSON format is, byte for byte (and
// -update never rewrites a recording).
var goldenFiles = []struct {
	format Format
	file   string
}{
	{Text, "report.txt"},
	{Markdown, "report.md"},
	{JSON, ""},
	{SARIF, "report.sarif"},
}

// TestReplayGolden renders real recorded results (testdata/replay) in every format and
// compares each with its golden file: a clean run (every gate passes; the speedup gate's
// comparisons), a race the sanitizer finds (at a file relative to the recording's checkout,
// which SARIF names as the root), and a kernel that spills (the ptxas
// gate fails with findings on no file, which SARIF locates at the config). go test -update
// rewrites them.
func TestReplayGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		// root is the checkout the recording was made in, where its absolute paths are.
		root string
	}{
		{"clean", ""},
		{"race", raceRoot},
		{"spill", ""},
	} {
		res := readReplay(t, c.name)
		for _, g := range goldenFiles {
			t.Run(c.name+"/"+string(g.format), func(t *testing.T) {
				var buf bytes.Buffer
				o := Options{Root: c.root}
				if err := Render(&buf, res, g.format, o); err != nil {
					t.Fatal(err)
				}
				if g.format == SARIF {
					validateSARIF(t, buf.Bytes(), res, o)
				}
				if g.file == "" {
					recorded := filepath.Join("..", "testdata", "replay", c.name, "result.json")
					if want, err := os.ReadFile(recorded); err != nil || !bytes.Equal(buf.Bytes(), want) {
						t.Errorf("the JSON of %s is not the recording itself (%v): the machine contract changed", recorded, err)
					}
					return
				}
				goldentest.Check(t, filepath.Join("testdata", "golden", c.name, g.file), buf.Bytes(), *update)
			})
		}
	}
}
