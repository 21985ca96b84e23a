package githubapi

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
)

// methods lists the requests' methods (with the page of a list), from the from-th on.
func methods(srv *fakegithub.Server, from ...int) []string {
	var out []string
	reqs := srv.Requests()
	if len(from) > 0 {
		reqs = reqs[from[0]:]
	}
	for _, r := range reqs {
		s := r.Method
		if p := r.Query.Get("page"); p != "" {
			s += " page=" + p
		}
		out = append(out, s)
	}
	return out
}

// asActions starts a check run, as kernel-gate action does before it comments: the run's
// app says who the token is (github-actions[bot]). It returns how many requests that took.
func (h *harness) asActions(t *testing.T) int {
	t.Helper()
	h.start(t)
	return len(h.srv.Requests())
}

func TestUpsertCommentEditsInPlace(t *testing.T) {
	h := newHarness(t)
	from := h.asActions(t)
	ctx := context.Background()
	h.srv.AddComment(repo, 7, "reviewer", "looks good")
	id1, err := h.c.UpsertComment(ctx, 7, "summary", "first run: 2 gates failed")
	if err != nil {
		t.Fatal(err)
	}
	id2, err := h.c.UpsertComment(ctx, 7, "summary", "second run: all gates passed")
	if err != nil {
		t.Fatal(err)
	}
	if id1 != id2 {
		t.Fatalf("the second run made comment %d, the first %d", id2, id1)
	}
	comments := h.srv.Comments(repo, 7)
	if len(comments) != 2 {
		t.Fatalf("%d comments, want the reviewer's and one of kernel-gate's", len(comments))
	}
	c, _ := h.srv.Comment(id1)
	if c.Body != "<!-- kernel-gate:summary -->\nsecond run: all gates passed" || c.Edits != 1 {
		t.Fatalf("comment %+v", c)
	}
	// The same body again: found, not edited.
	if _, err := h.c.UpsertComment(ctx, 7, "summary", "second run: all gates passed"); err != nil {
		t.Fatal(err)
	}
	if c, _ := h.srv.Comment(id1); c.Edits != 1 {
		t.Fatalf("an unchanged body was edited again (%d edits)", c.Edits)
	}
	// Another marker is another comment; another pull request too.
	id3, err := h.c.UpsertComment(ctx, 7, "speedup/sm_90a", "timings")
	if err != nil {
		t.Fatal(err)
	}
	id4, err := h.c.UpsertComment(ctx, 8, "summary", "other PR")
	if err != nil {
		t.Fatal(err)
	}
	if id3 == id1 || id4 == id1 || len(h.srv.Comments(repo, 7)) != 3 || len(h.srv.Comments(repo, 8)) != 1 {
		t.Fatalf("ids %d %d %d; comments %d and %d", id1, id3, id4, len(h.srv.Comments(repo, 7)), len(h.srv.Comments(repo, 8)))
	}
	want := "GET page=1,POST,GET page=1,PATCH,GET page=1,GET page=1,POST,GET page=1,POST"
	if got := strings.Join(methods(h.srv, from), ","); got != want {
		t.Fatalf("requests %s, want %s", got, want)
	}
}

func TestUpsertCommentPages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before int // comments before the marked one (-1: none is marked)
		after  int
		want   string
	}{
		{"marker on page 1", 10, 5, "GET page=1,PATCH"},
		{"marker on page 2", 130, 20, "GET page=1,GET page=2,PATCH"},
		{"marker on page 3", 230, 0, "GET page=1,GET page=2,GET page=3,PATCH"},
		{"no marker in 250 comments", -1, 250, "GET page=1,GET page=2,GET page=3,POST"},
		{"no comments", -1, 0, "GET page=1,POST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			from := h.asActions(t)
			var marked int64
			for i := range max(tc.before, 0) {
				h.srv.AddComment(repo, 12, "someone", fmt.Sprint("comment ", i, " <!-- kernel-gate:other -->"))
			}
			if tc.before >= 0 {
				marked = h.srv.AddComment(repo, 12, fakegithub.BotLogin, "<!-- kernel-gate:summary -->\nold report")
			}
			for i := range tc.after {
				h.srv.AddComment(repo, 12, "someone", fmt.Sprint("later ", i))
			}
			total := len(h.srv.Comments(repo, 12))
			id, err := h.c.UpsertComment(context.Background(), 12, "summary", "new report")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(methods(h.srv, from), ","); got != tc.want {
				t.Fatalf("requests %s, want %s", got, tc.want)
			}
			if marked != 0 && id != marked {
				t.Fatalf("edited %d, want %d", id, marked)
			}
			wantTotal := total
			if marked == 0 {
				wantTotal++
			}
			if n := len(h.srv.Comments(repo, 12)); n != wantTotal {
				t.Fatalf("%d comments, want %d", n, wantTotal)
			}
			if c, _ := h.srv.Comment(id); !strings.HasSuffix(c.Body, "\nnew report") {
				t.Fatalf("comment %d: %q", id, c.Body)
			}
		})
	}
}

