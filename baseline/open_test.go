package baseline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	for _, c := range []struct{ in, file string }{
		{"NVIDIA H200 (sm_90)", "nvidia-h200.sm_90.json"},
		{"  NVIDIA H100 80GB HBM3 (sm_90) ", "nvidia-h100-80gb-hbm3.sm_90.json"},
		{"nvidia-h200.sm_90", "nvidia-h200.sm_90.json"},
		{"nvidia-l4.sm_89.json", "nvidia-l4.sm_89.json"},
		{"NVIDIA RTX (Ada) 6000 (sm_89)", "nvidia-rtx-ada-6000.sm_89.json"},
	} {
		k, err := ParseKey(c.in)
		if err != nil || k.File() != c.file {
			t.Errorf("ParseKey(%q) = %v (%s), %v; want %s", c.in, k, k.File(), err, c.file)
		}
	}
	for _, in := range []string{"", "NVIDIA H200", "nvidia-h200.sm_9x", "(sm_90)", "x.json"} {
		if k, err := ParseKey(in); err == nil {
			t.Errorf("ParseKey(%q) = %v, want an error", in, k)
		}
	}
}

func TestOpenAndCheckBranch(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "git")
	s, err := Open(ctx, " "+dir+" ", GitOptions{Keep: 3})
	if d, ok := s.(*Dir); err != nil || !ok || d.keep != 3 || d.path != dir {
		t.Errorf("a directory: %#v %v", s, err)
	}
	if _, err := Open(ctx, "git", GitOptions{}); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("git without a token: %v", err)
	}
	if _, err := Open(ctx, "  ", GitOptions{}); err == nil {
		t.Error("no store named")
	}
	for _, b := range []string{DefaultBranch, "perf/baseline", "refs/heads/kg"} {
		if err := CheckBranch(b); err != nil {
			t.Errorf("CheckBranch(%q) = %v", b, err)
		}
	}
	for _, b := range []string{"", "a..b", "a b", "x.lock", "/x", "refs/heads/", "a~1"} {
		if err := CheckBranch(b); err == nil {
			t.Errorf("CheckBranch(%q) accepted", b)
		}
	}
}

// The newest comparable entry is chosen, and every newer one passed over is kept with why.
func TestNewestComparable(t *testing.T) {
	ctx := context.Background()
	d := NewDir(t.TempDir(), 0)
	k := h200()
	if ch, err := NewestComparable(ctx, d, k, Constraints{CUDA: "~13.0"}); err != nil || ch.Entries != 0 || ch.Entry != nil {
		t.Fatalf("empty: %+v %v", ch, err)
	}
	for i, cuda := range []string{"13.0.48", "13.0.88", "13.1.20", ""} {
		e := entry("NVIDIA H200", "sm_90", "c"+cuda, i)
		e.Fingerprint.CUDA = cuda
		if err := d.Update(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := NewestComparable(ctx, d, k, Constraints{CUDA: "~13.0"})
	if err != nil || ch.Entries != 4 || ch.Entry == nil || ch.Entry.Commit != "c13.0.88" || len(ch.Passed) != 2 ||
		!strings.Contains(ch.Passed[0].Why, "records no CUDA toolkit version") || !strings.Contains(ch.Passed[1].Why, "13.1.20, outside") ||
		!strings.Contains(ch.Why, `13.0.88 satisfies baseline.compatible_cuda "~13.0"`) {
		t.Errorf("choice %+v %v", ch, err)
	}
	ch, err = NewestComparable(ctx, d, k, Constraints{CUDA: "~12.8"})
	if err != nil || ch.Entry != nil || len(ch.Passed) != 4 {
		t.Errorf("none comparable: %+v %v", ch, err)
	}
	if ch, _ := NewestComparable(ctx, d, k, Constraints{}); ch.Entry == nil || ch.Entry.Commit != "c" || len(ch.Passed) != 0 {
		t.Errorf("no constraint: the newest: %+v", ch)
	}
}
