package action

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
)

// Event is what kernel-gate needs of the event that started the workflow: the runner's
// GITHUB_* variables and the payload in GITHUB_EVENT_PATH. The payload is the event's as
// GitHub sends it (see testdata/events/): a fork's pull request fills it too, so every
// string from it is untrusted.
type Event struct {
	Name       string // GITHUB_EVENT_NAME: pull_request, push, workflow_dispatch, workflow_run, ...
	Repository string // GITHUB_REPOSITORY, "owner/name"
	SHA        string // GITHUB_SHA
	Ref        string // GITHUB_REF
	// DefaultBranch is the repository's default branch ("main").
	DefaultBranch string
	// PullRequest is set for pull_request and pull_request_target.
	PullRequest *PullRequest
	// Inputs are a workflow_dispatch's inputs.
	Inputs map[string]string
	// WorkflowRun is set for workflow_run: the run whose result is reported.
	WorkflowRun *WorkflowRun
	// RunURL links this workflow run (the artifacts are there).
	RunURL string
	// Before is a push's previous tip of the ref ("before"); all zeros for a new branch.
	Before string
	// CommentedPullRequest is the pull request an issue_comment event's comment is on (0:
	// none, or another event): such a workflow runs with the base repository's token while
	// a pull request is at hand, as pull_request_target does.
	CommentedPullRequest int
}

// PullRequest is a pull request of the payload.
type PullRequest struct {
	Number   int
	HeadSHA  string
	HeadRepo string // "owner/name"; another repository than Event.Repository for a fork
	BaseRef  string
	BaseSHA  string
	// MergeSHA is the test merge commit GitHub made of the pull request (refs/pull/N/merge;
	// merge_commit_sha), when the payload has one.
	MergeSHA string
}

// Fork reports whether the pull request comes from another repository.
func (p PullRequest) Fork(repo string) bool { return !strings.EqualFold(p.HeadRepo, repo) }

// WorkflowRun is the completed run a workflow_run event reports on. GitHub writes these
// fields, not the pull request's author (but HeadBranch, which the author named).
type WorkflowRun struct {
	ID         int64
	Event      string // the event that started it (pull_request)
	HeadSHA    string
	HeadBranch string
	Status     string // "completed" for a completed event
	Conclusion string // "" while the run is not completed
	// Name and Path are the workflow's: its `name:` and its file in the repository
	// (".github/workflows/kernel-gate-pr.yml"); the payload's top-level workflow fills them
	// where workflow_run leaves them empty.
	Name, Path string
	// HTMLURL is the run's page, where its logs and artifacts are.
	HTMLURL string
	// HeadRepo is the repository the head commit came from ("owner/name"; a fork's for a
	// fork's pull request, "" when GitHub gives none, as for a deleted fork); HeadOwner
	// is its owner's login.
	HeadRepo, HeadOwner string
	// PullRequests are the numbers of its pull requests (empty for a fork's: GitHub does
	// not list them, the head SHA is what the check run attaches to).
	PullRequests []int
}

// Fork reports whether the run's head commit came from another repository than repo, the
// one the workflow runs in: a fork's pull request, whose code the run ran. Without a head
// repository it is taken for one.
func (w WorkflowRun) Fork(repo string) bool {
	return w.HeadRepo == "" || !strings.EqualFold(w.HeadRepo, repo)
}

// maxEventSize bounds the payload kernel-gate reads (GitHub's are a few tens of KiB).
const maxEventSize = 16 << 20

// ReadEvent reads the event from the environment.
func ReadEvent(getenv func(string) string) (Event, error) {
	ev := Event{
		Name: getenv("GITHUB_EVENT_NAME"), Repository: getenv("GITHUB_REPOSITORY"),
		SHA: getenv("GITHUB_SHA"), Ref: getenv("GITHUB_REF"),
	}
	if ev.Name == "" {
		return ev, exitcode.BadInputf("GITHUB_EVENT_NAME is not set: kernel-gate action runs inside GitHub Actions (elsewhere, run kernel-gate run)")
	}
	if server, id := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_RUN_ID"); server != "" && ev.Repository != "" && id != "" {
		ev.RunURL = strings.TrimRight(server, "/") + "/" + ev.Repository + "/actions/runs/" + id
	}
	path := getenv("GITHUB_EVENT_PATH")
	if path == "" {
		return ev, exitcode.BadInputf("GITHUB_EVENT_PATH is not set: the %s event's payload is needed", ev.Name)
	}
	// A regular file or nothing: a FIFO put in its place by an earlier step is refused at
	// once (its open would block beyond any signal), and the size is bounded.
	raw, err := input.ReadFile(context.Background(), path, input.Limit{Bytes: maxEventSize, What: "an event payload"})
	if err != nil {
		return ev, exitcode.BadInputf("the event payload: %w", err)
	}
	if err := ev.parse(raw); err != nil {
		return ev, exitcode.BadInputf("the event payload %s: %w", path, err)
	}
	return ev, nil
}