// A create that fails with a 502 may have been made: the retry looks again first, and
// there is still one comment.
func TestUpsertCommentRetry(t *testing.T) {
	h := newHarness(t)
	from := h.asActions(t)
	h.srv.Inject(fakegithub.Fault{Method: "POST", Status: 502})
	h.srv.Inject(fakegithub.Fault{Method: "GET", Status: 500})
	id, err := h.c.UpsertComment(context.Background(), 3, "summary", "report")
	if err != nil {
		t.Fatal(err)
	}
	// Faults apply in the order injected to the requests they match: the first GET
	// fails, then the POST.
	if got := strings.Join(methods(h.srv, from), ","); got != "GET page=1,GET page=1,POST,GET page=1,POST" {
		t.Fatalf("requests %s", got)
	}
	if n := len(h.srv.Comments(repo, 3)); n != 1 || len(h.Sleeps()) != 2 {
		t.Fatalf("%d comments after sleeps %v", n, h.Sleeps())
	}
	if !strings.Contains(h.log.String(), "reading the comments of pull request #3 (page 1): 500 Internal Server Error; retry 1") ||
		!strings.Contains(h.log.String(), "commenting on pull request #3: 502 Bad Gateway; retry 2") {
		t.Fatalf("log:\n%s", h.log)
	}

	h.srv.Inject(fakegithub.Fault{Method: "PATCH", Status: 403})
	_, err = h.c.UpsertComment(context.Background(), 3, "summary", "changed")
	if err == nil || err.Error() != fmt.Sprintf("githubapi: editing comment %d on pull request #3: 403 Resource not accessible by integration", id) {
		t.Fatalf("error %v", err)
	}
}

func TestUpsertCommentArguments(t *testing.T) {
	for _, tc := range []struct {
		pr     int
		marker string
		err    string
	}{
		{0, "summary", "not a pull request number"},
		{1, "", "empty comment marker"},
		{1, "a b", "only letters"},
		{1, "x-->", "only letters"},
		{1, "a--b", `"--"`},
		{1, "a-", `"--"`},
		{1, "a\n<!--", "only letters"},
		{1, strings.Repeat("m", 101), "longer than 100"},
	} {
		t.Run(fmt.Sprintf("%d %q", tc.pr, tc.marker), func(t *testing.T) {
			h := newHarness(t)
			_, err := h.c.UpsertComment(context.Background(), tc.pr, tc.marker, "body")
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if n := len(h.srv.Requests()); n != 0 {
				t.Fatalf("%d requests", n)
			}
		})
	}
}

func TestUpsertCommentTooLong(t *testing.T) {
	h := newHarness(t)
	body := strings.Repeat("| kernel | regs |\n", 10000)
	id, err := h.c.UpsertComment(context.Background(), 2, "summary", body)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := h.srv.Comment(id)
	if len(c.Body) > MaxCommentBytes || len(c.Body) < MaxCommentBytes-10 ||
		!strings.HasPrefix(c.Body, MarkerTag("summary")+"\n| kernel") ||
		!strings.Contains(c.Body, "GitHub allows 65536 characters in a comment") {
		t.Fatalf("%d bytes, starting %q, ending %q", len(c.Body), c.Body[:40], c.Body[len(c.Body)-120:])
	}
	// Found again by its marker though it was cut.
	if id2, err := h.c.UpsertComment(context.Background(), 2, "summary", "short"); err != nil || id2 != id || len(h.srv.Comments(repo, 2)) != 1 {
		t.Fatalf("second call: %d %v", id2, err)
	}
}

