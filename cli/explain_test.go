package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/explain"
)

// kernel-gate explain on the occupancy recording's two builds (logs and dumps) and on two
// recorded results; bad input exits 2.
func TestExplainCommand(t *testing.T) {
	occ := "testdata/replay/occupancy/"
	builds := []string{"explain", "--base-log", occ + "base/attention/build.log", "--head-log", occ + "head/attention/build.log",
		"--base-sass", occ + "base/attention/sass.txt.gz", "--head-sass", occ + "head/attention/sass.txt.gz", "--gpu", "9.0", "--block-size", "128"}
	code, out, stderr := kg(t, "", builds...)
	if code != exitPass {
		t.Fatalf("explain: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"kernel-gate explain: 2 kernel × arch changed, 18 unchanged",
		"kg::gemm_wmma<64, 64, 32> (sm_90a): registers 72 → 108; occupancy 28 → 16 warps/SM (44% → 25% of the SM) at 128 threads per block, limited by registers",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain does not say %q:\n%s", want, out)
		}
	}
	code, out, stderr = kg(t, "", "explain", "--format", "json", "testdata/replay/clean/result.json", "testdata/replay/spill/result.json")
	if code != exitPass {
		t.Fatalf("explain of two results: exit %d: %s", code, stderr)
	}
	var e explain.Explained
	if err := json.Unmarshal([]byte(out), &e); err != nil || e.Schema != explain.Schema || len(e.Kernels) == 0 {
		t.Fatalf("JSON %v %+v:\n%s", err, e, out)
	}
	if !strings.Contains(out, "registers 153 → 32") || !strings.Contains(out, "pass --block-size N") {
		t.Errorf("the results' explanation:\n%s", out)
	}
	for _, bad := range [][]string{
		{"explain", "testdata/replay/clean/result.json"},
		{"explain", "--base-log", occ + "base/attention/build.log"},
		{"explain", "--block-size", "2000", "testdata/replay/clean/result.json", "testdata/replay/spill/result.json"},
		{"explain", "--gpu", "sm_1", "testdata/replay/clean/result.json", "testdata/replay/spill/result.json"},
		{"explain", "--format", "sarif", "testdata/replay/clean/result.json", "testdata/replay/spill/result.json"},
		{"explain", "nope.json", "testdata/replay/spill/result.json"},
		{"explain", "testdata/replay/clean/report.txt", "testdata/replay/spill/result.json"},
	} {
		if code, _, stderr := kg(t, "", bad...); code != exitUsage {
			t.Errorf("%q: exit %d, want 2: %s", bad, code, stderr)
		}
	}
}
