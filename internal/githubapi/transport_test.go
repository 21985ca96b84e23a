package githubapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// recorder is a server that writes down what it was sent and answers as a check run.
type recorder struct {
	mu   sync.Mutex
	auth []string // each request's Authorization, "" when none
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	r.mu.Unlock()
	io.Copy(io.Discard, req.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, `{"id": 1, "name": "kernel-gate", "app": {"slug": "github-actions"}}`)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auth...)
}

// A redirect from the API to another origin (here another port of the same host) is not
// followed, whatever its status, so the token never reaches it; it is not retried either.
// A redirect within the API's origin is followed, with the token.
func TestRedirectNeverCarriesTheToken(t *testing.T) {
	const token = "ghs_redirect_test_token_5b1e"
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			other := &recorder{}
			elsewhere := httptest.NewServer(other)
			defer elsewhere.Close()
			var apiHits int
			var mu sync.Mutex
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				apiHits++
				mu.Unlock()
				http.Redirect(w, r, elsewhere.URL+r.URL.Path+"?leak=1", status)
			}))
			defer api.Close()
			var log hangtest.SyncBuffer
			c, err := New(context.Background(), Options{APIURL: api.URL + "/", Token: token, Repository: repo, Log: &log,
				HTTPClient: api.Client(), Sleep: func(context.Context, time.Duration) error { return nil }})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.StartCheck(context.Background(), "kernel-gate", "abc", "")
			if !errors.Is(err, ErrRedirect) || !strings.Contains(err.Error(), "redirected to http://127.0.0.1:") || strings.Contains(err.Error(), "leak") {
				t.Fatalf("error %v, want the redirect refused", err)
			}
			if got := other.requests(); len(got) != 0 {
				t.Fatalf("the other origin was sent %d requests (Authorization %q)", len(got), got)
			}
			if apiHits != 1 || len(log.String()) != 0 {
				t.Fatalf("a refused redirect was retried: %d requests\n%s", apiHits, log.String())
			}
			if strings.Contains(err.Error(), token) {
				t.Fatal("the error holds the token")
			}
		})
	}
	t.Run("within the API's origin", func(t *testing.T) {
		rec := &recorder{}
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/repos/") { // a renamed repository's answer
				http.Redirect(w, r, "/api/v3/repositories/42/check-runs", http.StatusTemporaryRedirect)
				return
			}
			rec.ServeHTTP(w, r)
		}))
		defer api.Close()
		c, err := New(context.Background(), Options{APIURL: api.URL + "/", Token: token, Repository: repo, HTTPClient: api.Client()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.StartCheck(context.Background(), "kernel-gate", "abc", ""); err != nil {
			t.Fatal(err)
		}
		if got := rec.requests(); len(got) != 1 || got[0] != "Bearer "+token {
			t.Fatalf("the redirected request's Authorization: %q", got)
		}
	})
}

// The token is added for the API's origin only: a request for another origin, even one
// that comes with an Authorization header of its own, goes without one.
func TestAuthTransportOriginOnly(t *testing.T) {
	var sent []string
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.URL.String()+" "+r.Header.Get("Authorization"))
		return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
	})
	tr := &authTransport{next: next, token: "t0k", origin: "https://api.github.com:443"}
	for _, u := range []string{"https://API.github.com/repos", "https://api.github.com:443/x", "http://api.github.com/x",
		"https://api.github.com:8443/x", "https://api.github.com.evil.example/x", "https://uploads.github.com/x"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer from-the-caller")
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if req.Header.Get("Authorization") != "Bearer from-the-caller" {
			t.Fatal("RoundTrip changed the caller's request")
		}
	}
	want := []string{"https://API.github.com/repos Bearer t0k", "https://api.github.com:443/x Bearer t0k", "http://api.github.com/x ",
		"https://api.github.com:8443/x ", "https://api.github.com.evil.example/x ", "https://uploads.github.com/x "}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A server that never answers holds no call past its limits: each request ends at
