package report

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/repopath"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// raceRoot is the checkout the race recording was made in: its findings name files relative
// to it, its sanitizer records by their absolute paths under it.
const raceRoot = "/tmp/tmp.lxz0v7y59n/repo"

func readRace(t *testing.T) result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "replay", "race", "result.json"))
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

// TestSARIFGolden renders a real recorded result: the race case, whose sanitizer gate
// fails with a racecheck error at kernels/flash_fwd.cu:190 (its golden file,
// testdata/golden/race/report.sarif, is TestReplayGolden's).
func TestSARIFGolden(t *testing.T) {
	r := readRace(t)
	var buf bytes.Buffer
	if err := Render(&buf, r, SARIF, Options{Root: raceRoot}); err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, buf.Bytes(), r, Options{Root: raceRoot})

	// The racecheck error is located where the sanitizer found it, relative to the checkout.
	var log map[string]any
	json.Unmarshal(buf.Bytes(), &log)
	found := false
	for _, res := range dig(log, "runs", 0, "results").([]any) {
		if dig(res, "ruleId") == "sanitizer/racecheck/race-raw" && dig(res, "level") == "error" &&
			dig(res, "locations", 0, "physicalLocation", "artifactLocation", "uri") == "kernels/flash_fwd.cu" &&
			dig(res, "locations", 0, "physicalLocation", "region", "startLine") == 190.0 {
			found = true
		}
	}
	if !found {
		t.Error("no error result for the race at kernels/flash_fwd.cu:190")
	}
}

func TestSARIFDeterministic(t *testing.T) {
	for _, r := range []result.Result{readRace(t), sampleResult(t), hostileResult(), emptyResult(), wideResult()} {
		var a, b bytes.Buffer
		if err := Render(&a, r, SARIF, Options{Root: raceRoot}); err != nil {
			t.Fatal(err)
		}
		Render(&b, r, SARIF, Options{Root: raceRoot})
		if a.String() != b.String() {
			t.Error("two renderings differ")
		}
		validateSARIF(t, a.Bytes(), r, Options{Root: raceRoot})
	}
}

func TestSARIFEmpty(t *testing.T) {
	var buf bytes.Buffer
	Render(&buf, emptyResult(), SARIF, Options{})
	for _, want := range []string{`"rules": []`, `"results": []`, `"version": "0.1.0-dev"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %s in\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "originalUriBaseIds") {
		t.Error("originalUriBaseIds without a root")
	}
}

// TestSARIFLocations: every result is located in the repository (GitHub code scanning
// shows no result without a location): at its file, relative to the checkout, or, for a
// finding without a file or with one that leaves the repository or would display as
// another's, at line 1 of the fallback (kernel-gate.yml by default), the path named in the
// message, escaped.
func TestSARIFLocations(t *testing.T) {
	tests := []struct {
		name, file, root, fallback string
		line, col                  int
		uri                        string
		region                     string
		msg                        string // the message's text, when the path is refused
	}{
		{name: "under the root", file: "/w/repo/kernels/a.cu", root: "/w/repo", line: 3, col: 9,
			uri: "kernels/a.cu", region: `{"startColumn":9,"startLine":3}`},
		{name: "root with a trailing slash", file: "/w/repo/a.cu", root: "/w/repo/", line: 3,
			uri: "a.cu", region: `{"startLine":3}`},
		{name: "relative", file: "./kernels/../kernels/a.cu", line: 0, col: 4,
			uri: "kernels/a.cu", region: `{"startLine":1}`},
		{name: "characters a URI must encode", file: "dir with space/a%b#c?.cu",
			uri: "dir%20with%20space/a%25b%23c%3F.cu", region: `{"startLine":1}`},
		{name: "no file", uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m"},
		{name: "no file, a fallback named", fallback: "./ci/kernel-gate.yml", line: 5, uri: "ci/kernel-gate.yml", region: `{"startLine":1}`, msg: "m"},
		{name: "a fallback that leaves the repository", fallback: "../../etc/passwd", uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m"},
		{name: "an absolute fallback under the root", root: "/w/repo", fallback: "/w/repo/.github/kernel-gate.yml", uri: ".github/kernel-gate.yml", region: `{"startLine":1}`, msg: "m"},
		{name: "an absolute fallback elsewhere", root: "/w/repo", fallback: "/etc/kernel-gate.yml", uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m"},
		{name: "outside the root", file: "/tmp/x/a.cu", root: "/w/repo", line: 4,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file /tmp/x/a.cu)"},
		{name: "a sibling sharing the root's prefix", file: "/w/repo2/a.cu", root: "/w/repo",
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file /w/repo2/a.cu)"},
		{name: "absolute, no root", file: "/w/repo/a.cu", line: 1,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file /w/repo/a.cu)"},
		{name: "/etc/passwd", file: "/etc/passwd", root: "/w/repo", line: 1,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file /etc/passwd)"},
		{name: "climbing out", file: "../../etc/passwd", root: "/w/repo", line: 1,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file ../../etc/passwd)"},
		{name: "climbing out from inside", file: "kernels/../../../etc/passwd", line: 1,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file kernels/../../../etc/passwd)"},
		{name: "a file: URI", file: "file:///etc/passwd", root: "/w/repo", line: 1,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file file:///etc/passwd)"},
		{name: "an https URL", file: "https://evil.example/x", line: 2,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file https://evil.example/x)"},
		{name: "a Windows drive", file: `C:\x`, line: 2,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: `m (file C:\x)`},
		{name: "a colon in the first segment reads as a scheme", file: "c:d/a.cu",
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: "m (file c:d/a.cu)"},
		{name: "a bidirectional override", file: "kernels/txt\u202eexe.cu", line: 2,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: `m (file kernels/txt\u202eexe.cu)`},
		{name: "an isolate", file: "kernels/a\u2066b\u2069.cu", line: 2,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: `m (file kernels/a\u2066b\u2069.cu)`},
		{name: "a path with brackets, refused", file: "/[x](https://evil.example)", line: 2,
			uri: "kernel-gate.yml", region: `{"startLine":1}`, msg: `m (file /\[x\](https://evil.example))`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := result.Gate{Name: "guard", Findings: []result.Finding{{Severity: result.Error, File: tt.file,
				Line: tt.line, Column: tt.col, Metric: "rule", Message: "m"}}}
			g.Decide(true)
			r := result.New("kernel-gate v1", g)
			o := Options{Root: tt.root, Fallback: tt.fallback}
			var buf bytes.Buffer
			if err := Render(&buf, r, SARIF, o); err != nil {
				t.Fatal(err)
			}
			validateSARIF(t, buf.Bytes(), r, o)
			var log map[string]any
			json.Unmarshal(buf.Bytes(), &log)
			loc := dig(log, "runs", 0, "results", 0, "locations", 0, "physicalLocation")
			if got := dig(loc, "artifactLocation", "uri"); got != tt.uri {
				t.Errorf("uri %v, want %q", got, tt.uri)
			}
			if got, _ := dig(loc, "artifactLocation", "uriBaseId").(string); got != "%SRCROOT%" {
				t.Errorf("uriBaseId %q, want %%SRCROOT%%", got)
			}
			if region, _ := json.Marshal(dig(loc, "region")); string(region) != tt.region {
				t.Errorf("region %s, want %s", region, tt.region)
			}
			if got := dig(log, "runs", 0, "results", 0, "message", "text"); tt.msg != "" && got != tt.msg {
				t.Errorf("message %q, want %q", got, tt.msg)
			}
			if strings.ContainsFunc(buf.String(), repopath.IsBidi) {
				t.Errorf("a bidirectional control in the log:\n%s", buf.String())
			}
		})
	}
}

