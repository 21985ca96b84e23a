package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/baseline/trend"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/goldentest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// replayHistory is the history of the recorded cases as baseline entries, one commit each
// in the order given, with each target's head timings.
func replayHistory(t *testing.T, cases ...string) trend.History {
	t.Helper()
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	var entries []baseline.Entry
	for i, name := range cases {
		e, err := baseline.EntryFromResult(readReplay(t, name), name, day.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		e.Replay = "recorded case " + name
		for _, target := range []string{"attention", "gemm", "softmax"} {
			f, err := os.Open(filepath.Join("..", "testdata", "replay", name, target, "bench", "head.json"))
			if err != nil {
				continue // not timed
			}
			bf, err := benchfile.Read(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := e.AddBench(target, bf); err != nil {
				t.Fatal(err)
			}
		}
		entries = append([]baseline.Entry{e}, entries...) // newest first, as a store gives them
	}
	return trend.FromEntries(entries[0].Key(), entries)
}

// trendResult is a small run for the trend section to follow.
func trendResult() result.Result {
	g := result.Gate{Name: "ptxas", Summary: "2 kernels within limits"}
	g.Decide(true)
	return result.New("kernel-gate test", g)
}

func TestTrendGolden(t *testing.T) {
	h := replayHistory(t, "clean", "spill", "wrong-result", "clean", "slow5", "clean")
	hostileName := "kg::k<`|*_[x](javascript:alert(1))` <script>@team\n# heading"
	hostile := trend.FromEntries(baseline.Key{GPU: "NVIDIA <b>H200</b> | x", Arch: "sm_90"}, []baseline.Entry{{
		Commit: "`](javascript:x)|<img>", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Replay: "x",
		Kernels: []baseline.Kernel{{Name: hostileName, Arch: "sm_90a|<", Ptxas: &ptxas.Kernel{Name: hostileName, Registers: i64(40)}}},
		Timings: []baseline.Timing{{Target: "<t>|", Kernel: hostileName, Shape: "*s*", MedianUs: f64(1.5)}},
	}})
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"trend.md", Options{Trend: &Trend{History: h, URL: "https://kernel-gate.github.io/kernel-gate/trend.html"}}},
		{"trend_three.md", Options{Trend: &Trend{History: h, Points: 3, URL: "javascript:alert(1)"}}},
		{"trend_hostile.md", Options{Trend: &Trend{History: hostile, URL: "https://example.com/a b)(<x>"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, trendResult(), Markdown, tt.opts); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, filepath.Join("testdata", tt.name+".golden"), buf.Bytes(), *update)
		})
	}
}

func TestTrendSection(t *testing.T) {
	h := replayHistory(t, "clean", "spill", "slow5")
	var buf bytes.Buffer
	if err := Render(&buf, trendResult(), Markdown, Options{Trend: &Trend{History: h, URL: "https://o.github.io/r/trend.html"}}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"### 📈 Trend on NVIDIA H200 (sm\\_90)",
		"They are replays of recorded runs",
		"[trend page](https://o.github.io/r/trend.html)",
		// flash_fwd × mission (the median of head's round medians, recordings of 2026-11-27):
		// 38.58 µs at clean, not timed at spill (its ptxas gate failed), 40.67 µs at slow5.
		"| flash\\_fwd × mission | attention | 38.58 µs | – | 40.67 µs | `▁·█` | **▲5.4%** |",
		// The spill case's sm_90a build of flash_fwd<64, 64, false> fell to 32 registers.
		"| kg::flash\\_fwd&lt;64, 64, false&gt; | sm\\_90a | 153 | 32 | 148 | ▼5 |",
		// 28 records (the harness's own kernels among them), 4 of them flash_fwd's.
		"The registers of the other 24 kernels × archs did not change over these commits.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the summary lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "### ptxas") > strings.Index(md, "### 📈 Trend") {
		t.Error("the trend comes before the gates")
	}
	// Nothing to show: no section.
	for _, tr := range []*Trend{nil, {}} {
		buf.Reset()
		if err := Render(&buf, trendResult(), Markdown, Options{Trend: tr}); err != nil || strings.Contains(buf.String(), "Trend") {
			t.Errorf("a trend section from %+v: %v\n%s", tr, err, buf.String())
		}
	}
	// Cut to a limit, the trend goes first, and the note names it without a verdict.
	buf.Reset()
	if err := Render(&buf, trendResult(), Markdown, Options{Limit: 700, Trend: &Trend{History: h}}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); len(got) > 700 || !strings.Contains(got, "### ptxas") || !strings.Contains(got, "left out from the trend: its median times (6 rows)") {
		t.Errorf("cut to 700 bytes:\n%s", got)
	}
}

func TestSparkline(t *testing.T) {
	v := func(xs ...float64) []trend.Value {
		var out []trend.Value
		for _, x := range xs {
			out = append(out, trend.Value{Set: x >= 0, V: x})
		}
		return out
	}
	for _, tt := range []struct {
		vals         []trend.Value
		spark, delta string
	}{
		{v(1, 2, 3, 4, 5, 6, 7, 8), "`▁▂▃▄▅▆▇█`", "**▲700.0%**"},
		{v(10, -1, 10), "`▅·▅`", "±0%"},
		{v(20, 10), "`█▁`", "▼50.0%"},
		{v(-1, 5), "`·▅`", ""},
		{v(-1, -1), "", ""},
	} {
		if got := sparkline(tt.vals); got != tt.spark {
			t.Errorf("sparkline(%v) = %q, want %q", tt.vals, got, tt.spark)
		}
		if got := trendChange(tt.vals, true); got != tt.delta {
			t.Errorf("trendChange(%v) = %q, want %q", tt.vals, got, tt.delta)
		}
	}
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
