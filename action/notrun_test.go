package action

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// The cause of a refusal is the caller's text (inputs quoted with %q, event fields, git's
// and the API's words): whatever it holds, the summary renders, as GitHub renders Markdown
// (GFM), to the bold line and one code block holding every line of the cause, nothing else.
func TestNotRunSummaryHoldsAnyCause(t *testing.T) {
	for _, tc := range []struct{ name, cause string }{
		{"fence", "input mode: \"gate```\" is not one of auto"},
		{"long fences", "a````b`````c``````d```````e"},
		{"fence on its own line", "first\n```\n<img src=x onerror=alert(1)>\n# heading"},
		{"carriage return", "first\r```\r<img src=x onerror=alert(1)>"},
		{"crlf", "first\r\n```\r\n**bold** <b>b</b>"},
		{"indented fence", "first\n   ```\n    ```\n<script>x</script>"},
		{"tildes", "first\n~~~\n<b>b</b>\n~~~"},
		{"line separators", "first\u2028```\u2029<b>b</b>\u0085```"},
		{"split fence", "``\u200b`\n`` `\n<b>b</b>"},
		{"nul", "a\x00```\x00<b>b</b>"},
		{"html", "</code></pre><b>b</b><!--"},
		{"long", strings.Repeat("```<b>b</b>\n", 40000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "summary")
			env := map[string]string{"GITHUB_STEP_SUMMARY": path}
			var log bytes.Buffer
			notRunSummary(func(k string) string { return env[k] }, &log, errors.New(tc.cause))
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v; log: %s", err, log.String())
			}
			var html bytes.Buffer
			if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert(raw, &html); err != nil {
				t.Fatal(err)
			}
			h := html.String()
			pre := strings.Index(h, "<pre><code>")
			end := strings.LastIndex(h, "</code></pre>")
			if !strings.HasPrefix(h, "<p><strong>kernel-gate could not run</strong> (the step fails):</p>\n") || pre < 0 || end < pre ||
				strings.Count(h, "<pre><code>") != 1 || strings.Contains(h[pre+len("<pre><code>"):end], "<") {
				t.Fatalf("rendered:\n%.3000s", h)
			}
			if rest := strings.TrimSpace(h[end+len("</code></pre>"):]); rest != "" && !(tc.name == "long" && strings.HasPrefix(rest, "<p>") && !strings.Contains(rest[3:], "<b>")) {
				t.Errorf("after the code block: %.300s", rest)
			}
		})
	}
}
