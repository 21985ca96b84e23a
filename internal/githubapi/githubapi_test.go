package githubapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

const repo = "octo/kernels"

// harness is a Client on a fake API whose Sleep records the waits and returns at once.
type harness struct {
	srv *fakegithub.Server
	c   *Client
	log *hangtest.SyncBuffer

	mu     sync.Mutex
	sleeps []time.Duration
}

func newHarness(t *testing.T, tweak ...func(*Options)) *harness {
	t.Helper()
	h := &harness{srv: fakegithub.New(), log: &hangtest.SyncBuffer{}}
	t.Cleanup(h.srv.Close)
	o := Options{
		APIURL:     h.srv.URL(),
		Token:      h.srv.Token(),
		Repository: repo,
		Log:        h.log,
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.sleeps = append(h.sleeps, d)
			return ctx.Err()
		},
	}
	for _, f := range tweak {
		f(&o)
	}
	c, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	t.Cleanup(func() {
		if strings.Contains(h.log.String(), h.srv.Token()) {
			t.Errorf("the log holds the token:\n%s", h.log)
		}
	})
	return h
}

func (h *harness) Sleeps() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.sleeps...)
}

func (h *harness) start(t *testing.T) int64 {
	t.Helper()
	id, err := h.c.StartCheck(context.Background(), "kernel-gate", "0123456789abcdef0123456789abcdef01234567", "https://example.com/run/1")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// patches returns the annotation counts of the PATCHes to check run id, in order.
func (h *harness) patches(t *testing.T, id int64) (counts []int, conclusions []string) {
	t.Helper()
	for _, r := range h.srv.Requests() {
		if r.Method != "PATCH" || r.APIPath != fmt.Sprintf("/repos/%s/check-runs/%d", repo, id) {
			continue
		}
		var body struct {
			Name       string
			Conclusion string
			Output     *struct {
				Annotations []fakegithub.Annotation
			}
		}
		if err := r.Decode(&body); err != nil {
			t.Fatal(err)
		}
		if body.Name != "kernel-gate" {
			t.Errorf("a PATCH names the check %q", body.Name)
		}
		n := 0
		if body.Output != nil {
			n = len(body.Output.Annotations)
		}
		counts = append(counts, n)
		conclusions = append(conclusions, body.Conclusion)
	}
	return counts, conclusions
}

func annotations(n int) []Annotation {
	out := make([]Annotation, n)
	for i := range out {
		out[i] = Annotation{Path: "kernels/flash_fwd.cu", StartLine: i + 1, Level: LevelWarning, Message: fmt.Sprint("finding ", i+1)}
	}
	return out
}

func TestAnnotationBatches(t *testing.T) {
	for _, tc := range []struct {
		n        int
		complete bool
		want     []int
	}{
		{0, false, []int{0}},
		{1, false, []int{1}},
		{50, false, []int{50}},
		{51, false, []int{50, 1}},
		{120, false, []int{50, 50, 20}},
		{120, true, []int{50, 50, 20}},
		{0, true, []int{0}},
		{250, true, []int{50, 50, 50, 50, 50}},
	} {
		t.Run(fmt.Sprintf("%d complete=%v", tc.n, tc.complete), func(t *testing.T) {
			h := newHarness(t)
			id := h.start(t)
			out := Output{Title: "kernel-gate: 2 gates failed", Summary: "summary", Annotations: annotations(tc.n)}
			var posted Posted
			var err error
			if tc.complete {
				posted, err = h.c.CompleteCheck(context.Background(), id, ConclusionFailure, out)
			} else {
				posted, err = h.c.UpdateCheck(context.Background(), id, out)
			}
			if err != nil {
				t.Fatal(err)
			}
			if posted != (Posted{Annotations: tc.n}) {
				t.Fatalf("posted %+v", posted)
			}
			counts, conclusions := h.patches(t, id)
			if fmt.Sprint(counts) != fmt.Sprint(tc.want) {
				t.Fatalf("PATCHes carried %v annotations, want %v", counts, tc.want)
			}
			for i, c := range conclusions {
				want := ""
				if tc.complete && i == len(conclusions)-1 {
					want = ConclusionFailure
				}
				if c != want {
					t.Fatalf("PATCH %d has conclusion %q, want %q (only the last completes)", i, c, want)
				}
			}
			run, _ := h.srv.CheckRun(id)
			if len(run.Annotations) != tc.n {
				t.Fatalf("%d annotations on the run, want %d", len(run.Annotations), tc.n)
			}
			for i, a := range run.Annotations {
				if a.StartLine != i+1 || a.EndLine != i+1 || a.Message != fmt.Sprint("finding ", i+1) {
					t.Fatalf("annotation %d is %+v: out of order", i, a)
				}
			}
			if run.Title != out.Title || run.Summary != out.Summary {
				t.Fatalf("output %q %q", run.Title, run.Summary)
			}
			if tc.complete && (run.Status != "completed" || run.Conclusion != ConclusionFailure) {
				t.Fatalf("run %s/%s, want completed/failure", run.Status, run.Conclusion)
			}
			if !tc.complete && run.Status != "in_progress" {
				t.Fatalf("run %s, want in_progress", run.Status)
			}
		})
	}
}

func TestOutputCut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		summary string
		text    string
		cut     int
	}{
		{"at the limit", strings.Repeat("s", MaxOutputBytes), "", 0},
		{"one over", strings.Repeat("s", MaxOutputBytes+1), "", 1},
		{"far over", strings.Repeat("s", 1<<20), "", 1},
		{"multibyte", strings.Repeat("é€", 30000), "", 1},
		{"text too", strings.Repeat("s", 70000), strings.Repeat("t", 200000), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.start(t)
			posted, err := h.c.CompleteCheck(context.Background(), id, ConclusionSuccess, Output{Title: "t", Summary: tc.summary, Text: tc.text})
			if err != nil {
				t.Fatal(err)
			}
			if posted.Cut != tc.cut {
				t.Fatalf("Cut = %d, want %d", posted.Cut, tc.cut)
			}
			run, _ := h.srv.CheckRun(id)
			for _, f := range []struct{ name, sent, got string }{{"summary", tc.summary, run.Summary}, {"text", tc.text, run.Text}} {
				if len(f.sent) <= MaxOutputBytes {
					if f.got != f.sent {
						t.Fatalf("%s changed though it fits", f.name)
					}
					continue
				}
				if len(f.got) > MaxOutputBytes || !utf8Valid(f.got) {
					t.Fatalf("%s is %d bytes (valid UTF-8: %v), want ≤ %d", f.name, len(f.got), utf8Valid(f.got), MaxOutputBytes)
				}
				if len(f.got) < MaxOutputBytes-3 {
					t.Fatalf("%s cut to %d bytes: more than a rune short of the limit", f.name, len(f.got))
				}
				note := fmt.Sprintf("GitHub allows %d characters here; the whole text is %d bytes.", MaxOutputBytes, len(f.sent))
				if !strings.Contains(f.got, note) || !strings.HasPrefix(f.sent, strings.SplitN(f.got, "\n\n---\n", 2)[0]) {
					t.Fatalf("%s does not end with the note: ...%q", f.name, f.got[len(f.got)-200:])
				}
			}
			if tc.cut > 0 && !strings.Contains(h.log.String(), "cut") {
				t.Fatalf("no log line for the cut:\n%s", h.log)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	reset := func(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).Unix(), 10) }
	type fault struct {
		n       int
		status  int
		headers map[string]string
		// timed, if set, makes the headers when the fault is injected: a time they name
		// is then counted from the request, not from when this table was made (a loaded
		// machine can take seconds to reach the later cases)
		timed func() map[string]string
		body  string
		drop  bool
	}
	for _, tc := range []struct {
		name     string
		faults   []fault
		deadline time.Duration
		// sleeps: each wait must lie in [lo, hi].
		sleeps [][2]time.Duration
		err    string // "" for success
	}{
		{name: "429 with Retry-After then success",
			faults: []fault{{n: 1, status: 429, headers: map[string]string{"Retry-After": "7"}}},
			sleeps: [][2]time.Duration{{7 * time.Second, 7 * time.Second}}},
		{name: "Retry-After twice",
			faults: []fault{{n: 2, status: 503, headers: map[string]string{"Retry-After": "3"}}},
			sleeps: [][2]time.Duration{{3 * time.Second, 3 * time.Second}, {3 * time.Second, 3 * time.Second}}},
		{name: "Retry-After as a date",
			faults: []fault{{n: 1, status: 429, timed: func() map[string]string {
				return map[string]string{"Retry-After": time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)}
			}}},
			sleeps: [][2]time.Duration{{18 * time.Second, 20 * time.Second}}},
		{name: "429 without headers backs off",
			faults: []fault{{n: 3, status: 429}},
			sleeps: [][2]time.Duration{{500 * time.Millisecond, time.Second}, {time.Second, 2 * time.Second}, {2 * time.Second, 4 * time.Second}}},
		{name: "502 with an HTML body",
			faults: []fault{{n: 2, status: 502, body: "<html><body>Unicorn!</body></html>"}},
			sleeps: [][2]time.Duration{{500 * time.Millisecond, time.Second}, {time.Second, 2 * time.Second}}},
		{name: "a dropped connection",
			faults: []fault{{n: 1, drop: true}},
			sleeps: [][2]time.Duration{{500 * time.Millisecond, time.Second}}},
		{name: "primary rate limit: 403 waits for the reset",
			faults: []fault{{n: 1, status: 403, timed: func() map[string]string {
				return map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset(30 * time.Second)}
			}}},
			sleeps: [][2]time.Duration{{29 * time.Second, 32 * time.Second}}},
		{name: "primary rate limit: 429 waits for the reset",
			faults: []fault{{n: 1, status: 429, timed: func() map[string]string {
				return map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset(12 * time.Second)}
			}}},
			sleeps: [][2]time.Duration{{11 * time.Second, 14 * time.Second}}},
		{name: "secondary rate limit: 403 with Retry-After",
			faults: []fault{{n: 1, status: 403, headers: map[string]string{"Retry-After": "5"}}},
			sleeps: [][2]time.Duration{{5 * time.Second, 5 * time.Second}}},
		{name: "a reset past the deadline is not waited for",
			faults: []fault{{n: 1, status: 403, headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset(time.Hour)}}},
			err:    "githubapi: creating the check run: 403 API rate limit exceeded for installation ID 1. (the rate limit resets at"},
		{name: "Retry-After past the deadline",
			faults: []fault{{n: 1, status: 429, headers: map[string]string{"Retry-After": "3600"}}},
			err:    "githubapi: creating the check run: 429 API rate limit exceeded (gave up after 1 attempt: waiting 1h0m0s more (as Retry-After asks) would pass the 1m0s retry deadline)"},
		{name: "403 is not retried",
			faults: []fault{{n: 1, status: 403}},
			err:    "githubapi: creating the check run: 403 Resource not accessible by integration"},
		{name: "401 is not retried",
			faults: []fault{{n: 1, status: 401}},
			err:    "githubapi: creating the check run: 401 Bad credentials"},
		{name: "404 is not retried",
			faults: []fault{{n: 1, status: 404}},
			err:    "githubapi: creating the check run: 404 Not Found"},
		{name: "422 is not retried",
			faults: []fault{{n: 1, status: 422}},
			err:    "githubapi: creating the check run: 422 Validation Failed"},
		{name: "5xx until a short deadline",
			faults:   []fault{{n: 1000, status: 500}},
			deadline: 10 * time.Second,
			err:      "githubapi: creating the check run: 500 Internal Server Error (gave up after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.Deadline = tc.deadline })
			for _, f := range tc.faults {
				headers := f.headers
				if f.timed != nil {
					headers = f.timed()
				}
				h.srv.Inject(fakegithub.Fault{Times: f.n, Status: f.status, Headers: headers, Body: f.body, Drop: f.drop})
			}
			_, err := h.c.StartCheck(context.Background(), "kernel-gate", "abc", "")
			sleeps := h.Sleeps()
			requests := len(h.srv.Requests())
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q...", err, tc.err)
				}
				if tc.sleeps == nil && tc.deadline == 0 && (len(sleeps) != 0 || requests != 1) {
					t.Fatalf("%d requests and sleeps %v: an error that is not retried was retried", requests, sleeps)
				}
				var e *Error
				if !errors.As(err, &e) || e.Status != StatusCode(err) || e.Attempts != requests {
					t.Fatalf("the error is %#v; %d requests", err, requests)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.sleeps != nil {
				if len(sleeps) != len(tc.sleeps) {
					t.Fatalf("slept %v, want %d sleeps", sleeps, len(tc.sleeps))
				}
				for i, d := range sleeps {
					if d < tc.sleeps[i][0] || d > tc.sleeps[i][1] {
						t.Fatalf("sleep %d was %s, want %s..%s (all: %v)", i, d, tc.sleeps[i][0], tc.sleeps[i][1], sleeps)
					}
				}
				if requests != len(sleeps)+1 {
					t.Fatalf("%d requests after %d sleeps", requests, len(sleeps))
				}
				if lines := strings.Count(h.log.String(), "\n"); lines != len(sleeps) {
					t.Fatalf("%d log lines for %d retries:\n%s", lines, len(sleeps), h.log)
				}
			}
			if tc.deadline > 0 {
				var total time.Duration
				for _, d := range sleeps {
					total += d
				}
				if total > tc.deadline || len(sleeps) < 3 || requests != len(sleeps)+1 {
					t.Fatalf("slept %v (%s in all) over %d requests with a %s deadline", sleeps, total, requests, tc.deadline)
				}
			}
			if tc.err == "" {
				if runs := h.srv.CheckRuns(); len(runs) != 1 || runs[0].Status != "in_progress" {
					t.Fatalf("check runs %+v", runs)
				}
			}
		})
	}
}

