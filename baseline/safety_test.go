//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package baseline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
	"github.com/kernel-gate/kernel-gate/internal/input"
)

// storeOps are the store's operations on key k, each as an error.
func storeOps(s Store, k Key, e Entry) map[string]func() error {
	ctx := context.Background()
	return map[string]func() error{
		"History": func() error { _, err := s.History(ctx, k, 0); return err },
		"Keys":    func() error { _, err := s.Keys(ctx); return err },
		"Update":  func() error { return s.Update(ctx, e) },
		"Prune":   func() error { return s.Prune(ctx, 1) },
	}
}

// A key's file over MaxFileBytes is refused, naming it and the limit, before it is read:
// every operation of the directory store, the file left as it was.
func TestDirRefusesAFileOverTheLimit(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, h200().File())
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil { // sparse: costs no disk
		t.Skipf("truncate: %v", err)
	}
	f.Close()
	d := NewDir(dir, 0)
	for op, fn := range storeOps(d, h200(), entry("NVIDIA H200", "sm_90", "c1", 1)) {
		err := fn()
		if !errors.Is(err, input.ErrTooBig) || !strings.Contains(err.Error(), h200().File()) || !strings.Contains(err.Error(), "32 MiB") {
			t.Errorf("%s: %v", op, err)
		}
	}
	if st, _ := os.Stat(name); st.Size() != MaxFileBytes+1 {
		t.Errorf("the file was rewritten: %d bytes", st.Size())
	}
}

// An update that would make a file over MaxFileBytes is refused, naming prune; the file
// stays as it was.
func TestUpdateRefusesToWriteAFileOverTheLimit(t *testing.T) {
	dir := t.TempDir()
	d := NewDir(dir, 0)
	ctx := context.Background()
	if err := d.Update(ctx, entry("NVIDIA H200", "sm_90", "c0", 0)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, h200().File()))
	big := entry("NVIDIA H200", "sm_90", "c1", 1)
	big.Kernels[0].Demangled = strings.Repeat("k", MaxFileBytes)
	if err := d.Update(ctx, big); err == nil || !strings.Contains(err.Error(), "baseline prune") {
		t.Errorf("an update past the limit: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, h200().File())); !bytes.Equal(before, after) {
		t.Error("the file changed")
	}
}

// A key's file that is a FIFO, or a link out of the store's directory, is refused at once,
// named: no operation waits for a writer that never comes, nor reads what the link shows.
func TestDirRefusesFIFOsAndLinksOut(t *testing.T) {
	for _, kind := range []string{"FIFO", "link out"} {
		dir := t.TempDir()
		name := filepath.Join(dir, h200().File())
		if kind == "FIFO" {
			hangtest.FIFO(t, name)
		} else {
			outside := filepath.Join(t.TempDir(), "secret.json")
			os.WriteFile(outside, []byte(`{"schema":"kernel-gate/baseline/v1","key":{"gpu":"NVIDIA H200","arch":"sm_90"},"entries":[]}`), 0o644)
			os.Symlink(outside, name)
		}
		d := NewDir(dir, 0)
		for op, fn := range storeOps(d, h200(), entry("NVIDIA H200", "sm_90", "c1", 1)) {
			err := hangtest.Within(t, 10*time.Second, kind+" "+op, fn)
			if err == nil || !strings.Contains(err.Error(), h200().File()) {
				t.Errorf("%s, %s: %v", kind, op, err)
			}
			if kind == "FIFO" && !errors.Is(err, input.ErrNotRegular) {
				t.Errorf("%s, %s: %v is not ErrNotRegular", kind, op, err)
			}
		}
	}
}

// A key's lock file that is a link (to a file outside, existing or not) or a FIFO is
// refused, named, never opened through: its target is neither created nor changed.
func TestLockFileNeverThroughALinkNorAFIFO(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, ".bashrc")
	for _, kind := range []string{"link", "dangling link", "FIFO"} {
		os.WriteFile(victim, []byte("precious\n"), 0o600)
		dir := t.TempDir()
		lock := filepath.Join(dir, h200().File()+".lock")
		switch kind {
		case "link":
			os.Symlink(victim, lock)
		case "dangling link":
			os.Symlink(filepath.Join(outside, "authorized_keys"), lock)
		case "FIFO":
			hangtest.FIFO(t, lock)
		}
		d := NewDir(dir, 0)
		err := hangtest.Within(t, 10*time.Second, kind, func() error { return d.Update(context.Background(), entry("NVIDIA H200", "sm_90", "c1", 1)) })
		if err == nil || !strings.Contains(err.Error(), lock) {
			t.Errorf("%s: %v", kind, err)
		}
		if st, err := os.Stat(victim); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: the link's target changed: %v %v", kind, st, err)
		}
		if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
			t.Errorf("%s: the link's target was written: %q", kind, raw)
		}
		if _, err := os.Lstat(filepath.Join(outside, "authorized_keys")); err == nil {
			t.Errorf("%s: the dangling link's target was created", kind)
		}
	}
}

