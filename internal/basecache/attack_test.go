package basecache

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// savedEntry saves outputs(t) with a file of the tree root (build/kg.o, as a build leaves
// in base's worktree) and returns the cache and the manifest's path.
func savedEntry(t *testing.T) (cache string) {
	t.Helper()
	_, sources := outputs(t)
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "build", "kg.o"), []byte("object"), 0o644); err != nil {
		t.Fatal(err)
	}
	sources = append(sources, Source{Root: "tree", Dir: tree, Paths: []string{"build/kg.o"}})
	cache = filepath.Join(t.TempDir(), "cache")
	if _, err := Save(context.Background(), cache, testKey(), json.RawMessage(`{}`), sources, Limits{}); err != nil {
		t.Fatal(err)
	}
	return cache
}

// rewrite edits the entry's manifest as its writer could (the hashes are whatever it says).
func rewrite(t *testing.T, cache string, edit func(*Manifest)) {
	t.Helper()
	p := filepath.Join(cache, testKey().Sum(), manifestFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	if raw, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// moveFile renames the entry's file of root/from to root/to, in the manifest and on disk:
// an entry that verifies, naming the path an attacker wants written.
func moveFile(t *testing.T, cache, root, from, to string) {
	t.Helper()
	dir := filepath.Join(cache, testKey().Sum(), filesDir, root)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, filepath.FromSlash(to))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(from)), filepath.Join(dir, filepath.FromSlash(to))); err != nil {
		t.Fatal(err)
	}
	rewrite(t, cache, func(m *Manifest) {
		for i := range m.Files {
			if m.Files[i].Root == root && m.Files[i].Path == from {
				m.Files[i].Path = to
			}
		}
	})
}

// treeDests are the destinations with base's worktree as checked out: a tracked source and
// a tracked link to a folder of the tree.
func treeDests(t *testing.T) map[string]string {
	t.Helper()
	dests := freshDests(t)
	dests["tree"] = filepath.Join(t.TempDir(), "tree")
	if err := os.MkdirAll(filepath.Join(dests["tree"], "kernels"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dests["tree"], "kernels", "attention.cu"), []byte("tracked source\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("kernels", filepath.Join(dests["tree"], "out")); err != nil {
		t.Fatal(err)
	}
	return dests
}

// Attacks on restore by an entry that verifies (its writer wrote the hashes too): it may
// only add files, never replace base's tracked files nor write through a link of the tree,
// even one that stays inside it. Before the fix both were written (CreateArtifactIn
// removes a regular file in the way; os.Root follows a link inside the root).
func TestRestoreOnlyAddsFiles(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, to, want string
	}{
		{"a tracked file of base's tree", "kernels/attention.cu", "there already"},
		{"through the tree's link to its folder", "out/new.o", "symbolic link"},
		{"over the tree's link itself", "out", "there already"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := savedEntry(t)
			moveFile(t, cache, "tree", "build/kg.o", c.to)
			if _, err := Read(ctx, cache, testKey()); err != nil {
				t.Fatalf("the forged entry should verify (its writer wrote its hashes): %v", err)
			}
			dests := treeDests(t)
			_, err := Restore(ctx, cache, testKey(), dests, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want a refusal naming %q", err, c.want)
			}
			if raw, _ := os.ReadFile(filepath.Join(dests["tree"], "kernels", "attention.cu")); string(raw) != "tracked source\n" {
				t.Errorf("the tracked file now holds %q", raw)
			}
			if _, err := os.Lstat(filepath.Join(dests["tree"], "kernels", "new.o")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("written through the tree's link: %v", err)
			}
			if target, err := os.Readlink(filepath.Join(dests["tree"], "out")); err != nil || target != "kernels" {
				t.Errorf("the tree's link: %q %v", target, err)
			}
			if _, err := os.Stat(filepath.Join(dests["artifacts"], "attention", "build.log")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("what was restored before the refusal was left: %v", err)
			}
		})
	}
	// A file under a link the entry itself restores: a save never keeps one (it does not
	// walk through links).
	cache := savedEntry(t)
	moveFile(t, cache, "cache", "torch_extensions/kg/.ninja_log", "torch_extensions/kg/kg.so.1/x")
	// (Whichever comes first, the link or the file, the other finds its name taken.)
	if _, err := Restore(ctx, cache, testKey(), treeDests(t), nil); err == nil {
		t.Error("restored a file under a link of the entry")
	}
}

// Sizes and counts no save makes are refused from the manifest alone, before any file is
// read: a size near the int64 limit (which, summed, would wrap around), a total past
// DefaultMaxBytes, more than DefaultMaxFiles files. Before the fix the first two were
// refused only by reading the files, and the count not at all.
func TestRestoreRefusesSizesNoSaveMakes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		edit func(*Manifest)
	}{
		{"a size past the int64 limit when summed", func(m *Manifest) {
			m.Files[0].Size, m.Files[1].Size = math.MaxInt64, math.MaxInt64
		}},
		{"a total past DefaultMaxBytes", func(m *Manifest) {
			for i := range m.Files {
				if m.Files[i].Link == "" {
					m.Files[i].Size = DefaultMaxBytes / 2
				}
			}
		}},
		{"more files than a save keeps", func(m *Manifest) {
			f := m.Files[0]
			for i := range DefaultMaxFiles {
				f.Path = "many/" + strings.Repeat("x", 1+i%7) + "/" + time.Duration(i).String()
				m.Files = append(m.Files, f)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := savedEntry(t)
			rewrite(t, cache, c.edit)
			// The files are made unreadable: a refusal that read them would name them.
			if err := os.RemoveAll(filepath.Join(cache, testKey().Sum(), filesDir)); err != nil {
				t.Fatal(err)
			}
			_, err := Restore(ctx, cache, testKey(), treeDests(t), nil)
			if err == nil || !strings.Contains(err.Error(), "more than a save keeps") {
				t.Fatalf("err %v, want a refusal from the manifest's sizes", err)
			}
		})
	}
}