func TestRetryLog(t *testing.T) {
	h := newHarness(t)
	h.srv.FailNext(1, 429, map[string]string{"Retry-After": "2"})
	h.srv.FailNext(1, 502, nil)
	if _, err := h.c.StartCheck(context.Background(), "kernel-gate", "abc", ""); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(h.log.String()), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "githubapi: creating the check run: 429 API rate limit exceeded; retry 1 in 2s (as Retry-After asks)") ||
		!strings.HasPrefix(lines[1], "githubapi: creating the check run: 502 Bad Gateway; retry 2 in ") ||
		!strings.HasSuffix(lines[1], "(backing off)") {
		t.Fatalf("log:\n%s", h.log)
	}
}

func TestCancel(t *testing.T) {
	h := newHarness(t)
	h.srv.FailNext(5, 500, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.c.StartCheck(ctx, "kernel-gate", "abc", "")
	if err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("error %v, want context canceled", err)
	}
	if len(h.Sleeps()) != 0 {
		t.Fatalf("slept %v after a cancel", h.Sleeps())
	}
}

func TestTokenNeverInErrors(t *testing.T) {
	h := newHarness(t)
	tok := h.srv.Token()
	h.srv.Inject(fakegithub.Fault{Times: 2, Status: 500, Headers: map[string]string{"Content-Type": "application/json"},
		Body: `{"message":"token ` + tok + ` is bad"}`})
	h.srv.Inject(fakegithub.Fault{Status: 403, Headers: map[string]string{"Content-Type": "application/json"},
		Body: `{"message":"Bearer ` + tok + ` may not"}`})
	_, err := h.c.StartCheck(context.Background(), "kernel-gate", "abc", "")
	if err == nil || StatusCode(err) != 403 {
		t.Fatalf("error %v, want a 403", err)
	}
	if strings.Contains(err.Error(), tok) || strings.Contains(h.log.String(), tok) {
		t.Fatalf("the token leaked: %v\n%s", err, h.log)
	}
	if !strings.Contains(err.Error(), "Bearer [token] may not") {
		t.Fatalf("error %v", err)
	}
	for _, r := range h.srv.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer [redacted]" {
			t.Fatalf("Authorization %q: go-github sends Bearer", got)
		}
	}

	bad := newHarness(t, func(o *Options) { o.Token = "wrong-token-0000" })
	_, err = bad.c.StartCheck(context.Background(), "kernel-gate", "abc", "")
	if err == nil || err.Error() != "githubapi: creating the check run: 401 Bad credentials" || len(bad.srv.Requests()) != 1 {
		t.Fatalf("a wrong token: %v after %d requests", err, len(bad.srv.Requests()))
	}
}

