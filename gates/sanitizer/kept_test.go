package sanitizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// keptArtifactCase is one kg_<case>/ directory of testdata/sanitizer-kernels-h200: what
// `kernel-gate sanitize --artifacts` kept of a run that must fail closed (capture.sh), read
// again the way `kernel-gate demo` and the replay read kept artifacts: per tool its
// <tool>.log, its <tool>.xml when there is one (Combine), and the launches the harness's
// harness-<tool>.json reports.
type keptArtifactCase struct {
	dir string
	// files are the artifacts kept, sorted.
	files []string
	// run is the re-read run, rendered as in realCaptures (source xml: an empty record file
	// combined with the text's summary).
	run []string
	// reported are the launches the harness files report, by tool, as the replay reads them
	// (the sum of the results' launch counts; absent when no result has one).
	reported map[string]int
	// launches are the counts given to Evaluate: reported, or what the harness file says
	// otherwise (kg_nolaunch).
	launches map[string]int
	// findings are the error findings Evaluate must give, in order: metric, then a
	// substring of the message.
	findings [][2]string
	// live is a substring of the live verdict's (kg_<case>.json) problem for the run.
	live string
}

var keptArtifactCases = []keptArtifactCase{
	// --timeout 20s --tools memcheck,racecheck on the KG_DEFECT_HANG build: memcheck was killed
	// with its process group after 20 s; it had printed only the header and wrote no XML and
	// the harness no output; racecheck was not run after the hang. The kept log cannot say
	// that a timeout killed it, only that the sanitizer never finished: the live verdict
	// (kg_hang.json: timed_out, "the kernel hung") knew the timeout.
	{dir: "sanitizer-kernels-h200/kg_hang", files: []string{"memcheck.log"},
		run: []string{
			"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=-",
			"  problem: no ERROR SUMMARY line: the log ends at line 1 before compute-sanitizer finished: it is truncated, or the sanitizer was killed",
		},
		findings: [][2]string{{"memcheck/run", "no ERROR SUMMARY line: the log ends at line 1 before compute-sanitizer finished: it is truncated, or the sanitizer was killed"}},
		live:     "the kernel hung: killed after 20s with its process group"},
	// KG_DEFECT_CRASH: the harness abort()s after its launch, before writing its output: no
	// harness file. The log says the target failed; the exit status (6) is not in the log.
	{dir: "sanitizer-kernels-h200/kg_crash", files: []string{"memcheck.log", "memcheck.xml"},
		run: []string{
			"memcheck xml summary errors=0 warnings=0 not_printed=0 exit=-",
			"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"): its own error or crash, which may have skipped kernels",
		},
		findings: [][2]string{{"memcheck/run", "the target application failed (compute-sanitizer: \"Target application returned an error\")"}},
		live:     "the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 6"},
	// KG_KERNELS=none: harness-memcheck.json has one result, kernel "none", with the error
	// "unknown kernel or shape" and no launch count: the harness reports no count at all, so
	// the replay (and the live run) know no launches. That error is thrown before any launch
	// (kernels/harness.cu: make_case found no case), so the harness launched 0 kernels; with
	// that count Evaluate fails the run for launching nothing, besides the target's failure
	// (exit 1, which the log does not hold). A harness result's error alone does not mean no
	// launch: the oob build's result has one after its launch failed.
	{dir: "sanitizer-kernels-h200/kg_nolaunch", files: []string{"harness-memcheck.json", "memcheck.log", "memcheck.xml"},
		run: []string{
			"memcheck xml summary errors=0 warnings=0 not_printed=0 exit=-",
			"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"): its own error or crash, which may have skipped kernels",
		},
		launches: map[string]int{ToolMemcheck: 0},
		findings: [][2]string{{"memcheck/run", "the target application failed"}, {"memcheck/launch", "no kernel was launched: a clean sanitizer run proves nothing"}},
		live:     "the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 1"},
	// /bin/true: never calls CUDA. compute-sanitizer prints its header and "Error: Target
	// application terminated before first instrumented API call": no summary, no XML, no
	// harness file.
	{dir: "sanitizer-kernels-h200/kg_nonprotocol", files: []string{"memcheck.log"},
		run: []string{
			"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=-",
			"  problem: the target application exited before its first CUDA call (compute-sanitizer: \"Error: Target application terminated before first instrumented API call\"): no kernel ran, nothing was checked",
		},
		findings: [][2]string{{"memcheck/run", "the target application exited before its first CUDA call"}},
		live:     "the target application exited before its first CUDA call"},
}

