// Package browsertest runs pages in Debian's headless chromium for the tests that check
// what kernel-gate renders (the job summary, the trend page): finding the browser,
// running it with a time bound, keeping files for a look, and counting a screenshot's
// pixels. It is for tests only.
//
// Environment:
//
//	KG_CHROMIUM          the chromium binary (default: chromium or chromium-browser on PATH)
//	KG_BROWSER_REQUIRED  a missing browser (or other tool) fails the test instead of
//	                     skipping it; .ci/run sets it, so a broken install cannot pass
//	KG_BROWSER_KEEP      a directory to copy pages and screenshots to
package browsertest

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// Budget bounds each chromium run.
const Budget = 40 * time.Second

// Missing skips the test for what it lacks, or fails it when KG_BROWSER_REQUIRED is set.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("KG_BROWSER_REQUIRED") != "" {
		t.Fatal(msg + " (KG_BROWSER_REQUIRED is set)")
	}
	t.Skip(msg)
}

// Chromium is the chromium binary: KG_CHROMIUM, else chromium or chromium-browser on
// PATH; without one the test is skipped (Missing).
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("KG_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "no chromium: install Debian's (apt-get install chromium, as .ci/run does) or set KG_CHROMIUM to its binary")
	return ""
}

// Run runs headless chromium on the file page with args, in a profile of its own, killing
// its whole process group when it overruns Budget, and returns standard output.
func Run(t testing.TB, chromium, page string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--mute-audio",
		"--user-data-dir=" + t.TempDir()}, args...)
	cmd := procgroup.Command(ctx, nil, chromium, append(all, "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	procgroup.KillRest(cmd)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium %s ran past %s\n%s", strings.Join(args, " "), Budget, stderr.String())
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	t.Logf("chromium %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return stdout.String()
}

// Keep copies files into KG_BROWSER_KEEP, when set, for a look after the test.
func Keep(t testing.TB, files ...string) {
	t.Helper()
	dir := os.Getenv("KG_BROWSER_KEEP")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("kept %s", filepath.Join(dir, filepath.Base(f)))
	}
}

// Pixels counts a PNG screenshot's pixels: Ink are those not near white (a channel under
// 200), Colors[i] those within tol of colors[i] on every channel (8-bit RGB).
type Pixels struct {
	Total, Ink int
	Colors     []int
}

// CountPixels decodes the PNG at path and counts its pixels (Pixels).
func CountPixels(t testing.TB, path string, tol uint32, colors ...[3]uint32) Pixels {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	d := func(a, b uint32) uint32 { return max(a, b) - min(a, b) }
	b := img.Bounds()
	p := Pixels{Total: b.Dx() * b.Dy(), Colors: make([]int, len(colors))}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			if r < 200 || g < 200 || bl < 200 {
				p.Ink++
			}
			for i, c := range colors {
				if d(r, c[0]) < tol && d(g, c[1]) < tol && d(bl, c[2]) < tol {
					p.Colors[i]++
					break
				}
			}
		}
	}
	t.Logf("screenshot %s %dx%d: %.2f%% ink, colour counts %v", filepath.Base(path), b.Dx(), b.Dy(), 100*float64(p.Ink)/float64(p.Total), p.Colors)
	return p
}