func TestSARIFUntrustedStrings(t *testing.T) {
	r := hostileResult()
	nan, inf := math.NaN(), math.Inf(1)
	r.Gates[0].Findings = append(r.Gates[0].Findings, result.Finding{Severity: result.Error,
		Kernel: "\"},{\"ruleId\":\"x", File: "a\"\n\x00.cu", Line: 2, Metric: "m\"/\\",
		Value: &nan, Limit: &inf, Message: "\x00\u2028</script>\"\\"})
	var buf bytes.Buffer
	if err := Render(&buf, r, SARIF, Options{}); err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, buf.Bytes(), r, Options{})
	var log map[string]any
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	results := dig(log, "runs", 0, "results").([]any)
	for i, f := range r.Gates[0].Findings {
		// The message as it was, its brackets escaped (no embedded link), and the file it
		// names when that cannot be posted.
		want := sarifText(f)
		if _, ok := repoFile(f.File, ""); f.File != "" && !ok {
			want += " (file " + repopath.Quote(f.File) + ")"
		}
		if got := dig(results[i], "message", "text"); got != sarifEscape(want) {
			t.Errorf("result %d: message %q, want %q", i, got, sarifEscape(want))
		}
		if got, _ := dig(results[i], "properties", "kernel").(string); got != f.Kernel && utf8.ValidString(f.Kernel) {
			t.Errorf("result %d: kernel %q, want %q", i, got, f.Kernel)
		}
	}
	last := results[len(results)-1]
	if dig(last, "properties", "value") != nil || dig(last, "properties", "limit") != nil {
		t.Errorf("NaN and Inf should be left out: %v", dig(last, "properties"))
	}
}

