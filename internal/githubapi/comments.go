package githubapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	github "github.com/google/go-github/v60/github"
)

// MaxCommentBytes bounds a comment's body (GitHub: 65,536 characters).
const MaxCommentBytes = 65536

// commentsPerPage is the largest page GitHub gives.
const commentsPerPage = 100

// maxCommentPages stops a listing whose pages never end.
const maxCommentPages = 1000

const commentNote = "\n\n---\n*Cut by kernel-gate: GitHub allows %d characters in a comment; the whole text is %d bytes.*\n"

// MarkerTag is the hidden line UpsertComment puts first in the body to find the comment
// again: "<!-- kernel-gate:MARKER -->".
func MarkerTag(marker string) string {
	return "<!-- kernel-gate:" + marker + " -->"
}

// UpsertComment keeps one comment per marker on pull request pr: it edits the comment
// whose body begins with MarkerTag(marker) and whose author is the token's own identity
// (identity.go), looking through every page of the pull request's comments, and creates
// it when there is none. A comment by anyone else that carries the marker is never
// edited; when who the token is cannot be known for certain, nothing is edited and a new
// comment is made. The body, after the tag, is cut to GitHub's limit with a note. It
// returns the comment's id. A retried attempt looks for the comment again first, so that
// a create GitHub did but did not confirm is not made twice.
// Why: docs/threat-model.md, threat-model T11.
func (c *Client) UpsertComment(ctx context.Context, pr int, marker, body string) (int64, error) {
	if pr < 1 {
		return 0, fmt.Errorf("githubapi: commenting on pull request %d: not a pull request number", pr)
	}
	if err := checkMarker(marker); err != nil {
		return 0, fmt.Errorf("githubapi: commenting on pull request #%d: %w", pr, err)
	}
	tag := MarkerTag(marker)
	full := tag + "\n" + body
	if len(full) > MaxCommentBytes {
		c.logf("githubapi: the comment on pull request #%d is %d bytes: cut to GitHub's limit of %d", pr, len(full), MaxCommentBytes)
		full = cut(full, MaxCommentBytes, fmt.Sprintf(commentNote, MaxCommentBytes, len(full)))
	}
	o := newOp(fmt.Sprintf("commenting on pull request #%d", pr))
	c.whoami(ctx, o)
	var id int64
	err := c.retry(ctx, o, func(ctx context.Context, gh *github.Client) (string, *github.Response, error) {
		// Asked at each attempt: a comment made by an attempt whose answer came says it.
		if self := c.known(); self != nil {
			found, what, resp, err := c.findComment(ctx, gh, pr, tag, self)
			if err != nil {
				return what, resp, err
			}
			if found != nil {
				id = found.GetID()
				if found.GetBody() == full {
					return "", nil, nil
				}
				_, resp, err := gh.Issues.EditComment(ctx, c.owner, c.repo, id, &github.IssueComment{Body: &full})
				return fmt.Sprintf("editing comment %d on pull request #%d", id, pr), resp, err
			}
		}
		made, resp, err := gh.Issues.CreateComment(ctx, c.owner, c.repo, pr, &github.IssueComment{Body: &full})
		if err == nil && made.GetID() == 0 {
			err = errors.New("GitHub's answer has no comment id")
		}
		id = made.GetID()
		if err == nil {
			// Made with this token: its author is the token's identity.
			u := made.GetUser()
			c.learn(identity{login: u.GetLogin(), id: u.GetID(), bot: u.GetType() == "Bot", how: fmt.Sprintf("comment %d, which it made", id)})
		}
		return fmt.Sprintf("commenting on pull request #%d", pr), resp, err
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// findComment returns the oldest comment on pr whose body begins with tag and whose author
// is self, or nil. The first comment that carries tag but is someone else's is named in
// the log: it is left alone. The tag must come first, where UpsertComment puts it: another
// workflow commenting as the same identity may quote a pull request's text that holds it.
func (c *Client) findComment(ctx context.Context, gh *github.Client, pr int, tag string, self *identity) (*github.IssueComment, string, *github.Response, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: commentsPerPage}}
	noted := false
	for page, pages := 1, 0; pages < maxCommentPages; pages++ {
		opts.Page = page
		comments, resp, err := gh.Issues.ListComments(ctx, c.owner, c.repo, pr, opts)
		if err != nil {
			return nil, fmt.Sprintf("reading the comments of pull request #%d (page %d)", pr, page), resp, err
		}
		for _, cm := range comments {
			if !strings.HasPrefix(cm.GetBody(), tag) {
				continue
			}
			if self.authored(cm.GetUser()) {
				return cm, "", resp, nil
			}
			if !noted {
				noted = true
				c.logf("githubapi: comment %d on pull request #%d carries kernel-gate's marker but is by %q, not by the token's %s: left alone",
					cm.GetID(), pr, cm.GetUser().GetLogin(), self)
			}
		}
		if resp.NextPage <= page {
			break
		}
		page = resp.NextPage
	}
	return nil, "", nil, nil
}

// checkMarker keeps a marker inside its HTML comment: letters, digits and . _ : / -,
// without "--".
func checkMarker(marker string) error {
	if marker == "" {
		return errors.New("empty comment marker")
	}
	if len(marker) > 100 {
		return fmt.Errorf("comment marker %.20q... is longer than 100 bytes", marker)
	}
	for _, r := range marker {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:/-", r)
		if !ok {
			return fmt.Errorf("comment marker %q: only letters, digits and . _ : / - may be used", marker)
		}
	}
	if strings.Contains(marker, "--") || strings.HasSuffix(marker, "-") {
		return fmt.Errorf("comment marker %q: \"--\" or a final \"-\" would end the HTML comment", marker)
	}
	return nil
}
