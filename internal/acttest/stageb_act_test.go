package acttest

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Stage B end to end: kernel-gate-report.yml's step (mode report, with workflow,
// check-name and expect-gpu) on a workflow_run of a fork's pull request whose stage A
// failed, given a forged result that says pass and names another GPU. The step exits 2
// and the one check run is a failure under the input's name, on workflow_run.head_sha,
// labelled as a fork's, its details_url stage A's run; never a success.
func TestActStageBRefusesAForgedPass(t *testing.T) {
	t.Parallel()
	root := needsAction(t)
	head := forkHead // the payload's workflow_run.head_sha
	g := result.Gate{Name: "correctness", Findings: []result.Finding{{Severity: result.Notice, Message: "max_err 0"}}}
	g.Decide(true)
	forged := result.New("kernel-gate forged", g)
	forged.Device = &result.Device{Name: "NVIDIA H100 80GB HBM3", Arch: "sm_90"}
	forged.Trigger = &result.Trigger{Event: "pull_request", SHA: head}
	var res bytes.Buffer
	if err := result.Write(&res, forged); err != nil {
		t.Fatal(err)
	}
	// The fork's payload, its run failed.
	event := forkEvent(t, root, "failure")

	api := fakegithub.New()
	defer api.Close()
	h := newHarness(t, stageBWorkflow("kernel-gate (L4)", ""),
		map[string]string{"stage-a/kernel-gate-result.json": res.String(), "stage-a/event.json": event})
	r := h.runEvent(t, "workflow_run", filepath.Join(h.repo, "stage-a", "event.json"), forkRepo, api.URL(), api.Token())
	if c := stepExit(r.log, "Run kernel-gate"); c != 2 {
		t.Errorf("Run kernel-gate: exit %d, want 2 (refused)", c)
	}
	runs := api.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1: %+v", len(runs), runs)
	}
	cr := runs[0]
	if cr.Conclusion != "failure" || cr.Name != "kernel-gate (L4)" || cr.HeadSHA != head ||
		cr.DetailsURL != "https://github.com/octo-org/octo-repo/actions/runs/289782451" || !strings.HasPrefix(cr.Title, "untrusted (fork's code): ") {
		t.Errorf("check run %q %s on %s, details %q, title %q", cr.Name, cr.Conclusion, cr.HeadSHA, cr.DetailsURL, cr.Title)
	}
	for _, w := range []string{"concluded failure", `"NVIDIA H100 80GB HBM3"`, "Untrusted: from a fork"} {
		if !strings.Contains(cr.Summary, w) {
			t.Errorf("the check run's summary lacks %q:\n%s", w, cr.Summary)
		}
	}
	// The refusal's own line is the step's last output, which act v0.2.89 may drop when the
	// step fails (it returns on a failed process before its terminal's output is read):
	// the job summary act prints after the step says it too.
	mustContain(t, r.log, "INPUT_WORKFLOW=.github/workflows/kernel-gate-pr.yml", "INPUT_EXPECT-GPU=NVIDIA L4", "kernel-gate refused to post stage A's result")
}
