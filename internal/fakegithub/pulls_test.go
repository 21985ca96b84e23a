package fakegithub

import (
	"fmt"
	"net/http"
	"testing"
)

// The pull-request list filters as GitHub's does: open by default, head "user:ref" on the
// head repository's owner and branch, base on the base branch; newest first, paginated.
func TestListPulls(t *testing.T) {
	s := New()
	defer s.Close()
	s.AddPullRequest(PullRequest{Number: 1, Repo: "o/r", HeadRef: "fix", HeadSHA: "a1", HeadRepo: "fork/r", BaseRef: "main"})
	s.AddPullRequest(PullRequest{Number: 2, Repo: "o/r", HeadRef: "fix", HeadSHA: "b2", HeadRepo: "other/r", BaseRef: "main"})
	s.AddPullRequest(PullRequest{Number: 3, Repo: "o/r", HeadRef: "fix", HeadSHA: "c3", HeadRepo: "fork/r", BaseRef: "main", State: "closed"})
	s.AddPullRequest(PullRequest{Number: 4, Repo: "o/other", HeadRef: "fix", HeadSHA: "d4", HeadRepo: "fork/other"})
	s.AddPullRequest(PullRequest{Number: 5, Repo: "o/r", HeadRef: "fix", HeadSHA: "e5", HeadRepo: "fork/r", BaseRef: "release"})
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"", "[5 2 1]"},
		{"?state=all", "[5 3 2 1]"},
		{"?state=closed", "[3]"},
		{"?head=fork:fix", "[5 1]"},
		{"?head=FORK:fix&base=main", "[1]"},
		{"?head=fork:other", "[]"},
		{"?per_page=2&page=2", "[1]"},
	} {
		status, _, body := do(t, s, "GET", "/repos/o/r/pulls"+tc.query, bearer(s), nil)
		var got []int
		list, _ := body.([]any)
		for _, p := range list {
			got = append(got, int(p.(map[string]any)["number"].(float64)))
		}
		if status != http.StatusOK || fmt.Sprint(got) != tc.want && !(tc.want == "[]" && got == nil) {
			t.Errorf("%s: %d %v, want %s", tc.query, status, got, tc.want)
		}
	}
	_, _, body := do(t, s, "GET", "/repos/o/r/pulls?head=fork:fix&base=main", bearer(s), nil)
	head := body.([]any)[0].(map[string]any)["head"].(map[string]any)
	if head["sha"] != "a1" || head["repo"].(map[string]any)["full_name"] != "fork/r" || head["repo"].(map[string]any)["fork"] != true {
		t.Errorf("head %v", head)
	}
	if status, _, _ := do(t, s, "GET", "/repos/o/r/pulls?state=merged", bearer(s), nil); status != http.StatusUnprocessableEntity {
		t.Errorf("state=merged: %d", status)
	}
}
