package action

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shard"
)

func TestCheckName(t *testing.T) {
	h200 := &result.Device{Name: "NVIDIA H200", Arch: "sm_90"}
	for _, tc := range []struct {
		d    *result.Device
		s    *result.Shard
		want string
	}{
		{nil, nil, "kernel-gate"},
		{h200, nil, "kernel-gate (H200, sm_90)"},
		{&result.Device{Name: "NVIDIA L4"}, nil, "kernel-gate (L4)"},
		{h200, &result.Shard{Index: 1, Count: 1}, "kernel-gate (H200, sm_90)"},
		{h200, &result.Shard{Index: 2, Count: 4}, "kernel-gate (H200, sm_90, shard 2/4)"},
		{nil, &result.Shard{Index: 2, Count: 4}, "kernel-gate (shard 2/4)"},
	} {
		if got := checkName(tc.d, tc.s); got != tc.want {
			t.Errorf("checkName(%+v, %+v) = %q, want %q", tc.d, tc.s, got, tc.want)
		}
	}
}

// shardOf is shard i/n of a run of three targets on dev, with one gate judged v.
func shardOf(i, n int, dev *result.Device, v result.Verdict) result.Result {
	all := []string{"attention", "gemm", "softmax"}
	g := result.Gate{Name: "correctness", Findings: []result.Finding{{Severity: result.Notice, Message: "checked"}}}
	if v == result.Fail {
		g.Findings = append(g.Findings, result.Finding{Severity: result.Error, File: "kernels/flash_fwd.cu", Line: 12, Message: "max_err 0.5"})
	}
	g.Decide(true)
	r := result.New("kernel-gate test", g)
	r.Device = dev
	r.Shard = &result.Shard{Index: i, Count: n, Targets: shard.Spec{Index: i, Count: n}.Select(all), AllTargets: all, Commit: "c0ffee"}
	return r
}

// Report mode posts a merged result of two GPUs as one check run under the inputs' name
// (the default here); one shard's result alone is refused, so its pass cannot stand in
// for the whole run's check.
func TestReportModePostsMergedAndShardResults(t *testing.T) {
	l4, h100 := &result.Device{Name: "NVIDIA L4", Arch: "sm_89"}, &result.Device{Name: "NVIDIA H100", Arch: "sm_90"}
	merged, err := result.Merge([]result.MergeInput{
		{Name: "l4-1.json", Result: shardOf(1, 2, l4, result.Pass)}, {Name: "l4-2.json", Result: shardOf(2, 2, l4, result.Fail)},
		{Name: "h100-1.json", Result: shardOf(1, 2, h100, result.Pass)}, {Name: "h100-2.json", Result: shardOf(2, 2, h100, result.Pass)},
	}, result.MergeOptions{Tool: "kernel-gate test", ExpectShards: 2, ExpectGPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		res        result.Result
		check      string
		conclusion string
		code       int
	}{
		{"merged", merged, "kernel-gate", "failure", 1},
		{"one shard", shardOf(1, 2, l4, result.Pass), "kernel-gate", "failure", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			env, _ := actionEnv(t, api, nil)
			env["GITHUB_EVENT_NAME"] = "workflow_run"
			env["GITHUB_EVENT_PATH"] = filepath.Join(repoRoot, "testdata", "events", "workflow_run_completed.json")
			env["INPUT_WORKFLOW"] = ".github/workflows/test.yml"
			tc.res.Trigger = &result.Trigger{Event: "repository_dispatch", SHA: "3484a3fb816e0859fd6e1cea078d76385ff50625"}
			var b bytes.Buffer
			if err := result.Write(&b, tc.res); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(env["INPUT_RESULTS-FILE"], b.Bytes(), 0o644)
			code, log, err := runAction(t, env, api)
			if (err != nil) != (tc.code == 2) || code != tc.code {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			runs := api.CheckRuns()
			if len(runs) != 1 || runs[0].Name != tc.check || runs[0].Conclusion != tc.conclusion {
				t.Fatalf("check runs %+v", runs)
			}
			if tc.name == "merged" && (!strings.Contains(runs[0].Title, "correctness (L4, sm_89)") || !strings.Contains(runs[0].Summary, "shards")) {
				t.Errorf("title %q, summary %.500s", runs[0].Title, runs[0].Summary)
			}
		})
	}
}

// One shard of several is never stored as the baseline: it holds only its targets.
func TestShardIsNotStoredAsBaseline(t *testing.T) {
	var log bytes.Buffer
	r := &run{o: Options{Log: &log}, in: Inputs{Token: "t"}}
	r.storeBaseline(t.Context(), shardOf(1, 2, &result.Device{Name: "NVIDIA L4", Arch: "sm_89"}, result.Pass))
	if !strings.Contains(log.String(), "the baseline was not stored: this is shard 1/2 of the run") {
		t.Errorf("log: %s", log.String())
	}
}

// A shard record from another job is cleaned like every other string of it.
func TestUntrustedShardRecordIsCleaned(t *testing.T) {
	r := shardOf(1, 2, nil, result.Pass)
	r.Shard.Commit = "c0ffee\n::error::x"
	r.Shard.AllTargets = make([]string, maxShardTargets+5)
	notes := sanitizeResult(&r)
	if strings.ContainsAny(r.Shard.Commit, "\n") || len(r.Shard.AllTargets) != maxShardTargets || !strings.Contains(strings.Join(notes, " "), "shard record names") {
		t.Errorf("commit %q, %d targets, notes %q", r.Shard.Commit, len(r.Shard.AllTargets), notes)
	}
}
