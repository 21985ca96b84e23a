package report

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/kernel-gate/kernel-gate/internal/browsertest"
	"github.com/kernel-gate/kernel-gate/internal/needtool"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The browser check: the job summary of a real recorded run, rendered to HTML as GitHub
// renders markdown (GFM, with its <details>, <summary> and <sub>), its mermaid blocks drawn
// by the Mermaid library, in Debian's headless chromium. .ci/run installs both; elsewhere
// the test says what it lacks and skips, unless KG_REQUIRE_TOOLS is set (CI sets it, so
// that a broken install fails instead of passing silently: internal/needtool).
//
//	KG_CHROMIUM    the chromium binary (default: chromium or chromium-browser on PATH)
//	KG_MERMAID_JS  mermaid's dist/mermaid.min.js (npm pack mermaid@11)
//	KG_BROWSER_KEEP a directory to copy the page and the screenshot to (the test's own
//	               temporary directory is removed when it ends)

func browserTools(t *testing.T) (chromium, mermaidJS string) {
	t.Helper()
	chromium = browsertest.Chromium(t)
	mermaidJS = os.Getenv("KG_MERMAID_JS")
	if mermaidJS == "" {
		needtool.Missing(t, "KG_MERMAID_JS is not set: point it at mermaid's dist/mermaid.min.js (.ci/run gets it with npm pack mermaid@11)")
	}
	if fi, err := os.Stat(mermaidJS); err != nil || fi.Size() == 0 {
		needtool.Missing(t, "KG_MERMAID_JS="+mermaidJS+": no such file (.ci/run gets it with npm pack mermaid@11)")
	}
	return chromium, mermaidJS
}

// mermaidBlocks renders fenced code as GitHub does, except that a mermaid block becomes the
// <pre class="mermaid"> that the Mermaid library draws in place.
type mermaidBlocks struct{}

func (mermaidBlocks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		fb := n.(*ast.FencedCodeBlock)
		open, end := "<pre><code>", "</code></pre>\n"
		if string(fb.Language(src)) == "mermaid" {
			open, end = `<pre class="mermaid">`, "</pre>\n"
		}
		w.WriteString(open)
		for i := 0; i < fb.Lines().Len(); i++ {
			seg := fb.Lines().At(i)
			w.WriteString(html.EscapeString(string(seg.Value(src))))
		}
		w.WriteString(end)
		return ast.WalkSkipChildren, nil
	})
}

// githubHTML renders markdown as GitHub does: GFM (tables, strikethrough, autolinks, task
// lists) with the raw HTML it allows passed through.
func githubHTML(t *testing.T, markdown string) string {
	t.Helper()
	gm := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(gmhtml.WithUnsafe(), renderer.WithNodeRenderers(util.Prioritized(mermaidBlocks{}, 100))),
	)
	var b bytes.Buffer
	if err := gm.Convert([]byte(markdown), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The page: GitHub's look for tables, every <details> opened (so that the screenshot shows
// every table), Mermaid run on the blocks, and when it is done the page's height and the
// outcome in attributes of <body> that --dump-dom shows.
const pageHead = `<!doctype html>
<html><head><meta charset="utf-8"><title>kernel-gate summary</title>
<style>
body { font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; font-size: 14px;
       line-height: 1.5; color: #1f2328; background: #fff; margin: 16px; max-width: 1180px; }
table { border-collapse: collapse; margin: 8px 0 16px; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; background: #f6f8fa; }
tr:nth-child(2n) { background: #f6f8fa; }
blockquote { color: #59636e; border-left: .25em solid #d1d9e0; margin: 0; padding: 0 1em; }
pre.mermaid { background: #fff; }
</style></head><body>
`

const pageTail = `
<script src="mermaid.min.js"></script>
<script>
document.querySelectorAll("details").forEach(d => { d.open = true; });
const done = (state) => {
  document.body.setAttribute("data-mermaid", state);
  document.body.setAttribute("data-height", String(document.documentElement.scrollHeight));
};
try {
  mermaid.initialize({startOnLoad: false, securityLevel: "strict"});
  mermaid.run({querySelector: "pre.mermaid"}).then(() => done("done"), (e) => done("error: " + e));
} catch (e) { done("error: " + e); }
</script>
</body></html>
`

// writePage writes the page for markdown and mermaid.min.js beside it; it returns the
// page's path and its HTML body.
func writePage(t *testing.T, dir, markdown, mermaidJS string) (string, string) {
	t.Helper()
	js, err := os.ReadFile(mermaidJS)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mermaid.min.js"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	body := githubHTML(t, markdown)
	page := filepath.Join(dir, "summary.html")
	if err := os.WriteFile(page, []byte(pageHead+body+pageTail), 0o644); err != nil {
		t.Fatal(err)
	}
	return page, body
}

var (
	tableRE   = regexp.MustCompile(`(?s)<table>.*?</table>`)
	thRE      = regexp.MustCompile(`(?s)<th[^>]*>(.*?)</th>`)
	tagRE     = regexp.MustCompile(`<[^>]*>`)
	mermaidRE = regexp.MustCompile(`(?s)<pre class="mermaid"[^>]*>(.*?)</pre>`)
	heightRE  = regexp.MustCompile(`data-height="(\d+)"`)
	textRE    = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)
)

