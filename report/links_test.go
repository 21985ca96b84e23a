package report

import (
	"bytes"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// evilURLs is what GitHub's markdown links by itself though nobody wrote a link (GFM's
// autolinks), in the forms an untrusted result can carry them.
var evilURLs = []string{"https://evil.example/x", "http://evil.example", "HTTPS://EVIL.EXAMPLE/Y", "ftp://evil.example/f",
	"www.evil.example/x", "WWW.EVIL.EXAMPLE", "mailto:a@evil.example", "xmpp:a@evil.example", "a@evil.example",
	"(https://evil.example/p)", "*https://evil.example/e*", "_www.evil.example_", "~https://evil.example/s~"}

var hrefRE = regexp.MustCompile(`<a\s[^>]*href="([^"]*)"`)

// TestUntrustedURLsAreNotLinks: a URL in a kernel's name, a message, a file's path, a gate's
// name, a table's cell, the tool or the replay note was a link on GitHub (GFM autolinks
// bare URLs and www. forms). Rendered as GitHub renders markdown (goldmark's GFM, whose
// Linkify is GitHub's autolink extension), the summary's only links are those kernel-gate
// makes: the artifacts and the trend page; the URLs still read as text.
func TestUntrustedURLsAreNotLinks(t *testing.T) {
	evil := strings.Join(evilURLs, " ")
	g := result.Gate{Name: "guard " + evil, Summary: evil + "\nsecond line " + evil,
		Findings: []result.Finding{
			{Severity: result.Error, Kernel: evil, Arch: evil, Metric: evil, File: "https://evil.example/f.cu", Line: 3, Message: evil},
			{Severity: result.Warning, Kernel: "k", File: "www.evil.example/a.cu", Message: "at " + evil},
			{Severity: result.Notice, Message: evil},
		},
		Table: &result.Table{Columns: []string{evil, "b"}, Rows: []result.Row{{Status: result.Fail, Cells: []string{evil, evil}}}},
	}
	g.Decide(true)
	speed := result.Gate{Name: "speedup", Verdict: result.Fail}
	if err := speed.SetData(map[string]any{"comparisons": []map[string]any{
		{"kernel": evil, "shape": evil, "verdict": "slower", "ratio": 1.5, "ci_low": 1.2, "ci_high": 1.8, "rounds": 32},
	}}); err != nil {
		t.Fatal(err)
	}
	r := result.New("kernel-gate "+evil, g, speed)
	r.Replay = evil
	h := trend.FromEntries(baseline.Key{GPU: "GPU " + evil, Arch: "sm_90"}, []baseline.Entry{{
		Commit: "c0ffee " + evil, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Replay: evil,
		Kernels: []baseline.Kernel{{Name: evil, Arch: "sm_90a", Ptxas: &ptxas.Kernel{Name: evil, Registers: i64(40)}}},
		Timings: []baseline.Timing{{Target: evil, Kernel: evil, Shape: evil, MedianUs: f64(1.5)}},
	}})
	const artifacts, trendPage = "https://github.com/o/r/actions/runs/1", "https://o.github.io/r/trend.html"
	full := ""
	for _, limit := range []int{0, 2000} {
		var buf bytes.Buffer
		if err := Render(&buf, r, Markdown, Options{ArtifactsURL: artifacts, Trend: &Trend{History: h, URL: trendPage}, Limit: limit}); err != nil {
			t.Fatal(err)
		}
		page := githubHTML(t, buf.String())
		var links []string
		for _, m := range hrefRE.FindAllStringSubmatch(page, -1) {
			links = append(links, html.UnescapeString(m[1]))
		}
		slices.Sort(links)
		links = slices.Compact(links)
		want := []string{artifacts}
		if limit == 0 {
			want = append(want, trendPage)
			full = page
		}
		if !slices.Equal(links, want) {
			t.Errorf("limit %d: links %q, want only kernel-gate's own %q\n%s", limit, links, want, buf.String())
		}
	}
	// The text is still there to read.
	text := strings.ReplaceAll(html.UnescapeString(full), "\u200b", "")
	for _, u := range evilURLs {
		if !strings.Contains(text, strings.Trim(u, "()*_~")) {
			t.Errorf("the summary no longer shows %q", u)
		}
	}
}

// TestUnlink: what unlink breaks, and what it leaves alone.
func TestUnlink(t *testing.T) {
	for in, want := range map[string]string{
		"https://x":            "https\u200b://x",
		"HTTP://X and ftp://y": "HTTP\u200b://X and ftp\u200b://y",
		"www.x.org":            "www\u200b.x.org",
		"WwW.x":                "WwW\u200b.x",
		"mailto:a@b":           "mailto\u200b:a@b",
		"XMPP:a@b":             "XMPP\u200b:a@b",
		"a://b://c":            "a\u200b://b\u200b://c",
		"plain: text. 1.5x":    "plain: text. 1.5x",
		// Issue references: in a pull-request comment each also puts a "mentioned this"
		// event, by kernel-gate's identity, on the issue of the repository it names.
		"see #12 and octo-org/other#7": "see #\u200b12 and octo-org/other#\u200b7",
		"GH-3, gh-45":                  "GH-\u200b3, gh-\u200b45",
		"k#x, sm-90, a-1, #":           "k#x, sm-90, a-1, #",
		"kg::flash_fwd<64>":            "kg::flash_fwd<64>",
		"":                             "",
	} {
		if got := unlink(in); got != want {
			t.Errorf("unlink(%q) = %q, want %q", in, got, want)
		}
	}
}
