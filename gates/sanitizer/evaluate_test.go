package sanitizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// capturedRuns parses real captures (with the tool their names give).
func capturedRuns(t *testing.T, files ...string) []Run {
	t.Helper()
	var runs []Run
	for _, f := range files {
		rs, err := parseCapture(t, f, toolFromName(f), readCapture(t, f))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, rs...)
	}
	return runs
}

func evaluate(t *testing.T, runs []Run, launches map[string]int, cfg Config) result.Gate {
	t.Helper()
	g, err := Evaluate(runs, launches, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "sanitizer" || g.Findings == nil || g.Table == nil {
		t.Fatalf("gate %+v", g)
	}
	return g
}

// findings renders findings as "severity metric kernel file:line value | message".
func findings(g result.Gate) []string {
	var out []string
	for _, f := range g.Findings {
		v := "-"
		if f.Value != nil {
			v = fmt.Sprint(*f.Value)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s:%d %s | %s", f.Severity, f.Metric, orDash(f.Kernel), orDash(f.File), f.Line, v, f.Message))
	}
	return out
}

func TestEvaluatePaddedOOB(t *testing.T) {
	g := evaluate(t, capturedRuns(t, "sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt"), nil, Config{})
	want := []string{
		"error memcheck/out-of-bounds oob_write bugs.cu:10 100 | memcheck: out-of-bounds __global__ write of size 4 bytes in oob_write(float *, int) at bugs.cu:10, thread (0,0,0) block (1,0,0); 100 times",
		"error memcheck/not-printed - -:0 157 | memcheck (cs_memcheck_oob_padding.txt): 157 more errors were counted but not printed (the print limit): their sites are unknown, so they can be neither located nor suppressed; raise --print-limit",
	}
	if err := matchLines(findings(g), want); err != nil {
		t.Error(err)
	}
	if g.Verdict != result.Fail || g.Summary != "memcheck: 257 errors at 1 site (157 not printed)" {
		t.Errorf("verdict %s summary %q", g.Verdict, g.Summary)
	}
	if got := strings.Join(g.Table.Rows[0].Cells, "|"); got != "memcheck|out-of-bounds|oob_write|bugs.cu:10|100|error" || g.Table.Rows[0].Status != result.Fail {
		t.Errorf("row %q", got)
	}
	var data struct {
		Runs []struct {
			Tool       string   `json:"tool"`
			Errors     int      `json:"errors"`
			NotPrinted int      `json:"not_printed"`
			Records    []Record `json:"records"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(g.Data, &data); err != nil || len(data.Runs) != 1 || data.Runs[0].Errors != 257 || data.Runs[0].NotPrinted != 157 || data.Runs[0].Records[0].Count != 100 {
		t.Errorf("data %s: %v", g.Data, err)
	}
}

// TestEvaluateGrouping: 257 identical records (the real record, repeated with other
// threads) are one finding with Count 257.
func TestEvaluateGrouping(t *testing.T) {
	var b strings.Builder
	b.WriteString("========= COMPUTE-SANITIZER\n")
	for i := 0; i < 257; i++ {
		fmt.Fprintf(&b, `========= Invalid __global__ write of size 4 bytes
=========     at oob_write(float *, int)+0x90 in bugs.cu:10
=========     by thread (%d,0,0) in block (1,0,0)
=========     Access to 0x7ff41c800%03x is out of bounds
=========     and is %d bytes after the nearest allocation at 0x7ff41c800000 of size 1,024 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: main [0x8f5b] in bugs
========= 
`, i, 0x400+4*i, 1+4*i)
	}
	b.WriteString("========= ERROR SUMMARY: 257 errors\n")
	runs := mustParse(t, b.String(), "")
	if len(runs) != 1 || len(runs[0].Records) != 1 || runs[0].Records[0].Count != 257 || runs[0].Records[0].Thread != "(0,0,0)" {
		t.Fatalf("%+v", runs)
	}
	g := evaluate(t, runs, nil, Config{})
	if len(g.Findings) != 1 || !strings.HasSuffix(g.Findings[0].Message, "thread (0,0,0) block (1,0,0); 257 times") || *g.Findings[0].Value != 257 {
		t.Errorf("%q", findings(g))
	}
}

func TestEvaluateLaunches(t *testing.T) {
	clean := capturedRuns(t, "sanitizer-h200-cuda13.0/cs_racecheck_clean.txt", "sanitizer-h200-cuda13.0/cs_synccheck_clean.txt")
	tests := []struct {
		name     string
		launches map[string]int
		verdict  result.Verdict
		want     []string
	}{
		{"unknown", nil, result.Pass, []string{
			"warning racecheck/launch - -:0 - | racecheck (cs_racecheck_clean.txt): could not confirm that a kernel was launched (compute-sanitizer does not report launches and no launch count was given); a run that launched nothing passes without checking anything",
			"warning synccheck/launch - -:0 - | synccheck (cs_synccheck_clean.txt): could not confirm that a kernel was launched",
		}},
		{"none", map[string]int{"*": 0}, result.Fail, []string{
			"error racecheck/launch - -:0 0 | racecheck (cs_racecheck_clean.txt): no kernel was launched: a clean sanitizer run proves nothing",
			"error synccheck/launch - -:0 0 | synccheck (cs_synccheck_clean.txt): no kernel was launched: a clean sanitizer run proves nothing",
		}},
		{"one tool", map[string]int{ToolRacecheck: 3, ToolSynccheck: 0}, result.Fail, []string{
			"error synccheck/launch - -:0 0 | synccheck (cs_synccheck_clean.txt): no kernel was launched",
		}},
		{"known", map[string]int{"*": 3}, result.Pass, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := evaluate(t, clean, tt.launches, Config{})
			if err := matchPrefixes(findings(g), tt.want); err != nil {
				t.Error(err)
			}
			if g.Verdict != tt.verdict {
				t.Errorf("verdict %s", g.Verdict)
			}
		})
	}
	// A record that proves a launch needs no count.
	g := evaluate(t, capturedRuns(t, "sanitizer-h200-cuda13.0/cs_synccheck_sync.txt"), nil, Config{})
	for _, f := range g.Findings {
		if strings.HasSuffix(f.Metric, "/launch") {
			t.Errorf("launch finding with a device error: %s", f.Message)
		}
	}
	var data Data
	g = evaluate(t, clean, map[string]int{ToolRacecheck: 2}, Config{})
	if err := json.Unmarshal(g.Data, &data); err != nil || data.Runs[0].Launches == nil || *data.Runs[0].Launches != 2 || data.Runs[1].Launches != nil {
		t.Errorf("launches in data: %s %v", g.Data, err)
	}
}

// matchPrefixes compares findings with expected prefixes, in order.
func matchPrefixes(got, want []string) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d findings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range got {
		if !strings.HasPrefix(got[i], want[i]) {
			return fmt.Errorf("finding %d:\n got %s\nwant %s…", i, got[i], want[i])
		}
	}
	return nil
}

func TestEvaluatePolicies(t *testing.T) {
	leaks := capturedRuns(t, "sanitizer-h200-cuda13.0/cs_memcheck_clean.txt")
	one := map[string]int{"*": 1}
	g := evaluate(t, leaks, one, Config{})
	if g.Verdict != result.Fail || g.Count(result.Error) != 4 ||
		findings(g)[0] != "error memcheck/leak - -:0 1 | memcheck: leak: 1024 bytes allocated at main+0x8ce0, never freed; once" {
		t.Errorf("default leaks: %s %q", g.Verdict, findings(g))
	}
	g = evaluate(t, leaks, one, decode(t, "sanitizer:\n  leaks: warning\n"))
	if g.Verdict != result.Pass || g.Count(result.Warning) != 4 || !strings.HasSuffix(g.Findings[0].Message, "(sanitizer.leaks: warning, kernel-gate.yml:2)") {
		t.Errorf("leaks warning: %s %q", g.Verdict, findings(g))
	}
	g = evaluate(t, leaks, one, Config{Leaks: PolicyIgnore})
	if g.Verdict != result.Pass || len(g.Findings) != 0 || g.Table.Rows[0].Status != result.Skip || g.Table.Rows[0].Cells[5] != "ignored (sanitizer.leaks)" {
		t.Errorf("leaks ignore: %s %q %v", g.Verdict, findings(g), g.Table.Rows)
	}

	api := capturedRuns(t, "probe/h200-cuda13.0/mc_apierr.txt")
	if g := evaluate(t, api, one, Config{}); g.Verdict != result.Fail ||
		findings(g)[0] != "error memcheck/api-error - -:0 1 | memcheck: api-error: cudaMemcpy returned cudaErrorInvalidValue; once" {
		t.Errorf("api errors: %q", findings(g))
	}
	if g := evaluate(t, api, one, Config{APIErrors: PolicyWarning}); g.Verdict != result.Pass {
		t.Errorf("api errors as warnings: %q", findings(g))
	}

	// Hazard mode: 4 errors and 96 warnings printed; 8 errors and 248 warnings counted.
	race := capturedRuns(t, "probe/h200-cuda13.0/rc_war_hazard.txt")
	g = evaluate(t, race, nil, Config{})
	want := []string{
		"error racecheck/race-war war_race probe.cu:25 4 | racecheck: race-war between Read access at probe.cu:25 and Write access at probe.cu:26 in war_race(float *), thread (31,0,0) block (0,0,0); 4 times",
		"warning racecheck/race-war war_race probe.cu:25 96 | racecheck: race-war between Read access at probe.cu:25 and Write access at probe.cu:26 in war_race(float *), thread (32,0,0) block (0,0,0); 96 times",
		"error racecheck/not-printed - -:0 4 | racecheck (rc_war_hazard.txt): 4 more errors were counted but not printed",
		"warning racecheck/not-printed - -:0 152 | racecheck (rc_war_hazard.txt): 152 more warnings were counted but not printed",
	}
	if err := matchPrefixes(findings(g), want); err != nil {
		t.Error(err)
	}
	g = evaluate(t, race, nil, Config{RacecheckWarnings: PolicyError})
	if g.Count(result.Error) != 4 || g.Count(result.Warning) != 0 {
		t.Errorf("racecheck warnings as errors: %q", findings(g))
	}
	g = evaluate(t, race, nil, Config{RacecheckWarnings: PolicyIgnore})
	if g.Count(result.Error) != 2 || g.Count(result.Warning) != 0 {
		t.Errorf("racecheck warnings ignored: %q", findings(g))
	}
}

func TestEvaluateSuppressions(t *testing.T) {
	cfg := decode(t, `sanitizer:
  suppress:
    - tool: synccheck
      kind: barrier-divergence
      at: bugs.cu:24
      reason: "reviewed in #7"
    - kernel: "divergent_barrier"
      kind: race
      reason: the same bug, seen by racecheck
    - kernel: "flash_fwd<*>"
      reason: renamed long ago
`)
	runs := capturedRuns(t, "sanitizer-h200-cuda13.0/cs_synccheck_sync.txt", "sanitizer-h200-cuda13.0/xml_racecheck_sync.xml")
	g := evaluate(t, runs, nil, cfg)
	want := []string{
		"notice synccheck/barrier-divergence divergent_barrier bugs.cu:24 16 | suppressed by kernel-gate.yml:3 (reviewed in #7): synccheck: barrier-divergence (Divergent thread(s) in warp) in divergent_barrier(float *) at bugs.cu:24, thread (0,0,0) block (0,0,0); 16 times",
		"notice racecheck/race-raw divergent_barrier /src/probe/bugs.cu:24 1 | suppressed by kernel-gate.yml:7 (the same bug, seen by racecheck): racecheck: race-raw between Write access at bugs.cu:24 and Read access at bugs.cu:25 [64 hazards] in divergent_barrier; 64 hazards",
		"warning sanitizer/suppression - kernel-gate.yml:10 0 | suppression kernel-gate.yml:10 matched nothing; remove it (kernel \"flash_fwd<*>\")",
	}
	if err := matchLines(findings(g), want); err != nil {
		t.Error(err)
	}
	if g.Verdict != result.Pass {
		t.Errorf("verdict %s", g.Verdict)
	}
	var data Data
	if err := json.Unmarshal(g.Data, &data); err != nil || len(data.Suppressions) != 3 || data.Suppressions[0].Matched != 16 || data.Suppressions[2].Matched != 0 || data.Suppressions[1].Line != 7 {
		t.Errorf("suppressions in data: %s", g.Data)
	}
	for _, r := range g.Table.Rows[:2] {
		if r.Status != result.Skip || !strings.HasPrefix(r.Cells[5], "suppressed (kernel-gate.yml:") {
			t.Errorf("row %v", r)
		}
	}
	// The reason is required.
	if _, err := Evaluate(runs, nil, decode(t, "sanitizer:\n  suppress:\n    - kind: leak\n")); err == nil || !strings.Contains(err.Error(), "kernel-gate.yml:3: sanitizer.suppress[0]: reason is required") {
		t.Errorf("no reason: %v", err)
	}
	// Unprinted errors cannot be suppressed.
	g = evaluate(t, capturedRuns(t, "sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt"), nil, Config{Suppress: []Suppression{{Kind: KindOutOfBounds, Reason: "r"}}})
	if g.Verdict != result.Fail || g.Count(result.Error) != 1 || g.Findings[1].Metric != "memcheck/not-printed" {
		t.Errorf("unprinted: %q", findings(g))
	}
}

func TestEvaluateProblems(t *testing.T) {
	runs := capturedRuns(t, "sanitizer-h200-cuda13.0/hang.txt", "probe/h200-cuda13.0/mc_exit3.txt", "probe/h200-cuda13.0/mc_fine_session.txt")
	runs[2].Notes = []string{"compute-sanitizer warned: \"Warning: something new\" (line 3)"}
	g := evaluate(t, runs, map[string]int{"*": 2}, Config{})
	want := []string{
		"error unknown/run - -:0 - | compute-sanitizer (tool unknown) (hang.txt): the process was killed (exit 137",
		"error memcheck/run - -:0 - | memcheck (mc_exit3.txt): the target application failed",
		"warning memcheck/note - -:0 - | memcheck (mc_fine_session.txt): compute-sanitizer warned: \"Warning: something new\" (line 3)",
	}
	if err := matchPrefixes(findings(g), want); err != nil {
		t.Error(err)
	}
	if g.Verdict != result.Fail || g.Summary != "unknown tool: incomplete (1 problem), hung; memcheck: incomplete (1 problem); memcheck: clean" {
		t.Errorf("verdict %s summary %q", g.Verdict, g.Summary)
	}
	if r := g.Table.Rows[0]; r.Status != result.Fail || r.Cells[1] != "problem" {
		t.Errorf("first row %v", r)
	}
}

func TestEvaluateToolsAndEmpty(t *testing.T) {
	runs := capturedRuns(t, "sanitizer-h200-cuda13.0/cs_racecheck_clean.txt")
	g := evaluate(t, runs, map[string]int{"*": 1}, decode(t, "sanitizer:\n  tools: [memcheck, racecheck]\n"))
	if err := matchLines(findings(g), []string{"error memcheck/run - -:0 - | memcheck: no memcheck run was read, but sanitizer.tools (kernel-gate.yml:2) lists it"}); err != nil {
		t.Error(err)
	}
	g = evaluate(t, nil, nil, Config{})
	if g.Verdict != result.Skip || len(g.Findings) != 1 || g.Findings[0].Severity != result.Notice {
		t.Errorf("no runs: %s %q", g.Verdict, findings(g))
	}
	if _, err := Evaluate(runs, nil, Config{Leaks: "sometimes"}); err == nil || !strings.Contains(err.Error(), "invalid config") {
		t.Errorf("invalid config: %v", err)
	}
}

// TestEvaluateTableOrder: worst first, errors by count.
func TestEvaluateTableOrder(t *testing.T) {
	runs := capturedRuns(t, "probe/h200-cuda13.0/mc_assert.txt", "sanitizer-h200-cuda13.0/cs_racecheck_clean.txt", "probe/h200-cuda13.0/rc_war_analysis.txt")
	g := evaluate(t, runs, map[string]int{"*": 1}, Config{Leaks: PolicyWarning})
	var got []string
	for _, r := range g.Table.Rows {
		got = append(got, string(r.Status)+" "+strings.Join(r.Cells, "|"))
	}
	want := []string{
		"fail memcheck|device-assert|dev_assert|-|4|error",
		"fail memcheck|api-error|-|-|2|error",
		"fail memcheck|api-error|-|-|1|error",
		"fail racecheck|race-war|war_race|probe.cu:25|1 (256 hazards)|error",
		"pass memcheck|leak|-|-|1|warning",
		"pass memcheck|leak|-|-|1|warning",
		"pass racecheck|clean|-|-|0|-",
	}
	if err := matchLines(got, want); err != nil {
		t.Error(err)
	}
}
