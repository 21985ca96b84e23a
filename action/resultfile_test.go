package action

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// writeSummary writes md as the summary file beside the result, as the run's reporters do,
// and returns its path: "" when it was refused, which the log says.
func writeSummary(r *run, md string) string {
	f := &Findings{Summary: md}
	Reporters{List: []Reporter{r.summaryFile()}, Log: r.o.Log}.Report(context.Background(), f)
	return f.SummaryPath
}

// writeResult is writeResultIn with the working directory as the workspace, as a run whose
// GITHUB_WORKSPACE is unset writes it.
func writeResult(file string, res result.Result) error { return writeResultIn(".", file, res) }

// A results-file whose directory is a link the pull request committed, leading out of the
// workspace (results-file: out/kg.json with out -> ~/.ssh), is refused, and so are the
// summary and the SARIF log beside it: nothing is made or written outside the workspace.
// A link that stays inside, a new directory, and an absolute path outside the workspace
// (${{ runner.temp }}) are written as before; a relative path that climbs out is refused.
func TestResultsFileNeverThroughALinkedDirectory(t *testing.T) {
	ws, home, temp := t.TempDir(), t.TempDir(), t.TempDir()
	t.Chdir(ws)
	for _, l := range [][2]string{{home, "out"}, {home, "a/out"}, {"real", "in"}} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, l[1])), 0o755)
		if err := os.Symlink(l[0], filepath.Join(ws, l[1])); err != nil {
			t.Skipf("symlink: %v", err)
		}
	}
	os.Mkdir(filepath.Join(ws, "real"), 0o755)
	res := result.New("kernel-gate test")
	for _, tc := range []struct {
		file string
		// written is where the files must be (relative to ws; absolute: as is); "" refused.
		written, want string
	}{
		{file: "out/kg.json", want: "leads out of the workspace through a link"},
		{file: filepath.Join(ws, "out", "kg.json"), want: "leads out of the workspace through a link"},
		{file: "a/out/kg.json", want: "leads out of the workspace through a link"},
		{file: "a/out/deeper/kg.json", want: "leads out of the workspace through a link"},
		{file: "../kg.json", want: "leads out of it: give an absolute path"},
		{file: "in/kg.json", written: "real/kg.json"},
		{file: "new/dir/kg.json", written: "new/dir/kg.json"},
		{file: "kg.json", written: "kg.json"},
		{file: filepath.Join(temp, "runner", "kg.json"), written: filepath.Join(temp, "runner", "kg.json")},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var log bytes.Buffer
			r := &run{in: Inputs{ResultsFile: tc.file, Format: FormatSARIF}, o: Options{Log: &log}, root: ws}
			err := writeResult(tc.file, res)
			f := &Findings{Result: res, Summary: "# summary\n"}
			Reporters{List: []Reporter{r.summaryFile(), r.sarifFile()}, Log: &log}.Report(t.Context(), f)
			summary, sarif := f.SummaryPath, f.SARIFPath
			if tc.written == "" {
				if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("the result: got %v (exit %d), want a refusal saying %q", err, exitcode.Of(err), tc.want)
				}
				if summary != "" || sarif != "" || strings.Count(log.String(), tc.want) != 2 {
					t.Errorf("summary %q, SARIF %q, log:\n%s", summary, sarif, log.String())
				}
				return
			}
			if err != nil || summary == "" || sarif == "" {
				t.Fatalf("got %v, summary %q, SARIF %q, log:\n%s", err, summary, sarif, log.String())
			}
			at := tc.written
			if !filepath.IsAbs(at) {
				at = filepath.Join(ws, at)
			}
			for _, p := range []string{at, strings.TrimSuffix(at, ".json") + "-summary.md", strings.TrimSuffix(at, ".json") + ".sarif"} {
				if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
					t.Errorf("%s: %v", p, err)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("written outside the workspace: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ws), "kg.json")); err == nil {
		t.Error("../kg.json was written")
	}
}
