package procgroup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var errMissing = errors.New("the tool not found")

func TestFindTool(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	art := filepath.Join(t.TempDir(), "a", "b")
	tool, err := FindTool(ctx, self, errMissing, art, "kg-test-")
	if err != nil || tool.Bin != self || tool.Dir != art || !tool.Keep {
		t.Fatalf("artifact directory: %+v, %v", tool, err)
	}
	tool.Close()
	if _, err := os.Stat(art); err != nil {
		t.Errorf("Close removed the caller's directory: %v", err)
	}

	tool, err = FindTool(ctx, self, errMissing, "", "kg-test-")
	if err != nil || tool.Keep || !strings.HasPrefix(filepath.Base(tool.Dir), "kg-test-") {
		t.Fatalf("temporary directory: %+v, %v", tool, err)
	}
	if err := os.WriteFile(filepath.Join(tool.Dir, "x.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool.Close()
	if _, err := os.Stat(tool.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the temporary directory: %v", err)
	}

	// A missing tool is reported first, even with a cancelled ctx and an unusable directory.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindTool(cancelled, "no-such-tool-kg", errMissing, file, ""); !errors.Is(err, errMissing) {
		t.Errorf("missing tool: %v", err)
	}
	if _, err := FindTool(cancelled, self, errMissing, art, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := FindTool(ctx, self, errMissing, filepath.Join(file, "sub"), ""); err == nil || errors.Is(err, errMissing) {
		t.Errorf("unusable artifact directory: %v", err)
	}
}
