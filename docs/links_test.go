// Package docs holds no code: its tests check that what the pages say holds in the tree:
// the Markdown of README.md and docs/ (a page moved or a heading renamed cannot leave a link
// or a package path pointing nowhere), the threat model's tests and decisions, and the
// Makefile's list of fuzz targets.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// pages are the Markdown files whose links must resolve: the front page, every page of
// docs/ and the READMEs of testdata/.
func pages(t *testing.T) []string {
	t.Helper()
	var all []string
	for _, glob := range []string{"../README.md", "*.md", "../testdata/README.md", "../testdata/*/README.md"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, m...)
	}
	if len(all) < 10 {
		t.Fatalf("found only %d Markdown pages: %v", len(all), all)
	}
	return all
}

var (
	fence    = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	link     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	heading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// prose returns a page's lines outside fenced code blocks, where links and headings are
// Markdown and not a shell comment or a YAML key, by their 1-based line number.
func prose(raw string) map[int]string {
	out := map[int]string{}
	in := false
	for i, line := range strings.Split(raw, "\n") {
		if fence.MatchString(line) {
			in = !in
			continue
		}
		if !in {
			out[i+1] = line
		}
	}
	return out
}

// anchors returns the fragment GitHub gives each heading of a page: lower case, spaces to
// hyphens, punctuation other than '-' and '_' dropped, a repeated one suffixed -1, -2, ...
func anchors(raw string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	lines := prose(raw)
	for n := 1; n <= strings.Count(raw, "\n")+1; n++ {
		line, ok := lines[n]
		if !ok {
			continue
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := linkText.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

// Every relative link of README.md, docs/*.md and testdata's READMEs names a file or
// directory of the repository, and its fragment a heading of that page.
func TestRelativeLinksResolve(t *testing.T) {
	cache := map[string]map[string]bool{}
	headings := func(path string) map[string]bool {
		if h, ok := cache[path]; ok {
			return h
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cache[path] = anchors(string(raw))
		return cache[path]
	}
	checked := 0
	for _, page := range pages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range prose(string(raw)) {
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), file)
				}
				checked++
				info, err := os.Stat(dest)
				if err != nil {
					t.Errorf("%s: line %d links %q: no such file", page, n, target)
					continue
				}
				if frag == "" {
					continue
				}
				if info.IsDir() || !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s: line %d links %q: a fragment of what is not a Markdown page", page, n, target)
					continue
				}
				if !headings(dest)[frag] {
					t.Errorf("%s: line %d links %q: %s has no heading #%s", page, n, target, dest, frag)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d relative links: the pattern lost them", checked)
	}
}

// A path of this repository's Go code that the pages name in backquotes (`action/stageb.go`,
// `internal/githubapi`) exists: the layout of commit 4eca390 moved most packages, and a page
// that still says action/ghaction sends a reader nowhere. docs/live-checks.md is a dated log
// of what was true then.
func TestCodePathsExist(t *testing.T) {
	path := regexp.MustCompile("`((?:action|cli|cmd|config|pipeline|report|baseline|gates|internal)/[A-Za-z0-9_./-]*)`")
	for _, page := range pages(t) {
		if filepath.Base(page) == "live-checks.md" {
			continue
		}
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range path.FindAllStringSubmatch(string(raw), -1) {
			if _, err := os.Stat(filepath.Join("..", strings.TrimSuffix(m[1], "/"))); err != nil {
				t.Errorf("%s names `%s`, which is not in the repository", page, m[1])
			}
		}
	}
}