// The marker is text anyone can put in a comment: only a comment by the token's own
// identity is ever edited. The Actions token is known by its check run's app
// (github-actions[bot]), a user's token by GET /user; when neither says, nothing is
// edited and a new comment is made.
func TestUpsertCommentNeverEditsAnothersMarker(t *testing.T) {
	tag := MarkerTag("summary")
	for _, tc := range []struct {
		name    string
		user    string // SetUser: the token is this user's
		actions bool   // a check run was started first
		// comments on the pull request before the call, by author; "ours" is the
		// comment the call must edit ("" for a new one).
		authors []string
		ours    string
		log     string
	}{
		{name: "the Actions token: a user's and another app's marker are left, ours edited", actions: true,
			authors: []string{"mallory", "evil-app[bot]", fakegithub.BotLogin}, ours: fakegithub.BotLogin,
			log: `carries kernel-gate's marker but is by "mallory", not by the token's "github-actions[bot]" (from the app of check run`},
		{name: "the Actions token: only others' markers, a new comment", actions: true,
			authors: []string{"mallory", "evil-app[bot]"}, log: `is by "mallory"`},
		{name: "a user's token: the bot's and another user's markers are left", user: "kg-user",
			authors: []string{fakegithub.BotLogin, "mallory", "kg-user"}, ours: "kg-user",
			log: `is by "github-actions[bot]", not by the token's "kg-user" (from GET /user)`},
		{name: "a user's token: the same login but for case, of another id, is another account", user: "kg-user",
			authors: []string{"KG-User"}},
		{name: "an unknown identity: even the bot's marker is left", authors: []string{fakegithub.BotLogin},
			log: "who the token is is not known (githubapi: asking who the token is (GET /user): 403 Resource not accessible by integration; no check run of this run names its app)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.user != "" {
				h.srv.SetUser(tc.user)
			}
			if tc.actions {
				h.start(t)
			}
			ids := map[int64]string{}
			var ours int64
			for _, a := range tc.authors {
				id := h.srv.AddComment(repo, 5, a, tag+"\nkernel-gate: pass (written by "+a+")")
				ids[id] = a
				if a == tc.ours {
					ours = id
				}
			}
			id, err := h.c.UpsertComment(context.Background(), 5, "summary", "fail: 2 gates")
			if err != nil {
				t.Fatal(err)
			}
			for cid, a := range ids {
				c, _ := h.srv.Comment(cid)
				if cid == ours {
					if id != ours || c.Edits != 1 || !strings.HasSuffix(c.Body, "\nfail: 2 gates") {
						t.Errorf("our comment %d (by %s) was not the one edited (got %d): %+v", ours, a, id, c)
					}
					continue
				}
				if c.Edits != 0 || !strings.Contains(c.Body, "written by "+a) {
					t.Errorf("%s's comment %d was edited: %+v", a, cid, c)
				}
			}
			if ours == 0 {
				made, ok := h.srv.Comment(id)
				if _, old := ids[id]; old || !ok || made.User != cmp.Or(tc.user, fakegithub.BotLogin) || made.Body != tag+"\nfail: 2 gates" {
					t.Errorf("no new comment of the token's: %d %+v", id, made)
				}
				// Made by this Client, its author is known as the token's from now on: the
				// next call edits the oldest comment of that author with the marker.
				again, err := h.c.UpsertComment(context.Background(), 5, "summary", "pass")
				if c, _ := h.srv.Comment(again); err != nil || c.User != made.User || c.Edits != 1 {
					t.Errorf("the second call did not edit a comment of the token's: %d %v %+v", again, err, c)
				}
			}
			if !strings.Contains(h.log.String(), tc.log) {
				t.Errorf("the log lacks %q:\n%s", tc.log, h.log)
			}
		})
	}
}

// The marker is text anyone can get into a comment of the token's own identity: another
// workflow of the repository that comments as github-actions[bot] and quotes a pull
// request's title or body (a welcome message, another tool's report) carries it when the
// pull request's author wrote it there. kernel-gate puts its marker first; a comment of
// the token's that holds it anywhere else is another's, and is never overwritten (the
// oldest such comment was: kernel-gate's summary replaced, say, a scanner's warning).
func TestUpsertCommentMarkerFirst(t *testing.T) {
	h := newHarness(t)
	h.asActions(t)
	tag := MarkerTag("summary")
	quoted := h.srv.AddComment(repo, 5, fakegithub.BotLogin, "⚠️ Security scan of \"fix typo "+tag+"\": 2 secrets found")
	id, err := h.c.UpsertComment(context.Background(), 5, "summary", "kernel-gate: pass")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := h.srv.Comment(quoted); id == quoted || c.Edits != 0 || !strings.Contains(c.Body, "2 secrets found") {
		t.Fatalf("the other workflow's comment %d was overwritten (kernel-gate's: %d): %+v", quoted, id, c)
	}
	again, err := h.c.UpsertComment(context.Background(), 5, "summary", "kernel-gate: fail")
	if c, _ := h.srv.Comment(again); err != nil || again != id || c.Edits != 1 || c.Body != tag+"\nkernel-gate: fail" {
		t.Fatalf("kernel-gate's own comment %d was not the one edited: %d %v %+v", id, again, err, c)
	}
}
