package basecache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func testKey() Key {
	return Key{Tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", Toolkit: "Cuda compilation tools, release 13.0, V13.0.88",
		Driver: "580.159.04", GPU: "NVIDIA H200", Config: strings.Repeat("ab", 32), Tool: "kernel-gate v0.1.0-dev",
		Arch: []string{"sm_90a"}, Targets: []string{"attention"}, Env: []string{}}
}

// outputs makes a base's roots as a build leaves them: artifacts with a log and a binary, a
// JIT cache with a nested extension and a link inside it.
func outputs(t *testing.T) (dirs map[string]string, sources []Source) {
	t.Helper()
	base := t.TempDir()
	dirs = map[string]string{"artifacts": filepath.Join(base, "artifacts"), "cache": filepath.Join(base, "cache")}
	write := func(root, rel, body string, mode os.FileMode) {
		p := filepath.Join(dirs[root], filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("artifacts", "attention/build.log", "ptxas info    : Used 128 registers\n", 0o644)
	write("artifacts", "attention/harness", "#!/bin/sh\necho harness\n", 0o755)
	write("cache", "torch_extensions/kg/kg.so", "\x7fELF fake", 0o755)
	write("cache", "torch_extensions/kg/.ninja_log", "# ninja log v5\n", 0o644)
	if err := os.Symlink("kg.so", filepath.Join(dirs["cache"], "torch_extensions", "kg", "kg.so.1")); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dirs["cache"], "torch_extensions", "kg", "kg.so"), old, old); err != nil {
		t.Fatal(err)
	}
	return dirs, []Source{{Root: "artifacts", Dir: dirs["artifacts"], Paths: []string{"."}}, {Root: "cache", Dir: dirs["cache"], Paths: []string{"."}}}
}

func freshDests(t *testing.T) map[string]string {
	d := t.TempDir()
	return map[string]string{"artifacts": filepath.Join(d, "artifacts"), "cache": filepath.Join(d, "cache")}
}

// What was saved comes back whole: contents, modes, times, the link inside its root.
func TestSaveRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	_, sources := outputs(t)
	saved, err := Save(ctx, cache, testKey(), json.RawMessage(`{"steps":[]}`), sources, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Files) != 5 || saved.Sum != testKey().Sum() {
		t.Fatalf("saved %d files as %s: %+v", len(saved.Files), saved.Sum, saved.Files)
	}
	dests := freshDests(t)
	var meta string
	m, err := Restore(ctx, cache, testKey(), dests, func(m Manifest) error { meta = string(m.Meta); return nil })
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(meta)); err != nil || compact.String() != `{"steps":[]}` || len(m.Files) != 5 {
		t.Errorf("meta %q, %d files", meta, len(m.Files))
	}
	so := filepath.Join(dests["cache"], "torch_extensions", "kg", "kg.so")
	st, err := os.Stat(so)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&0o111 == 0 || !st.ModTime().Equal(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("kg.so: mode %v, time %v: want executable, its saved time", st.Mode(), st.ModTime())
	}
	if target, err := os.Readlink(so + ".1"); err != nil || target != "kg.so" {
		t.Errorf("link: %q %v", target, err)
	}
	if raw, _ := os.ReadFile(filepath.Join(dests["artifacts"], "attention", "build.log")); string(raw) != "ptxas info    : Used 128 registers\n" {
		t.Errorf("build.log: %q", raw)
	}
}

