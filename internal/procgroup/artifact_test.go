package procgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

// An artifact is written in its directory only: a stale file is replaced, a symbolic link
// of its name (to a file outside, or inside) is refused and its target left as it was.
func TestArtifactsNeverWriteThroughALink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	os.Symlink(victim, filepath.Join(dir, "memcheck.log"))
	os.Symlink(victim, filepath.Join(dir, "memcheck.xml"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink(outside, filepath.Join(dir, "out")) // a directory link out of dir

	if f, err := CreateArtifact(dir, "memcheck.log", 0o644); err == nil || !errors.Is(err, ErrUnsafeArtifact) || exitcode.Of(err) != exitcode.Usage {
		if f != nil {
			f.Close()
		}
		t.Errorf("a link: %v (exit %d)", err, exitcode.Of(err))
	}
	if err := ClearArtifact(dir, "memcheck.xml"); !errors.Is(err, ErrUnsafeArtifact) {
		t.Errorf("clearing a link: %v", err)
	}
	if err := WriteArtifact(dir, "out/x.log", []byte("x"), 0o644); err == nil {
		t.Error("a path through a directory link out of dir was written")
	}
	if err := WriteArtifact(dir, "sub", []byte("x"), 0o644); !errors.Is(err, ErrUnsafeArtifact) {
		t.Errorf("a directory of the name: %v", err)
	}
	if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
		t.Errorf("the link's target was written: %q", raw)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.log")); err == nil {
		t.Error("a file was made outside dir")
	}

	// A stale regular file is replaced; new directories are made.
	stale := filepath.Join(dir, "ncu.log")
	os.WriteFile(stale, []byte("old run\n"), 0o644)
	if err := WriteArtifact(dir, "ncu.log", []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteArtifact(dir, "a/b/c.log", []byte("deep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(stale); string(raw) != "new\n" {
		t.Errorf("stale file: %q", raw)
	}
	if err := ClearArtifact(dir, "ncu.log"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ClearArtifact left the stale file: %v", err)
	}
	if err := ClearArtifact(dir, "none.json"); err != nil {
		t.Errorf("nothing to clear: %v", err)
	}
}

// AppendArtifact adds to a file another program wrote, makes a missing one, and refuses a
// link of its name.
func TestAppendArtifact(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memcheck.log"), []byte("========= ERROR SUMMARY: 0 errors\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"memcheck.log", "new/racecheck.log"} {
		f, err := AppendArtifact(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("exit=0\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "memcheck.log")); string(b) != "========= ERROR SUMMARY: 0 errors\nexit=0\n" {
		t.Errorf("appended: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new", "racecheck.log")); string(b) != "exit=0\n" {
		t.Errorf("created: %q", b)
	}
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "initcheck.log")); err != nil {
		t.Fatal(err)
	}
	if _, err := AppendArtifact(dir, "initcheck.log"); !errors.Is(err, ErrUnsafeArtifact) {
		t.Errorf("a link: %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Errorf("written through the link: %q", b)
	}
}

// A directory held open keeps every file of a run in it, even once its path was renamed
// and a link to elsewhere put in its place (a harness knows where its artifacts go).
func TestArtifactInAHeldDirectory(t *testing.T) {
	top, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(top, "bench")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := os.Rename(dir, filepath.Join(top, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	if err := WriteArtifactIn(root, "head.json", []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(top, "moved", "base.json")); err != nil {
		t.Fatal(err)
	}
	if err := WriteArtifactIn(root, "base.json", []byte("{}\n"), 0o644); !errors.Is(err, ErrUnsafeArtifact) {
		t.Errorf("a link of the file's name: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("written outside the held directory: %v", entries)
	}
	if b, err := os.ReadFile(filepath.Join(top, "moved", "head.json")); err != nil || string(b) != "{}\n" {
		t.Errorf("head.json in the held directory: %q %v", b, err)
	}
}

// A run's directory is made inside the artifacts only: one whose path goes through a link
// out of them is refused, and nothing is made outside.
func TestMkdirArtifact(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(dir, outside string) error
		rel   string
		ok    bool
	}{
		{"new", func(string, string) error { return nil }, "t/bench", true},
		{"existing", func(dir, _ string) error { return os.MkdirAll(filepath.Join(dir, "t", "bench"), 0o755) }, "t/bench", true},
		{"a relative link inside", func(dir, _ string) error {
			if err := os.MkdirAll(filepath.Join(dir, "t", "real"), 0o755); err != nil {
				return err
			}
			return os.Symlink("real", filepath.Join(dir, "t", "bench"))
		}, "t/bench", true},
		{"the directory a link out", func(dir, outside string) error {
			if err := os.Mkdir(filepath.Join(dir, "t"), 0o755); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(dir, "t", "bench"))
		}, "t/bench", false},
		{"a parent a link out", func(dir, outside string) error { return os.Symlink(outside, filepath.Join(dir, "t")) }, "t/bench", false},
		{"a file in its place", func(dir, _ string) error { return os.WriteFile(filepath.Join(dir, "t"), nil, 0o644) }, "t/bench", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			if err := tc.plant(dir, outside); err != nil {
				t.Fatal(err)
			}
			err := MkdirArtifact(dir, tc.rel)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "refusing to write there") {
				t.Errorf("got %v (exit %d), want a refusal", err, exitcode.Of(err))
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("made outside the artifacts: %v", entries)
			}
		})
	}
}
