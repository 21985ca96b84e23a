package docs

import (
	"os"
	"strings"
	"testing"
)

// architecture.md's tables are the map a newcomer reads the tree by: a package missing from
// them is a package nobody is told about.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, files := range [][]goFile{goFiles(t, false), goFiles(t, true)} {
		for _, f := range files {
			if seen[f.pkg] || f.pkg == "docs" || f.pkg == "." {
				continue
			}
			seen[f.pkg] = true
			// A package is named whole, or under its parent's row ("gates/speedup/abrun" in
			// prose as `abrun` is not enough: the path is what a reader looks for).
			if !strings.Contains(string(doc), "`"+f.pkg+"`") && !strings.Contains(string(doc), "`"+f.pkg+"/`") {
				t.Errorf("docs/architecture.md does not name package %s (as `%s`)", f.pkg, f.pkg)
			}
		}
	}
	if len(seen) < 40 {
		t.Fatalf("found only %d packages", len(seen))
	}
}
