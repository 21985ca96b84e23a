package fakegithub

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The default token is the Actions GITHUB_TOKEN: GET /user refuses it, its check runs are
// the GitHub Actions app's and its comments github-actions[bot]'s. SetUser makes it a
// user's token: GET /user answers the user, who writes its comments, and a check run is
// refused. Every comment's author comes with its id and type.
func TestTokenIdentity(t *testing.T) {
	s := New()
	defer s.Close()
	if code, _, body := do(t, s, "GET", "/user", bearer(s), nil); code != 403 || body.(map[string]any)["message"] != "Resource not accessible by integration" {
		t.Fatalf("GET /user with the installation token: %d %v", code, body)
	}
	code, _, body := do(t, s, "POST", "/repos/o/r/check-runs", bearer(s), map[string]any{"name": "kg", "head_sha": "abc"})
	if app, _ := body.(map[string]any)["app"].(map[string]any); code != 201 || app["slug"] != AppSlug {
		t.Fatalf("check run: %d %v", code, body)
	}
	do(t, s, "POST", "/repos/o/r/issues/3/comments", bearer(s), map[string]any{"body": "by the bot"})
	s.AddComment("o/r", 3, "mallory", "by mallory")

	s.SetUser("kg-user")
	code, _, body = do(t, s, "GET", "/api/v3/user", bearer(s), nil)
	if u, _ := body.(map[string]any); code != 200 || u["login"] != "kg-user" || u["type"] != "User" || u["id"] != float64(UserID("kg-user")) {
		t.Fatalf("GET /user with a user's token: %d %v", code, body)
	}
	if code, _, body := do(t, s, "POST", "/repos/o/r/check-runs", bearer(s), map[string]any{"name": "kg", "head_sha": "abc"}); code != 403 {
		t.Fatalf("a user's token made a check run: %d %v", code, body)
	}
	do(t, s, "POST", "/repos/o/r/issues/3/comments", bearer(s), map[string]any{"body": "by the user"})

	_, _, list := do(t, s, "GET", "/repos/o/r/issues/3/comments", bearer(s), nil)
	var got []string
	for _, c := range list.([]any) {
		u := c.(map[string]any)["user"].(map[string]any)
		got = append(got, u["login"].(string)+"/"+u["type"].(string))
		if u["id"] != float64(UserID(u["login"].(string))) {
			t.Errorf("user %v: id", u)
		}
	}
	if strings.Join(got, " ") != "github-actions[bot]/Bot mallory/User kg-user/User" {
		t.Fatalf("authors %q", got)
	}
	if UserID(BotLogin) != BotID || UserID("mallory") == UserID("kg-user") {
		t.Fatal("user ids")
	}
}

// A Hang fault never answers: the client's own timeout ends the request, and Close does
// not wait for it forever.
func TestHangFault(t *testing.T) {
	s := New()
	s.Inject(Fault{Method: "PATCH", Hang: true, Times: 2})
	c := &http.Client{Timeout: 100 * time.Millisecond}
	req, _ := http.NewRequest("PATCH", s.URL()+"repos/o/r/check-runs/1", strings.NewReader("{}"))
	req.Header.Set("Authorization", bearer(s))
	_, err := c.Do(req)
	var ne interface{ Timeout() bool }
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a hanging request: %v", err)
	}
	// One still hanging when the fake is closed.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "PATCH", s.URL()+"repos/o/r/check-runs/1", strings.NewReader("{}"))
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	for deadline := time.Now().Add(time.Minute); len(s.Requests()) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second request never arrived")
		}
	}
	s.Close()
	if err := <-done; err == nil {
		t.Fatal("a request held when the fake closed got an answer")
	}
	if reqs := s.Requests(); len(reqs) != 2 || !reqs[0].Fault || reqs[0].Status != 0 {
		t.Fatalf("requests %+v", reqs)
	}
}