// payload is the part of an event payload kernel-gate reads.
type payload struct {
	Repository struct {
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
	PullRequest *struct {
		Number int `json:"number"`
		Head   struct {
			SHA  string `json:"sha"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Ref string `json:"ref"`
			SHA string `json:"sha"`
		} `json:"base"`
		MergeCommitSHA string `json:"merge_commit_sha"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Before      string         `json:"before"`
	Inputs      map[string]any `json:"inputs"`
	WorkflowRun *struct {
		ID             int64    `json:"id"`
		Name           string   `json:"name"`
		Path           string   `json:"path"`
		Event          string   `json:"event"`
		HeadSHA        string   `json:"head_sha"`
		HeadBranch     string   `json:"head_branch"`
		Status         string   `json:"status"`
		Conclusion     string   `json:"conclusion"`
		HTMLURL        string   `json:"html_url"`
		HeadRepository *repoRef `json:"head_repository"`
		PullRequests   []struct {
			Number int `json:"number"`
			Base   struct {
				Repo struct {
					URL string `json:"url"`
				} `json:"repo"`
			} `json:"base"`
		} `json:"pull_requests"`
	} `json:"workflow_run"`
	// Workflow is workflow_run's workflow, an object; workflow_dispatch's is its path, a
	// string, which kernel-gate does not read.
	Workflow json.RawMessage `json:"workflow"`
}

// repoRef is a repository of a payload, as far as kernel-gate reads it.
type repoRef struct {
	FullName string `json:"full_name"`
	Owner    struct {
		Login string `json:"login"`
	} `json:"owner"`
}

// repoOfAPIURL is "owner/name" of a repository's API URL (".../repos/owner/name"), or "".
func repoOfAPIURL(u string) string {
	_, rest, ok := strings.Cut(u, "/repos/")
	if !ok || strings.Count(rest, "/") != 1 {
		return ""
	}
	return rest
}

func (ev *Event) parse(raw []byte) error {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	ev.DefaultBranch = p.Repository.DefaultBranch
	ev.Before = p.Before
	if ev.Repository == "" {
		ev.Repository = p.Repository.FullName
	}
	if pr := p.PullRequest; pr != nil {
		ev.PullRequest = &PullRequest{Number: pr.Number, HeadSHA: pr.Head.SHA, BaseRef: pr.Base.Ref, BaseSHA: pr.Base.SHA, MergeSHA: pr.MergeCommitSHA}
		if pr.Head.Repo != nil {
			ev.PullRequest.HeadRepo = pr.Head.Repo.FullName
		}
	}
	if is := p.Issue; is != nil && len(is.PullRequest) > 0 && string(is.PullRequest) != "null" {
		ev.CommentedPullRequest = is.Number
	}
	if len(p.Inputs) > 0 {
		ev.Inputs = map[string]string{}
		for k, v := range p.Inputs {
			ev.Inputs[k] = fmt.Sprint(v) // booleans arrive as true/false, choices as strings
		}
	}
	if wr := p.WorkflowRun; wr != nil {
		ev.WorkflowRun = &WorkflowRun{ID: wr.ID, Event: wr.Event, HeadSHA: wr.HeadSHA, HeadBranch: wr.HeadBranch,
			Status: wr.Status, Conclusion: wr.Conclusion, Name: wr.Name, Path: wr.Path, HTMLURL: wr.HTMLURL}
		if h := wr.HeadRepository; h != nil {
			ev.WorkflowRun.HeadRepo, ev.WorkflowRun.HeadOwner = h.FullName, h.Owner.Login
		}
		var w struct {
			Name string `json:"name"`
			Path string `json:"path"`
		}
		if len(p.Workflow) > 0 && p.Workflow[0] == '{' {
			if err := json.Unmarshal(p.Workflow, &w); err != nil {
				return fmt.Errorf("workflow: %w", err)
			}
		}
		ev.WorkflowRun.Name = cmp.Or(ev.WorkflowRun.Name, w.Name)
		ev.WorkflowRun.Path = cmp.Or(ev.WorkflowRun.Path, w.Path)
		for _, pr := range wr.PullRequests {
			// GitHub lists the pull requests whose head is the run's branch, in any
			// repository: a fork's branch can have one in the fork itself, whose number
			// means another pull request here. Only this repository's are kept.
			if base := repoOfAPIURL(pr.Base.Repo.URL); base != "" && strings.EqualFold(base, ev.Repository) {
				ev.WorkflowRun.PullRequests = append(ev.WorkflowRun.PullRequests, pr.Number)
			}
		}
	}
	return nil
}
