package sanitizer

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stripPrefix removes compute-sanitizer's "=========" prefix from every line as people do
// when they paste a log into an issue or a README: with the blank after it ("========= "),
// or the nine '=' alone.
func stripPrefix(b []byte, withBlank bool) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		switch {
		case withBlank && bytes.HasPrefix(l, []byte(prefix+" ")):
			lines[i] = l[len(prefix)+1:]
		case bytes.HasPrefix(l, []byte(prefix)):
			lines[i] = l[len(prefix):]
		}
	}
	return bytes.Join(lines, nil)
}

// pastedCaptures are the real text captures to strip: every text row of realCaptures
// that parses, and the shared originals when ../shared is there.
func pastedCaptures(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for _, tc := range realCaptures {
		if tc.err != "" || strings.HasSuffix(tc.file, ".xml") {
			continue
		}
		out[tc.file] = readCapture(t, tc.file)
	}
	shared, _ := filepath.Glob("../../../shared/data/gpu-logs/*/cs_*.txt")
	shared = slices.DeleteFunc(shared, func(f string) bool { return strings.HasSuffix(f, "cs_help.txt") })
	for _, f := range shared {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

// TestPastedLogs: a log whose "=========" prefix was stripped parses to the same runs as
// the original: records, counts, summaries, problems and notes.
func TestPastedLogs(t *testing.T) {
	n := 0
	for name, data := range pastedCaptures(t) {
		if !bytes.Contains(data, []byte(prefix)) {
			continue
		}
		tool := toolFromName(name)
		orig, err := ParseTextWith(bytes.NewReader(data), filepath.Base(name), ParseOptions{Tool: tool})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, withBlank := range []bool{true, false} {
			pasted := stripPrefix(data, withBlank)
			runs, err := ParseTextWith(bytes.NewReader(pasted), filepath.Base(name), ParseOptions{Tool: tool})
			if err != nil {
				t.Errorf("%s (stripped, blank %v): %v", name, withBlank, err)
				continue
			}
			if err := matchLines(renderAll(runs), renderAll(orig)); err != nil {
				t.Errorf("%s (stripped, blank %v): %v", name, withBlank, err)
			}
			n++
		}
	}
	t.Logf("%d stripped captures compared", n)
	if n < 40 {
		t.Errorf("only %d stripped captures compared", n)
	}
}
