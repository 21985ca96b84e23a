package fakegithub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// do sends one request with the fake's token (auth "" sends none) and returns the status
// and decoded body.
func do(t *testing.T, s *Server, method, path, auth string, body any) (int, http.Header, any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(s.URL(), "/")+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v any
	json.Unmarshal(raw, &v)
	return resp.StatusCode, resp.Header, v
}

func bearer(s *Server) string { return "Bearer " + s.Token() }

func ann(line int) map[string]any {
	return map[string]any{"path": "kernels/a.cu", "start_line": line, "end_line": line,
		"annotation_level": "failure", "message": fmt.Sprintf("m%d", line)}
}

func anns(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = ann(i + 1)
	}
	return out
}

func withAnn(mod func(map[string]any)) map[string]any {
	a := ann(3)
	mod(a)
	return map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"title": "t", "summary": "s", "annotations": []any{a}}}
}

func TestListensOnLoopbackOnly(t *testing.T) {
	s := New()
	defer s.Close()
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" || !strings.HasSuffix(s.URL(), "/") {
		t.Fatalf("URL() = %q, want http://127.0.0.1:PORT/", s.URL())
	}
}

func TestAuth(t *testing.T) {
	s := New()
	defer s.Close()
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"none", "", 401},
		{"wrong token", "Bearer nope", 401},
		{"no scheme", s.Token(), 401},
		{"basic", "Basic " + s.Token(), 401},
		{"bearer", "Bearer " + s.Token(), 201},
		{"token", "token " + s.Token(), 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, _ := do(t, s, "POST", "/repos/o/r/issues/1/comments", tc.auth, map[string]any{"body": "x"})
			if got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
		})
	}
	s.SetToken("other")
	if got, _, _ := do(t, s, "POST", "/repos/o/r/issues/1/comments", "Bearer "+DefaultToken, map[string]any{"body": "x"}); got != 401 {
		t.Fatalf("the old token after SetToken: %d, want 401", got)
	}
	for _, r := range s.Requests() {
		if strings.Contains(fmt.Sprint(r.Header), DefaultToken) {
			t.Fatalf("a recorded request holds the token: %v", r.Header)
		}
	}
}

func TestCheckRunValidation(t *testing.T) {
	s := New()
	defer s.Close()
	long := strings.Repeat("x", MaxOutputChars+1)
	for _, tc := range []struct {
		name string
		body any
		want int
	}{
		{"minimal", map[string]any{"name": "kg", "head_sha": "abc"}, 201},
		{"not json", "{", 400},
		{"wrong type", map[string]any{"name": 3, "head_sha": "abc"}, 422},
		{"no name", map[string]any{"head_sha": "abc"}, 422},
		{"empty name", map[string]any{"name": "", "head_sha": "abc"}, 422},
		{"no head_sha", map[string]any{"name": "kg"}, 422},
		{"bad status", map[string]any{"name": "kg", "head_sha": "abc", "status": "running"}, 422},
		{"completed without conclusion", map[string]any{"name": "kg", "head_sha": "abc", "status": "completed"}, 422},
		{"bad conclusion", map[string]any{"name": "kg", "head_sha": "abc", "conclusion": "passed"}, 422},
		{"output without summary", map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"title": "t"}}, 422},
		{"output without title", map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"summary": "s"}}, 422},
		{"summary at the limit", map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"title": "t", "summary": long[1:]}}, 201},
		{"summary over the limit", map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"title": "t", "summary": long}}, 422},
		{"summary of multibyte characters at the limit", map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"title": "t", "summary": strings.Repeat("é", MaxOutputChars)}}, 201},
		{"text over the limit", map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"title": "t", "summary": "s", "text": long}}, 422},
		{"50 annotations", map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"title": "t", "summary": "s", "annotations": anns(50)}}, 201},
		{"51 annotations", map[string]any{"name": "kg", "head_sha": "abc", "output": map[string]any{"title": "t", "summary": "s", "annotations": anns(51)}}, 422},
		{"annotation ok", withAnn(func(a map[string]any) {}), 201},
		{"annotation with columns on one line", withAnn(func(a map[string]any) { a["start_column"], a["end_column"] = 2, 5 }), 201},
		{"columns across lines", withAnn(func(a map[string]any) { a["end_line"] = 4; a["start_column"] = 2 }), 422},
		{"column 0", withAnn(func(a map[string]any) { a["start_column"] = 0 }), 422},
		{"start_line 0", withAnn(func(a map[string]any) { a["start_line"], a["end_line"] = 0, 0 }), 422},
		{"no end_line", withAnn(func(a map[string]any) { delete(a, "end_line") }), 422},
		{"end before start", withAnn(func(a map[string]any) { a["end_line"] = 2 }), 422},
		{"no path", withAnn(func(a map[string]any) { delete(a, "path") }), 422},
		{"level error", withAnn(func(a map[string]any) { a["annotation_level"] = "error" }), 422},
		{"no level", withAnn(func(a map[string]any) { delete(a, "annotation_level") }), 422},
		{"no message", withAnn(func(a map[string]any) { delete(a, "message") }), 422},
		{"message at 64 KiB", withAnn(func(a map[string]any) { a["message"] = strings.Repeat("m", MaxAnnotationBytes) }), 201},
		{"message over 64 KiB", withAnn(func(a map[string]any) { a["message"] = strings.Repeat("m", MaxAnnotationBytes+1) }), 422},
		{"raw_details over 64 KiB", withAnn(func(a map[string]any) { a["raw_details"] = strings.Repeat("m", MaxAnnotationBytes+1) }), 422},
		{"title of 255", withAnn(func(a map[string]any) { a["title"] = strings.Repeat("t", 255) }), 201},
		{"title of 256", withAnn(func(a map[string]any) { a["title"] = strings.Repeat("t", 256) }), 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, body := do(t, s, "POST", "/repos/o/r/check-runs", bearer(s), tc.body)
			if got != tc.want {
				t.Fatalf("status %d, want %d: %v", got, tc.want, body)
			}
		})
	}
}

