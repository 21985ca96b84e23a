//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/action"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// shardRun runs `kernel-gate run` on the fake toolchain with extra flags and returns the
// result, written to a file as a matrix job uploads it; its artifacts are in art, or
// beside the result when art is "".
func shardRun(t *testing.T, repo, art string, wantCode int, extra ...string) (string, result.Result) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "result.json")
	if art == "" {
		art = filepath.Join(dir, "art")
	}
	args := append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--base", "main",
		"--artifacts", art, "--format", "json", "--out", out}, fakeGPU(t)...)
	code, _, stderr := kg(t, "", append(args, extra...)...)
	if code != wantCode && (wantCode != anyVerdict || code != exitPass && code != exitFail) {
		t.Fatalf("run %q: exit %d, want %d\n%s", extra, code, wantCode, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, decode(t, string(raw))
}

// anyVerdict is shardRun's wantCode for a run that may pass or fail.
const anyVerdict = -1

func verdicts(r result.Result) []string {
	var out []string
	for _, g := range r.Gates {
		out = append(out, g.Name+"="+string(g.Verdict))
	}
	return out
}

// Two shards of this repository's three targets, run live on the fake GPU and merged, are
// the unsharded run: the same gates with the same verdicts and findings, after the shards
// gate that says what was merged. A shard missing, given twice or unreadable fails the
// merge, naming it.
func TestShardedRunsMergeToTheWholeRun(t *testing.T) {
	repo := fakeRepo(t)
	// One artifacts path for all, as runners with the same workspace path have: the
	// toolkit gate names the file it read nvcc's version from, and the same notice from
	// two runners is kept once (from runners whose paths differ, once per runner).
	art := filepath.Join(t.TempDir(), "art")
	// --all: every GPU step runs for every target, so every gate has parts to merge.
	_, whole := shardRun(t, repo, art, anyVerdict, "--all")
	f1, s1 := shardRun(t, repo, art, anyVerdict, "--all", "--shard", "1/2")
	f2, s2 := shardRun(t, repo, art, anyVerdict, "--all", "--shard", "2/2")
	for _, tc := range []struct {
		r    result.Result
		want []string
	}{{s1, []string{"gemm", "softmax"}}, {s2, []string{"attention"}}} {
		s := tc.r.Shard
		if s == nil || !slices.Equal(s.Targets, tc.want) || !slices.Equal(s.AllTargets, []string{"attention", "gemm", "softmax"}) ||
			len(s.Commit) != 40 || len(s.Base) != 40 || !strings.HasPrefix(s.Config, "sha256:") {
			t.Fatalf("shard record %+v, want targets %q", s, tc.want)
		}
		if g := tc.r.Gates[0]; g.Name != result.ShardsGate || g.Verdict == result.Fail || !strings.Contains(g.Summary, strings.Join(tc.want, ", ")) {
			t.Errorf("the shard's shards gate: %+v", g)
		}
	}
	// The correctness gate of each shard judged its own targets only.
	for _, tc := range []struct {
		r    result.Result
		want string
		not  string
	}{{s1, "gemm", "attention"}, {s2, "attention", "gemm"}} {
		g := gateOf(t, tc.r, "correctness")
		var rows []string
		for _, r := range g.Table.Rows {
			rows = append(rows, r.Cells[0])
		}
		if !slices.Contains(rows, tc.want) || slices.Contains(rows, tc.not) {
			t.Errorf("shard %d/2 correctness rows: %q", tc.r.Shard.Index, rows)
		}
	}

	code, out, stderr := kg(t, "", "merge", f2, f1, "--expect-shards", "2", "--expect-gpus", "1")
	merged := decode(t, out)
	if want := map[result.Verdict]int{result.Pass: exitPass, result.Fail: exitFail}[whole.Verdict]; code != want || merged.Verdict != whole.Verdict {
		t.Fatalf("merge: exit %d, verdict %s; the whole run's %s\n%s", code, merged.Verdict, whole.Verdict, stderr)
	}
	if got, want := verdicts(merged), append([]string{"shards=pass"}, verdicts(whole)...); !slices.Equal(got, want) {
		t.Fatalf("merged gates %q, want %q", got, want)
	}
	for i, g := range whole.Gates {
		mg := merged.Gates[i+1]
		if got, want := sortedLines(allMessages(mg)), sortedLines(allMessages(g)); !slices.Equal(got, want) {
			t.Errorf("%s: findings merged:\n%s\n--- in the whole run:\n%s", g.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if (g.Table == nil) != (mg.Table == nil) || g.Table != nil && len(g.Table.Rows) != len(mg.Table.Rows) {
			t.Errorf("%s: table %+v, whole run's %+v", g.Name, mg.Table, g.Table)
		}
	}
	if merged.Device == nil || merged.Device.Name != whole.Device.Name || merged.Shard != nil {
		t.Errorf("merged device %+v, shard %+v", merged.Device, merged.Shard)
	}

	garbage := filepath.Join(t.TempDir(), "truncated.json")
	os.WriteFile(garbage, []byte(`{"schema": "kernel-gate/result/v1", "verdict": "pa`), 0o644)
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"missing", []string{f1}, []string{"shard 2/2 of H200, sm_90 is missing"}},
		{"duplicate", []string{f1, f2, f2}, []string{"shard 2/2 of H200, sm_90 is given twice"}},
		{"unparsable", []string{f1, garbage}, []string{garbage + ": not merged:", "shard 2/2 of H200, sm_90 is missing"}},
		{"not there", []string{f1, f2, filepath.Join(t.TempDir(), "results", "*.json")}, []string{"*.json: not merged:"}},
		{"whole run is no shard", []string{f1, f2, wholeFile(t, whole)}, []string{"not a shard"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := kg(t, "", append([]string{"merge", "--format", "json"}, tc.files...)...)
			if code != exitFail {
				t.Fatalf("exit %d, want %d\n%s", code, exitFail, stderr)
			}
			r := decode(t, out)
			sg := r.Gates[0]
			if sg.Name != result.ShardsGate || sg.Verdict != result.Fail {
				t.Fatalf("shards gate %+v", sg)
			}
			for _, want := range tc.want {
				if !strings.Contains(messages(sg, result.Error), want) {
					t.Errorf("errors lack %q:\n%s", want, messages(sg, result.Error))
				}
			}
		})
	}
}

func wholeFile(t *testing.T, r result.Result) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "whole.json")
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, raw, 0o644)
	return p
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return lines
}

