package baseline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary runs itself as a writer process when these are set (see TestMain).
const (
	envChildDir   = "KG_BASELINE_TEST_CHILD_DIR"
	envChildIndex = "KG_BASELINE_TEST_CHILD_INDEX"
	envChildLock  = "KG_BASELINE_TEST_CHILD_LOCK" // "dir": the lock of platforms without flock
	envChildStart = "KG_BASELINE_TEST_CHILD_START"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envChildDir); dir != "" {
		if err := childUpdate(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childUpdate is one writer process: it waits for the start file, so that every writer
// starts at once, then adds its entry, slowly enough between its read and its write that
// an unlocked store would lose the others' entries.
func childUpdate(dir string) error {
	i, err := strconv.Atoi(os.Getenv(envChildIndex))
	if err != nil {
		return err
	}
	d := NewDir(dir, 0)
	if os.Getenv(envChildLock) == "dir" {
		d.lock = lockDir
	}
	d.afterRead = func() { time.Sleep(20 * time.Millisecond) }
	start := os.Getenv(envChildStart)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(start); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the start file never came")
		}
	}
	return d.Update(context.Background(), entry("NVIDIA H200", "sm_90", fmt.Sprint("proc", i), i))
}

func h200() Key {
	k, _ := NewKey("NVIDIA H200", "sm_90")
	return k
}

// Eight processes update one key of one directory at the same moment: all eight entries
// are kept, and no temporary file is left behind. Run with flock and with the lock
// directory that platforms without flock use.
func TestDirConcurrentProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, lockKind := range []string{"flock", "dir"} {
		t.Run(lockKind, func(t *testing.T) {
			dir := t.TempDir()
			start := filepath.Join(t.TempDir(), "start")
			var cmds []*exec.Cmd
			var outs []*bytes.Buffer
			for i := range 8 {
				cmd := exec.Command(exe, "-test.run=^$")
				cmd.Env = append(os.Environ(), envChildDir+"="+dir, envChildIndex+"="+strconv.Itoa(i),
					envChildLock+"="+lockKind, envChildStart+"="+start)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds, outs = append(cmds, cmd), append(outs, &out)
			}
			if err := os.WriteFile(start, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for i, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Errorf("writer %d: %v: %s", i, err, outs[i])
				}
			}
			es, err := NewDir(dir, 0).History(context.Background(), h200(), 0)
			if err != nil {
				t.Fatal(err)
			}
			got := commits(es)
			slices.Sort(got)
			if want := []string{"proc0", "proc1", "proc2", "proc3", "proc4", "proc5", "proc6", "proc7"}; !slices.Equal(got, want) {
				t.Fatalf("entries %v, want %v", got, want)
			}
			names, _ := filepath.Glob(filepath.Join(dir, "*"))
			dots, _ := filepath.Glob(filepath.Join(dir, ".*"))
			for _, n := range append(names, dots...) {
				if b := filepath.Base(n); b != "nvidia-h200.sm_90.json" && b != "nvidia-h200.sm_90.json.lock" {
					t.Errorf("left behind: %s", b)
				}
			}
		})
	}
}

// The same in one process, harder: 16 writers of 3 updates each.
func TestDirConcurrentGoroutines(t *testing.T) {
	for _, lockKind := range []string{"flock", "dir"} {
		t.Run(lockKind, func(t *testing.T) {
			dir := t.TempDir()
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					d := NewDir(dir, 0)
					if lockKind == "dir" {
						d.lock = lockDir
					}
					for i := range 3 {
						if err := d.Update(context.Background(), entry("NVIDIA H200", "sm_90", fmt.Sprintf("w%d-%d", w, i), w*3+i)); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			es, err := NewDir(dir, 0).History(context.Background(), h200(), 0)
			if err != nil || len(es) != 48 {
				t.Fatalf("%d entries, %v", len(es), err)
			}
			for i := 1; i < len(es); i++ {
				if !es[i-1].Time.After(es[i].Time) {
					t.Fatal("history is not newest first")
				}
			}
		})
	}
}

// Without the lock the same race loses updates: the tests above would see it.
func TestDirUnlockedLosesUpdates(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	release := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := NewDir(dir, 0)
			d.lock = func(context.Context, string) (func() error, error) { return func() error { return nil }, nil }
			d.afterRead = func() { time.Sleep(50 * time.Millisecond) }
			<-release
			d.Update(context.Background(), entry("NVIDIA H200", "sm_90", fmt.Sprint("w", w), w))
		}()
	}
	close(release)
	wg.Wait()
	es, _ := NewDir(dir, 0).History(context.Background(), h200(), 0)
	if len(es) == 8 {
		t.Skip("the unlocked writers happened not to overlap")
	}
}

func TestDirStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "baselines")
	d := NewDir(dir, 3)
	if keys, err := d.Keys(ctx); err != nil || keys != nil {
		t.Fatalf("a store not yet created: %v %v", keys, err)
	}
	if _, ok, err := d.Latest(ctx, h200()); ok || err != nil {
		t.Fatalf("Latest of nothing: %v %v", ok, err)
	}
	// An L4 runner and an H100 runner keep separate histories.
	for i := range 5 {
		for _, gpu := range [][2]string{{"NVIDIA L4", "8.9"}, {"NVIDIA H100 80GB HBM3", "sm_90"}} {
			if err := d.Update(ctx, entry(gpu[0], gpu[1], fmt.Sprint(gpu[0], i), i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	keys, err := d.Keys(ctx)
	if err != nil || len(keys) != 2 || keys[0].File() != "nvidia-h100-80gb-hbm3.sm_90.json" || keys[1] != (Key{GPU: "NVIDIA L4", Arch: "sm_89"}) {
		t.Fatalf("keys %v %v", keys, err)
	}
	l4 := keys[1]
	latest, ok, err := d.Latest(ctx, l4)
	if err != nil || !ok || latest.Commit != "NVIDIA L44" || latest.Fingerprint.GPU != "NVIDIA L4" {
		t.Fatalf("latest %+v %v %v", latest, ok, err)
	}
	// Keep 3: the two oldest went.
	if es, _ := d.History(ctx, l4, 0); !slices.Equal(commits(es), []string{"NVIDIA L44", "NVIDIA L43", "NVIDIA L42"}) {
		t.Fatalf("history %v", commits(es))
	}
	if es, _ := d.History(ctx, l4, 2); len(es) != 2 {
		t.Fatalf("History n=2: %d", len(es))
	}
	if err := d.Prune(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if es, _ := d.History(ctx, k, 0); len(es) != 1 || !strings.HasSuffix(es[0].Commit, "4") {
			t.Errorf("after Prune(1), %s: %v", k, commits(es))
		}
	}
	if err := d.Prune(ctx, 0); err == nil {
		t.Error("Prune(0) must be refused")
	}
	bad := entry("", "sm_90", "x", 0)
	if err := d.Update(ctx, bad); err == nil || !strings.Contains(err.Error(), "GPU") {
		t.Errorf("an entry without a GPU: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.Keys(canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("Keys after cancel: %v", err)
	}
}

// A file of a newer format is neither read nor overwritten.
func TestDirRefusesOtherFormats(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v2 := []byte(`{"schema":"kernel-gate/baseline/v2","key":{"gpu":"NVIDIA H200","arch":"sm_90"},"entries":[]}` + "\n")
	path := filepath.Join(dir, "nvidia-h200.sm_90.json")
	os.WriteFile(path, v2, 0o644)
	d := NewDir(dir, 0)
	err := d.Update(ctx, entry("NVIDIA H200", "sm_90", "c", 0))
	if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "kernel-gate/baseline/v2") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Update over v2: %v", err)
	}
	if raw, _ := os.ReadFile(path); !bytes.Equal(raw, v2) {
		t.Fatal("the v2 file was overwritten")
	}
	if _, _, err := d.Latest(ctx, h200()); !errors.Is(err, ErrSchema) {
		t.Errorf("Latest: %v", err)
	}
	if _, err := d.Keys(ctx); !errors.Is(err, ErrSchema) {
		t.Errorf("Keys: %v", err)
	}
	if err := d.Prune(ctx, 1); !errors.Is(err, ErrSchema) {
		t.Errorf("Prune: %v", err)
	}
}

func TestLocks(t *testing.T) {
	ctx := context.Background()
	for name, lock := range map[string]func(context.Context, string) (func() error, error){"flock": lockFile, "dir": lockDir} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "k.json.lock")
			unlock, err := lock(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			// A second writer waits, and gives up when its context says so.
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			if _, err := lock(short, path); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the lock") {
				t.Fatalf("a held lock: %v", err)
			}
			if err := unlock(); err != nil {
				t.Fatal(err)
			}
			unlock, err = lock(ctx, path)
			if err != nil {
				t.Fatalf("after unlock: %v", err)
			}
			unlock()
		})
	}
	// A lock directory left by a writer that died is broken once stale.
	path := filepath.Join(t.TempDir(), "k.json.lock")
	if err := os.Mkdir(path+".d", 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleLock)
	os.Chtimes(path+".d", old, old)
	unlock, err := lockDir(ctx, path)
	if err != nil {
		t.Fatalf("a stale lock: %v", err)
	}
	// A holder whose lock was broken meanwhile is told so.
	os.RemoveAll(path + ".d")
	os.Mkdir(path+".d", 0o755)
	os.WriteFile(filepath.Join(path+".d", "owner"), []byte("someone-else pid 1 on h since t\n"), 0o644)
	if err := unlock(); err == nil || !strings.Contains(err.Error(), "broken as stale") {
		t.Errorf("unlocking a broken lock: %v", err)
	}
	if _, err := os.Stat(path + ".d"); err != nil {
		t.Error("unlock removed another writer's lock")
	}
}