func TestBaseURLs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		url      func(fake string) string // from the fake's URL()
		redirect bool                     // api.github.com, sent to the fake by the transport
		prefix   string
	}{
		{"GHES /api/v3 without the slash", func(f string) string { return f + "api/v3" }, false, "/api/v3/repos/"},
		{"GHES /api/v3/", func(f string) string { return f + "api/v3/" }, false, "/api/v3/repos/"},
		{"a bare host gets /api/v3/", func(f string) string { return strings.TrimSuffix(f, "/") }, false, "/api/v3/repos/"},
		{"api.github.com", func(string) string { return "https://api.github.com" }, true, "/repos/"},
		{"the default", func(string) string { return "" }, true, "/repos/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				fake := o.APIURL
				o.APIURL = tc.url(fake)
				if tc.redirect {
					o.HTTPClient = &http.Client{Transport: redirect{to: fake}}
				}
			})
			id := h.start(t)
			if _, err := h.c.CompleteCheck(context.Background(), id, ConclusionSuccess, Output{Summary: "ok", Annotations: annotations(3)}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.c.UpsertComment(context.Background(), 4, "summary", "hello"); err != nil {
				t.Fatal(err)
			}
			reqs := h.srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests", len(reqs))
			}
			for _, r := range reqs {
				if !strings.HasPrefix(r.Path, tc.prefix) {
					t.Fatalf("%s %s, want under %s", r.Method, r.Path, tc.prefix)
				}
				if tc.redirect && r.Header.Get("X-Original-Host") != "api.github.com" {
					t.Fatalf("sent to %q", r.Header.Get("X-Original-Host"))
				}
				if !strings.HasPrefix(r.Header.Get("User-Agent"), "kernel-gate") {
					t.Fatalf("User-Agent %q", r.Header.Get("User-Agent"))
				}
			}
			if run, _ := h.srv.CheckRun(id); run.Conclusion != ConclusionSuccess || run.Title != "kernel-gate" || len(run.Annotations) != 3 {
				t.Fatalf("run %+v", run)
			}
		})
	}
}