func TestCheckRunState(t *testing.T) {
	s := New()
	defer s.Close()
	for _, prefix := range []string{"", "/api/v3"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			base := prefix + "/repos/o/r/check-runs"
			code, _, body := do(t, s, "POST", base, bearer(s), map[string]any{"name": "kg", "head_sha": "abc", "status": "in_progress"})
			if code != 201 {
				t.Fatalf("create: %d %v", code, body)
			}
			id := int64(body.(map[string]any)["id"].(float64))
			path := fmt.Sprintf("%s/%d", base, id)
			for _, batch := range [][]any{anns(50)[:2], anns(50)[2:5]} {
				code, _, body := do(t, s, "PATCH", path, bearer(s), map[string]any{"name": "kg",
					"output": map[string]any{"title": "t", "summary": fmt.Sprint("s", len(batch)), "annotations": batch}})
				if code != 200 {
					t.Fatalf("update: %d %v", code, body)
				}
			}
			code, _, body = do(t, s, "PATCH", path, bearer(s), map[string]any{"name": "kg", "conclusion": "failure"})
			if code != 200 {
				t.Fatalf("complete: %d %v", code, body)
			}
			c, ok := s.CheckRun(id)
			if !ok {
				t.Fatal("no check run")
			}
			if c.Status != "completed" || c.Conclusion != "failure" || c.Summary != "s3" || c.Updates != 3 || c.CompletedAt.IsZero() {
				t.Fatalf("state %+v", c)
			}
			if len(c.Annotations) != 5 {
				t.Fatalf("%d annotations, want 5", len(c.Annotations))
			}
			for i, a := range c.Annotations {
				if a.StartLine != i+1 {
					t.Fatalf("annotation %d has line %d: out of order", i, a.StartLine)
				}
			}
			code, _, body = do(t, s, "GET", path, bearer(s), nil)
			out := body.(map[string]any)["output"].(map[string]any)
			if code != 200 || out["annotations_count"].(float64) != 5 || out["summary"] != "s3" {
				t.Fatalf("get: %d %v", code, body)
			}
			if code, _, _ := do(t, s, "GET", fmt.Sprintf("%s/repos/o/other/check-runs/%d", prefix, id), bearer(s), nil); code != 404 {
				t.Fatalf("another repo's check run: %d, want 404", code)
			}
			if code, _, _ := do(t, s, "PATCH", base+"/999999", bearer(s), map[string]any{"name": "kg"}); code != 404 {
				t.Fatalf("unknown check run: %d, want 404", code)
			}
			// A rejected update changes nothing.
			if code, _, _ := do(t, s, "PATCH", path, bearer(s), map[string]any{"name": "kg", "output": map[string]any{"title": "t", "summary": "x", "annotations": anns(51)}}); code != 422 {
				t.Fatalf("51 annotations: %d, want 422", code)
			}
			if c2, _ := s.CheckRun(id); len(c2.Annotations) != 5 || c2.Summary != "s3" {
				t.Fatalf("a rejected update changed the run: %+v", c2)
			}
		})
	}
}