// A lock held for ever (by another process's flock, or a lock directory that is not yet
// stale) ends the update or prune with ErrLockWait after the store's bounded wait, naming
// the lock; the wait itself is bounded, not the test's guess at it. A lock directory whose
// owner file is a FIFO does not block the message that names its holder.
func TestLockHeldForeverGivesUp(t *testing.T) {
	for _, kind := range []string{"flock", "dir", "dir, owner a FIFO"} {
		dir := t.TempDir()
		d := NewDir(dir, 0)
		ctx := context.Background()
		if err := d.Update(ctx, entry("NVIDIA H200", "sm_90", "c0", 0)); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(dir, h200().File()+".lock")
		d.lockWait = 100 * time.Millisecond
		switch kind {
		case "flock":
			f, err := os.OpenFile(lock, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
		default:
			d.lock = lockDir
			os.Mkdir(lock+".d", 0o755)
			if kind == "dir" {
				os.WriteFile(filepath.Join(lock+".d", "owner"), []byte("tok pid 42 on builder since then\n"), 0o644)
			} else {
				hangtest.FIFO(t, filepath.Join(lock+".d", "owner"))
			}
		}
		for op, fn := range map[string]func() error{
			"Update": func() error { return d.Update(ctx, entry("NVIDIA H200", "sm_90", "c1", 1)) },
			"Prune":  func() error { return d.Prune(ctx, 1) },
		} {
			err := hangtest.Within(t, 20*time.Second, kind+" "+op, fn)
			if !errors.Is(err, ErrLockWait) || !strings.Contains(err.Error(), lock) || !strings.Contains(err.Error(), "100ms") {
				t.Errorf("%s, %s: %v", kind, op, err)
			}
			if kind == "dir" && !strings.Contains(err.Error(), "pid 42 on builder") {
				t.Errorf("%s, %s: the holder is not named: %v", kind, op, err)
			}
		}
	}
	if NewDir(t.TempDir(), 0).lockWait != DefaultLockWait || DefaultLockWait <= 0 {
		t.Error("a store's lock wait is not DefaultLockWait")
	}
}

// sizeLie makes every git tree say its key files are over MaxFileBytes.
type sizeLie struct{ next http.RoundTripper }

func (s sizeLie) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/git/trees/") {
		return resp, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	for _, e := range tree["tree"].([]any) {
		if e := e.(map[string]any); strings.HasSuffix(fmt.Sprint(e["path"]), fileSuffix) {
			e["size"] = MaxFileBytes + 1
		}
	}
	raw, _ = json.Marshal(tree)
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	resp.ContentLength = int64(len(raw))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// On the branch, a key's file that the tree says is over MaxFileBytes is refused, naming
// it and the limit, before its blob is fetched.
func TestGitRefusesAFileOverTheLimitBeforeFetchingIt(t *testing.T) {
	ctx := context.Background()
	srv := fakegithub.New()
	defer srv.Close()
	if err := gitStore(t, srv, nil).Update(ctx, entry("NVIDIA H200", "sm_90", "c0", 0)); err != nil {
		t.Fatal(err)
	}
	g, err := NewGit(ctx, GitOptions{Options: githubapi.Options{
		APIURL: srv.URL(), Token: srv.Token(), Repository: repo,
		HTTPClient: &http.Client{Transport: sizeLie{http.DefaultTransport.(*http.Transport).Clone()}, Timeout: 30 * time.Second},
		Sleep:      func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	}})
	if err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	for op, fn := range storeOps(g, h200(), entry("NVIDIA H200", "sm_90", "c1", 1)) {
		err := fn()
		if !errors.Is(err, input.ErrTooBig) || !strings.Contains(err.Error(), DefaultBranch+":"+h200().File()) || !strings.Contains(err.Error(), "32 MiB") {
			t.Errorf("%s: %v", op, err)
		}
	}
	for _, r := range srv.Requests()[before:] {
		if strings.Contains(r.Path, "/git/blobs") {
			t.Errorf("fetched a blob the tree says is too big: %s %s", r.Method, r.Path)
		}
	}
}

// Load of a result that is a FIFO is refused at once, named.
func TestLoadRefusesAFIFO(t *testing.T) {
	fifo := hangtest.FIFO(t, filepath.Join(t.TempDir(), "base.json"))
	err := hangtest.Within(t, 10*time.Second, "Load", func() error { _, err := Load(fifo); return err })
	if !errors.Is(err, input.ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
		t.Errorf("Load of a FIFO: %v", err)
	}
}
