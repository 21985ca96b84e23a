package action

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The modes as reviewdog defines them, on one change: k.cu's lines 10-11 added, its diff
// showing 7-14; other.cu touched by a rename only; a finding with no file, one outside
// the repository and one on no line of a touched file are always kept.
func TestDiffFilterModes(t *testing.T) {
	root := "/ws"
	files := map[string]gitdiff.Change{
		"k.cu":     {Path: "k.cu", Added: []gitdiff.Range{{Start: 10, End: 11}}, Hunks: []gitdiff.Range{{Start: 7, End: 14}}},
		"other.cu": {Path: "other.cu"},
	}
	findings := []struct {
		file string
		line int
		want string // the modes that annotate it: a(dded) d(iff_context) f(ile) n(ofilter)
	}{
		{"k.cu", 10, "adfn"},
		{"/ws/k.cu", 11, "adfn"},
		{"k.cu", 7, "dfn"},
		{"k.cu", 14, "dfn"},
		{"k.cu", 15, "fn"},
		{"k.cu", 1, "fn"},
		{"k.cu", 0, "adfn"},
		{"other.cu", 3, "fn"},
		{"untouched.cu", 10, "n"},
		{"/ws/untouched.cu", 10, "n"},
		{"", 0, "adfn"},
		{"/usr/local/cuda/include/cuda_fp16.hpp", 12, "adfn"},
	}
	for _, f := range findings {
		for _, mode := range []string{FilterAdded, FilterDiffContext, FilterFile, FilterNone} {
			d := &diffFilter{mode: mode, files: files}
			got := d.keep(result.Finding{File: f.file, Line: f.line}, root)
			if want := strings.Contains(f.want, mode[:1]); got != want {
				t.Errorf("%s:%d under %s: kept %v, want %v", f.file, f.line, mode, got, want)
			}
		}
	}
	// The filter never touches what is judged: the gates' verdicts stay, and what it left
	// out is counted, errors apart.
	g := result.Gate{Name: "sanitizer", Findings: []result.Finding{
		{Severity: result.Error, File: "untouched.cu", Line: 3, Message: "race"},
		{Severity: result.Warning, File: "untouched.cu", Line: 4, Message: "hazard"},
		{Severity: result.Notice, File: "k.cu", Line: 10, Message: "checked"},
	}}
	g.Decide(true)
	res := result.New("t", g)
	shown, hidden, errs := (&diffFilter{mode: FilterFile, files: files}).apply(res, root)
	if hidden != 2 || errs != 1 || len(shown.Gates[0].Findings) != 1 || shown.Gates[0].Verdict != result.Fail || len(res.Gates[0].Findings) != 3 {
		t.Errorf("hidden %d (%d errors), shown %+v, original %d findings", hidden, errs, shown.Gates[0], len(res.Gates[0].Findings))
	}
}

// The recorded race (kernels/flash_fwd.cu:190, an error) gated on pull requests that touch
// different lines: the check run's annotations follow filter-mode, as do the workflow-command
// annotations; the conclusion and the exit code are failure in every mode, and the summary
// says what was not annotated.
func TestFilterModeLimitsAnnotationsNotTheVerdict(t *testing.T) {
	r := gittest.New(t)
	src, err := os.ReadFile(filepath.Join(repoRoot, "kernels", "flash_fwd.cu"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for _, f := range []string{"softmax.cu", "harness.cpp", "harness_cases.cpp", "harness_cases.h", "harness_device.cu", "gemm_wmma.cu", "kg_bench.h"} {
		raw, err := os.ReadFile(filepath.Join(repoRoot, "kernels", f))
		if err != nil {
			t.Fatal(err)
		}
		r.Write(map[string]string{"kernels/" + f: string(raw)})
	}
	r.Write(map[string]string{"kernels/flash_fwd.cu": string(src)})
	base := r.Commit("base")
	// touch changes one line of a file (1-based) on a branch of its own off base.
	touch := func(branch, file string, line int) {
		r.Git("checkout", "-q", "-b", branch, base)
		path := filepath.Join(r.Dir, file)
		raw, _ := os.ReadFile(path)
		ls := strings.Split(string(raw), "\n")
		ls[line-1] += " // touched"
		r.Write(map[string]string{file: strings.Join(ls, "\n")})
		r.Commit("touch " + file)
	}
	if len(lines) < 200 {
		t.Fatalf("kernels/flash_fwd.cu has %d lines: the race is recorded on line 190", len(lines))
	}
	touch("other-file", "kernels/softmax.cu", 30)
	touch("near", "kernels/flash_fwd.cu", 188)
	touch("on-the-line", "kernels/flash_fwd.cu", 190)
	race := "kernels/flash_fwd.cu:190"
	for _, tc := range []struct {
		branch, mode string
		annotated    bool
	}{
		{"other-file", FilterNone, true},
		{"other-file", FilterFile, false},
		{"other-file", FilterDiffContext, false},
		{"other-file", FilterAdded, false},
		{"near", FilterFile, true},
		{"near", FilterDiffContext, true},
		{"near", FilterAdded, false},
		{"on-the-line", FilterAdded, true},
		{"other-file", "", false}, // the default is file
	} {
		t.Run(tc.branch+" "+tc.mode, func(t *testing.T) {
			r.Git("checkout", "-q", tc.branch)
			api := fakegithub.New()
			defer api.Close()
			env, _ := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "race"),
				"base-ref": base, "filter-mode": tc.mode, "annotations": "both"})
			env["GITHUB_WORKSPACE"] = r.Dir
			code, log, err := runAction(t, env, api)
			if err != nil || code != 1 {
				t.Fatalf("exit %d, err %v\n%s", code, err, log)
			}
			runs := api.CheckRuns()
			if len(runs) != 1 || runs[0].Conclusion != "failure" {
				t.Fatalf("check runs %+v", runs)
			}
			var got []string
			for _, a := range runs[0].Annotations {
				got = append(got, fmt.Sprintf("%s:%d", a.Path, a.StartLine))
			}
			commands := strings.Contains(log, "::error file=kernels/flash_fwd.cu,line=190")
			if slices.Contains(got, race) != tc.annotated || commands != tc.annotated {
				t.Errorf("check-run annotations %q, workflow command %v; want the race annotated: %v\n%s", got, commands, tc.annotated, log)
			}
			note := "1 finding, 1 error among them, is not annotated: filter-mode"
			sum, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
			for where, text := range map[string]string{"check run": runs[0].Summary, "job summary": string(sum), "log": log} {
				if strings.Contains(text, note) == tc.annotated {
					t.Errorf("%s: says %q: %v, want %v\n%.600s", where, note, !tc.annotated, !tc.annotated, text)
				}
			}
		})
	}
}
