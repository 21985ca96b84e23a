package ncu

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capture returns a file of testdata/ncu-h200 (real ncu 2025.3.1.0 output from an H200;
// its README says how each was made).
func capture(t testing.TB, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ncu-h200", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func parse(t *testing.T, in, name string) *Report {
	t.Helper()
	rep, err := Parse(strings.NewReader(in), name)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return rep
}

// metric returns launch i's metric, failing the test when it is absent.
func metric(t *testing.T, rep *Report, i int, name string) Metric {
	t.Helper()
	if i >= len(rep.Launches) {
		t.Fatalf("launch %d of %d", i, len(rep.Launches))
	}
	m, ok := rep.Launches[i].Metric(name)
	if !ok {
		t.Fatalf("launch %d has no %s: %+v", i, name, rep.Launches[i].Metrics)
	}
	return m
}

func TestParseMetricsCapture(t *testing.T) {
	rep := parse(t, capture(t, "ncu-metrics.csv"), "ncu-metrics.csv")
	if len(rep.Launches) != 6 || rep.Headers != 1 || len(rep.Problems) != 0 || len(rep.Errors) != 0 || rep.NoKernels {
		t.Fatalf("launches %d, headers %d, problems %q, errors %q", len(rep.Launches), rep.Headers, rep.Problems, rep.Errors)
	}
	if rep.OtherLines != 0 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "unmodified GPU clocks") {
		t.Errorf("other lines %d, warnings %q", rep.OtherLines, rep.Warnings)
	}
	l := rep.Launches[0]
	want := Launch{Input: "ncu-metrics.csv", ID: 0, ProcessID: "581", Process: "h", Host: "127.0.0.1",
		Kernel:  "void flash_fwd<64, 64, 0>(const __half *, const __half *, const __half *, __half *, int, float)",
		Context: "1", Stream: "7", BlockSize: "(128, 1, 1)", GridSize: "(8, 16, 1)", Device: "0", CC: "9.0", Line: 5}
	got := l
	got.Name, got.Metrics, got.Rules = want.Name, nil, nil
	if got.Input != want.Input || got.ID != want.ID || got.ProcessID != want.ProcessID || got.Process != want.Process ||
		got.Host != want.Host || got.Kernel != want.Kernel || got.Context != want.Context || got.Stream != want.Stream ||
		got.BlockSize != want.BlockSize || got.GridSize != want.GridSize || got.Device != want.Device || got.CC != want.CC || got.Line != want.Line {
		t.Errorf("launch 0 = %+v\nwant %+v", got, want)
	}
	if l.Name.Short != "flash_fwd<64, 64, 0>" || l.Name.Base != "flash_fwd<64, 64, 0>" || l.Name.Demangled != want.Kernel {
		t.Errorf("name forms %+v", l.Name)
	}
	if len(l.Metrics) != 7 || len(l.Rules) != 0 {
		t.Errorf("launch 0: %d metrics, %d rules", len(l.Metrics), len(l.Rules))
	}
	for _, tt := range []struct {
		launch    int
		name      string
		unit, raw string
		value     float64
	}{
		{0, "dram__bytes_read.sum", "byte", "3,176,448", 3176448},
		{0, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "%", "5.32", 5.32},
		{0, "gpu__time_duration.sum", "ns", "36,768", 36768},
		{0, "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "1.80", 1.8},
		{0, "launch__grid_size", "", "128", 128},
		{0, "launch__registers_per_thread", "register/thread", "153", 153},
		{1, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "%", "5.43", 5.43},
		{3, "gpu__time_duration.sum", "ns", "37,056", 37056},
		{5, "dram__bytes_read.sum", "byte", "3,180,288", 3180288},
		{5, "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "6.08", 6.08},
	} {
		m := metric(t, rep, tt.launch, tt.name)
		if m.Kind != Number || m.Value != tt.value || m.Unit != tt.unit || m.Raw != tt.raw || m.Section != "Command line profiler metrics" {
			t.Errorf("launch %d %s = %+v, want %v %q (%q)", tt.launch, tt.name, m, tt.value, tt.unit, tt.raw)
		}
	}
	for i, kernel := range []string{"flash_fwd<64, 64, 0>", "flash_fwd<64, 64, 0>", "flash_fwd<64, 64, 0>", "flash_fwd<64, 64, 0>", "flash_fwd<64, 64, 1>", "flash_fwd<64, 64, 1>"} {
		if l := rep.Launches[i]; l.ID != i || l.Name.Short != kernel {
			t.Errorf("launch %d: ID %d, %s; want %s", i, l.ID, l.Name.Short, kernel)
		}
	}
}

func TestParseBaseUnitsWithProgramOutput(t *testing.T) {
	rep := parse(t, capture(t, "ncu-base-units.csv"), "ncu-base-units.csv")
	if len(rep.Launches) != 1 || len(rep.Problems) != 0 || rep.OtherLines != 6 {
		t.Fatalf("launches %d, problems %q, other lines %d (the harness's JSON)", len(rep.Launches), rep.Problems, rep.OtherLines)
	}
	l := rep.Launches[0]
	if l.Name.Short != "row_softmax<256>" || l.GridSize != "(8192, 1, 1)" || l.ProcessID != "733" {
		t.Errorf("launch %+v", l)
	}
	for name, want := range map[string]float64{
		"dram__throughput.avg.pct_of_peak_sustained_elapsed":             42.93,
		"dram__bytes_read.sum":                                           33570048,
		"launch__grid_size":                                              8192,
		"gpu__time_duration.sum":                                         22592,
		"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": 0.62,
		"sm__warps_active.avg.pct_of_peak_sustained_active":              89.99,
	} {
		if m := metric(t, rep, 0, name); m.Kind != Number || m.Value != want {
			t.Errorf("%s = %+v, want %v", name, m, want)
		}
	}
}

func TestParseSectionWithRule(t *testing.T) {
	rep := parse(t, capture(t, "ncu-sol.csv"), "ncu-sol.csv")
	if len(rep.Launches) != 1 || len(rep.Problems) != 0 {
		t.Fatalf("launches %d, problems %q", len(rep.Launches), rep.Problems)
	}
	l := rep.Launches[0]
	if len(l.Metrics) != 10 || len(l.Rules) != 1 {
		t.Fatalf("%d metrics, %d rules", len(l.Metrics), len(l.Rules))
	}
	r := l.Rules[0]
	if r.Name != "SOLBottleneck" || r.Type != "OPT" || r.Section != "SpeedOfLight" || r.Line != 21 ||
		!strings.HasPrefix(r.Description, "This kernel grid is too small to fill the available resources on this device, resulting in only 0.3 full waves") {
		t.Errorf("rule %+v", r)
	}
	for name, want := range map[string]float64{"DRAM Frequency": 3198026315.79, "SM Active Cycles": 55097.38, "DRAM Throughput": 1.81, "Duration": 36480} {
		if m := metric(t, rep, 0, name); m.Kind != Number || m.Value != want || m.Section != "GPU Speed Of Light Throughput" {
			t.Errorf("%s = %+v, want %v", name, m, want)
		}
	}
}

func TestParseBadMetric(t *testing.T) {
	rep := parse(t, capture(t, "ncu-badmetric.csv"), "ncu-badmetric.csv")
	if len(rep.Launches) != 0 || rep.Headers != 0 || len(rep.Errors) != 3 {
		t.Fatalf("launches %d, headers %d, errors %q", len(rep.Launches), rep.Headers, rep.Errors)
	}
	if !strings.HasPrefix(rep.Errors[0], `Failed to find metric regex:^no_such_metric_xyz\.`) ||
		rep.Errors[2] != "The application returned an error code (9)." {
		t.Errorf("errors %q", rep.Errors)
	}
}

// The same capture with CRLF line ends and a byte-order mark reads the same.
func TestParseCRLF(t *testing.T) {
	in := capture(t, "ncu-metrics.csv")
	want := parse(t, in, "x")
	got := parse(t, "\ufeff"+strings.ReplaceAll(in, "\n", "\r\n"), "x")
	if len(got.Launches) != len(want.Launches) || len(got.Problems) != 0 {
		t.Fatalf("CRLF: %d launches, problems %q", len(got.Launches), got.Problems)
	}
	for i := range want.Launches {
		for j, m := range want.Launches[i].Metrics {
			g := got.Launches[i].Metrics[j]
			if g.Name != m.Name || g.Raw != m.Raw || g.Value != m.Value || g.Unit != m.Unit {
				t.Errorf("launch %d metric %d: %+v, want %+v", i, j, g, m)
			}
		}
	}
}

const hdr = `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"` + "\n"

// row makes a metrics-mode row like the captures'.
func row(id, pid, kernel, metric, unit, value string) string {
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	return strings.Join([]string{q(id), q(pid), q("h"), q("127.0.0.1"), q(kernel), q("1"), q("7"), q("(128, 1, 1)"), q("(8, 16, 1)"),
		q("0"), q("9.0"), q("Command line profiler metrics"), q(metric), q(unit), q(value)}, ",") + "\n"
}

func TestParseEdgeCases(t *testing.T) {
	const dram = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
	const tmpl = `void kg::attn<kg::Cfg<64, 128>, "x,y">(const float *, int)`
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, rep *Report)
	}{
		{"n/a is a flag, not a number", hdr + row("0", "1", "void k()", dram, "%", "n/a"), func(t *testing.T, rep *Report) {
			if m := metric(t, rep, 0, dram); m.Kind != NA || m.Raw != "n/a" {
				t.Errorf("%+v", m)
			}
		}},
		{"commas and doubled quotes in a quoted kernel name", hdr + row("0", "1", tmpl, dram, "%", "1,234.5"), func(t *testing.T, rep *Report) {
			l := rep.Launches[0]
			if l.Kernel != tmpl || l.Name.Short != `kg::attn<kg::Cfg<64, 128>, "x,y">` || l.Name.Base != `attn<kg::Cfg<64, 128>, "x,y">` {
				t.Errorf("kernel %q, name %+v", l.Kernel, l.Name)
			}
			if m := metric(t, rep, 0, dram); m.Value != 1234.5 {
				t.Errorf("%+v", m)
			}
		}},
		{"a header again for a second process", hdr + row("0", "1", "void a()", dram, "%", "1") + "==PROF== Disconnected from process 1\nprogram output\n" +
			hdr + row("0", "2", "void b()", dram, "%", "2"), func(t *testing.T, rep *Report) {
			if rep.Headers != 2 || len(rep.Launches) != 2 || rep.Launches[1].Kernel != "void b()" || rep.Launches[1].ProcessID != "2" || rep.OtherLines != 1 {
				t.Errorf("headers %d, launches %+v, other %d", rep.Headers, rep.Launches, rep.OtherLines)
			}
		}},
		{"truncated last line", hdr + row("0", "1", "void a()", dram, "%", "1") + `"1","1","h","127.0.0.1","void a()","1","7","(128`, func(t *testing.T, rep *Report) {
			if len(rep.Launches) != 1 || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "x:3: the last line is a partial table row") {
				t.Errorf("launches %d, problems %q", len(rep.Launches), rep.Problems)
			}
		}},
		{"last line cut after a comma", hdr + strings.TrimSuffix(row("0", "1", "void a()", dram, "%", "1"), `"1"`+"\n"), func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "partial table row") {
				t.Errorf("problems %q", rep.Problems)
			}
		}},
		{"last line cut after an opening quote", hdr + strings.TrimSuffix(row("0", "1", "void a()", dram, "%", "1"), `1"`+"\n"), func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "partial table row") {
				t.Errorf("problems %q", rep.Problems)
			}
		}},
		{"a complete last line without a line end", hdr + strings.TrimSuffix(row("0", "1", "void a()", dram, "%", "1"), "\n"), func(t *testing.T, rep *Report) {
			if len(rep.Launches) != 1 || len(rep.Problems) != 0 {
				t.Errorf("launches %d, problems %q", len(rep.Launches), rep.Problems)
			}
		}},
		{"no rows: no kernels profiled", "==PROF== Connected to process 9 (/x/h)\n==PROF== Disconnected from process 9\n==WARNING== No kernels were profiled.\n", func(t *testing.T, rep *Report) {
			if !rep.NoKernels || len(rep.Launches) != 0 {
				t.Errorf("%+v", rep)
			}
		}},
		{"a header without rows", hdr, func(t *testing.T, rep *Report) {
			if rep.Headers != 1 || len(rep.Launches) != 0 || len(rep.Problems) != 0 {
				t.Errorf("%+v", rep)
			}
		}},
		{"raw page layout", `"ID","Process ID","Process Name","Kernel Name","dram__bytes_read.sum"` + "\n" + `"","","","","byte"` + "\n" + `"0","1","h","k","12"` + "\n", func(t *testing.T, rep *Report) {
			if m := metric(t, rep, 0, "dram__bytes_read.sum"); len(rep.Problems) != 0 || len(rep.Launches) != 1 || m.Value != 12 || m.Unit != "byte" || m.Line != 3 {
				t.Errorf("problems %q, launches %d, %+v", rep.Problems, len(rep.Launches), m)
			}
		}},
		{"raw page: a units line of another width", `"ID","Kernel Name","m"` + "\n" + `"",""` + "\n" + `"0","k","12"` + "\n", func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "x:2: unreadable units line") || len(rep.Launches) != 0 {
				t.Errorf("problems %q, launches %d", rep.Problems, len(rep.Launches))
			}
		}},
		{"raw page: a row cut short is malformed", `"ID","Kernel Name","m","n"` + "\n" + `"","","",""` + "\n" + `"0","k","12"` + "\n", func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "x:3: malformed ncu CSV row (too few fields)") || len(rep.Launches) != 0 {
				t.Errorf("problems %q, launches %d", rep.Problems, len(rep.Launches))
			}
		}},
		{"raw page without a metric column", `"ID","Kernel Name"` + "\n" + `"",""` + "\n" + `"0","k"` + "\n", func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], `no "metric" column`) || len(rep.Launches) != 0 {
				t.Errorf("problems %q, launches %d", rep.Problems, len(rep.Launches))
			}
		}},
		{"summary: invocations not a number", `"Process ID","Kernel Name","Invocations","Metric Name","Metric Unit","Minimum","Maximum","Average"` + "\n" + `"1","k","many","m","","1","2","1.5"` + "\n", func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], `x:2: malformed ncu summary row (Invocations "many")`) || len(rep.Launches) != 0 {
				t.Errorf("problems %q, launches %d", rep.Problems, len(rep.Launches))
			}
		}},
		{"summary: a minimum that is not a number", `"Process ID","Kernel Name","Invocations","Metric Name","Metric Unit","Minimum","Maximum","Average"` + "\n" + `"1","k","2","m","","n/a","2","1.5"` + "\n", func(t *testing.T, rep *Report) {
			if m := metric(t, rep, 0, "m"); m.Kind != Text || len(rep.Problems) != 0 {
				t.Errorf("problems %q, %+v", rep.Problems, m)
			}
		}},
		{"a table of yet another shape", `"Process ID","Kernel Name","Something"` + "\n" + `"1","k","2"` + "\n", func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], `no "ID", "Metric Name", "Metric Unit", "Metric Value" column`) || len(rep.Launches) != 0 {
				t.Errorf("problems %q, launches %d", rep.Problems, len(rep.Launches))
			}
		}},
		{"malformed row in the middle", hdr + `"0","1","h"` + "\n" + row("1", "1", "void a()", dram, "%", "1"), func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "x:2: malformed ncu CSV row (too few fields)") || len(rep.Launches) != 1 {
				t.Errorf("problems %q", rep.Problems)
			}
		}},
		{"unbalanced quotes in the middle", hdr + `"0","1","h","127.0.0.1","void a(","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","S","gpu__time_duration.sum","ns","1` + "\n" + row("1", "1", "void a()", dram, "%", "1"), func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "x:2: malformed ncu CSV row (unbalanced quotes)") || len(rep.Launches) != 1 {
				t.Errorf("problems %q", rep.Problems)
			}
		}},
		{"program output between rows is not a row", hdr + "\"quoted program output\"\n{\"json\": 1}\n" + row("0", "1", "void a()", dram, "%", "1"), func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 0 || rep.OtherLines != 2 || len(rep.Launches) != 1 {
				t.Errorf("problems %q, other %d", rep.Problems, rep.OtherLines)
			}
		}},
		{"mangled names (--print-kernel-base mangled)", hdr + row("0", "1", "_Z9flash_fwdILi64ELi64ELi0EEvPK6__halfS2_S2_PS0_if", dram, "%", "1"), func(t *testing.T, rep *Report) {
			n := rep.Launches[0].Name
			if n.Short != "flash_fwd<64, 64, 0>" || n.Demangled != "void flash_fwd<64, 64, 0>(__half const*, __half const*, __half const*, __half*, int, float)" {
				t.Errorf("%+v", n)
			}
		}},
		{"older layout without launch columns", `"ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value"` + "\n" +
			`"0","1","h","127.0.0.1","k(int)","2020-Jan-01 00:00:00","1","7","Command line profiler metrics","gpu__time_duration.sum","usecond","36.77"` + "\n", func(t *testing.T, rep *Report) {
			if m := metric(t, rep, 0, "gpu__time_duration.sum"); m.Value != 36.77 || m.Unit != "usecond" || rep.Launches[0].GridSize != "" {
				t.Errorf("%+v", m)
			}
		}},
		{"a log kernel-gate cut at its size limit", hdr + row("0", "1", "void a()", dram, "%", "1") + "\n[kernel-gate: output cut here: the log keeps the first part only]\n", func(t *testing.T, rep *Report) {
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "x:4: the log was cut here") {
				t.Errorf("problems %q", rep.Problems)
			}
		}},
		{"ncu messages of other kinds", "==INFO== something\n==PROF== Connected\n", func(t *testing.T, rep *Report) {
			if len(rep.Launches) != 0 || rep.OtherLines != 0 {
				t.Errorf("%+v", rep)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, parse(t, tt.in, "x")) })
	}
}

