package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/goldentest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sampleResult is a realistic run: a failing ptxas gate over three kernels and three
// architectures, a passing sass gate (no findings, no table) and a skipped gate.
func sampleResult(t testing.TB) result.Result {
	ptxas := result.Gate{
		Name:    "ptxas",
		Summary: "6 kernels on sm_80, sm_89, sm_90a: 2 over a limit (1 spills, 1 over the register budget)",
		Findings: []result.Finding{
			{Severity: result.Notice, Kernel: "kg::row_softmax<256>", Arch: "sm_89",
				Message: "new kernel: not in the baseline"},
			{Severity: result.Error, Kernel: "kg::flash_fwd<64, 64, false>", Arch: "sm_90a", Metric: "registers",
				Value: result.Num(153), Limit: result.Num(128), Baseline: result.Num(150), Delta: result.Num(3),
				Message: "uses 153 registers, over the limit of 128"},
			{Severity: result.Warning, Kernel: "kg::flash_fwd<64, 64, true>", Arch: "sm_80", Metric: "registers",
				Value: result.Num(129), Baseline: result.Num(127), Delta: result.Num(2),
				Message: "registers grew by 2 since the baseline (warn_delta 1)"},
			{Severity: result.Error, Kernel: "kg::flash_fwd<64, 64, true>", Arch: "sm_90a", Metric: "spill_stores",
				Value: result.Num(1676), Limit: result.Num(0),
				Message: "1676 bytes spill stores, 1684 bytes spill loads: registers are spilled to local memory"},
		},
		Table: &result.Table{
			Columns: []string{"kernel", "arch", "regs", "spill st", "spill ld", "stack", "smem"},
			Rows: []result.Row{
				{Status: result.Fail, Cells: []string{"kg::flash_fwd<64, 64, true>", "sm_90a", "128", "1676", "1684", "1152", "45056"}},
				{Status: result.Fail, Cells: []string{"kg::flash_fwd<64, 64, false>", "sm_90a", "153", "0", "0", "0", "45056"}},
				{Status: result.Pass, Cells: []string{"kg::flash_fwd<64, 64, true>", "sm_80", "129", "0", "0", "0", "45056"}},
				{Status: result.Pass, Cells: []string{"kg::flash_fwd<64, 64, false>", "sm_80", "127", "0", "0", "0", "45056"}},
				{Status: result.Pass, Cells: []string{"kg::gemm_wmma<64, 64, 32>", "sm_89", "72", "0", "0", "0", "9728"}},
				{Status: result.Pass, Cells: []string{"kg::row_softmax<256>", "sm_89", "70", "0", "0", "0", "32"}},
			},
		},
	}
	ptxas.Decide(true)
	if err := ptxas.SetData(map[string]any{"kernels": []map[string]any{
		{"name": "_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if", "arch": "sm_90a", "registers": 153},
	}}); err != nil {
		t.Fatal(err)
	}
	sass := result.Gate{Name: "sass", Summary: "6 kernels: no forbidden instructions"}
	sass.Decide(true)
	sanitizer := result.Gate{Name: "sanitizer", Summary: "nothing to run",
		Findings: []result.Finding{{Severity: result.Notice,
			Message: "compute-sanitizer not found on PATH; install the CUDA toolkit or disable the gate"}}}
	sanitizer.Decide(false)
	return result.New("kernel-gate 0.1.0-dev", ptxas, sass, sanitizer)
}

func replayResult(t testing.TB) result.Result {
	r := sampleResult(t)
	r.Replay = "testdata/cuda13-h200, H200 + CUDA 13.0"
	return r
}