func TestCommentsPagination(t *testing.T) {
	s := New()
	defer s.Close()
	for i := range 75 {
		s.AddComment("o/r", 7, "someone", fmt.Sprint("c", i))
	}
	s.AddComment("o/r", 8, "someone", "another PR")
	var got []string
	next := "/repos/o/r/issues/7/comments"
	pages := 0
	for next != "" {
		code, h, body := do(t, s, "GET", next, bearer(s), nil)
		if code != 200 {
			t.Fatalf("list: %d", code)
		}
		pages++
		for _, c := range body.([]any) {
			got = append(got, c.(map[string]any)["body"].(string))
		}
		next = ""
		for _, l := range strings.Split(h.Get("Link"), ",") {
			if strings.HasSuffix(l, `rel="next"`) {
				u, _ := url.Parse(strings.Trim(strings.TrimSpace(strings.Split(l, ";")[0]), "<>"))
				next = u.RequestURI()
			}
		}
	}
	if pages != 3 || len(got) != 75 || got[0] != "c0" || got[74] != "c74" {
		t.Fatalf("%d pages, %d comments (%v ... )", pages, len(got), got[:1])
	}
	code, h, body := do(t, s, "GET", "/api/v3/repos/o/r/issues/7/comments?per_page=100&page=1", bearer(s), nil)
	if code != 200 || len(body.([]any)) != 75 || h.Get("Link") != "" {
		t.Fatalf("per_page=100: %d, %d comments, Link %q", code, len(body.([]any)), h.Get("Link"))
	}
	code, _, body = do(t, s, "GET", "/repos/o/r/issues/7/comments?per_page=500&page=2", bearer(s), nil)
	if code != 200 || len(body.([]any)) != 0 {
		t.Fatalf("per_page is capped at 100: page 2 has %d", len(body.([]any)))
	}
}

func TestCommentCreateAndEdit(t *testing.T) {
	s := New()
	defer s.Close()
	code, _, body := do(t, s, "POST", "/repos/o/r/issues/3/comments", bearer(s), map[string]any{"body": "one"})
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	id := int64(body.(map[string]any)["id"].(float64))
	for _, tc := range []struct {
		name string
		body any
		want int
	}{
		{"edit", map[string]any{"body": "two"}, 200},
		{"empty", map[string]any{"body": ""}, 422},
		{"missing", map[string]any{}, 422},
		{"too long", map[string]any{"body": strings.Repeat("x", MaxCommentChars+1)}, 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, body := do(t, s, "PATCH", fmt.Sprintf("/repos/o/r/issues/comments/%d", id), bearer(s), tc.body); code != tc.want {
				t.Fatalf("status %d, want %d: %v", code, tc.want, body)
			}
		})
	}
	c, _ := s.Comment(id)
	if c.Body != "two" || c.Edits != 1 || c.User != BotLogin || len(s.Comments("o/r", 3)) != 1 {
		t.Fatalf("comment %+v", c)
	}
	if code, _, _ := do(t, s, "PATCH", "/repos/o/x/issues/comments/"+fmt.Sprint(id), bearer(s), map[string]any{"body": "z"}); code != 404 {
		t.Fatalf("another repo's comment: %d, want 404", code)
	}
}

