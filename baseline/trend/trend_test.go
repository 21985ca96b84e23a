package trend

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/goldentest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func bf(v float64) *benchfile.Float {
	f := benchfile.Float(v)
	return &f
}

// rec is a PTXAS record as the store keeps it.
func rec(name, arch string, regs, smem, spills int64) baseline.Kernel {
	p := &ptxas.Kernel{Name: name, Arch: arch, Registers: i64(regs), SpillStores: i64(spills), SpillLoads: i64(0), Source: "ptxas"}
	if smem > 0 {
		p.Smem = i64(smem)
	}
	return baseline.Kernel{Name: name, Arch: arch, Ptxas: p}
}

// The anonymous-namespace kernel's mangled name carries a per-file hash that changes with
// the file's path: the same function under two names, which the trend must draw as one.
const (
	flashFalse = "_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if"
	anonA      = "_ZN43_GLOBAL__N__553cb996_10_harness_cu_5d88324913normal_kernelIfEEvPfmjf"
	anonB      = "_ZN43_GLOBAL__N__75846019_10_harness_cu_5d88324913normal_kernelIfEEvPfmjf"
)

// fixture is a small store's worth of entries: four commits on an H200 (a spill that is
// fixed again, a toolkit update, a replay, a dispatch with a reason, a commit without
// timings, a NaN max_err) and one on an L4.
func fixture() []baseline.Entry {
	fp := baseline.Fingerprint{GPU: "NVIDIA H200", Arch: "sm_90", Driver: "580.159.04", CUDA: "13.0.88", CUDAFrom: "toolkit"}
	timing := func(median, lo, hi float64) baseline.Timing {
		return baseline.Timing{Target: "attention", Kernel: "flash_fwd", Shape: "mission", MedianUs: f64(median), LowUs: f64(lo), HighUs: f64(hi), Rounds: 16}
	}
	corr := func(maxErr float64) baseline.Correctness {
		return baseline.Correctness{Target: "attention", Kernel: "flash_fwd", Shape: "mission", Verdict: result.Pass, MaxErr: bf(maxErr), Limit: f64(0.01)}
	}
	e1 := baseline.Entry{Commit: "1a2b3c4d5e6f708192a3b4c5d6e7f80910111213", Time: t0, Tool: "kernel-gate v0.2.0", Verdict: result.Pass, Fingerprint: fp,
		Kernels:     []baseline.Kernel{rec(flashFalse, "sm_90a", 153, 45056, 0), rec(flashFalse, "sm_89", 127, 45056, 0), rec(anonA, "sm_90a", 18, 0, 0)},
		Timings:     []baseline.Timing{timing(38.51, 38.45, 38.58), {Target: "attention", Kernel: "flash_fwd", Shape: "long", MedianUs: f64(283.0)}},
		Correctness: []baseline.Correctness{corr(0.000435)},
		Trigger:     &result.Trigger{Event: "push", SHA: "1a2b3c4d5e6f708192a3b4c5d6e7f80910111213"}}
	e2 := e1
	e2.Commit, e2.Time = "2b3c4d5e6f708192a3b4c5d6e7f8091011121314", t0.Add(24*time.Hour)
	e2.Verdict = result.Fail
	e2.Kernels = []baseline.Kernel{rec(flashFalse, "sm_90a", 32, 45056, 3360), rec(flashFalse, "sm_89", 127, 45056, 0), rec(anonB, "sm_90a", 18, 0, 0)}
	e2.Timings = nil // a failing gate stopped the timing
	e2.Correctness = []baseline.Correctness{corr(math.NaN())}
	e3 := e1
	e3.Commit, e3.Time = "3c4d5e6f708192a3b4c5d6e7f809101112131415", t0.Add(48*time.Hour)
	e3.Fingerprint.CUDA = "13.1.0"
	e3.Kernels = []baseline.Kernel{rec(flashFalse, "sm_90a", 150, 45056, 0), rec(flashFalse, "sm_89", 128, 45056, 0), rec(anonB, "sm_90a", 18, 0, 0)}
	e3.Timings = []baseline.Timing{timing(37.9, 37.8, 38.1)}
	e3.Trigger = &result.Trigger{Event: "workflow_dispatch", Reason: "CUDA 13.1 on the runner"}
	e4 := e3
	e4.Commit, e4.Time = "clean", t0.Add(72*time.Hour)
	e4.Replay = "recorded case clean"
	e4.Trigger = nil
	e4.Timings = []baseline.Timing{timing(38.2, 38.0, 38.4)}
	e4.Correctness = []baseline.Correctness{corr(0.0004)}
	l4 := baseline.Entry{Commit: "4d5e6f708192a3b4c5d6e7f80910111213141516", Time: t0, Verdict: result.Pass,
		Fingerprint: baseline.Fingerprint{GPU: "NVIDIA L4", Arch: "sm_89"},
		Kernels:     []baseline.Kernel{rec(flashFalse, "sm_89", 126, 45056, 0)}}
	return []baseline.Entry{e1, e2, e3, e4, l4}
}

