package action

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// storeReplays stores the recorded cases on the fake API's baseline branch, one commit
// each, with their attention timings.
func storeReplays(t *testing.T, api *fakegithub.Server, cases ...string) {
	t.Helper()
	ctx := context.Background()
	store, err := baseline.NewGit(ctx, baseline.GitOptions{Options: githubapi.Options{APIURL: api.URL(), Token: api.Token(),
		Repository: "Codertocat/Hello-World", HTTPClient: api.Client(), Sleep: func(context.Context, time.Duration) error { return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range cases {
		dir := filepath.Join(repoRoot, "testdata", "replay", name)
		f, err := os.Open(filepath.Join(dir, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := result.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		e, err := baseline.EntryFromResult(res, name, time.Date(2026, 11, 21, i, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if bf, err := os.Open(filepath.Join(dir, "attention", "bench", "head.json")); err == nil {
			b, err := benchfile.Read(bf)
			bf.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := e.AddBench("attention", b); err != nil {
				t.Fatal(err)
			}
		}
		if err := store.Update(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

// With trend-url, a pull request's job summary ends in the baseline's last points for the
// run's GPU, read from the branch, and links the page; without it, or without a history,
// there is no such section and the verdict is the same.
func TestSummaryTrend(t *testing.T) {
	const page = "https://codertocat.github.io/Hello-World/trend.html"
	race := filepath.Join(repoRoot, "testdata", "replay", "race")
	for _, tc := range []struct {
		name     string
		stored   []string
		inputs   map[string]string
		want     []string
		wantNot  []string
		wantLogs string
	}{
		{"trend", []string{"clean", "spill", "slow5"}, map[string]string{"trend-url": page},
			[]string{"### 📈 Trend on NVIDIA H200 (sm\\_90)", "[trend page](" + page + ")",
				// head's medians of flash_fwd × mission in the clean and slow5 recordings of 2026-11-27
				"| flash\\_fwd × mission | attention | 38.58 µs | – | 40.67 µs | `▁·█` | **▲5.4%** |"}, nil, ""},
		{"no trend-url", []string{"clean"}, nil, nil, []string{"Trend"}, ""},
		{"no history yet", nil, map[string]string{"trend-url": page}, nil, []string{"Trend"},
			"no trend in the summary: the baseline holds no history for NVIDIA H200 (sm_90) yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakegithub.New()
			defer api.Close()
			storeReplays(t, api, tc.stored...)
			inputs := map[string]string{"replay": race, "annotations": "none", "gates": "ptxas,sanitizer"}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			env, _ := actionEnv(t, api, inputs)
			code, log, err := runAction(t, env, api)
			if err != nil || code != 1 {
				t.Fatalf("exit %d, err %v (the race fails its sanitizer gate)\n%s", code, err, log)
			}
			sum, err := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(sum), w) {
					t.Errorf("the job summary lacks %q:\n%s", w, sum)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(string(sum), w) {
					t.Errorf("the job summary has %q:\n%s", w, sum)
				}
			}
			if tc.wantLogs != "" && !strings.Contains(log, tc.wantLogs) {
				t.Errorf("the log does not say %q:\n%s", tc.wantLogs, log)
			}
		})
	}
}

func TestTrendURLInput(t *testing.T) {
	for _, bad := range []string{"javascript:alert(1)", "/trend.html", "ftp://x/trend.html", "https://"} {
		if _, err := ReadInputs(func(k string) string { return map[string]string{"trend-url": bad}[k] }); err == nil ||
			!strings.Contains(err.Error(), "not an absolute http or https URL") {
			t.Errorf("trend-url %q: %v", bad, err)
		}
	}
	in, err := ReadInputs(func(k string) string { return map[string]string{"trend-url": " https://o.github.io/r/trend.html "}[k] })
	if err != nil || in.TrendURL != "https://o.github.io/r/trend.html" {
		t.Errorf("%+v, %v", in, err)
	}
}