// redirect sends api.github.com's requests to the fake.
type redirect struct{ to string }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	u, _ := url.Parse(r.to)
	req = req.Clone(req.Context())
	req.Header.Set("X-Original-Host", req.URL.Host)
	req.URL.Scheme, req.URL.Host, req.Host = u.Scheme, u.Host, ""
	return http.DefaultTransport.RoundTrip(req)
}

func TestNewOptions(t *testing.T) {
	ok := Options{Token: "t0ken", Repository: "o/r"}
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		err  string
	}{
		{"defaults", func(*Options) {}, ""},
		{"no token", func(o *Options) { o.Token = "" }, "no token"},
		{"no slash", func(o *Options) { o.Repository = "repo" }, `repository "repo" is not owner/name`},
		{"no owner", func(o *Options) { o.Repository = "/r" }, "not owner/name"},
		{"two slashes", func(o *Options) { o.Repository = "o/r/x" }, "not owner/name"},
		{"not a URL", func(o *Options) { o.APIURL = "::" }, "not an http(s) URL"},
		{"ftp", func(o *Options) { o.APIURL = "ftp://h/" }, "not an http(s) URL"},
		{"plain http to a remote host", func(o *Options) { o.APIURL = "http://ghe.example.com/api/v3" }, "not https"},
		{"credentials in the URL", func(o *Options) { o.APIURL = "https://u:p@ghe.example.com/api/v3" }, "carries credentials"},
		{"GHES", func(o *Options) { o.APIURL = "https://ghe.example.com/api/v3" }, ""},
		{"plain http to loopback", func(o *Options) { o.APIURL = "http://127.0.0.1:9/" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.mod(&o)
			_, err := New(context.Background(), o)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "t0ken") {
				t.Fatalf("the error holds the token: %v", err)
			}
		})
	}
}