// hostileResult carries names and messages that try to inject terminal escapes, HTML and
// markdown.
func hostileResult() result.Result {
	g := result.Gate{
		Name:    "evil|gate",
		Summary: "# not a heading <b>bold</b>\nsecond line",
		Findings: []result.Finding{
			{Severity: result.Error, Kernel: "evil\x1b[31mRED\x1b[0m\x07\r\nFAKE: PASS\u009b2J\u202etxt.exe",
				Arch: "sm_90a", Metric: "registers", Value: result.Num(200), Limit: result.Num(128),
				Message: "line one\nline two\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"},
			{Severity: result.Warning, Kernel: "</details><img src=x onerror=alert(1)>",
				Message: "see [link](http://x) and ![img](http://x/y.png) cc @octocat `code` *emph* $x$ a|b \\| ~~del~~ &amp;"},
			{Severity: result.Notice, Kernel: "flash_fwd<64, 128>", File: "k.cu", Line: 7, Message: "<script>alert(1)</script>"},
		},
		Table: &result.Table{
			Columns: []string{"kernel|x", "<th>"},
			Rows: []result.Row{
				{Status: result.Fail, Cells: []string{"a|b\\", "`x`\n<br>"}},
				{Status: "bogus\x1b[2J", Cells: []string{"\x1b]0;title\x07"}},
			},
		},
	}
	g.Decide(true)
	r := result.New("tool\x1b[1m", g)
	r.Replay = "rec\x1b[5m</blockquote>"
	return r
}

func emptyResult() result.Result { return result.New("kernel-gate 0.1.0-dev") }

// wideResult has a table too wide for a narrow terminal.
func wideResult() result.Result {
	long := "void kg::flash_fwd<64, 64, false>(__half const*, __half const*, __half const*, __half*, int, float)"
	g := result.Gate{Name: "ptxas", Findings: []result.Finding{{Severity: result.Error, Kernel: long, Arch: "sm_90a",
		Metric: "registers", Value: result.Num(153), Limit: result.Num(128), Message: "over the register limit"}},
		Table: &result.Table{
			Columns: []string{"kernel", "arch", "regs"},
			Rows: []result.Row{
				{Status: result.Fail, Cells: []string{long, "sm_90a", "153"}},
				{Status: result.Pass, Cells: []string{"kg::row_softmax<256>", "sm_89", "70"}},
			},
		}}
	g.Decide(true)
	return result.New("", g)
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		r      result.Result
		format Format
		opts   Options
	}{
		{"sample.txt", sampleResult(t), Text, Options{}},
		{"sample_color.txt", sampleResult(t), Text, Options{Color: true}},
		{"sample.md", sampleResult(t), Markdown, Options{}},
		{"sample.json", sampleResult(t), JSON, Options{}},
		{"replay.txt", replayResult(t), Text, Options{}},
		{"replay.md", replayResult(t), Markdown, Options{}},
		{"narrow.txt", wideResult(), Text, Options{Width: 60}},
		{"hostile.txt", hostileResult(), Text, Options{}},
		{"hostile_color.txt", hostileResult(), Text, Options{Color: true}},
		{"hostile.md", hostileResult(), Markdown, Options{}},
		{"empty.txt", emptyResult(), Text, Options{}},
		{"empty.md", emptyResult(), Markdown, Options{}},
		// The job summary of a real recorded run (testdata/replay) whose head is slower, and
		// cut to a limit (the race and the clean run: TestReplayGolden); hostile speedup data.
		{"slow5.md", readReplay(t, "slow5"), Markdown, Options{ArtifactsURL: testArtifacts}},
		{"slow5_cut.md", readReplay(t, "slow5"), Markdown, Options{ArtifactsURL: testArtifacts, Limit: 6000}},
		{"hostile_speed.md", hostileSpeedResult(t), Markdown, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, tt.r, tt.format, tt.opts); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, filepath.Join("testdata", tt.name+".golden"), buf.Bytes(), *update)
		})
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"text": Text, "json": JSON, "markdown": Markdown, "md": Markdown, " Markdown ": Markdown,
		"sarif": SARIF, "SARIF": SARIF} {
		got, err := ParseFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, wantErr := range map[string][]string{
		"html": {`"html"`, "text, json, markdown, sarif"},
		"":     {"text, json, markdown, sarif"},
	} {
		_, err := ParseFormat(in)
		if err == nil {
			t.Errorf("ParseFormat(%q): no error", in)
			continue
		}
		for _, w := range wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseFormat(%q) error %q does not mention %q", in, err, w)
			}
		}
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, sampleResult(t), "xml", Options{}); err == nil || buf.Len() != 0 {
		t.Errorf("Render(xml) = %v with %d bytes written; want an error and no output", err, buf.Len())
	}
}