func TestFaults(t *testing.T) {
	s := New()
	defer s.Close()
	s.FailNext(2, 429, map[string]string{"Retry-After": "7"})
	s.Inject(Fault{Method: "PATCH", Path: "/check-runs/", Status: 502, Body: "<html>Unicorn!</html>"})
	s.FailNext(1, 403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000000"})
	s.FailNext(1, 403, nil)
	if s.PendingFaults() != 5 {
		t.Fatalf("PendingFaults = %d, want 5", s.PendingFaults())
	}
	create := map[string]any{"name": "kg", "head_sha": "abc"}
	for i := range 2 {
		code, h, body := do(t, s, "POST", "/repos/o/r/check-runs", "", create) // faults come before auth
		if code != 429 || h.Get("Retry-After") != "7" || body.(map[string]any)["message"] == nil {
			t.Fatalf("request %d: %d %v %v", i, code, h, body)
		}
	}
	// The PATCH fault waits for a PATCH; the 403s that follow it in the queue apply to any
	// request.
	code, _, body := do(t, s, "POST", "/repos/o/r/check-runs", bearer(s), create)
	if code != 403 || !strings.Contains(fmt.Sprint(body), "rate limit") {
		t.Fatalf("rate limit fault: %d %v", code, body)
	}
	code, _, body = do(t, s, "POST", "/repos/o/r/check-runs", bearer(s), create)
	if code != 403 || !strings.Contains(fmt.Sprint(body), "Resource not accessible by integration") {
		t.Fatalf("403 fault: %d %v", code, body)
	}
	code, _, body = do(t, s, "POST", "/repos/o/r/check-runs", bearer(s), create)
	if code != 201 {
		t.Fatalf("after the faults: %d %v", code, body)
	}
	id := int64(body.(map[string]any)["id"].(float64))
	code, h, _ := do(t, s, "PATCH", fmt.Sprintf("/repos/o/r/check-runs/%d", id), bearer(s), map[string]any{"name": "kg"})
	if code != 502 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("PATCH fault: %d %v", code, h)
	}
	if s.PendingFaults() != 0 {
		t.Fatalf("PendingFaults = %d, want 0", s.PendingFaults())
	}
	if got := len(s.CheckRuns()); got != 1 {
		t.Fatalf("%d check runs, want 1: faulted requests must not change state", got)
	}
	reqs := s.Requests()
	faults := 0
	for _, r := range reqs {
		if r.Fault {
			faults++
		}
	}
	if len(reqs) != 6 || faults != 5 || reqs[0].Status != 429 || reqs[4].Status != 201 {
		t.Fatalf("%d requests, %d faulted: %+v", len(reqs), faults, reqs)
	}

	s.DropNext(1)
	req, _ := http.NewRequest("GET", s.URL()+"repos/o/r/check-runs/1", nil)
	// A fresh connection: Go retries an idempotent request that failed on a reused one.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := fresh.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("a dropped connection answered %d", resp.StatusCode)
	}
}

func TestRecording(t *testing.T) {
	s := New()
	defer s.Close()
	do(t, s, "POST", "/api/v3/repos/o/r/issues/5/comments?x=1", "token "+s.Token(), map[string]any{"body": "hi"})
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/api/v3/repos/o/r/issues/5/comments" || r.APIPath != "/repos/o/r/issues/5/comments" ||
		r.Query.Get("x") != "1" || r.Status != 201 || r.Fault {
		t.Fatalf("recorded %+v", r)
	}
	if got := r.Header.Get("Authorization"); got != "token [redacted]" {
		t.Fatalf("Authorization recorded as %q", got)
	}
	if r.Body.(map[string]any)["body"] != "hi" {
		t.Fatalf("body %v", r.Body)
	}
	var b struct{ Body string }
	if err := r.Decode(&b); err != nil || b.Body != "hi" {
		t.Fatalf("Decode: %v %+v", err, b)
	}
	if code, _, _ := do(t, s, "GET", "/repos/o/r/releases", bearer(s), nil); code != 404 {
		t.Fatalf("an endpoint the fake does not serve: %d, want 404", code)
	}
}

func TestConcurrent(t *testing.T) {
	s := New()
	defer s.Close()
	s.FailNext(5, 500, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				body, _ := json.Marshal(map[string]any{"body": fmt.Sprint(g, "-", i)})
				req, _ := http.NewRequest("POST", s.URL()+"repos/o/r/issues/1/comments", bytes.NewReader(body))
				req.Header.Set("Authorization", bearer(s))
				resp, err := s.Client().Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				s.Requests()
				s.Comments("o/r", 1)
			}
		}()
	}
	wg.Wait()
	ids := map[int64]bool{}
	for _, c := range s.Comments("o/r", 1) {
		ids[c.ID] = true
	}
	if len(ids) != 75 || len(s.Requests()) != 80 {
		t.Fatalf("%d distinct comments (want 75 = 80 - 5 faults), %d requests", len(ids), len(s.Requests()))
	}
}