func TestCheckArguments(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.c.StartCheck(ctx, "", "abc", ""); err == nil {
		t.Fatal("a check run without a name")
	}
	if _, err := h.c.StartCheck(ctx, "kg", "", ""); err == nil {
		t.Fatal("a check run without a SHA")
	}
	if _, err := h.c.CompleteCheck(ctx, 1, "passed", Output{}); err == nil || !strings.Contains(err.Error(), `conclusion "passed"`) {
		t.Fatalf("a bad conclusion: %v", err)
	}
	if _, err := h.c.UpdateCheck(ctx, 0, Output{Summary: "x"}); err == nil {
		t.Fatal("check run 0")
	}
	if p, err := h.c.UpdateCheck(ctx, 5, Output{}); err != nil || p != (Posted{}) {
		t.Fatalf("an empty update: %+v %v", p, err)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Fatalf("%d requests for calls that should send none", n)
	}
	_, err := h.c.UpdateCheck(ctx, 999, Output{Summary: "x"})
	if err == nil || err.Error() != "githubapi: reading check run 999: 404 Not Found" {
		t.Fatalf("an unknown check run: %v", err)
	}
}

// A check run started elsewhere (another process, an earlier step) is updated under its
// own name, which the client asks GitHub for once.
func TestUpdateRunStartedElsewhere(t *testing.T) {
	h := newHarness(t)
	id := h.start(t)
	c2, err := New(context.Background(), Options{APIURL: h.srv.URL(), Token: h.srv.Token(), Repository: repo, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c2.UpdateCheck(context.Background(), id, Output{Summary: "from elsewhere", Annotations: annotations(2)}); err != nil {
			t.Fatal(err)
		}
	}
	gets := 0
	for _, r := range h.srv.Requests() {
		if r.Method == "GET" {
			gets++
		}
	}
	run, _ := h.srv.CheckRun(id)
	if gets != 1 || run.Name != "kernel-gate" || run.Summary != "from elsewhere" || len(run.Annotations) != 4 {
		t.Fatalf("%d GETs; run %+v", gets, run)
	}
}

func TestAnnotationValidation(t *testing.T) {
	good := Annotation{Path: "kernels/a.cu", StartLine: 3, Level: LevelFailure, Message: "m"}
	for _, tc := range []struct {
		name string
		mod  func(*Annotation)
		err  string // "" for valid
		// what arrives, for valid ones
		path                      string
		endLine, startCol, endCol int
		colsNil                   bool
	}{
		{name: "plain", mod: func(*Annotation) {}, path: "kernels/a.cu", endLine: 3, colsNil: true},
		{name: "./ prefix cleaned", mod: func(a *Annotation) { a.Path = "./kernels//a.cu" }, path: "kernels/a.cu", endLine: 3, colsNil: true},
		{name: "columns on one line", mod: func(a *Annotation) { a.StartColumn, a.EndColumn = 5, 9 }, path: "kernels/a.cu", endLine: 3, startCol: 5, endCol: 9},
		{name: "one column", mod: func(a *Annotation) { a.StartColumn = 5 }, path: "kernels/a.cu", endLine: 3, startCol: 5, endCol: 5},
		{name: "columns across lines dropped", mod: func(a *Annotation) { a.EndLine, a.StartColumn, a.EndColumn = 7, 5, 9 }, path: "kernels/a.cu", endLine: 7, colsNil: true},
		{name: "end column before start", mod: func(a *Annotation) { a.StartColumn, a.EndColumn = 5, 2 }, path: "kernels/a.cu", endLine: 3, startCol: 5, endCol: 5},
		{name: "no path", mod: func(a *Annotation) { a.Path = "" }, err: "no path"},
		{name: "absolute", mod: func(a *Annotation) { a.Path = "/home/runner/work/a.cu" }, err: "absolute"},
		{name: "windows absolute", mod: func(a *Annotation) { a.Path = `C:\work\a.cu` }, err: "absolute"},
		{name: "dot dot", mod: func(a *Annotation) { a.Path = "kernels/../../etc/passwd" }, err: ".. element"},
		{name: "dot", mod: func(a *Annotation) { a.Path = "./" }, err: "names no file"},
		{name: "line 0", mod: func(a *Annotation) { a.StartLine = 0 }, err: "line of at least 1"},
		{name: "end before start", mod: func(a *Annotation) { a.EndLine = 2 }, err: "before start line"},
		{name: "level error", mod: func(a *Annotation) { a.Level = "error" }, err: `level "error"`},
		{name: "no message", mod: func(a *Annotation) { a.Message = "" }, err: "no message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := good
			tc.mod(&a)
			err := a.Validate()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Validate: %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t)
			id := h.start(t)
			posted, err := h.c.UpdateCheck(context.Background(), id, Output{Summary: "s", Annotations: []Annotation{good, a}})
			if err != nil {
				t.Fatal(err)
			}
			run, _ := h.srv.CheckRun(id)
			if tc.err != "" {
				if posted.Dropped != 1 || posted.Annotations != 1 || len(run.Annotations) != 1 {
					t.Fatalf("posted %+v, %d on the run", posted, len(run.Annotations))
				}
				if !strings.Contains(h.log.String(), "dropped 1 of 2 annotations GitHub would refuse: annotation 2") {
					t.Fatalf("log:\n%s", h.log)
				}
				return
			}
			if posted.Dropped != 0 || len(run.Annotations) != 2 {
				t.Fatalf("posted %+v", posted)
			}
			got := run.Annotations[1]
			if got.Path != tc.path || got.EndLine != tc.endLine || (got.StartColumn == nil) != tc.colsNil {
				t.Fatalf("arrived as %+v", got)
			}
			if !tc.colsNil && (*got.StartColumn != tc.startCol || *got.EndColumn != tc.endCol) {
				t.Fatalf("columns %d-%d, want %d-%d", *got.StartColumn, *got.EndColumn, tc.startCol, tc.endCol)
			}
		})
	}
}