// dig walks decoded JSON by object keys and array indexes; nil when a step is missing.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// validateSARIF checks a SARIF log against what SARIF 2.1.0 requires and what kernel-gate
// promises: the required fields, one run, unique sorted rules with descriptions, one
// result per finding in order, each with a ruleId among the rules and the matching
// ruleIndex, a valid level and a message, and a location exactly when the finding has a
// file (with a region exactly when it has a line).
// validateSARIF checks a log rendered from r with o: GitHub's required fields, one result
// per finding, each located in the repository (at its file when that can be posted, else
// at line 1 of the fallback, the file named in the message).
func validateSARIF(t testing.TB, data []byte, r result.Result, o Options) {
	t.Helper()
	if !json.Valid(data) {
		t.Fatalf("not JSON:\n%s", data)
	}
	var log map[string]any
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	if log["$schema"] != "https://json.schemastore.org/sarif-2.1.0.json" || log["version"] != "2.1.0" {
		t.Errorf("$schema %v, version %v", log["$schema"], log["version"])
	}
	runs, ok := log["runs"].([]any)
	if !ok || len(runs) != 1 {
		t.Fatalf("runs: %v", log["runs"])
	}
	driver, ok := dig(runs[0], "tool", "driver").(map[string]any)
	if !ok || driver["name"] != "kernel-gate" {
		t.Fatalf("tool.driver: %v", dig(runs[0], "tool"))
	}
	rules, ok := driver["rules"].([]any)
	if !ok {
		t.Fatalf("rules: %v", driver["rules"])
	}
	var ids []string
	for i, rule := range rules {
		id, _ := dig(rule, "id").(string)
		text, _ := dig(rule, "shortDescription", "text").(string)
		if id == "" || text == "" {
			t.Errorf("rule %d: id %q, shortDescription %q", i, id, text)
		}
		ids = append(ids, id)
	}
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("rule ids not sorted and unique: %q", ids)
	}
	results, ok := dig(runs[0], "results").([]any)
	if !ok {
		t.Fatalf("results: %v", dig(runs[0], "results"))
	}
	var findings []result.Finding
	var gates []string
	for _, g := range r.Gates {
		for _, f := range g.Findings {
			findings = append(findings, f)
			gates = append(gates, g.Name)
		}
	}
	if len(results) != len(findings) {
		t.Fatalf("%d results for %d findings", len(results), len(findings))
	}
	for i, res := range results {
		f := findings[i]
		id, _ := dig(res, "ruleId").(string)
		idx, _ := dig(res, "ruleIndex").(float64)
		if !slices.Contains(ids, id) || int(idx) >= len(ids) || ids[int(idx)] != id {
			t.Errorf("result %d: ruleId %q, ruleIndex %v: not among the rules %q", i, id, idx, ids)
		}
		if want := ruleID(gates[i], f.Metric); id != want {
			t.Errorf("result %d: ruleId %q, want %q", i, id, want)
		}
		if lv := dig(res, "level"); lv != "error" && lv != "warning" && lv != "note" {
			t.Errorf("result %d: level %v", i, lv)
		}
		if text, _ := dig(res, "message", "text").(string); text == "" {
			t.Errorf("result %d: no message text", i)
		}
		locs, _ := dig(res, "locations").([]any)
		if len(locs) != 1 {
			t.Errorf("result %d: %d locations for file %q", i, len(locs), f.File)
			continue
		}
		uri, _ := dig(locs[0], "physicalLocation", "artifactLocation", "uri").(string)
		u, err := url.Parse(uri)
		if uri == "" || err != nil || u.IsAbs() || u.Host != "" {
			t.Errorf("result %d: uri %q: %v", i, uri, err)
			continue
		}
		if base, _ := dig(locs[0], "physicalLocation", "artifactLocation", "uriBaseId").(string); base != "%SRCROOT%" {
			t.Errorf("result %d: uriBaseId %q", i, base)
		}
		// A first segment holding ":" is written "./seg:ment" (RFC 3986 4.2), not a scheme.
		if rest, ok := strings.CutPrefix(u.Path, "./"); ok && strings.Contains(strings.SplitN(rest, "/", 2)[0], ":") {
			u.Path = rest
		}
		if p, ok := repopath.Rel(u.Path); !ok || p != u.Path {
			t.Errorf("result %d: uri %q is not a path in the repository", i, uri)
		}
		line, _ := dig(locs[0], "physicalLocation", "region", "startLine").(float64)
		col, _ := dig(locs[0], "physicalLocation", "region", "startColumn").(float64)
		text, _ := dig(res, "message", "text").(string)
		if want, ok := repoFile(f.File, cleanRoot(o.Root)); f.File != "" && ok {
			wantLine, wantCol := max(f.Line, 1), 0
			if f.Line > 0 {
				wantCol = max(f.Column, 0)
			}
			if u.Path != want || int(line) != wantLine || int(col) != wantCol {
				t.Errorf("result %d: at %s:%v:%v, want %s:%d:%d", i, u.Path, line, col, want, wantLine, wantCol)
			}
			continue
		}
		fallback := o.Fallback
		if rel, under := result.Under(cleanRoot(o.Root), fallback); filepath.IsAbs(fallback) && under {
			fallback = rel
		}
		fallback, ok := repopath.Rel(fallback)
		if !ok {
			fallback = DefaultFallback
		}
		if u.Path != fallback || line != 1 || col != 0 {
			t.Errorf("result %d: file %q at %s:%v:%v, want the fallback %s:1", i, f.File, u.Path, line, col, fallback)
		}
		if f.File != "" && !strings.Contains(text, " (file "+sarifEscape(repopath.Quote(f.File))+")") {
			t.Errorf("result %d: message %q does not name the file %q", i, text, f.File)
		}
	}
}