// RequestTimeout and is retried as a lost connection until the call's deadline; a
// deadline shorter than a request's timeout ends the request itself.
func TestHangingServer(t *testing.T) {
	for _, tc := range []struct {
		name            string
		requestTimeout  time.Duration
		deadline        time.Duration
		err             string
		minimumAttempts int
	}{
		{"each request times out and is retried", 50 * time.Millisecond, 5 * time.Second,
			"no answer from GitHub within 50ms (Patch ", 2},
		{"the call's deadline ends the request", 0, 300 * time.Millisecond,
			"no answer from GitHub within the 300ms left (gave up after 1 attempt: the 300ms retry deadline ran out)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.RequestTimeout, o.Deadline = tc.requestTimeout, tc.deadline })
			id := h.start(t)
			h.srv.Inject(fakegithub.Fault{Method: "PATCH", Hang: true, Times: 1000})
			_, err := h.c.UpdateCheck(context.Background(), id, Output{Summary: "running"})
			var e *Error
			if !errors.As(err, &e) || e.Status != 0 || !strings.Contains(err.Error(), tc.err) || e.Attempts < tc.minimumAttempts || e.GaveUp == "" {
				t.Fatalf("error %v (%+v), want %q after at least %d attempts", err, e, tc.err, tc.minimumAttempts)
			}
			if e.Attempts != len(h.srv.Requests())-1 {
				t.Fatalf("%d attempts, %d PATCHes", e.Attempts, len(h.srv.Requests())-1)
			}
		})
	}
}

// All the calls of a run share one Budget, across Clients: a GitHub that answers 500 to
// everything cannot hold the run past it (what is left is tried once more by each call,
// never waited on), and one that never answers spends it, after which a call fails at
// once, sending nothing.
func TestBudgetEndsEveryCall(t *testing.T) {
	budget := NewBudget(10 * time.Second)
	a := newHarness(t, func(o *Options) { o.Budget = budget })
	b := newHarness(t, func(o *Options) { o.Budget = budget })
	for _, h := range []*harness{a, b} {
		h.srv.FailNext(10000, 500, nil)
	}
	_, err := a.c.StartCheck(context.Background(), "kernel-gate", "abc", "")
	if err == nil || !strings.Contains(err.Error(), "would pass the 10s budget of this run's API calls)") {
		t.Fatalf("error %v", err)
	}
	for i := range 3 {
		_, err := b.c.UpsertComment(context.Background(), 3, "summary", "report")
		if err == nil || !strings.Contains(err.Error(), "500 Internal Server Error (gave up after") ||
			!strings.HasSuffix(err.Error(), "would pass the 10s budget of this run's API calls)") {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	var waited time.Duration
	for _, d := range append(a.Sleeps(), b.Sleeps()...) {
		waited += d
	}
	if waited > 10*time.Second {
		t.Fatalf("waited %s in all on a 10s budget", waited)
	}

	hung := NewBudget(300 * time.Millisecond)
	h := newHarness(t, func(o *Options) { o.Budget = hung })
	h.srv.Inject(fakegithub.Fault{Hang: true, Times: 1000})
	_, err = h.c.StartCheck(context.Background(), "kernel-gate", "abc", "")
	if err == nil || err.Error() != "githubapi: creating the check run: no answer from GitHub within the 300ms left (gave up after 1 attempt: the 300ms budget of this run's API calls ran out)" {
		t.Fatalf("error %v", err)
	}
	_, err = h.c.UpsertComment(context.Background(), 3, "summary", "report")
	if err == nil || err.Error() != "githubapi: commenting on pull request #3: not sent: the 300ms budget of this run's API calls is spent" {
		t.Fatalf("error %v", err)
	}
	if n := len(h.srv.Requests()); n != 1 || hung.Left() != 0 {
		t.Fatalf("%d requests, %s left", n, hung.Left())
	}
}

// An answer's size is bounded as its time is: a broken or hostile server (a proxy, a
// GitHub Enterprise Server someone else runs) that streams a body without end was read
// whole within the request's timeout, at the network's speed: gigabytes held in memory,
// until the runner killed the step. An answer past MaxResponseBytes is an error, the rest
// of it unread, and is not retried.
func TestAnswerSizeIsBounded(t *testing.T) {
	const over = MaxResponseBytes + 8<<20
	var mu sync.Mutex
	var hits int
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id": 1, "app": {"slug": "github-actions"}, "name": "`)
		chunk := strings.Repeat("a", 1<<20)
		for total := 0; total < over; total += len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}`)
	}))
	defer api.Close()
	c, err := New(context.Background(), Options{APIURL: api.URL + "/", Token: "ghs_size_test_token_77a0", Repository: repo,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StartCheck(context.Background(), "kernel-gate", "abc", "")
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("error %v, want the answer refused as larger than %d MiB", err, MaxResponseBytes>>20)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 {
		t.Errorf("%d requests: an answer too large was retried", hits)
	}
}