// Annotation texts are JSON to the API: newlines, "::" and markup arrive as written, only
// cut to GitHub's limits.
func TestHostileAnnotations(t *testing.T) {
	mb := strings.Repeat("x", 1<<20)
	hostile := []Annotation{
		{Path: "kernels/a.cu", StartLine: 1, Level: LevelFailure, Title: "line one\nline two :: ::error file=x::boom", Message: "::error::not a command\n%0A<script>\"'`", RawDetails: "raw\r\n::set-output"},
		{Path: "kernels/a.cu", StartLine: 2, Level: LevelWarning, Title: strings.Repeat("T", 300), Message: mb, RawDetails: mb},
		{Path: "kernels/a.cu", StartLine: 3, Level: LevelNotice, Title: strings.Repeat("ü", 200), Message: strings.Repeat("€", 1<<19)},
	}
	var anns []Annotation
	for range 20 {
		anns = append(anns, hostile...)
	}
	h := newHarness(t)
	id := h.start(t)
	posted, err := h.c.CompleteCheck(context.Background(), id, ConclusionFailure, Output{Summary: "s", Annotations: anns})
	if err != nil {
		t.Fatal(err)
	}
	if posted.Annotations != 60 || posted.Dropped != 0 || posted.Cut != 20*5 {
		t.Fatalf("posted %+v", posted)
	}
	run, _ := h.srv.CheckRun(id)
	if len(run.Annotations) != 60 {
		t.Fatalf("%d annotations", len(run.Annotations))
	}
	for i, a := range run.Annotations {
		switch i % 3 {
		case 0:
			if a.Title != hostile[0].Title || a.Message != hostile[0].Message || a.RawDetails != hostile[0].RawDetails {
				t.Fatalf("annotation %d changed: %+v", i, a)
			}
		case 1:
			if len(a.Title) != MaxAnnotationTitleBytes || !strings.HasSuffix(a.Title, " [cut]") {
				t.Fatalf("title %q", a.Title)
			}
			for _, s := range []string{a.Message, a.RawDetails} {
				if len(s) > MaxAnnotationBytes || len(s) < MaxAnnotationBytes-200 || !strings.HasSuffix(s, fmt.Sprintf("GitHub allows %d bytes here; the whole text is %d bytes]", MaxAnnotationBytes, 1<<20)) {
					t.Fatalf("annotation %d: %d bytes ending %q", i, len(s), s[len(s)-100:])
				}
			}
		case 2:
			if !utf8Valid(a.Title) || !utf8Valid(a.Message) || len(a.Title) > MaxAnnotationTitleBytes || len(a.Message) > MaxAnnotationBytes {
				t.Fatalf("annotation %d: title %d bytes, message %d bytes, valid %v %v", i, len(a.Title), len(a.Message), utf8Valid(a.Title), utf8Valid(a.Message))
			}
		}
	}
	if counts, _ := h.patches(t, id); fmt.Sprint(counts) != "[50 10]" {
		t.Fatalf("PATCHes %v", counts)
	}
}

