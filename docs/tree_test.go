package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goFile is one Go file of the repository, read: path from the repository's root, pkg its
// folder.
type goFile struct {
	path, pkg string
	src       []byte
}

// goFiles are the repository's Go test files (tests) or its other Go files, testdata and
// hidden folders left out.
func goFiles(t *testing.T, tests bool) []goFile {
	t.Helper()
	var files []goFile
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") != tests {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, ".."+string(filepath.Separator)))
		files = append(files, goFile{path: rel, pkg: filepath.ToSlash(filepath.Dir(rel)), src: src})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d Go files", len(files))
	}
	return files
}