func TestParseNotNCU(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"another tool": "ptxas info    : Used 32 registers\n",
		"only json":    `{"schema": "kernel-gate/bench/v1"}` + "\n",
	} {
		rep, err := Parse(strings.NewReader(in), name)
		if rep != nil || !errors.Is(err, ErrNotNCU) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, %v", name, rep, err)
		}
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		raw  string
		kind Kind
		v    float64
	}{
		{"3,176,448", Number, 3176448},
		{"3,198,026,315.79", Number, 3198026315.79},
		{"1.80", Number, 1.8},
		{"128", Number, 128},
		{"-2.5", Number, -2.5},
		{"1e3", Number, 1000},
		{"1,234.5e-1", Number, 123.45},
		{" 42 ", Number, 42},
		{"n/a", NA, 0},
		{"N/A", NA, 0},
		{"", Empty, 0},
		{"1,80", Text, 0},      // a decimal comma is not a thousands separator
		{"1234,567", Text, 0},  // a group of four
		{",123", Text, 0},      // no leading digits
		{"1,234,", Text, 0},    // a trailing comma
		{"12,34,567", Text, 0}, // a short middle group
		{"nan", Text, 0},       // not a number
		{"inf", Text, 0},       // nor this
		{"1e999", Text, 0},     // out of range
		{"5.", Text, 0},        // no decimals after the point
		{"1.2;3.4", Text, 0},   // instance values
		{"CachePreferNone", Text, 0},
	}
	for _, tt := range tests {
		k, v := parseValue(tt.raw)
		if k != tt.kind || (k == Number && math.Abs(v-tt.v) > 1e-9*math.Abs(tt.v)) {
			t.Errorf("parseValue(%q) = %s %v, want %s %v", tt.raw, k, v, tt.kind, tt.v)
		}
	}
}

