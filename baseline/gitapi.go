package baseline

// The git store's requests to GitHub's REST API. They are retried as action/githubapi
// retries its own, and for the same reasons (its retry loop is not exported): 429, 5xx,
// rate limits and lost connections are retried within a time budget, after GitHub's
// Retry-After or the rate limit's reset when it gives one, else with exponential backoff
// and jitter; other answers are final. Failures are *githubapi.Error, so that a caller
// handles the check run's errors and the baseline's alike.

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	github "github.com/google/go-github/v60/github"
	"github.com/kernel-gate/kernel-gate/action/githubapi"
)

// Backoff between retries that GitHub gives no wait for, as githubapi's.
const (
	firstBackoff  = time.Second
	maxBackoff    = 16 * time.Second
	secondaryWait = time.Minute
	resetMargin   = time.Second
	userAgent     = "kernel-gate"
)

// client makes one repository's requests.
type client struct {
	apiURL     string   // with a trailing slash
	base       *url.URL // api.github.com's; nil for GitHub Enterprise Server
	token      string
	owner      string
	repo       string
	httpClient *http.Client
	deadline   time.Duration
	sleep      func(context.Context, time.Duration) error

	logMu sync.Mutex
	log   io.Writer
}

// newClient checks the options as githubapi.New does; it makes no request.
func newClient(o githubapi.Options) (*client, error) {
	if o.Token == "" {
		return nil, errors.New("baseline: no token: the git store needs GITHUB_TOKEN with contents: write")
	}
	owner, repo, ok := strings.Cut(o.Repository, "/")
	if !ok || owner == "" || repo == "" || strings.ContainsAny(repo, "/ ") || strings.Contains(owner, " ") {
		return nil, fmt.Errorf("baseline: repository %q is not owner/name", o.Repository)
	}
	raw := o.APIURL
	if raw == "" {
		raw = githubapi.DefaultAPIURL
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("baseline: the API URL %q is not an http(s) URL", raw)
	}
	if u.User != nil {
		return nil, errors.New("baseline: the API URL carries credentials; give the token in the options' Token")
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("baseline: the API URL %s is not https: the token would cross the network in clear", u.Redacted())
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c := &client{
		apiURL: u.String(), token: o.Token, owner: owner, repo: repo, httpClient: o.HTTPClient,
		deadline: o.Deadline, sleep: o.Sleep, log: o.Log,
	}
	if strings.EqualFold(u.Hostname(), "api.github.com") {
		c.base = u
	} else if _, err := github.NewClient(nil).WithEnterpriseURLs(c.apiURL, c.apiURL); err != nil {
		return nil, fmt.Errorf("baseline: the API URL %q: %v", raw, err)
	}
	if c.httpClient == nil {
		c.httpClient = &http.Client{Timeout: 30 * time.Second}
	}
	if c.deadline <= 0 {
		c.deadline = githubapi.DefaultDeadline
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	return c, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// gh returns a go-github client for one attempt: go-github remembers a rate limit it has
// seen and refuses requests until its reset by the wall clock, which the retry loop
// decides itself (see githubapi).
func (c *client) gh() *github.Client {
	g := github.NewClient(c.httpClient).WithAuthToken(c.token)
	g.UserAgent = userAgent
	if c.base == nil {
		if eg, err := g.WithEnterpriseURLs(c.apiURL, c.apiURL); err == nil { // checked in newClient
			eg.UserAgent = userAgent
			return eg
		}
	}
	base := *c.base
	g.BaseURL = &base
	return g
}

// call makes one request, retrying what GitHub asks to be retried within the deadline.
// what says what kernel-gate was doing, for the error.
func (c *client) call(ctx context.Context, what string, fn func(gh *github.Client) (*github.Response, error)) error {
	start := time.Now()
	var spent time.Duration // requests' time plus waits asked of sleep, so an injected sleep moves it
	for n := 1; ; n++ {
		t0 := time.Now()
		resp, err := fn(c.gh())
		spent += time.Since(t0)
		if err == nil {
			return nil
		}
		e := c.apiError(what, err)
		e.Attempts = n
		if ctx.Err() != nil {
			e.Status, e.Message = 0, c.scrub(ctx.Err().Error())
			return e
		}
		wait, why, ok := retryWait(resp, err, n, start.Add(spent))
		if !ok {
			return e
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			e.GaveUp = fmt.Sprintf("gave up after %d attempt(s): waiting %s more (%s) would pass the caller's deadline", n, wait.Round(10*time.Millisecond), why)
			return e
		}
		if spent+wait > c.deadline {
			e.GaveUp = fmt.Sprintf("gave up after %d attempt(s): waiting %s more (%s) would pass the %s retry deadline", n, wait.Round(10*time.Millisecond), why, c.deadline)
			return e
		}
		c.logf("baseline: %s: %s; retry %d in %s (%s)", what, e.Message, n, wait.Round(10*time.Millisecond), why)
		if err := c.sleep(ctx, wait); err != nil {
			e.GaveUp = fmt.Sprintf("stopped waiting to retry: %v", err)
			return e
		}
		spent += wait
	}
}

// apiError describes err in a line a user can act on.
func (c *client) apiError(what string, err error) *githubapi.Error {
	e := &githubapi.Error{Op: what, Err: err}
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	var er *github.ErrorResponse
	switch {
	case errors.As(err, &rl):
		e.Status, e.Message = statusOf(rl.Response), rl.Message
	case errors.As(err, &ab):
		e.Status, e.Message = statusOf(ab.Response), ab.Message
	case errors.As(err, &er):
		e.Status, e.Message = statusOf(er.Response), er.Message
		var details []string
		for _, fe := range er.Errors {
			switch {
			case fe.Message != "":
				details = append(details, fe.Message)
			case fe.Field != "":
				details = append(details, fe.Field+" "+fe.Code)
			}
		}
		if len(details) > 0 {
			e.Message += ": " + strings.Join(details, "; ")
		}
	default:
		e.Message = err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			e.Message = "no answer from GitHub: " + e.Message
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(e.Status)
	}
	e.Message = c.scrub(e.Message)
	return e
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

// retryWait says whether a failure is retried and after how long.
func retryWait(resp *github.Response, err error, attempt int, now time.Time) (time.Duration, string, bool) {
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	var er *github.ErrorResponse
	var ue *url.Error
	var h http.Header
	secondary := false
	switch {
	case errors.As(err, &rl):
		if rl.Response != nil {
			h = rl.Response.Header
		}
		if d, ok := retryAfter(h, now); ok {
			return d, "as Retry-After asks", true
		}
		return untilReset(rl.Rate.Reset.Time, now)
	case errors.As(err, &ab):
		if ab.Response != nil {
			h = ab.Response.Header
		}
		secondary = true
	case errors.As(err, &er):
		status := statusOf(er.Response)
		if er.Response != nil {
			h = er.Response.Header
		}
		rateLimited := status == http.StatusForbidden && (h.Get("Retry-After") != "" || h.Get("X-RateLimit-Remaining") == "0")
		if status != http.StatusTooManyRequests && status < 500 && !rateLimited {
			return 0, "", false
		}
	case errors.As(err, &ue) && (resp == nil || resp.Response == nil):
		// No answer: a refused or dropped connection, a timeout.
	default:
		return 0, "", false
	}
	if d, ok := retryAfter(h, now); ok {
		return d, "as Retry-After asks", true
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && reset > 0 {
			return untilReset(time.Unix(reset, 0), now)
		}
	}
	if secondary {
		return secondaryWait, "a secondary rate limit without Retry-After", true
	}
	d := maxBackoff
	if attempt < 6 {
		d = min(firstBackoff<<(attempt-1), maxBackoff)
	}
	return d/2 + mrand.N(d/2+1), "backing off", true
}

func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func untilReset(reset, now time.Time) (time.Duration, string, bool) {
	at := reset.UTC().Format(time.TimeOnly)
	if !reset.After(now) {
		return resetMargin, fmt.Sprintf("the rate limit's reset at %s UTC has passed", at), true
	}
	return reset.Sub(now) + resetMargin, fmt.Sprintf("the rate limit resets at %s UTC", at), true
}

// scrub removes the token from s.
func (c *client) scrub(s string) string {
	if len(c.token) < 4 {
		return s
	}
	return strings.ReplaceAll(s, c.token, "[token]")
}

func (c *client) logf(format string, args ...any) {
	if c.log == nil {
		return
	}
	line := strings.ReplaceAll(c.scrub(fmt.Sprintf(format, args...)), "\n", " ")
	c.logMu.Lock()
	defer c.logMu.Unlock()
	io.WriteString(c.log, line+"\n")
}