func allMessages(g result.Gate) string {
	var b strings.Builder
	for _, f := range g.Findings {
		if f.Metric == abrun.MetricClocks {
			// What nvidia-smi's clock stream said during the rounds (a reading late on a
			// loaded machine) is each run's own, not the shards' to reproduce.
			continue
		}
		b.WriteString(string(f.Severity) + ": " + f.Message + "\n")
	}
	return b.String()
}

// A shard that no target hashes to (2/4: attention is 4, gemm 1, softmax 3) builds and runs
// nothing, passes saying so, and still names its GPU and base, so that it merges with the
// other shards; its replay is the same shard.
func TestEmptyShardPasses(t *testing.T) {
	repo := fakeRepo(t)
	file, r := shardRun(t, repo, "", exitPass, "--shard", "2/4")
	if got := verdicts(r); !slices.Equal(got, []string{"shards=pass"}) {
		t.Fatalf("gates %q", got)
	}
	if n := messages(r.Gates[0], result.Notice); !strings.Contains(n, "no targets in shard 2/4") {
		t.Errorf("notice %q", n)
	}
	if r.Device == nil || r.Shard == nil || len(r.Shard.Targets) != 0 || len(r.Shard.Base) != 40 {
		t.Fatalf("device %+v, shard %+v", r.Device, r.Shard)
	}
	art := filepath.Join(filepath.Dir(file), "art")
	code, out, stderr := kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--format", "json")
	if code != exitPass {
		t.Fatalf("replay: exit %d\n%s", code, stderr)
	}
	replayed := decode(t, out)
	if !slices.Equal(verdicts(replayed), verdicts(r)) || replayed.Shard == nil || replayed.Shard.Index != 2 || replayed.Shard.Base != r.Shard.Base {
		t.Errorf("replayed %q, shard %+v", verdicts(replayed), replayed.Shard)
	}
	// The other three shards and this one merge to a pass.
	files := []string{file}
	for _, s := range []string{"1/4", "3/4", "4/4"} {
		f, _ := shardRun(t, repo, "", exitPass, "--shard", s)
		files = append(files, f)
	}
	code, out, stderr = kg(t, "", append([]string{"merge", "--expect-shards", "4"}, files...)...)
	if code != exitPass {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, stderr)
	}
	if sg := decode(t, out).Gates[0]; !strings.Contains(sg.Summary, "4 results of 4 shard(s) merged from 1 GPU") {
		t.Errorf("shards gate: %+v", sg)
	}
}