// headers is the text of each table's header cells, one string per table.
func headers(htmlText string) []string {
	var out []string
	for _, tb := range tableRE.FindAllString(htmlText, -1) {
		var cells []string
		for _, m := range thRE.FindAllStringSubmatch(tb, -1) {
			cells = append(cells, strings.TrimSpace(html.UnescapeString(tagRE.ReplaceAllString(m[1], ""))))
		}
		out = append(out, strings.Join(cells, " | "))
	}
	return out
}

// checkDOM checks the DOM chromium dumped against the HTML of the page: Mermaid finished,
// every table is there with its header, every mermaid block became an <svg>, and no script
// but the page's own.
func checkDOM(t *testing.T, dom, body string) {
	t.Helper()
	if !strings.Contains(dom, `data-mermaid="done"`) {
		m := regexp.MustCompile(`data-mermaid="[^"]*"`).FindString(dom)
		t.Fatalf("Mermaid did not finish: %q", m)
	}
	want, got := headers(body), headers(dom)
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d tables in the DOM, want %d:\n%q\n%q", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("table %d has header %q in the DOM, want %q", i, got[i], want[i])
		}
	}
	blocks := mermaidRE.FindAllStringSubmatch(dom, -1)
	if len(blocks) != strings.Count(body, `<pre class="mermaid">`) || len(blocks) == 0 {
		t.Fatalf("%d mermaid blocks in the DOM, %d in the page", len(blocks), strings.Count(body, `<pre class="mermaid">`))
	}
	for i, b := range blocks {
		if !strings.Contains(b[1], "<svg") || strings.Contains(b[1], "Syntax error") || !strings.Contains(b[1], "<rect") {
			t.Errorf("mermaid block %d did not render to a chart:\n%.2000s", i, b[1])
		}
	}
	if n := strings.Count(dom, "<script"); n != 2 {
		t.Errorf("%d <script> elements in the DOM, want the page's 2", n)
	}
}

// checkScreenshot decodes the PNG and checks that it is not blank and that the chart's
// bars are drawn in base's grey and head's blue.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	p := browsertest.CountPixels(t, path, 12, [3]uint32{0x8c, 0x95, 0x9f}, [3]uint32{0x09, 0x69, 0xda})
	grey, blue := p.Colors[0], p.Colors[1]
	if p.Ink < p.Total/100 {
		t.Errorf("the screenshot is blank: %d of %d pixels are not white", p.Ink, p.Total)
	}
	if grey < 2000 || blue < 2000 {
		t.Errorf("the chart's bars are not drawn: %d grey (base) and %d blue (head) pixels, want 2000 each", grey, blue)
	}
}

