//go:build unix

package toolkit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// fakeTool writes an executable shell script into a fresh temporary directory.
func fakeTool(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// realNVCC is the real `nvcc --version` banner (testdata/cuda13-h200/versions.txt).
func realNVCC(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoTestdata + "/cuda13-h200/versions.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	return strings.Join(lines[:5], "")
}

func TestFromNVCC(t *testing.T) {
	nvcc := fakeTool(t, "nvcc", "[ \"$1\" = --version ] || exit 3\ncat <<'EOF'\n"+realNVCC(t)+"EOF\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := FromNVCC(ctx, nvcc)
	if err != nil {
		t.Fatalf("FromNVCC: %v", err)
	}
	if v.Semver.String() != "13.0.88" || v.Raw != raw88 || v.Source != nvcc+" --version" {
		t.Errorf("FromNVCC = %s %q %q", v.Semver, v.Raw, v.Source)
	}
}

func TestFromNVCCOnPath(t *testing.T) {
	nvcc := fakeTool(t, "nvcc", "cat <<'EOF'\n"+realNVCC(t)+"EOF\n")
	t.Setenv("PATH", filepath.Dir(nvcc)+string(os.PathListSeparator)+os.Getenv("PATH"))
	v, err := FromNVCC(context.Background(), "")
	if err != nil {
		t.Fatalf("FromNVCC: %v", err)
	}
	if v.Semver.String() != "13.0.88" || v.Source != "nvcc --version" {
		t.Errorf("FromNVCC = %s from %q", v.Semver, v.Source)
	}
}

func TestFromNVCCMissing(t *testing.T) {
	t.Run("path", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "cuda", "bin", "nvcc")
		_, err := FromNVCC(context.Background(), missing)
		if err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("FromNVCC(%q) error = %v", missing, err)
		}
	})
	t.Run("name", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := FromNVCC(context.Background(), "kernel-gate-no-such-nvcc")
		if err == nil || !strings.Contains(err.Error(), "kernel-gate-no-such-nvcc") || !errors.Is(err, exec.ErrNotFound) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("not executable", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nvcc")
		if err := os.WriteFile(path, []byte("not a program"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := FromNVCC(context.Background(), path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("error = %v", err)
		}
	})
}

func TestFromNVCCBadOutput(t *testing.T) {
	tests := []struct {
		name, body, want string
		noVersion        bool
	}{
		{"exit status", "echo 'nvcc fatal   : Unknown option' >&2\nexit 1\n", "nvcc fatal   : Unknown option", false},
		{"silent exit status", "exit 7\n", "exit status 7", false},
		{"not nvcc", "echo 'Version 2025.3.1.0 (build 36400806) (public-release)'\n", "Version 2025.3.1.0", true},
		{"driver only", "echo '| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |'\n", "driver's CUDA version", true},
		{"nothing", "", "empty output", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nvcc := fakeTool(t, "nvcc", tt.body)
			_, err := FromNVCC(context.Background(), nvcc)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), nvcc) {
				t.Fatalf("error = %v, want one naming %s and %q", err, nvcc, tt.want)
			}
			if errors.Is(err, ErrNoVersion) != tt.noVersion {
				t.Errorf("errors.Is(ErrNoVersion) = %v", !tt.noVersion)
			}
		})
	}
}

func TestFromNVCCHangs(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// The script and a child it waits for, both holding stdout, both recorded.
	nvcc := fakeTool(t, "nvcc", "sleep 300 &\necho $$ $! >"+pids+".tmp\nmv "+pids+".tmp "+pids+"\nwait\n")
	// 2 s, so that even a loaded machine's shell has started its child and written the pids
	// before the deadline (at 300 ms it sometimes had not).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := FromNVCC(ctx, nvcc)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), nvcc) {
		t.Errorf("error = %v, want DeadlineExceeded naming %s", err, nvcc)
	}
	// The whole group was killed, the child holding stdout included: a kill of the script
	// alone would leave the sleep running (and FromNVCC waiting waitDelay for its pipe).
	hangtest.WaitGone(t, pids)
}

func TestFromNVCCCancelled(t *testing.T) {
	nvcc := fakeTool(t, "nvcc", "exec sleep 300\n")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := FromNVCC(ctx, nvcc)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want Canceled", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("returned after %v", d)
	}
	// Already done: nothing is started.
	if _, err := FromNVCC(ctx, nvcc); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: error = %v", err)
	}
}

// TestFromNVCCFloods checks that endless output neither grows memory without bound nor
// outlives the context.
func TestFromNVCCFloods(t *testing.T) {
	nvcc := fakeTool(t, "nvcc", "exec yes 'Copyright (c) 2005-2025 NVIDIA Corporation'\n")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := FromNVCC(ctx, nvcc); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("returned after %v", d)
	}
}

func TestCapped(t *testing.T) {
	c := &capped{max: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if c.String() != "abcde" {
		t.Errorf("kept %q", c.String())
	}
}
