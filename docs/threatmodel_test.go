package docs

import (
	"os"
	"regexp"
	"testing"
)

// threat-model.md names, for each decision, the tests that attack it: every name it gives
// must be a test (or fuzz target) of the tree, so that a renamed or deleted test cannot
// leave a decision claiming a defence it no longer has.
func TestThreatModelNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("threat-model.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	def := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	for _, f := range goFiles(t, true) {
		for _, m := range def.FindAllSubmatch(f.src, -1) {
			defined[string(m[1])] = true
		}
	}
	named := regexp.MustCompile("`((?:Test|Fuzz)\\w+)`").FindAllSubmatch(doc, -1)
	if len(named) < 30 {
		t.Fatalf("docs/threat-model.md names %d tests: the page lost its references", len(named))
	}
	for _, m := range named {
		if !defined[string(m[1])] {
			t.Errorf("docs/threat-model.md names %s, which is no test of the tree", m[1])
		}
	}
	// Every decision is pointed to from the code that makes it ("threat-model T7"), and
	// every such pointer names a decision of the page.
	decisions := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^- \*\*(T\d+)\. `).FindAllSubmatch(doc, -1) {
		decisions[string(m[1])] = true
	}
	pointed := map[string]bool{}
	ref := regexp.MustCompile(`threat-model (T\d+)\b`)
	for _, f := range goFiles(t, false) {
		for _, m := range ref.FindAllSubmatch(f.src, -1) {
			pointed[string(m[1])] = true
			if !decisions[string(m[1])] {
				t.Errorf("%s points to threat-model %s, which docs/threat-model.md does not have", f.path, m[1])
			}
		}
	}
	for d := range decisions {
		if !pointed[d] {
			t.Errorf("no code points to decision %s of docs/threat-model.md (a comment \"threat-model %s\" where it is made)", d, d)
		}
	}
}
