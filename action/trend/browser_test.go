package trend

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// The browser check: the trend page of the fixture store and of hostile entries, loaded in
// Debian's headless chromium as a file (no server), must show every chart, draw each, run
// no script and show a screenshot that is not blank. .ci/run installs chromium; elsewhere
// the test says what it lacks and skips, unless KG_BROWSER_REQUIRED is set (CI sets it).
//
//	KG_CHROMIUM     the chromium binary (default: chromium or chromium-browser on PATH)
//	KG_BROWSER_KEEP a directory to copy the page and the screenshot to

const browserBudget = 40 * time.Second

func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KG_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium: install Debian's (apt-get install chromium, as .ci/run does) or set KG_CHROMIUM to its binary"
	if os.Getenv("KG_BROWSER_REQUIRED") != "" {
		t.Fatal(msg + " (KG_BROWSER_REQUIRED is set)")
	}
	t.Skip(msg)
	return ""
}

// chromium runs headless chromium on page with args in its own profile, killing its
// process group when it overruns, and returns standard output.
func chromium(t *testing.T, bin, page string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserBudget)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--no-default-browser-check", "--hide-scrollbars", "--mute-audio", "--user-data-dir=" + t.TempDir(),
		"--virtual-time-budget=3000"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, "file://"+page)...)
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	procgroup.KillRest(cmd)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium ran past %s\n%s", browserBudget, stderr.String())
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

var chartRE = regexp.MustCompile(`(?s)<svg class="chart"[^>]*>(.*?)</svg>`)

func TestBrowserTrendPage(t *testing.T) {
	bin := findChromium(t)
	t.Parallel()
	hs, err := Load(context.Background(), fixtureStore(t, fixture()), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	hs = append(hs, FromEntries(baseline.Key{GPU: "NVIDIA <H200>", Arch: "sm_90"}, hostile()))
	var b bytes.Buffer
	if err := WriteHTML(&b, hs, PageOptions{Source: "<script>alert(6)</script>"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "trend.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "trend.png")
	dom := chromium(t, bin, page, "--dump-dom", "--screenshot="+shot, "--window-size=1280,4800")

	want := strings.Count(b.String(), `<svg class="chart"`)
	charts := chartRE.FindAllStringSubmatch(dom, -1)
	if want == 0 || len(charts) != want {
		t.Fatalf("%d charts in the DOM, %d in the page", len(charts), want)
	}
	for i, c := range charts {
		if !strings.Contains(c[1], "<circle") && !strings.Contains(c[1], `class="nonfinite"`) || !strings.Contains(c[1], `class="ytick"`) {
			t.Errorf("chart %d has no point or no axis:\n%.600s", i, c[1])
		}
	}
	if strings.Contains(dom, "<script") || strings.Contains(dom, "<img") || strings.Contains(dom, "<iframe") {
		t.Error("an element from an entry's name is in the DOM")
	}
	for _, text := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "NVIDIA &lt;H200&gt;", "kg::flash_fwd&lt;64, 64, false&gt;"} {
		if !strings.Contains(dom, text) {
			t.Errorf("the DOM lacks the text %q", text)
		}
	}
	checkShot(t, shot)
	if keep := os.Getenv("KG_BROWSER_KEEP"); keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{page, shot} {
			if raw, err := os.ReadFile(f); err == nil {
				_ = os.WriteFile(filepath.Join(keep, filepath.Base(f)), raw, 0o644)
			}
		}
	}
}

// checkShot decodes the screenshot and checks that it is not blank and that the charts'
// first two series colours (.s0 blue, .s1 orange) are drawn.
func checkShot(t *testing.T, path string) {
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
	near := func(r, g, b uint32, want [3]uint32) bool {
		d := func(a, b uint32) uint32 { return max(a, b) - min(a, b) }
		return d(r, want[0]) < 16 && d(g, want[1]) < 16 && d(b, want[2]) < 16
	}
	bounds := img.Bounds()
	var ink, blue, orange int
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			if r < 200 || g < 200 || b < 200 {
				ink++
			}
			switch {
			case near(r, g, b, [3]uint32{0x09, 0x69, 0xda}):
				blue++
			case near(r, g, b, [3]uint32{0xbc, 0x4c, 0x00}):
				orange++
			}
		}
	}
	total := bounds.Dx() * bounds.Dy()
	t.Logf("screenshot %dx%d: %.2f%% ink, %d blue and %d orange pixels", bounds.Dx(), bounds.Dy(), 100*float64(ink)/float64(total), blue, orange)
	if ink < total/200 {
		t.Errorf("the screenshot is blank: %d of %d pixels are not white", ink, total)
	}
	if blue < 500 || orange < 200 {
		t.Errorf("the series are not drawn: %d blue and %d orange pixels", blue, orange)
	}
}
