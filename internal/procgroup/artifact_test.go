package procgroup

import (
	"errors"
	"os"
	"path/filepath"
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