// Each way an entry can fail to match is refused before anything is written; a key with
// no entry is a plain miss.
func TestRestoreRefuses(t *testing.T) {
	ctx := context.Background()
	entry := func(t *testing.T) string {
		cache := filepath.Join(t.TempDir(), "cache")
		_, sources := outputs(t)
		if _, err := Save(ctx, cache, testKey(), json.RawMessage(`{}`), sources, Limits{}); err != nil {
			t.Fatal(err)
		}
		return cache
	}
	sum := testKey().Sum()
	editManifest := rewrite
	cases := []struct {
		name   string
		tamper func(t *testing.T, cache string)
		key    func(Key) Key
		want   string
	}{
		{"a file's bytes changed", func(t *testing.T, cache string) {
			os.WriteFile(filepath.Join(cache, sum, filesDir, "artifacts", "attention", "build.log"), []byte("ptxas info    : Used 032 registers\n"), 0o644)
		}, nil, "SHA-256"},
		{"a file cut", func(t *testing.T, cache string) {
			os.WriteFile(filepath.Join(cache, sum, filesDir, "artifacts", "attention", "build.log"), []byte("ptxas"), 0o644)
		}, nil, "bytes"},
		{"a file missing", func(t *testing.T, cache string) {
			os.Remove(filepath.Join(cache, sum, filesDir, "artifacts", "attention", "harness"))
		}, nil, "harness"},
		{"a file replaced by a link out", func(t *testing.T, cache string) {
			p := filepath.Join(cache, sum, filesDir, "artifacts", "attention", "harness")
			os.Remove(p)
			os.Symlink("/bin/sh", p)
		}, nil, "harness"},
		{"the manifest unreadable", func(t *testing.T, cache string) {
			os.WriteFile(filepath.Join(cache, sum, manifestFile), []byte(`{"schema": "kernel-gate/base-cache/v1", "schema": "x"}`), 0o644)
		}, nil, "duplicate key"},
		{"the manifest of another key", func(t *testing.T, cache string) {
			editManifest(t, cache, func(m *Manifest) { m.Key.Driver = "550.54.15" })
		}, nil, "differ: driver"},
		{"another schema", func(t *testing.T, cache string) {
			editManifest(t, cache, func(m *Manifest) { m.Schema = "kernel-gate/base-cache/v0" })
		}, nil, "schema"},
		{"a path out of its root", func(t *testing.T, cache string) {
			editManifest(t, cache, func(m *Manifest) { m.Files[0].Path = "../../etc/passwd" })
		}, nil, "not a plain path"},
		{"a link out of its root", func(t *testing.T, cache string) {
			editManifest(t, cache, func(m *Manifest) {
				for i := range m.Files {
					if m.Files[i].Link != "" {
						m.Files[i].Link = "../../../../home/runner/.bashrc"
					}
				}
			})
		}, nil, "leads out"},
		{"a file listed twice", func(t *testing.T, cache string) {
			editManifest(t, cache, func(m *Manifest) { m.Files = append(m.Files, m.Files[0]) })
		}, nil, "twice"},
		{"the entry a file", func(t *testing.T, cache string) {
			os.RemoveAll(filepath.Join(cache, sum))
			os.WriteFile(filepath.Join(cache, sum), []byte("x"), 0o644)
		}, nil, "not a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := entry(t)
			c.tamper(t, cache)
			dests := freshDests(t)
			_, err := Restore(ctx, cache, testKey(), dests, nil)
			if err == nil || errors.Is(err, ErrMiss) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want a refusal naming %q", err, c.want)
			}
			for _, d := range dests {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was written: %v", d, err)
				}
			}
		})
	}
	// Any other key field: another entry's name, so a miss.
	cache := entry(t)
	for _, k := range []func(*Key){
		func(k *Key) { k.Tree = strings.Repeat("0", 40) }, func(k *Key) { k.Toolkit = "release 12.8" },
		func(k *Key) { k.GPU = "NVIDIA H100 80GB HBM3" }, func(k *Key) { k.Config = strings.Repeat("cd", 32) },
		func(k *Key) { k.Tool = "kernel-gate v0.2.0" }, func(k *Key) { k.Arch = []string{"sm_90a", "sm_100a"} },
		func(k *Key) { k.Targets = []string{"attention", "softmax"} }, func(k *Key) { k.Env = []string{"NVCC_APPEND_FLAGS=-O0"} },
	} {
		key := testKey()
		k(&key)
		if _, err := Restore(ctx, cache, key, freshDests(t), nil); !errors.Is(err, ErrMiss) {
			t.Errorf("key %+v: %v, want a miss", key, err)
		}
	}
	// The caller's judgement of the record refuses it too, before anything is written.
	dests := freshDests(t)
	if _, err := Restore(ctx, cache, testKey(), dests, func(Manifest) error { return errors.New("no steps") }); err == nil || !strings.Contains(err.Error(), "no steps") {
		t.Errorf("accept's refusal: %v", err)
	}
	if _, err := os.Stat(dests["artifacts"]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("written after accept refused: %v", err)
	}
	if _, err := Restore(ctx, filepath.Join(t.TempDir(), "none"), testKey(), dests, nil); !errors.Is(err, ErrMiss) {
		t.Errorf("no cache directory: %v, want a miss", err)
	}
}

// A restore that finds a file of its own in the way (the tree holds a link there) undoes
// what it wrote and writes nothing through the link.
func TestRestoreUndoesAndNeverWritesThroughALink(t *testing.T) {
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	_, sources := outputs(t)
	if _, err := Save(ctx, cache, testKey(), json.RawMessage(`{}`), sources, Limits{}); err != nil {
		t.Fatal(err)
	}
	dests := freshDests(t)
	outside := t.TempDir()
	if err := os.MkdirAll(dests["cache"], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dests["cache"], "torch_extensions")); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, cache, testKey(), dests, nil); err == nil {
		t.Fatal("restored through a link out of its root")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written through the link: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(dests["artifacts"], "attention", "build.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file written before the failure was left: %v", err)
	}
}