// normalize makes results comparable after a JSON round trip: raw data is compacted
// (Write re-indents it) and absent data reads back as null.
func normalize(t *testing.T, r result.Result) result.Result {
	r.Gates = append([]result.Gate(nil), r.Gates...)
	for i := range r.Gates {
		raw := r.Gates[i].Data
		if raw == nil {
			raw = json.RawMessage("null")
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			t.Fatal(err)
		}
		r.Gates[i].Data = c.Bytes()
	}
	return r
}

func TestJSONRoundTrip(t *testing.T) {
	for name, in := range map[string]result.Result{
		"sample": sampleResult(t), "replay": replayResult(t), "hostile": hostileResult(), "empty": emptyResult(),
	} {
		var buf, direct bytes.Buffer
		if err := Render(&buf, in, JSON, Options{Color: true}); err != nil {
			t.Fatal(err)
		}
		if err := result.Write(&direct, in); err != nil {
			t.Fatal(err)
		}
		if buf.String() != direct.String() {
			t.Errorf("%s: json format is not exactly result.Write", name)
		}
		out, err := result.Read(&buf)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := normalize(t, out), normalize(t, in); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip differs\ngot  %+v\nwant %+v", name, got, want)
		}
	}
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestColor(t *testing.T) {
	r := sampleResult(t)
	var plain, colored bytes.Buffer
	if err := Render(&plain, r, Text, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Render(&colored, r, Text, Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(plain.Bytes(), 0x1b) {
		t.Error("text output without colour contains ESC")
	}
	for _, want := range []string{"\x1b[31mFAIL\x1b[0m", "\x1b[31merror\x1b[0m", "\x1b[33mwarning\x1b[0m",
		"\x1b[32mPASS\x1b[0m", "\x1b[2mnotice\x1b[0m"} {
		if !strings.Contains(colored.String(), want) {
			t.Errorf("coloured output lacks %q", want)
		}
	}
	// Colour changes nothing but the escapes.
	if got := sgr.ReplaceAllString(colored.String(), ""); got != plain.String() {
		t.Errorf("coloured output without its escapes differs from plain output:\n%s\n---\n%s", got, plain.String())
	}
	// Markdown never carries escapes.
	var m bytes.Buffer
	if err := Render(&m, r, Markdown, Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(m.Bytes(), 0x1b) {
		t.Error("markdown output contains ESC")
	}
}

func TestColorWanted(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	regular, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	if ColorWanted(regular, env(nil)) {
		t.Error("colour wanted for a regular file")
	}
	if ColorWanted(nil, env(nil)) {
		t.Error("colour wanted for a nil file")
	}
	// /dev/null is a character device, the closest to a terminal a test can open.
	dev, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer dev.Close()
	if fi, err := dev.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skip("no character device to test with")
	}
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, true},
		{map[string]string{"TERM": "xterm-256color"}, true},
		{map[string]string{"NO_COLOR": ""}, true},
		{map[string]string{"NO_COLOR": "1"}, false},
		{map[string]string{"TERM": "dumb"}, false},
	} {
		if got := ColorWanted(dev, env(tt.env)); got != tt.want {
			t.Errorf("ColorWanted(char device, %v) = %v, want %v", tt.env, got, tt.want)
		}
	}
}

// checkTextSafe fails when text output carries a control character other than \n and \t
// (besides the colour escapes when colour is on), or a C1 or bidi control.
func checkTextSafe(t *testing.T, out string, color bool) {
	t.Helper()
	if color {
		out = sgr.ReplaceAllString(out, "")
	}
	for i, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || isC1(r) || isBidi(r) {
			t.Fatalf("text output has control %U at byte %d:\n%q", r, i, out)
		}
	}
}

func TestHostileText(t *testing.T) {
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := Render(&buf, hostileResult(), Text, Options{Color: color}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		checkTextSafe(t, out, color)
		for _, want := range []string{
			`evil\x1b[31mRED\x1b[0m\x07  FAKE: PASS\u009b2J\u202etxt.exe`, // escaped, on one line
			`line one line two\x1b]8;;http://x\x1b\link`,
			`rec\x1b[5m</blockquote>`,
			`bogus\x1b[2J`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("color=%v: text output lacks %q:\n%s", color, want, out)
			}
		}
	}
}