// A replayed shard is the same shard: its targets and its record come from the recording.
// A --shard given with --replay would change nothing, so it is refused, naming both
// (issue 23, "the first hour"; it was ignored before).
func TestShardReplays(t *testing.T) {
	repo := fakeRepo(t)
	file, live := shardRun(t, repo, "", exitPass, "--shard", "2/2")
	art := filepath.Join(filepath.Dir(file), "art")
	code, _, stderr := kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--shard", "1/2", "--format", "json")
	if code != exitUsage || !strings.Contains(stderr, "--shard does not apply with --replay") {
		t.Errorf("replay with --shard: exit %d, want %d naming both: %s", code, exitUsage, stderr)
	}
	code, out, stderr := kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--format", "json")
	if code != exitPass {
		t.Fatalf("replay: exit %d\n%s", code, stderr)
	}
	r := decode(t, out)
	if !slices.Equal(verdicts(r), verdicts(live)) || r.Shard == nil || !slices.Equal(r.Shard.Targets, []string{"attention"}) || r.Shard.Commit != live.Shard.Commit || r.Shard.Base != live.Shard.Base {
		t.Errorf("replayed %q %+v, live %q %+v", verdicts(r), r.Shard, verdicts(live), live.Shard)
	}
}

func TestShardAndMergeUsage(t *testing.T) {
	repo := fakeRepo(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--shard", "0/2"}, fakeGPU(t)...), "--shard: shard \"0/2\": i is 0: shards are numbered from 1"},
		{append([]string{"run", "-C", repo, "--config", filepath.Join(repo, "kernel-gate.yml"), "--shard", "3"}, fakeGPU(t)...), "want i/n"},
		{[]string{"merge"}, "merge takes the shards' result files"},
		{[]string{"merge", "--expect-shards", "999", "x.json"}, "--expect-shards 999"},
		{[]string{"merge", "--expect-gpus", "-1", "x.json"}, "--expect-gpus -1"},
		{append([]string{"merge"}, slices.Repeat([]string{"x.json"}, action.MaxMergeFiles+1)...), "merge takes at most 16384 result files (256 shards on each of 64 GPUs); got 16385"},
	} {
		code, _, stderr := kg(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
	// --out must not overwrite a shard's result.
	f, _ := shardRun(t, repo, "", exitPass, "--shard", "1/1")
	if code, _, stderr := kg(t, "", "merge", f, "--out", f); code != exitUsage || !strings.Contains(stderr, "would overwrite its own input") {
		t.Errorf("--out an input: exit %d, %s", code, stderr)
	}
}

// realShard is the recorded H200 run of testdata/replay/<replay> as shard 1/1 of the run on
// another GPU, gpu: each gate's summary names the GPU, as the gates of different GPUs
// differ (their timings, their records), so that a merge shows every gate once per GPU.
func realShard(t *testing.T, replay string, gpu int) result.Result {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "replay", replay, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := decode(t, string(raw))
	name := fmt.Sprintf("GPU%02d", gpu)
	r.Device = &result.Device{Name: "NVIDIA " + name, Arch: "sm_90", Driver: "580.159.04"}
	all := []string{"attention", "gemm", "softmax"}
	r.Shard = &result.Shard{Index: 1, Count: 1, Targets: all, AllTargets: all, Commit: "c0ffee"}
	for i := range r.Gates {
		r.Gates[i].Summary += " on " + name
	}
	return r
}

// writeResult writes r where a matrix job's download puts it.
func writeResult(t *testing.T, dir, name string, r result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := result.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A real matrix merge, 10 GPUs of the recorded run's 7 gates, is a result of 71 gates whose
// 70th (the ncu gate of the ninth GPU) fails: merge fails it, and the report job, reading
// it as an untrusted file, judges it from every gate. It read only the first 64 and
// posted the failed merge as a pass.
func TestMatrixMergeOf71GatesIsJudgedWhole(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for gpu := range 10 {
		r := realShard(t, "clean", gpu)
		if gpu == 8 {
			i := slices.IndexFunc(r.Gates, func(g result.Gate) bool { return g.Name == "ncu" })
			g := &r.Gates[i]
			g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Kernel: "kg::flash_fwd<64, 64, false>", Arch: "sm_90",
				Metric: "dram__throughput.avg.pct_of_peak_sustained_elapsed", Value: result.Num(91.5), Limit: result.Num(80),
				Message: "kg::flash_fwd<64, 64, false> (sm_90): dram__throughput.avg.pct_of_peak_sustained_elapsed 91.5 > 80"})
			g.Decide(true)
			r.Verdict = result.Overall(r.Gates)
		}
		files = append(files, writeResult(t, dir, fmt.Sprintf("kernel-gate-shard-gpu%02d-1.json", gpu), r))
	}
	out := filepath.Join(t.TempDir(), "merged.json")
	code, _, stderr := kg(t, "", append([]string{"merge", "--expect-shards", "1", "--expect-gpus", "10", "--out", out}, files...)...)
	if code != exitFail {
		t.Fatalf("merge: exit %d, want %d\n%s", code, exitFail, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	merged := decode(t, string(raw))
	if len(merged.Gates) != 71 {
		t.Fatalf("%d gates, want 71 (the shards gate and 7 gates x 10 GPUs): %q", len(merged.Gates), verdicts(merged))
	}
	var failed []int
	for i, g := range merged.Gates {
		if g.Verdict == result.Fail {
			failed = append(failed, i+1)
		}
	}
	if !slices.Equal(failed, []int{70}) || merged.Gates[69].Name != "ncu (GPU08, sm_90)" {
		t.Fatalf("failed gates %v (%s), want the 70th, ncu (GPU08, sm_90)", failed, merged.Gates[69].Name)
	}

	res, notes, err := action.ReadUntrusted(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != result.Fail || len(res.Gates) != 71 || res.Gates[69].Verdict != result.Fail {
		t.Errorf("report mode reads verdict %s from %d gates (notes %q), want fail from 71", res.Verdict, len(res.Gates), notes)
	}
}

// merge reads every gate of a shard: a shard whose failing gate comes after its 64th (the
// 70th of 70) fails the merge. It was cut to 64 gates as it was read, and merged to a pass.
func TestMergeReadsEveryGateOfAShard(t *testing.T) {
	var gates []result.Gate
	for i := 1; i <= 70; i++ {
		g := result.Gate{Name: fmt.Sprintf("gate%02d", i), Findings: []result.Finding{{Severity: result.Notice, Message: "checked"}}}
		if i == 70 {
			g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Kernel: "k", Message: "registers 200 > 128"})
		}
		g.Decide(true)
		gates = append(gates, g)
	}
	r := result.New("kernel-gate test", gates...)
	r.Device = &result.Device{Name: "NVIDIA H200", Arch: "sm_90"}
	r.Shard = &result.Shard{Index: 1, Count: 1, Targets: []string{"a"}, AllTargets: []string{"a"}, Commit: "c0ffee"}
	file := writeResult(t, t.TempDir(), "shard.json", r)
	code, out, stderr := kg(t, "", "merge", "--expect-shards", "1", file)
	merged := decode(t, out)
	if code != exitFail || merged.Verdict != result.Fail || len(merged.Gates) != 71 || merged.Gates[70].Verdict != result.Fail {
		t.Errorf("merge: exit %d, verdict %s, %d gates\n%s", code, merged.Verdict, len(merged.Gates), stderr)
	}
}

// The files of one merge are bounded together, before any is read: their sizes are all it
// takes (sparse files here, which hold no data).
func TestMergeRefusesFilesOverItsLimit(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, action.MaxMergeBytes/2-1); err != nil {
			t.Skipf("no sparse file: %v", err)
		}
		files = append(files, p)
	}
	code, _, stderr := kg(t, "", append([]string{"merge"}, files...)...)
	if code != exitUsage || !strings.Contains(stderr, "hold more than 1024 MiB together") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	// Two of them fit, and are each refused as results: too big to be one (the shards gate
	// fails naming them).
	code, out, stderr := kg(t, "", "merge", files[0], files[1])
	if code != exitFail || !strings.Contains(messages(decode(t, out).Gates[0], result.Error), "more than 128 MiB is not a kernel-gate result") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
	if _, _, err := action.ReadUntrusted(files[0]); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("ReadUntrusted: %v", err)
	}
}

// kernel-gate baseline update refuses a shard's result (exit 2), saying to merge first; it
// stored one, whose baseline then held a part of the run's targets.
func TestBaselineUpdateRefusesAShard(t *testing.T) {
	r := realShard(t, "clean", 0)
	r.Shard = &result.Shard{Index: 2, Count: 2, Targets: []string{"attention"}, AllTargets: []string{"attention", "gemm", "softmax"}, Commit: "c0ffee"}
	file := writeResult(t, t.TempDir(), "shard.json", r)
	store := t.TempDir()
	code, out, stderr := kg(t, "", "baseline", "update", "--store", store, "--commit", "c0ffee0123456789", file)
	if code != exitUsage || !strings.Contains(stderr, "it is shard 2/2 of its run") || !strings.Contains(stderr, "merge the shards first") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("the store holds %d files after a refused update", len(entries))
	}
}