func TestSignatureName(t *testing.T) {
	tests := []struct{ in, short, base string }{
		{"void flash_fwd<64, 64, 0>(const __half *, const __half *, const __half *, __half *, int, float)", "flash_fwd<64, 64, 0>", "flash_fwd<64, 64, 0>"},
		{"void kg::flash_fwd<64, 64, false>(const __half *, int)", "kg::flash_fwd<64, 64, false>", "flash_fwd<64, 64, false>"},
		{"row_softmax_c(const float *, float *, int)", "row_softmax_c", "row_softmax_c"},
		{"(anonymous namespace)::k<1>(int)", "(anonymous namespace)::k<1>", "k<1>"},
		{"void f<(int)3>(int)", "f<(int)3>", "f<(int)3>"},
		{"void ns::S<a::b>::run(int)", "ns::S<a::b>::run", "run"},
		{"plain", "plain", "plain"},
		{"ns::", "ns::", "ns::"},
		{"", "", ""},
	}
	for _, tt := range tests {
		n := signatureName(tt.in)
		if n.Short != tt.short || n.Base != tt.base || n.Demangled != tt.in || n.Mangled != tt.in {
			t.Errorf("signatureName(%q) = %+v, want short %q base %q", tt.in, n, tt.short, tt.base)
		}
	}
}

