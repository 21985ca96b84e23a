package trend

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/browsertest"
)

// The browser check: the trend page of the fixture store and of hostile entries, loaded in
// Debian's headless chromium as a file (no server), must show every chart, draw each, run
// no script and show a screenshot that is not blank (internal/browsertest says which
// environment it reads; .ci/run installs chromium and requires it).

var chartRE = regexp.MustCompile(`(?s)<svg class="chart"[^>]*>(.*?)</svg>`)

func TestBrowserTrendPage(t *testing.T) {
	bin := browsertest.Chromium(t)
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
	dom := browsertest.Run(t, bin, page, "--virtual-time-budget=3000", "--dump-dom", "--screenshot="+shot, "--window-size=1280,4800")

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
	browsertest.Keep(t, page, shot)
}

// checkShot decodes the screenshot and checks that it is not blank and that the charts'
// first two series colours (.s0 blue, .s1 orange) are drawn.
func checkShot(t *testing.T, path string) {
	t.Helper()
	p := browsertest.CountPixels(t, path, 16, [3]uint32{0x09, 0x69, 0xda}, [3]uint32{0xbc, 0x4c, 0x00})
	blue, orange := p.Colors[0], p.Colors[1]
	if p.Ink < p.Total/200 {
		t.Errorf("the screenshot is blank: %d of %d pixels are not white", p.Ink, p.Total)
	}
	if blue < 500 || orange < 200 {
		t.Errorf("the series are not drawn: %d blue and %d orange pixels", blue, orange)
	}
}