// Defences that held before this round (these tests pass on the code as it was): a file
// on disk the manifest does not list is never restored; a manifest field no schema has is
// refused; a FIFO or a link out of the cache in a file's place is refused without
// blocking; a folder of the entry that is a link out of the cache is not followed.
func TestRestoreIgnoresOrRefusesWhatTheManifestDoesNotSay(t *testing.T) {
	ctx := context.Background()
	t.Run("an unlisted file", func(t *testing.T) {
		cache := savedEntry(t)
		extra := filepath.Join(cache, testKey().Sum(), filesDir, "tree", "extra.sh")
		if err := os.WriteFile(extra, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		dests := treeDests(t)
		if _, err := Restore(ctx, cache, testKey(), dests, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dests["tree"], "extra.sh")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a file the manifest does not list was restored: %v", err)
		}
	})
	t.Run("an unknown field", func(t *testing.T) {
		cache := savedEntry(t)
		p := filepath.Join(cache, testKey().Sum(), manifestFile)
		raw, _ := os.ReadFile(p)
		raw = []byte(strings.Replace(string(raw), `"schema"`, `"trusted": true, "schema"`, 1))
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Restore(ctx, cache, testKey(), treeDests(t), nil); err == nil || !strings.Contains(err.Error(), "trusted") {
			t.Errorf("an unknown field: %v", err)
		}
	})
	t.Run("a folder of the entry linked out of the cache", func(t *testing.T) {
		cache := savedEntry(t)
		outside := t.TempDir()
		dir := filepath.Join(cache, testKey().Sum(), filesDir, "tree")
		if err := os.Rename(dir, filepath.Join(outside, "tree")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "tree"), dir); err != nil {
			t.Fatal(err)
		}
		if _, err := Restore(ctx, cache, testKey(), treeDests(t), nil); err == nil {
			t.Error("read through a link out of the cache")
		}
	})
	t.Run("a FIFO in a file's place", func(t *testing.T) {
		cache := savedEntry(t)
		p := filepath.Join(cache, testKey().Sum(), filesDir, "tree", "build", "kg.o")
		os.Remove(p)
		if err := mkfifo(p); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		dests := treeDests(t)
		refusesFIFO(t, "Restore", func() error { _, err := Restore(ctx, cache, testKey(), dests, nil); return err })
	})
}

// A hard link in base's outputs to a file elsewhere (a build's `ln ~/.ssh/id_ed25519
// out.so`) is what a symbolic link out is, without being a link: before the fix Save
// copied the secret into the entry, which actions/cache uploads.
func TestSaveRefusesHardLinks(t *testing.T) {
	dirs, sources := outputs(t)
	secret := filepath.Join(filepath.Dir(dirs["cache"]), "id_ed25519")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(dirs["cache"], "out.so")); err != nil {
		t.Skip("no hard links here:", err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	_, err := Save(context.Background(), cache, testKey(), json.RawMessage(`{}`), sources, Limits{})
	if err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Fatalf("err %v, want a refusal naming the hard link", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("the cache holds %v after a refused save", entries)
	}
}

// Names no save writes are refused from the manifest (these held before this round): an
// absolute path, one that climbs or is not clean, a backslash, a root that is no plain name.
func TestRestoreRefusesNamesNoSaveWrites(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*File)
	}{
		{"absolute", func(f *File) { f.Path = "/etc/cron.d/x" }},
		{"climbing", func(f *File) { f.Path = "build/../../x" }},
		{"unclean", func(f *File) { f.Path = "./build/kg.o" }},
		{"double slash", func(f *File) { f.Path = "build//kg.o" }},
		{"backslash", func(f *File) { f.Path = `build\..\..\x` }},
		{"empty", func(f *File) { f.Path = "" }},
		{"root ..", func(f *File) { f.Root = ".." }},
		{"root with a slash", func(f *File) { f.Root = "tree/../.." }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := savedEntry(t)
			rewrite(t, cache, func(m *Manifest) {
				for i := range m.Files {
					if m.Files[i].Root == "tree" {
						c.edit(&m.Files[i])
					}
				}
			})
			dests := treeDests(t)
			if _, err := Restore(context.Background(), cache, testKey(), dests, nil); err == nil || errors.Is(err, ErrMiss) {
				t.Fatalf("err %v, want a refusal", err)
			}
			if _, err := os.Stat(dests["artifacts"]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("written before the refusal: %v", err)
			}
		})
	}
}
