package action

import (
	"cmp"
	"context"
	"fmt"

	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// prComment keeps one comment on the pull request up to date with the summary, when the
// input comment asks for it (always, or on-failure when the verdict is a failure). It
// posts with the check run's client: without one it says why there is no comment.
type prComment struct {
	Client *githubapi.Client
	// PullRequest is the pull request's number; 0 when the run has none.
	PullRequest int
	// When is the input comment: off, on-failure or always.
	When string
	// NoClient is why there is no client.
	NoClient string
}

func (r *run) prComment() prComment {
	return prComment{Client: r.client, PullRequest: r.plan.PullRequest, When: r.in.Comment,
		NoClient: cmp.Or(r.fallback, "check runs are off, and so is the API client")}
}

func (prComment) Name() string { return "pull-request comment" }

func (c prComment) Report(ctx context.Context, f *Findings) error {
	if c.When == "off" || c.PullRequest == 0 || c.When == "on-failure" && f.Result.Verdict != result.Fail {
		return nil
	}
	if c.Client == nil {
		return fmt.Errorf("no pull-request comment: %s", c.NoClient)
	}
	if _, err := c.Client.UpsertComment(ctx, c.PullRequest, "summary", f.Summary); err != nil {
		return fmt.Errorf("the pull-request comment: %s", msgtext.FirstLine(err.Error()))
	}
	return nil
}

// comment keeps the pull request's comment up to date with md, for a result that is not
// reported through every reporter (stage B's refusal).
func (r *run) comment(ctx context.Context, res result.Result, md string) {
	_ = Reporters{List: []Reporter{r.prComment()}, Log: r.o.Log}.Report(ctx, &Findings{Result: res, Summary: md})
}