func TestConcurrentUse(t *testing.T) {
	h := newHarness(t)
	h.srv.FailNext(3, 502, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			id, err := h.c.StartCheck(context.Background(), "kernel-gate", "abc", "")
			if err == nil {
				_, err = h.c.CompleteCheck(context.Background(), id, ConclusionSuccess, Output{Summary: "s", Annotations: annotations(60)})
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := h.c.UpsertComment(context.Background(), 100+i, "summary", "body")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range h.srv.CheckRuns() {
		if len(run.Annotations) != 60 || run.Conclusion != ConclusionSuccess {
			t.Fatalf("run %d: %d annotations, %q", run.ID, len(run.Annotations), run.Conclusion)
		}
	}
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

// A wait that would outlast the caller's context is not started.
func TestCallerDeadline(t *testing.T) {
	h := newHarness(t)
	h.srv.FailNext(1, 503, map[string]string{"Retry-After": "30"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := h.c.StartCheck(ctx, "kernel-gate", "abc", "")
	if err == nil || !strings.HasSuffix(err.Error(), "(gave up after 1 attempt: waiting 30s more (as Retry-After asks) would pass the caller's deadline)") {
		t.Fatalf("error %v", err)
	}
	if len(h.Sleeps()) != 0 {
		t.Fatalf("slept %v", h.Sleeps())
	}
}

// The log lines a Client writes quote what the API answered (an error's message, a
// comment's author): from a broken or hostile server (a proxy, a GitHub Enterprise
// Server someone else runs) that text held a CR, after which the runner reads a new line
// ("\r::add-mask::..." a command), or the legacy "##[" form, which the runner finds
// anywhere in a line. Neither may reach the step's log as a command.
func TestLogRelaysNoCommand(t *testing.T) {
	h := newHarness(t)
	h.srv.Inject(fakegithub.Fault{Times: 2, Status: 500, Headers: map[string]string{"Content-Type": "application/json"},
		Body: `{"message":"down\r::add-mask::abc\r##[error]spoofed ##[stop-commands]tok"}`})
	if _, err := h.c.StartCheck(context.Background(), "kernel-gate", "abc", ""); err != nil {
		t.Fatal(err)
	}
	h.srv.AddComment(repo, 5, "##[warning]mallory", MarkerTag("summary")+"\nnot ours")
	if _, err := h.c.UpsertComment(context.Background(), 5, "summary", "pass"); err != nil {
		t.Fatal(err)
	}
	log := h.log.String()
	if !strings.Contains(log, "spoofed") || !strings.Contains(log, "mallory") {
		t.Fatalf("the log does not quote the answers:\n%q", log)
	}
	for _, line := range strings.FieldsFunc(log, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "::") || strings.Contains(l, "##[") {
			t.Errorf("a line of the API's answer reached the log as a command: %q", l)
		}
	}
}
