package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kernel-gate trend on a directory store made by kernel-gate baseline update from recorded
// results: the page, the text, the key filter, and every way the command refuses.
func TestTrendCommand(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	for _, c := range []string{"clean", "spill", "wrong-result"} {
		if code, _, stderr := kg(t, "", "baseline", "update", "--store", store, "--commit", c+"0123456789abcdef", filepath.Join("testdata", "replay", c, "result.json")); code != exitPass {
			t.Fatalf("baseline update %s: exit %d: %s", c, code, stderr)
		}
	}
	page := filepath.Join(t.TempDir(), "trend.html")
	if code, out, stderr := kg(t, "", "trend", "--store", store, "--out", page); code != exitPass || out != "" {
		t.Fatalf("trend: exit %d, stdout %q: %s", code, out, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `<svg class="chart"`); n < 20 || !strings.Contains(string(html), "<h2>NVIDIA H200 (sm_90)</h2>") || !strings.Contains(string(html), "directory "+store) {
		t.Errorf("the page has %d charts:\n%.1000s", n, html)
	}
	code, out, stderr := kg(t, "", "trend", "--store", store, "--format", "text", "--key", "NVIDIA H200/9.0")
	if code != exitPass || !strings.HasPrefix(out, "NVIDIA H200 (sm_90): 3 commits, clean012345… (") ||
		!strings.Contains(out, "kg::flash_fwd<64, 64, false> (sm_90a): registers 153 → 157 (32 to 157); spills up to 3360 B (spill012345…)") {
		t.Errorf("trend --format text: exit %d: %s%s", code, out, stderr)
	}
	code, out, _ = kg(t, "", "trend", "--store", store)
	if code != exitPass || !strings.HasPrefix(out, "<!doctype html>") {
		t.Errorf("trend to standard output: exit %d: %.100s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trend"}, "--store DIR"},
		{[]string{"trend", "--store", filepath.Join(store, "nothing")}, "the store holds no baseline yet"},
		{[]string{"trend", "--store", store, "--key", "NVIDIA L4/sm_89"}, "no baseline for NVIDIA L4 (sm_89) (it holds: NVIDIA H200 (sm_90))"},
		{[]string{"trend", "--store", store, "--key", "NVIDIA L4"}, "write it GPU/arch"},
		{[]string{"trend", "--store", store, "--format", "json"}, "html (the default) or text"},
		{[]string{"trend", "--store", store, "-n", "-1"}, "positive"},
		{[]string{"trend", "--store", store, "extra"}, "no arguments"},
		{[]string{"trend", "--store", store, "--out", filepath.Join(store, "trend.html")}, "inside " + store},
		{[]string{"trend", "--store", "git"}, "token"},
	} {
		if code, _, stderr := kg(t, "", tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, want %d saying %q: %s", tc.args, code, exitUsage, tc.want, stderr)
		}
	}
}

// kernel-gate demo --trend: every recorded case stored in a temporary store and drawn.
func TestDemoTrend(t *testing.T) {
	page := filepath.Join(t.TempDir(), "demo-trend.html")
	code, out, stderr := kg(t, "", "demo", "--trend", "--out", page)
	if code != exitPass {
		t.Fatalf("demo --trend: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Trend of 9 recorded replays (synthetic commit order: clean, divergent-barrier, occupancy, oob, race, slow5, spill, uninit, wrong-result)",
		"Page: " + page + " (",
		"NVIDIA H200 (sm_90): 9 commits, clean (2026-11-27 00:00) … wrong-result (2026-11-27 08:00)",
		"flash_fwd × mission (attention): median 38.58 µs (clean) → 40.67 µs (slow5), +5.4%; measured at 2 of 9 commits",
		"gemm_wmma × mission (gemm): median 267.1 µs (clean) → 242.8 µs (occupancy), -9.1%; measured at 2 of 9 commits",
		"kg::flash_fwd<64, 64, false> (sm_90a): registers 153 → 157 (32 to 157); spills up to 3360 B (spill)",
		"… and ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo --trend does not say %q:\n%s", want, out)
		}
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<strong>replays</strong>", "recorded case wrong-result: recorded 2026-11-27 on NVIDIA H200", `<svg class="chart"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--trend", "--case", "spill"}, "leave out --case"},
		{[]string{"demo", "--trend", "--format", "json"}, "does not apply"},
		{[]string{"demo", "--trend", "--out", filepath.Join("testdata", "replay", "clean", "trend.html")}, "inside testdata/replay"},
	} {
		if code, _, stderr := kg(t, "", tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d saying %s, want %d saying %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