// Save never follows a link out of a root: an output that is one leaves the entry unsaved,
// and nothing of what it leads to is copied. A FIFO is refused without blocking.
func TestSaveRefusesLinksOutAndFIFOs(t *testing.T) {
	ctx := context.Background()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		make func(dir string) error
		want string
	}{
		{"absolute link", func(dir string) error { return os.Symlink(secret, filepath.Join(dir, "out.so")) }, "link out"},
		{"climbing link", func(dir string) error {
			return os.Symlink("../../../../../../../../"+secret, filepath.Join(dir, "out.so"))
		}, "link out"},
		{"directory link", func(dir string) error { return os.Symlink(filepath.Dir(secret), filepath.Join(dir, "d")) }, "link out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dirs, sources := outputs(t)
			if err := c.make(dirs["cache"]); err != nil {
				t.Fatal(err)
			}
			cache := filepath.Join(t.TempDir(), "cache")
			_, err := Save(ctx, cache, testKey(), json.RawMessage(`{}`), sources, Limits{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if _, err := Read(ctx, cache, testKey()); !errors.Is(err, ErrMiss) {
				t.Errorf("an entry was left: %v", err)
			}
			entries, _ := os.ReadDir(cache)
			if len(entries) != 0 {
				t.Errorf("the cache holds %v after a refused save", entries)
			}
		})
	}
	dirs, sources := outputs(t)
	if err := mkfifo(filepath.Join(dirs["cache"], "pipe")); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	refusesFIFO(t, "Save", func() error {
		_, err := Save(ctx, filepath.Join(t.TempDir(), "cache"), testKey(), json.RawMessage(`{}`), sources, Limits{})
		return err
	})
}

// refusesFIFO runs fn, which meets a FIFO, and wants it refused, never waited on.
func refusesFIFO(t *testing.T, what string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("%s on a FIFO: %v", what, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked on a FIFO", what)
	}
}

// Limits refuse an entry too large; Keep prunes the oldest entries.
func TestSaveLimitsAndPrune(t *testing.T) {
	ctx := context.Background()
	_, sources := outputs(t)
	cache := filepath.Join(t.TempDir(), "cache")
	if _, err := Save(ctx, cache, testKey(), json.RawMessage(`{}`), sources, Limits{MaxBytes: 10}); err == nil || !strings.Contains(err.Error(), "not cached") {
		t.Errorf("MaxBytes: %v", err)
	}
	if _, err := Save(ctx, cache, testKey(), json.RawMessage(`{}`), sources, Limits{MaxFiles: 2}); err == nil || !strings.Contains(err.Error(), "not cached") {
		t.Errorf("MaxFiles: %v", err)
	}
	var keys []Key
	for i := range 4 {
		k := testKey()
		k.Tree = strings.Repeat(string(rune('a'+i)), 40)
		keys = append(keys, k)
		if _, err := Save(ctx, cache, k, json.RawMessage(`{}`), sources, Limits{Keep: 2}); err != nil {
			t.Fatal(err)
		}
		past := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(filepath.Join(cache, k.Sum()), past, past)
	}
	for i, k := range keys {
		_, err := Read(ctx, cache, k)
		if kept := i >= 2; kept != (err == nil) {
			t.Errorf("entry %d: kept %v, err %v", i, kept, err)
		}
	}
}

// Runs saving one key at once leave one whole entry, and it verifies; an entry that does
// not verify is replaced by the next save.
func TestConcurrentSaves(t *testing.T) {
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	_, sources := outputs(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := Save(ctx, cache, testKey(), json.RawMessage(`{}`), sources, Limits{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a concurrent save: %v", err)
		}
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 || entries[0].Name() != testKey().Sum() {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("cache holds %v, want the one entry", names)
	}
	if _, err := Read(ctx, cache, testKey()); err != nil {
		t.Errorf("the entry does not verify: %v", err)
	}
	os.WriteFile(filepath.Join(cache, testKey().Sum(), filesDir, "artifacts", "attention", "build.log"), []byte("forged\n"), 0o644)
	if _, err := Save(ctx, cache, testKey(), json.RawMessage(`{}`), sources, Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(ctx, cache, testKey()); err != nil {
		t.Errorf("the bad entry was not replaced: %v", err)
	}
}

// Whatever the manifest holds, reading it neither panics nor passes what does not verify.
func FuzzRead(f *testing.F) {
	cache := filepath.Join(f.TempDir(), "cache")
	base := f.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "a"), 0o755); err != nil {
		f.Fatal(err)
	}
	os.WriteFile(filepath.Join(base, "a", "log"), []byte("x\n"), 0o644)
	m, err := Save(context.Background(), cache, testKey(), json.RawMessage(`{"steps":[]}`), []Source{{Root: "artifacts", Dir: base, Paths: []string{"."}}}, Limits{})
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(m)
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"schema":"kernel-gate/base-cache/v1","files":[{"root":"..","path":"x"}]}`))
	manifest := filepath.Join(cache, testKey().Sum(), manifestFile)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(manifest, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Read(context.Background(), cache, testKey())
		if err != nil {
			return
		}
		for _, file := range got.Files {
			if file.Root != "artifacts" || !filepath.IsLocal(filepath.FromSlash(file.Path)) {
				t.Fatalf("verified a file out of its root: %+v", file)
			}
		}
	})
}