// readKept reads a kept artifact directory as the replay does, and the launches its harness
// files report: the sum of their launch counts, for each tool whose file has one.
func readKept(t *testing.T, dir string) ([]Run, map[string]int, map[string]*benchfile.File) {
	t.Helper()
	var runs []Run
	launches := map[string]int{}
	harness := map[string]*benchfile.File{}
	for _, tool := range AllTools() {
		log := filepath.Join(capturePath(dir), tool+".log")
		data, err := os.ReadFile(log)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		texts, err := ParseTextWith(strings.NewReader(string(data)), log, ParseOptions{Tool: tool})
		if err != nil || len(texts) != 1 {
			t.Fatalf("%s: %v, %d runs", log, err, len(texts))
		}
		run := texts[0]
		if xf, err := os.Open(filepath.Join(capturePath(dir), tool+".xml")); err == nil {
			x, err := ParseXMLWith(xf, xf.Name(), ParseOptions{Tool: tool})
			xf.Close()
			if err != nil {
				t.Fatal(err)
			}
			run = Combine(x, run)
		}
		runs = append(runs, run)
		if hf, err := os.Open(filepath.Join(capturePath(dir), "harness-"+tool+".json")); err == nil {
			bf, err := benchfile.Read(hf)
			hf.Close()
			if err != nil {
				t.Fatalf("harness-%s.json: %v", tool, err)
			}
			harness[tool] = bf
			n, known := 0, false
			for _, r := range bf.Results {
				if r.Launches != nil {
					n, known = n+*r.Launches, true
				}
			}
			if known {
				launches[tool] = n
			}
		}
	}
	return runs, launches, harness
}

func TestKeptArtifacts(t *testing.T) {
	for _, tc := range keptArtifactCases {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			entries, err := os.ReadDir(capturePath(tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
			}
			if strings.Join(files, " ") != strings.Join(tc.files, " ") {
				t.Errorf("kept %q, want %q", files, tc.files)
			}
			runs, reported, harness := readKept(t, tc.dir)
			if err := matchLines(renderAll(runs), tc.run); err != nil {
				t.Error(err)
			}
			if fmt.Sprint(reported) != fmt.Sprint(tc.reported) { // nil and empty print alike
				t.Errorf("the harness files report launches %v, want %v", reported, tc.reported)
			}
			launches := tc.launches
			if launches == nil {
				launches = reported
			}
			if bf := harness[ToolMemcheck]; bf != nil {
				// kg_nolaunch: KG_KERNELS=none, the one result failed before any launch.
				if bf.Request == nil || bf.Request.Mode != benchfile.ModeSanitize || len(bf.Results) != 1 ||
					bf.Results[0].Kernel != "none" || bf.Results[0].Launches != nil || bf.Results[0].Error != "unknown kernel or shape" {
					t.Errorf("harness-memcheck.json: %+v", bf)
				}
			}
			g, err := Evaluate(runs, launches, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != result.Fail {
				t.Errorf("verdict %s, want fail: %q", g.Verdict, findings(g))
			}
			var errs []result.Finding
			for _, f := range g.Findings {
				if f.Severity == result.Error {
					errs = append(errs, f)
				}
			}
			if len(errs) != len(tc.findings) {
				t.Errorf("error findings %q, want %d", findings(g), len(tc.findings))
			}
			for i, w := range tc.findings {
				if i < len(errs) && (errs[i].Metric != w[0] || !strings.Contains(errs[i].Message, w[1])) {
					t.Errorf("error finding %d = %s %q, want %s %q", i, errs[i].Metric, errs[i].Message, w[0], w[1])
				}
			}
			// Without the harness's count the run still fails, on its problem alone: as the
			// live verdict did, which read no launch count (kg_<case>.json).
			if g, _ := Evaluate(runs, nil, Config{}); g.Verdict != result.Fail {
				t.Errorf("without launch counts: verdict %s: %q", g.Verdict, findings(g))
			}
			live := liveRun(t, tc.dir+".json")
			if len(live.Problems) == 0 || !strings.Contains(live.Problems[0], tc.live) {
				t.Errorf("live problems %q, want %q", live.Problems, tc.live)
			}
			if want := strings.HasSuffix(tc.dir, "kg_hang"); live.TimedOut != want {
				t.Errorf("live timed_out %v, want %v", live.TimedOut, want)
			}
		})
	}
}

// liveRun reads the memcheck run of a kernel-gate result file's sanitizer gate: the live
// verdict on the run whose artifacts were kept.
func liveRun(t *testing.T, name string) Run {
	t.Helper()
	var res struct {
		Verdict string `json:"verdict"`
		Gates   []struct {
			Name    string `json:"name"`
			Verdict string `json:"verdict"`
			Data    Data   `json:"data"`
		} `json:"gates"`
	}
	if err := json.Unmarshal(readCapture(t, name), &res); err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "fail" || len(res.Gates) != 1 || res.Gates[0].Name != "sanitizer" || res.Gates[0].Verdict != "fail" {
		t.Fatalf("%s: verdict %s, gates %+v", name, res.Verdict, res.Gates)
	}
	for _, r := range res.Gates[0].Data.Runs {
		if r.Tool == ToolMemcheck {
			return r
		}
	}
	t.Fatalf("%s: no memcheck run", name)
	return Run{}
}