// fixtureStore is the fixture in a directory store.
func fixtureStore(t testing.TB, entries []baseline.Entry) baseline.Store {
	t.Helper()
	s := baseline.NewDir(t.TempDir(), 0)
	for _, e := range entries {
		if err := s.Update(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", name), got, *update)
}

func TestFromEntries(t *testing.T) {
	hs, err := Load(context.Background(), fixtureStore(t, fixture()), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].Key.GPU != "NVIDIA H200" || hs[1].Key.GPU != "NVIDIA L4" {
		t.Fatalf("keys %+v", hs)
	}
	h := hs[0]
	var labels []string
	for _, p := range h.Points {
		labels = append(labels, p.Label())
	}
	if got := strings.Join(labels, " "); got != "1a2b3c4 2b3c4d5 3c4d5e6 clean" {
		t.Errorf("points oldest first: %s", got)
	}
	if h.Points[2].Reason != "CUDA 13.1 on the runner" || h.Points[3].Replay == "" || h.Points[1].Verdict != result.Fail {
		t.Errorf("points %+v", h.Points)
	}
	// Two functions: flash_fwd, and the anonymous-namespace kernel under its two mangled names.
	if len(h.Kernels) != 2 {
		t.Fatalf("%d kernels, want 2: %+v", len(h.Kernels), h.Kernels)
	}
	anon, flash := h.Kernels[0], h.Kernels[1]
	if anon.Name != "(anonymous namespace)::normal_kernel<float>" || len(anon.Registers.Series) != 1 {
		t.Errorf("anonymous kernel %q, %d series", anon.Name, len(anon.Registers.Series))
	}
	for i, v := range anon.Registers.Series[0].Values {
		if !v.Set || v.V != 18 {
			t.Errorf("anonymous kernel's registers at %d: %+v (its per-file hash changed, not the function)", i, v)
		}
	}
	if flash.Name != "kg::flash_fwd<64, 64, false>" || len(flash.Registers.Series) != 2 || flash.Registers.Series[0].Label != "sm_89" {
		t.Fatalf("flash kernel %+v", flash)
	}
	regs := flash.Registers.Series[1].Values
	spills := flash.Spills.Series[1].Values
	if regs[0].V != 153 || regs[1].V != 32 || spills[1].V != 3360 || spills[0].V != 0 || !spills[0].Set {
		t.Errorf("sm_90a registers %+v spills %+v", regs, spills)
	}
	if !anon.Shared.allZero() || flash.Shared.allZero() || !flash.Shared.Has() {
		t.Errorf("shared memory: anon zero %v, flash zero %v", anon.Shared.allZero(), flash.Shared.allZero())
	}
	if len(h.Shapes) != 2 || h.Shapes[0].Shape != "mission" || h.Shapes[1].Shape != "long" {
		t.Fatalf("shapes %+v", h.Shapes)
	}
	times := h.Shapes[0].Time.Series[0].Values
	if !times[0].Band || times[1].Set || times[3].V != 38.2 || times[3].Low != 38.0 {
		t.Errorf("times %+v", times)
	}
	errs := h.Shapes[0].MaxErr.Series[0].Values
	if !errs[1].Set || !math.IsNaN(errs[1].V) || !h.Shapes[0].MaxErr.Series[1].Limit || h.Shapes[0].MaxErr.Series[1].Values[0].V != 0.01 {
		t.Errorf("max_err %+v", h.Shapes[0].MaxErr.Series)
	}
	if long := h.Shapes[1]; long.MaxErr.Has() || !long.Time.Has() || long.Time.Series[0].Values[0].Band {
		t.Errorf("long: %+v", long)
	}
}

// The page of the fixture store, byte for byte.
func TestHTMLGolden(t *testing.T) {
	hs, err := Load(context.Background(), fixtureStore(t, fixture()), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, hs, PageOptions{Source: "directory testdata/store"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "fixture.html.golden", b.Bytes())
	page := b.String()
	checkMarkup(t, page)
	// H200: registers and shared memory of 2 kernels (the anonymous one has none), spills
	// of flash_fwd, time of 2 shapes, max_err of 1; L4: registers and shared memory.
	if n := strings.Count(page, `<svg class="chart"`); n != 2+1+1+2+1+2 {
		t.Errorf("%d charts", n)
	}
	for _, want := range []string{"CUDA 13.0.88 → 13.1.0", "CUDA 13.1 on the runner", "recorded case clean", "none in any of 4 commits",
		`class="nonfinite"`, `class="band s0"`, `class="gap s0"`, "38.51 µs (38.45–38.58)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestText(t *testing.T) {
	hs, err := Load(context.Background(), fixtureStore(t, fixture()), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, hs, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, "fixture.txt.golden", b.Bytes())
	b.Reset()
	if err := WriteText(&b, hs[:1], 2); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], "  … and 4 more") {
		t.Errorf("capped at 2 lines:\n%s", b.String())
	}
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	s := fixtureStore(t, fixture())
	k, err := ParseKey("NVIDIA L4/8.9")
	if err != nil {
		t.Fatal(err)
	}
	hs, err := Load(ctx, s, &k, 0)
	if err != nil || len(hs) != 1 || hs[0].Key.GPU != "NVIDIA L4" {
		t.Fatalf("only the L4: %+v, %v", hs, err)
	}
	hs, err = Load(ctx, s, nil, 2)
	if err != nil || len(hs[0].Points) != 2 || hs[0].Points[1].Commit != "clean" {
		t.Fatalf("newest 2: %+v, %v", hs, err)
	}
	other, _ := ParseKey("NVIDIA A100/sm_80")
	if _, err := Load(ctx, s, &other, 0); err == nil || !strings.Contains(err.Error(), "no baseline for NVIDIA A100 (sm_80) (it holds: NVIDIA H200 (sm_90), NVIDIA L4 (sm_89))") {
		t.Errorf("a key the store lacks: %v", err)
	}
	if _, err := Load(ctx, baseline.NewDir(filepath.Join(t.TempDir(), "none"), 0), nil, 0); err == nil || !strings.Contains(err.Error(), "no baseline yet") {
		t.Errorf("an empty store: %v", err)
	}
	for _, bad := range []string{"NVIDIA H200", "/sm_90", "NVIDIA H200/", "NVIDIA H200/ninety"} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func TestScale(t *testing.T) {
	for _, tt := range []struct {
		name   string
		vals   []float64
		unit   string
		log    bool
		ticks  string
		lo, hi float64
	}{
		{"registers", []float64{127, 153, 32}, UnitCount, false, "0 50 100 150 200", 0, 200},
		{"flat", []float64{18, 18}, UnitCount, false, "17 18 19", 17, 19},
		{"zero", []float64{0}, UnitCount, false, "-1 0 1", -1, 1},
		{"flat times", []float64{18, 18}, UnitMicros, false, "17.0 17.5 18.0 18.5 19.0", 17, 19},
		{"errors over decades", []float64{0.0004, 4.28}, UnitError, true, "0.0001 0.001 0.01 0.1 1 10", -4, 1},
		{"errors close together", []float64{0.0004, 0.0005}, UnitError, false, "0.00040 0.00045 0.00050", 0.0004, 0.0005},
		{"times in tenths", []float64{37.8, 38.58}, UnitMicros, false, "37.6 37.8 38.0 38.2 38.4 38.6", 37.6, 38.6},
		{"a zero error is not drawn on a log scale", []float64{0, 4.28}, UnitError, false, "0 2 4 6", 0, 6},
		{"float64's ends", []float64{-math.MaxFloat64, math.MaxFloat64}, UnitCount, false, "", -math.MaxFloat64, math.MaxFloat64},
		{"tiny", []float64{5e-324, 1e-323}, UnitCount, false, "", 5e-324, 1e-323},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var vs []Value
			for _, v := range tt.vals {
				vs = append(vs, Value{Set: true, V: v})
			}
			sc, ok := newScale(Metric{Unit: tt.unit, Series: []Series{{Values: vs}}})
			if !ok || sc.log != tt.log {
				t.Fatalf("scale %+v ok %v", sc, ok)
			}
			var ticks []string
			for _, x := range sc.ticks {
				ticks = append(ticks, sc.tickLabel(tt.unit, x))
			}
			if tt.ticks != "" && strings.Join(ticks, " ") != tt.ticks {
				t.Errorf("ticks %q, want %q", strings.Join(ticks, " "), tt.ticks)
			}
			if tt.ticks != "" && (sc.lo != tt.lo || sc.hi != tt.hi) {
				t.Errorf("scale [%v, %v], want [%v, %v]", sc.lo, sc.hi, tt.lo, tt.hi)
			}
			for _, v := range tt.vals {
				if y := sc.y(v); math.IsNaN(y) || y < padT || y > padT+plotH {
					t.Errorf("y(%v) = %v, outside the plot", v, y)
				}
			}
		})
	}
	if _, ok := newScale(Metric{Series: []Series{{Values: []Value{{Set: true, V: math.NaN()}, {}}}}}); ok {
		t.Error("a scale for no finite value")
	}
}

var tagRE = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)`)

// tag is one start or end tag of a page.
type tag struct {
	name  string
	attrs [][2]string
}

// scanTags reads page's tags as a browser would start to: a '<' before a letter or '/'
// opens one, which runs to the first '>' outside double quotes. bad describes the first
// tag that is not as the page writes its own: attribute values double-quoted, no '<'
// inside a tag.
func scanTags(page string) (tags []tag, bad string) {
	isName := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':' || c == '.'
	}
	for i := 0; i+1 < len(page); i++ {
		if page[i] != '<' || !(page[i+1] == '/' || page[i+1] >= 'a' && page[i+1] <= 'z' || page[i+1] >= 'A' && page[i+1] <= 'Z') {
			continue
		}
		j := i + 1
		if page[j] == '/' {
			j++
		}
		k := j
		for k < len(page) && isName(page[k]) {
			k++
		}
		tg := tag{name: strings.ToLower(page[j:k])}
		for {
			for k < len(page) && (page[k] == ' ' || page[k] == '\n' || page[k] == '\t') {
				k++
			}
			if k >= len(page) {
				return tags, "an unclosed tag at the end"
			}
			if page[k] == '>' || strings.HasPrefix(page[k:], "/>") {
				break
			}
			a := k
			for k < len(page) && isName(page[k]) {
				k++
			}
			if a == k {
				return tags, fmt.Sprintf("%.80q", page[i:])
			}
			attr := [2]string{strings.ToLower(page[a:k]), ""}
			if k < len(page) && page[k] == '=' {
				if k+1 >= len(page) || page[k+1] != '"' {
					return tags, fmt.Sprintf("an unquoted value in %.80q", page[i:])
				}
				end := strings.IndexByte(page[k+2:], '"')
				if end < 0 || strings.ContainsRune(page[k+2:k+2+end], '<') {
					return tags, fmt.Sprintf("a value with '<' in %.80q", page[i:])
				}
				attr[1] = page[k+2 : k+2+end]
				k += 3 + end
			}
			tg.attrs = append(tg.attrs, attr)
		}
		tags = append(tags, tg)
		i = k
	}
	return tags, ""
}

// checkMarkup checks that every tag of page is whole, with quoted attribute values, that
// no attribute runs code or fetches anything, and that no element an entry could have
// asked for (script, img, iframe, b, ...) is there.
func checkMarkup(t *testing.T, page string) {
	t.Helper()
	tags, bad := scanTags(page)
	if bad != "" {
		t.Fatalf("a tag that is not whole: %s", bad)
	}
	for _, tg := range tags {
		switch tg.name {
		case "script", "img", "iframe", "b", "object", "embed", "link", "audio", "video", "base", "form":
			t.Errorf("a <%s> element", tg.name)
		}
		for _, a := range tg.attrs {
			if strings.HasPrefix(a[0], "on") || a[0] == "src" || a[0] == "style" || a[0] == "href" && !strings.HasPrefix(a[1], "#") {
				t.Errorf("attribute %s=%q in <%s>", a[0], a[1], tg.name)
			}
		}
	}
}

// hostile is an entry whose every string tries to end the markup it lands in.
func hostile() []baseline.Entry {
	const name = `"><script>alert(1)</script><img src=x onerror=alert(2)>` + "\n::error::pwned\u202e"
	e := fixture()[0]
	e.Commit = `'"><svg onload=alert(3)>`
	e.Replay = "</title></svg><script>alert(4)</script>\n::warning::x"
	e.Trigger = &result.Trigger{Event: "workflow_dispatch", Reason: "</td></table><iframe src=javascript:alert(5)>"}
	e.Fingerprint.Driver = `580"<b>`
	e.Kernels = append(e.Kernels, rec(name, "sm_90a", 40, 0, 0))
	e.Timings = []baseline.Timing{{Target: "<b>t</b>", Kernel: name, Shape: "</figcaption>&amp;", MedianUs: f64(1), LowUs: f64(0.5), HighUs: f64(2)}}
	e.Correctness = []baseline.Correctness{{Kernel: name, Shape: "s'", MaxErr: bf(math.Inf(1)), Limit: f64(1)}}
	return []baseline.Entry{e}
}