// ourTags are the only HTML tags the markdown reporter writes itself.
var ourTags = strings.NewReplacer("<details>", "", "</details>", "", "<summary>", "", "</summary>", "", "<sub>", "", "</sub>", "")

// checkMarkdownSafe fails when markdown output has a '<' that is not one of our own tags,
// or a table row whose cell count differs from its header's (an unescaped '|').
func checkMarkdownSafe(t *testing.T, out string) {
	t.Helper()
	if i := strings.IndexByte(ourTags.Replace(out), '<'); i >= 0 {
		t.Fatalf("markdown output has a raw '<':\n%s", out)
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Fatalf("markdown output has ESC:\n%q", out)
	}
	cells := -1
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			cells = -1
			continue
		}
		if !strings.HasSuffix(line, " |") {
			t.Fatalf("table row does not end in \" |\": %q", line)
		}
		n := countCells(line)
		if cells < 0 {
			cells = n
		} else if n != cells {
			t.Fatalf("table row has %d cells, its header %d (unescaped '|'?): %q\n%s", n, cells, line, out)
		}
	}
}

// countCells counts the cells of a GFM table row: '|' preceded by a backslash is part of
// a cell (as GitHub's table parser has it, whatever precedes the backslash).
func countCells(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			n++
		}
	}
	return n - 1
}

func TestHostileMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, hostileResult(), Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	checkMarkdownSafe(t, out)
	for _, want := range []string{
		"&lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;",
		"see \\[link\\](http\u200b://x) and !\\[img\\](http\u200b://x/y.png)",
		"cc @\u200boctocat",
		"&#96;code&#96; \\*emph\\* \\$x\\$ a\\|b \\\\\\| \\~\\~del\\~\\~ &amp;amp;",
		"flash\\_fwd&lt;64, 128&gt;",
		"k.cu:7: &lt;script&gt;alert(1)&lt;/script&gt;",
		"### evil\\|gate: ❌ fail",
		"\n\\# not a heading &lt;b&gt;bold&lt;/b&gt; second line\n",
		"| ❌ fail | a\\|b\\\\ | &#96;x&#96; &lt;br&gt; |",
		`evil\\x1b\[31mRED\\x1b\[0m\\x07  FAKE: PASS\\u009b2J\\u202etxt.exe`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown output lacks %q:\n%s", want, out)
		}
	}
}