// TestBrowserSummary renders the summary of the recorded slow5 run (head 2.3–5.8% slower) in
// headless chromium: every table and the chart must be there, and the screenshot must show
// them. The screenshot's path is logged (go test -v) for a look.
func TestBrowserSummary(t *testing.T) {
	chromium, mermaidJS := browserTools(t)
	t.Parallel()
	var md bytes.Buffer
	if err := Render(&md, readReplay(t, "slow5"), Markdown, Options{ArtifactsURL: "https://github.com/o/r/actions/runs/1#artifacts"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page, body := writePage(t, dir, md.String(), mermaidJS)
	// One run dumps the DOM and takes the screenshot; a page taller than the window is
	// shot again at its height.
	shot := filepath.Join(dir, "summary.png")
	const window = 8000
	dom := browsertest.Run(t, chromium, page, "--virtual-time-budget=5000", "--dump-dom", "--screenshot="+shot, "--window-size=1220,"+strconv.Itoa(window))
	checkDOM(t, dom, body)
	labels := chartTexts(dom)
	for _, label := range []string{"flash_fwd_causal × mission: head +6.0%", "flash_fwd × long: base", "kernel × shape"} {
		if !slices.Contains(labels, label) {
			t.Errorf("the chart lacks the label %q; its texts:\n%q", label, labels)
		}
	}
	if m := heightRE.FindStringSubmatch(dom); m != nil {
		if h, _ := strconv.Atoi(m[1]); h > window {
			browsertest.Run(t, chromium, page, "--virtual-time-budget=5000", "--screenshot="+shot, "--window-size=1220,"+strconv.Itoa(min(h+40, 16000)))
		}
	}
	checkScreenshot(t, shot)
	t.Logf("screenshot: %s", shot)
	keep(t, page, shot)
}

// TestBrowserHostileChart draws a chart whose kernel names try to end the Mermaid string,
// the list, the line and the code fence and to inject a script and a directive: the chart
// must still render, with the names as text.
func TestBrowserHostileChart(t *testing.T) {
	chromium, mermaidJS := browserTools(t)
	t.Parallel()
	var md bytes.Buffer
	if err := Render(&md, hostileSpeedResult(t), Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	page, body := writePage(t, t.TempDir(), md.String(), mermaidJS)
	dom := browsertest.Run(t, chromium, page, "--virtual-time-budget=5000", "--dump-dom")
	checkDOM(t, dom, body)
	texts := chartTexts(dom)
	// The names as hostileSpeedResult gives them, cleaned (and shortened) as the chart does.
	for _, label := range []string{"\"] <i> × s`: head −20.0%", chartName(hostileKernel, "s`]\r\n%%") + ": head +25.0%"} {
		if !slices.Contains(texts, label) {
			t.Errorf("the chart lacks the label %q as text; its texts:\n%q", label, texts)
		}
	}
	if svg := mermaidRE.FindString(dom); strings.Contains(svg, "<i>") {
		t.Errorf("a name's markup became an element of the chart:\n%s", svg)
	}
}

// keep copies the page, its screenshot and the Mermaid library beside them into
// KG_BROWSER_KEEP, when set.
func keep(t *testing.T, files ...string) {
	browsertest.Keep(t, append(files, filepath.Join(filepath.Dir(files[0]), "mermaid.min.js"))...)
}

// chartTexts is the text of every <text> of the first chart in dom.
func chartTexts(dom string) []string {
	var texts []string
	for _, m := range textRE.FindAllStringSubmatch(mermaidRE.FindString(dom), -1) {
		texts = append(texts, html.UnescapeString(m[1]))
	}
	return texts
}

// readReplay reads the result of the recorded run testdata/replay/NAME.
func readReplay(t testing.TB, name string) result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "replay", name, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