// Every string from an entry is escaped: the hostile names appear as text, none of their
// markup becomes an element or an attribute, and no line of the page starts with theirs.
func TestHTMLHostile(t *testing.T) {
	h := FromEntries(baseline.Key{GPU: "NVIDIA <H200>", Arch: "sm_90"}, hostile())
	var b bytes.Buffer
	if err := WriteHTML(&b, []History{h}, PageOptions{Source: "<script>alert(6)</script>"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkMarkup(t, page)
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&#39;&#34;&gt;&lt;svg onload=alert(3)&gt;", "NVIDIA &lt;H200&gt;",
		"&lt;/td&gt;&lt;/table&gt;&lt;iframe", "&lt;/figcaption&gt;&amp;amp;", "�::error::pwned�"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks the escaped %q", want)
		}
	}
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "::") {
			t.Errorf("a line of the page starts a workflow command: %q", line)
		}
	}
	// The elements are the page's own, each closed.
	open := map[string]int{}
	for _, m := range tagRE.FindAllStringSubmatch(page, -1) {
		if m[1] == "/" {
			open[m[2]]--
		} else {
			open[m[2]]++
		}
	}
	for _, tag := range []string{"svg", "title", "table", "tr", "td", "figure", "figcaption", "section", "details", "text", "circle"} {
		if open[tag] != 0 {
			t.Errorf("<%s> opened %d more times than closed", tag, open[tag])
		}
	}
	var text bytes.Buffer
	if err := WriteText(&text, []History{h}, 0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "\n::") || strings.ContainsRune(text.String(), '\u202e') {
		t.Errorf("the text lets a name start a line or reorder it:\n%s", text.String())
	}
}