func TestMarkdownParagraphStart(t *testing.T) {
	for in, want := range map[string]string{
		"# heading":     `\# heading`,
		"- item":        `\- item`,
		"+ item":        `\+ item`,
		"===":           `\===`,
		"1. first":      `1\. first`,
		"12) twelfth":   `12\) twelfth`,
		"    code":      "code",
		"> quote":       "&gt; quote",
		"---":           `\---`,
		"2 kernels ok.": "2 kernels ok.",
	} {
		if got := mdParagraph(in); got != want {
			t.Errorf("mdParagraph(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTruncMiddle(t *testing.T) {
	name := "void kg::flash_fwd<64, 64, false>(__half const*, __half const*, __half const*, __half*, int, float)"
	for _, n := range []int{1, 2, 10, 30, 98} {
		got := truncMiddle(name, n)
		if width(got) != n {
			t.Errorf("truncMiddle(_, %d) = %q: %d runes", n, got, width(got))
		}
		if n >= 3 && (!strings.Contains(got, "…") || got[0] != 'v' || !strings.HasSuffix(got, ")")) {
			t.Errorf("truncMiddle(_, %d) = %q: want the start and the end around …", n, got)
		}
	}
	if got := truncMiddle(name, 30); got != "void kg::flash_…*, int, float)" {
		t.Errorf("truncMiddle(_, 30) = %q", got)
	}
	if got := truncMiddle(name, len(name)); got != name {
		t.Errorf("truncMiddle(_, len) = %q, want it unchanged", got)
	}
	if got := truncMiddle("kg::flash_fwd<64, 64, false>", 0); got != "" {
		t.Errorf("truncMiddle(_, 0) = %q", got)
	}
}

func TestTableFitsWidth(t *testing.T) {
	for _, w := range []int{40, 60, 80, 100, 200} {
		var buf bytes.Buffer
		if err := Render(&buf, wideResult(), Text, Options{Width: w}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(buf.String(), "\n")
		var table []string
		for i, l := range lines {
			if strings.Contains(l, "kernel") && strings.Contains(l, "regs") && i+4 <= len(lines) {
				table = lines[i : i+4]
			}
		}
		if len(table) != 4 {
			t.Fatalf("width %d: want header, rule and 2 rows, got %q", w, table)
		}
		for _, l := range table {
			if width(l) > w {
				t.Errorf("width %d: table line is %d wide: %q", w, width(l), l)
			}
		}
		if !strings.Contains(table[2], "  void kg::") || !strings.Contains(table[2], "float)  ") {
			t.Errorf("width %d: the kernel name lost its start or end: %q", w, table[2])
		}
		// The narrow columns keep their width while the kernel column is cut.
		if !strings.Contains(table[2], "sm_90a") || !strings.Contains(table[2], "153") {
			t.Errorf("width %d: short columns were cut: %q", w, table[2])
		}
	}
}

func TestFitWidths(t *testing.T) {
	tests := []struct {
		in    []int
		total int
		want  []int
	}{
		{[]int{4, 20, 6}, 100, []int{4, 20, 6}},         // fits
		{[]int{4, 50, 30, 6}, 60, []int{4, 21, 21, 6}},  // both wide columns cut to the same width
		{[]int{4, 50, 12, 6}, 40, []int{4, 11, 11, 6}},  // the widest is cut down to the next
		{[]int{4, 50, 12, 6}, 41, []int{4, 12, 11, 6}},  // one column of slack goes to the first
		{[]int{4, 50, 12, 6}, 50, []int{4, 20, 12, 6}},  // only the widest is cut
		{[]int{4, 50, 12, 6}, 10, []int{4, 10, 10, 6}},  // cannot fit: everything at the floor
		{[]int{4, 50, 12, 3}, 10, []int{4, 10, 10, 3}},  // narrow columns are never widened
		{[]int{4, 50, 12, 6}, 100, []int{4, 50, 12, 6}}, // fits
	}
	for _, tt := range tests {
		got := append([]int(nil), tt.in...)
		fitWidths(got, tt.total)
		fixed := width(indent) + got[0] + width(gap)*(len(got)-1)
		sum := fixed
		for _, w := range got[1:] {
			sum += w
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("fitWidths(%v, %d) = %v (row %d wide), want %v", tt.in, tt.total, got, sum, tt.want)
		}
	}
}

func TestFindingOrder(t *testing.T) {
	fs := []result.Finding{
		{Severity: result.Notice, Kernel: "a"},
		{Severity: result.Error, Kernel: "b", Value: result.Num(130), Limit: result.Num(128)},
		{Severity: result.Error, Kernel: "z", Metric: "no limit"},
		{Severity: result.Error, Kernel: "c", Value: result.Num(1676), Limit: result.Num(0)},
		{Severity: result.Error, Kernel: "d", Value: result.Num(200), Limit: result.Num(128), Arch: "sm_90a"},
		{Severity: result.Error, Kernel: "d", Value: result.Num(200), Limit: result.Num(128), Arch: "sm_80"},
		{Severity: result.Warning, Kernel: "a"},
		{Severity: "bogus", Kernel: "0"},
		{Severity: result.Error, Kernel: "a", Metric: "no limit"},
	}
	var got []string
	for _, f := range sortedFindings(fs) {
		got = append(got, string(f.Severity)+" "+f.Kernel+" "+f.Arch)
	}
	want := []string{"error c ", "error d sm_80", "error d sm_90a", "error b ", "error a ", "error z ",
		"warning a ", "notice a ", "bogus 0 "}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order:\n got %q\nwant %q", got, want)
	}
	if fs[0].Severity != result.Notice {
		t.Error("sortedFindings modified its input")
	}
}

func TestNumbers(t *testing.T) {
	for v, want := range map[float64]string{
		130: "130", 0: "0", -3: "-3", 1.5: "1.5", 1.23456: "1.2346", 2.10000001: "2.1", 0.00012345: "0.0001234",
		-0.25: "-0.25", 1e20: "1e+20", 45056: "45056",
	} {
		if got := formatNum(v); got != want {
			t.Errorf("formatNum(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{3: "+3", -2: "-2", 0: "±0", 0.5: "+0.5", 12: "+12"} {
		if got := formatDelta(v); got != want {
			t.Errorf("formatDelta(%v) = %q, want %q", v, got, want)
		}
	}
	for _, tt := range []struct {
		f    result.Finding
		want string
	}{
		{result.Finding{Value: result.Num(153), Limit: result.Num(128)}, "153 > 128"},
		{result.Finding{Value: result.Num(128), Limit: result.Num(128)}, "128 = 128"},
		{result.Finding{Value: result.Num(120.5), Limit: result.Num(128)}, "120.5 < 128"},
		{result.Finding{Value: result.Num(7)}, "7"},
		{result.Finding{Limit: result.Num(7)}, "limit 7"},
		{result.Finding{}, ""},
	} {
		if got := comparison(tt.f); got != tt.want {
			t.Errorf("comparison(%+v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"kg::flash_fwd<64, 64, false>": "kg::flash_fwd<64, 64, false>",
		"a\tb\nc\r\nd":                 "a b c  d",
		"\x1b[31m":                     `\x1b[31m`,
		"\x00\x7f":                     `\x00\x7f`,
		"\u009b31m":                    `\u009b31m`,
		"abc\u202edef\u2066":           `abc\u202edef\u2066`,
		"bad\xffutf8":                  `bad\xffutf8`,
		"ünïcödé ✓":                    "ünïcödé ✓",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNoGatesAndBareGate(t *testing.T) {
	bare := result.Gate{Name: "bare"}
	bare.Decide(true)
	unnamed := result.Gate{Table: &result.Table{}} // empty table: nothing to draw
	unnamed.Decide(false)
	ragged := result.Gate{Name: "ragged", Verdict: result.Pass, Table: &result.Table{
		Columns: []string{"only"},
		Rows:    []result.Row{{Status: result.Pass, Cells: []string{"a", "extra", "more"}}, {Status: result.Pass}},
	}}
	for _, r := range []result.Result{emptyResult(), {}, result.New("", bare, unnamed, ragged)} {
		for _, f := range []Format{Text, Markdown, JSON} {
			var buf bytes.Buffer
			if err := Render(&buf, r, f, Options{}); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if buf.Len() == 0 {
				t.Errorf("%s: no output", f)
			}
			if f == Markdown {
				checkMarkdownSafe(t, buf.String())
			}
		}
	}
	var buf bytes.Buffer
	if err := Render(&buf, result.New("", bare, unnamed, ragged), Text, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "kernel-gate: PASS (3 gates: 2 passed, 1 skipped)\n\n== bare: PASS ==\n\n== gate 2: SKIP ==\n\n" +
		"== ragged: PASS ==\n\n        only\n        ----  -----  ----\n  pass  a     extra  more\n  pass\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestMarkdownFolds(t *testing.T) {
	g := result.Gate{Name: "big", Table: &result.Table{Columns: []string{"kernel", "regs"}}}
	for i := range 25 {
		status := result.Pass
		if i < 3 {
			status = result.Fail
		}
		g.Table.Rows = append(g.Table.Rows, result.Row{Status: status,
			Cells: []string{"kg::k<" + strconv.Itoa(i) + ">", strconv.Itoa(100 + i)}})
		if i <= foldRows {
			g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Kernel: "kg::k<" + strconv.Itoa(i) + ">",
				Metric: "registers", Value: result.Num(100 + i), Limit: result.Num(100), Message: "over"})
		}
	}
	g.Decide(true)
	var buf bytes.Buffer
	if err := Render(&buf, result.New("", g), Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	checkMarkdownSafe(t, out)
	for _, want := range []string{
		"\n<details><summary>Findings (21)</summary>\n\n| Severity | Kernel | Metric | Value | Limit | Message |\n",
		"\n<details><summary>Table (25 rows, 3 failing)</summary>\n\n| Status | kernel | regs |\n",
		"| ✅ pass | kg::k&lt;24&gt; | 124 |\n\n</details>\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	// Worst first: k<20> is the furthest over the limit.
	if i, j := strings.Index(out, "kg::k&lt;20&gt; | registers"), strings.Index(out, "kg::k&lt;1&gt; | registers"); i < 0 || j < 0 || i > j {
		t.Errorf("findings are not worst first:\n%s", out)
	}
	// 20 rows stay unfolded.
	g.Table.Rows = g.Table.Rows[:foldRows]
	g.Findings = nil
	buf.Reset()
	if err := Render(&buf, result.New("", g), Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<details>") {
		t.Errorf("a table of %d rows was folded:\n%s", foldRows, buf.String())
	}
}

func TestFindingLocation(t *testing.T) {
	g := result.Gate{Name: "build", Findings: []result.Finding{
		{Severity: result.Error, File: "kernels/flash_fwd.cu", Line: 42, Message: "error: expected a \";\""},
		{Severity: result.Warning, File: "kernels/softmax.cu", Message: "no line"},
	}}
	g.Decide(true)
	r := result.New("", g)
	var text, mdOut bytes.Buffer
	if err := Render(&text, r, Text, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Render(&mdOut, r, Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  error    kernels/flash_fwd.cu:42: error: expected a \";\"\n", "  warning  kernels/softmax.cu: no line\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if want := "| ❌ error | kernels/flash\\_fwd.cu:42: error: expected a \";\" |"; !strings.Contains(mdOut.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, mdOut.String())
	}
}

func TestFindingLocationColumn(t *testing.T) {
	g := result.Gate{Name: "guard", Findings: []result.Finding{
		{Severity: result.Error, File: "ci/run.sh", Line: 3, Column: 14, Metric: "host-reboot", Message: "`sudo reboot` reboots the machine"},
		{Severity: result.Warning, File: "ci/x.sh", Column: 2, Message: "a column without a line is not shown"},
	}}
	g.Decide(true)
	r := result.New("", g)
	var text, mdOut, js bytes.Buffer
	for _, out := range []struct {
		w *bytes.Buffer
		f Format
	}{{&text, Text}, {&mdOut, Markdown}, {&js, JSON}} {
		if err := Render(out.w, r, out.f, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{" ci/run.sh:3:14: `sudo reboot` reboots the machine\n", " ci/x.sh: a column"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if want := "ci/run.sh:3:14: "; !strings.Contains(mdOut.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, mdOut.String())
	}
	if want := `"line": 3,
          "column": 14,`; !strings.Contains(js.String(), want) {
		t.Errorf("JSON lacks %q:\n%s", want, js.String())
	}
}

// Every row of a table is rendered as wide as its widest: one row of 20,000 cells in a
// result made elsewhere (stage A's, which the pull request's code can write) made each of
// the table's rows 20,000 cells wide, rows × widest of work and memory (a result of 2 MB,
// one row of a million empty cells beside 10,000 empty rows, took minutes and tens of GB).
// A report shows at most maxTableColumns columns, and says how many more there are.
func TestWideTableIsCut(t *testing.T) {
	rows := make([]result.Row, 50)
	for i := range rows {
		rows[i] = result.Row{Status: result.Pass, Cells: []string{"k" + strconv.Itoa(i), "32"}}
	}
	rows[7].Cells = make([]string, 20_000)
	g := result.Gate{Name: "ptxas", Table: &result.Table{Columns: []string{"kernel", "regs"}, Rows: rows}}
	g.Decide(true)
	res := result.New("kernel-gate", g)
	for _, f := range []Format{Markdown, Text} {
		var b bytes.Buffer
		if err := Render(&b, res, f, Options{Width: 100}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "19936 more columns are not shown") {
			t.Errorf("%s: the cut is not said:\n%.2000s", f, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := strings.Count(line, "|"); n > maxTableColumns+2 || len(line) > 4000 {
				t.Fatalf("%s: a line of %d bytes and %d cells: the table is not cut to %d columns", f, len(line), n, maxTableColumns)
			}
		}
		if !strings.Contains(out, "k49") {
			t.Errorf("%s: the rows are not all shown:\n%.2000s", f, out)
		}
	}
}