func TestMerge(t *testing.T) {
	a := parse(t, capture(t, "ncu-metrics.csv"), "a.csv")
	b := parse(t, capture(t, "ncu-metrics.csv"), "b.csv")
	m := Merge(a, nil, b)
	if len(m.Launches) != 12 || len(m.Inputs) != 2 || m.Headers != 2 || m.Launches[6].Input != "b.csv" {
		t.Errorf("merged: %d launches, inputs %q", len(m.Launches), m.Inputs)
	}
}

// A line far longer than any ncu prints is cut, said, and does not stop the rest.
func TestParseLongLine(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	rep := parse(t, hdr+long+"\n"+row("0", "1", "void a()", "gpu__time_duration.sum", "ns", "1"), "x")
	if len(rep.Launches) != 1 || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "longer than 256 KiB") {
		t.Errorf("launches %d, problems %q", len(rep.Launches), rep.Problems)
	}
}

// ncu's other layouts of the same harness run (testdata/ncu-h200/README.md "Other CSV
// layouts"): the raw page has one row per launch and a units line; the summaries one row
// per kernel and metric with Minimum, Maximum and Average over its invocations.
func TestParseOtherLayoutCaptures(t *testing.T) {
	type want struct {
		launches, invocations int
		kernel                string  // the first launch's kernel (a mangled name demangles with its scope)
		regs                  float64 // launch__registers_per_thread of the first launch
		timeMin, timeMax      float64 // gpu__time_duration.sum's range over flash_fwd<64, 64, 0>
	}
	for file, w := range map[string]want{
		"ncu-raw.csv":                {launches: 6, kernel: "flash_fwd<64, 64, 0>", regs: 153, timeMin: 35840, timeMax: 36512},
		"ncu-summary-per-kernel.csv": {launches: 2, invocations: 4, kernel: "flash_fwd<64, 64, 0>", regs: 153, timeMin: 35712, timeMax: 37120},
		"ncu-summary-per-gpu.csv":    {launches: 2, invocations: 4, kernel: "flash_fwd<64, 64, 0>", regs: 153, timeMin: 35968, timeMax: 36992},
		"ncu-details-mangled.csv":    {launches: 6, kernel: "kg::flash_fwd<64, 64, false>", regs: 153, timeMin: 36832, timeMax: 37280},
	} {
		t.Run(file, func(t *testing.T) {
			rep := parse(t, capture(t, file), file)
			if len(rep.Launches) != w.launches || rep.Headers != 1 || len(rep.Problems) != 0 || len(rep.Errors) != 0 {
				t.Fatalf("launches %d, headers %d, problems %q, errors %q", len(rep.Launches), rep.Headers, rep.Problems, rep.Errors)
			}
			l := rep.Launches[0]
			if l.Name.Short != w.kernel || l.BlockSize != "(128, 1, 1)" || l.GridSize != "(8, 16, 1)" || l.CC != "9.0" || l.Invocations != w.invocations {
				t.Errorf("first launch %q block %q grid %q cc %q invocations %d", l.Name.Short, l.BlockSize, l.GridSize, l.CC, l.Invocations)
			}
			if m := metric(t, rep, 0, "launch__registers_per_thread"); m.Kind != Number || m.Value != w.regs || m.Unit != "register/thread" {
				t.Errorf("registers %+v", m)
			}
			if m := metric(t, rep, 0, "launch__block_size"); m.Kind != Number || m.Value != 128 {
				t.Errorf("block size %+v", m)
			}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, l := range rep.Launches {
				if l.Name.Short != w.kernel {
					continue
				}
				m, ok := l.Metric("gpu__time_duration.sum")
				if !ok || m.Kind != Number || m.Unit != "ns" {
					t.Fatalf("launch %d: gpu__time_duration.sum %+v", l.ID, m)
				}
				if l.Invocations > 0 {
					lo, hi = min(lo, m.Min), max(hi, m.Max)
				} else {
					lo, hi = min(lo, m.Value), max(hi, m.Value)
				}
			}
			if lo != w.timeMin || hi != w.timeMax {
				t.Errorf("%s time %v..%v, want %v..%v", w.kernel, lo, hi, w.timeMin, w.timeMax)
			}
		})
	}
}
