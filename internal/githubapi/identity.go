package githubapi

import (
	"context"
	"fmt"
	"strings"

	github "github.com/google/go-github/v60/github"
)

// Who the token is decides which comment UpsertComment may edit: the marker alone is
// text anyone can write into a comment of theirs. GitHub says it in three places, each
// certain, taken in this order:
//
//  1. a check run this Client created: only a GitHub App can create one, and the run's
//     app is the token's. Its bot, "<slug>[bot]" (the Actions GITHUB_TOKEN's is
//     github-actions[bot]), is the author of the token's comments. This is how the
//     GITHUB_TOKEN is known, which GET /user refuses (403 "Resource not accessible by
//     integration").
//  2. GET /user, for a user's token (a personal access token, an OAuth or a GitHub App
//     user token): the user's login and id.
//  3. a comment this Client created: its author.
//
// When none says, the identity is unknown and UpsertComment edits nothing: it makes a
// new comment, and says why in the log. A well-known login (github-actions[bot]) is
// never assumed: another App's installation token would then edit the comments of every
// workflow in the repository that carry the marker.

// identity is who the token acts as.
type identity struct {
	login string
	id    int64  // the user's id; 0 when not known (an app's bot, from its slug)
	bot   bool   // an app's bot: its comments' user type is "Bot"
	how   string // how it was learned, for the log
}

// authored reports whether u is this identity: the same login (GitHub's logins are not
// case-sensitive), and the same id and type where those are known.
func (i *identity) authored(u *github.User) bool {
	if u == nil || !strings.EqualFold(u.GetLogin(), i.login) {
		return false
	}
	if i.id != 0 && u.GetID() != i.id {
		return false
	}
	return !i.bot || u.GetType() == "Bot"
}

func (i *identity) String() string { return fmt.Sprintf("%q (from %s)", i.login, i.how) }

// learn records who the token is, when it is not known yet: the first certain answer
// stands.
func (c *Client) learn(id identity) {
	if id.login == "" {
		return
	}
	c.selfMu.Lock()
	defer c.selfMu.Unlock()
	if c.self == nil {
		c.self = &id
	}
}

// learnApp records the bot of the app that created check run runID with this token.
func (c *Client) learnApp(app *github.App, runID int64) {
	if slug := app.GetSlug(); slug != "" {
		c.learn(identity{login: slug + "[bot]", bot: true, how: fmt.Sprintf("the app of check run %d", runID)})
	}
}

// known is the identity as known now; nil when it is not.
func (c *Client) known() *identity {
	c.selfMu.Lock()
	defer c.selfMu.Unlock()
	if c.self == nil {
		return nil
	}
	id := *c.self
	return &id
}

// whoami is the token's identity, asking GET /user (once per Client) when nothing has
// said it yet; nil when it cannot be known for certain, which is said in the log.
func (c *Client) whoami(ctx context.Context, o *op) *identity {
	if id := c.known(); id != nil {
		return id
	}
	c.whoMu.Lock()
	defer c.whoMu.Unlock()
	c.selfMu.Lock()
	asked := c.asked
	c.asked = true
	c.selfMu.Unlock()
	if asked {
		return c.known()
	}
	var u *github.User
	err := c.retry(ctx, o, func(ctx context.Context, gh *github.Client) (string, *github.Response, error) {
		var resp *github.Response
		var err error
		u, resp, err = gh.Users.Get(ctx, "")
		return "asking who the token is (GET /user)", resp, err
	})
	if err == nil && u.GetLogin() != "" {
		c.learn(identity{login: u.GetLogin(), id: u.GetID(), bot: u.GetType() == "Bot", how: "GET /user"})
		return c.known()
	}
	why := "no login in the answer"
	if err != nil {
		why = err.Error()
	}
	c.logf("githubapi: who the token is is not known (%s; no check run of this run names its app): a pull-request comment is made anew rather than edit one that may not be the token's", why)
	return c.known()
}
