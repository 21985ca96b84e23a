// Package githubapi posts kernel-gate's results to GitHub through its REST API (with
// go-github): a check run with its annotations, and one pull-request comment kept up to
// date. It retries what GitHub asks to be retried (429, 5xx, rate limits, lost
// connections) within a time budget, and nothing else.
//
// Every call ends within stated limits, however the server behaves (one that answers 500
// forever, or never answers at all): one request DefaultRequestTimeout, one call with its
// retries DefaultDeadline, and all the calls of one run together, through every Client
// given the same Budget, DefaultBudget. Past them a call fails with an *Error saying
// which limit ended it; what kernel-gate judged does not change.
//
// The token goes to the API's own origin (scheme, host and port) only: a redirect to
// another is not followed, and no request to another carries it.
package githubapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	github "github.com/google/go-github/v60/github"

	"github.com/kernel-gate/kernel-gate/internal/ctxsleep"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/workflowcmd"
)

// DefaultAPIURL is GitHub.com's API, used when Options.APIURL is empty.
const DefaultAPIURL = "https://api.github.com/"

// The time limits of the API calls (Options.RequestTimeout, Options.Deadline and
// Options.Budget when zero or nil). A GitHub that is down cannot hold a gate for longer
// than DefaultBudget in all, however many calls a run makes.
const (
	// DefaultRequestTimeout bounds one request: connecting, sending, and reading the
	// whole answer.
	DefaultRequestTimeout = 20 * time.Second
	// DefaultDeadline bounds one call (StartCheck, UpsertComment, Call, ...): its
	// requests and the waits between their retries.
	DefaultDeadline = 60 * time.Second
	// DefaultBudget bounds all the calls of one run together: every request and every
	// wait of every Client that shares the Budget.
	DefaultBudget = 3 * time.Minute
)

const userAgent = "kernel-gate"

// Backoff between retries that GitHub gives no wait for: 1s, 2s, 4s, ... up to
// maxBackoff, each with jitter (half fixed, half random). A secondary rate limit without
// Retry-After waits secondaryWait, as GitHub's documentation asks.
const (
	firstBackoff  = time.Second
	maxBackoff    = 16 * time.Second
	secondaryWait = time.Minute
	// resetMargin is added to a rate limit's reset time, which GitHub gives in whole
	// seconds and by its own clock.
	resetMargin = time.Second
)

// Options configures a Client.
type Options struct {
	// APIURL is the REST API's base URL (GITHUB_API_URL); DefaultAPIURL when empty.
	// Any other host than api.github.com is taken as GitHub Enterprise Server
	// (https://HOST/api/v3/) through go-github's WithEnterpriseURLs.
	APIURL string
	// Token authenticates every request (GITHUB_TOKEN). It is never logged, and errors
	// never contain it.
	Token string
	// Repository is "owner/name" (GITHUB_REPOSITORY).
	Repository string
	// HTTPClient's Transport makes the requests (nil: http.DefaultTransport); its
	// Timeout, when shorter than RequestTimeout, bounds each request. The Client makes
	// its own http.Client around them, which adds the token (for the API's origin only)
	// and refuses a redirect to another origin.
	HTTPClient *http.Client
	// RequestTimeout bounds one request, its answer read whole; DefaultRequestTimeout
	// when zero. A request that gets no answer in time is retried as a lost connection.
	RequestTimeout time.Duration
	// Deadline is the time one call (StartCheck, UpdateCheck, ...) may spend on its
	// requests and the waits between their retries; DefaultDeadline when zero. A retry
	// whose wait would pass it is not made: the call fails with the last error.
	Deadline time.Duration
	// Budget is the time all the calls of a run may take together, shared by every
	// Client given it (the check run's, the baseline store's); nil gives this Client a
	// Budget of its own of DefaultBudget. A call made once it is spent fails at once.
	Budget *Budget
	// Sleep waits between retries; nil means a timer that ctx cancels. Tests inject one
	// that records the waits and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Log, when set, gets one line per retry and per fallback (invalid annotations
	// dropped, text cut to GitHub's limits), saying why.
	Log io.Writer
}

// Client talks to one repository's REST API. It is safe for concurrent use.
type Client struct {
	apiURL         string   // as configured, with a trailing slash
	base           *url.URL // api.github.com's base; nil for GitHub Enterprise Server
	origin         string   // the API's scheme://host:port, the only one the token goes to
	token          string
	owner          string
	repo           string
	httpClient     *http.Client
	requestTimeout time.Duration
	deadline       time.Duration
	budget         *Budget
	sleep          func(context.Context, time.Duration) error

	logMu sync.Mutex
	log   io.Writer

	whoMu  sync.Mutex // held while GET /user is asked
	selfMu sync.Mutex
	self   *identity // who the token acts as, once known (identity.go)
	asked  bool      // GET /user was asked once already

	namesMu sync.Mutex
	names   map[int64]string // check-run names by id: every update must repeat the name
}

// New checks the options and returns a Client. It makes no request.
func New(ctx context.Context, o Options) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("githubapi: %w", err)
	}
	if o.Token == "" {
		return nil, errors.New("githubapi: no token: kernel-gate needs GITHUB_TOKEN with checks: write and pull-requests: write")
	}
	owner, repo, ok := strings.Cut(o.Repository, "/")
	if !ok || owner == "" || repo == "" || strings.ContainsAny(repo, "/ ") || strings.Contains(owner, " ") {
		return nil, fmt.Errorf("githubapi: repository %q is not owner/name", o.Repository)
	}
	raw := o.APIURL
	if raw == "" {
		raw = DefaultAPIURL
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("githubapi: the API URL %q is not an http(s) URL", raw)
	}
	if u.User != nil {
		return nil, errors.New("githubapi: the API URL carries credentials; give the token in Options.Token")
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("githubapi: the API URL %s is not https: the token would cross the network in clear", u.Redacted())
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c := &Client{
		apiURL:         u.String(),
		origin:         originOf(u),
		token:          o.Token,
		owner:          owner,
		repo:           repo,
		requestTimeout: o.RequestTimeout,
		deadline:       o.Deadline,
		budget:         o.Budget,
		sleep:          o.Sleep,
		log:            o.Log,
		names:          map[int64]string{},
	}
	if strings.EqualFold(u.Hostname(), "api.github.com") {
		c.base = u
	} else if _, err := github.NewClient(nil).WithEnterpriseURLs(c.apiURL, c.apiURL); err != nil {
		return nil, fmt.Errorf("githubapi: the API URL %q: %v", raw, err)
	}
	if c.requestTimeout <= 0 {
		c.requestTimeout = DefaultRequestTimeout
	}
	if c.deadline <= 0 {
		c.deadline = DefaultDeadline
	}
	if c.budget == nil {
		c.budget = NewBudget(DefaultBudget)
	}
	if c.sleep == nil {
		c.sleep = ctxsleep.Sleep
	}
	c.httpClient = c.newHTTPClient(o.HTTPClient)
	return c, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// gh returns a go-github client for one attempt. Each attempt gets a new one on purpose:
// go-github remembers a rate limit it has seen and refuses, without asking GitHub, every
// request until its reset by the wall clock. The retry loop decides the waits itself (by
// its own clock, which an injected Sleep moves), so no attempt may inherit that memory.
func (c *Client) gh() *github.Client {
	g := github.NewClient(c.httpClient) // the token: authTransport
	g.UserAgent = userAgent
	if c.base == nil {
		if eg, err := g.WithEnterpriseURLs(c.apiURL, c.apiURL); err == nil { // checked in New
			eg.UserAgent = userAgent
			return eg
		}
	}
	base := *c.base
	g.BaseURL = &base
	return g
}

// Error is a request GitHub refused or did not answer, after any retries. Its message
// never contains the token.
type Error struct {
	// Op is what kernel-gate was doing: "creating the check run".
	Op string
	// Status is GitHub's HTTP status, 0 when there was no answer.
	Status int
	// Message is GitHub's message (with its validation errors), or why there was no answer.
	Message string
	// Attempts is how many times the request was sent.
	Attempts int
	// GaveUp says why retrying stopped; empty for an error that is not retried.
	GaveUp string
	// Err is go-github's error (or the network's), for errors.As.
	Err error
}

// Error is one line: "githubapi: creating the check run: 403 Resource not accessible by
// integration".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("githubapi: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Status != 0 {
		b.WriteString(strconv.Itoa(e.Status))
		b.WriteString(" ")
	}
	b.WriteString(e.Message)
	if e.GaveUp != "" {
		b.WriteString(" (")
		b.WriteString(e.GaveUp)
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// StatusCode returns the HTTP status of the *Error in err's chain, 0 when there is none
// (no answer, or not an API error).
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// op is one public call's retry budget. spent counts the time its requests took plus the
// waits it asked Sleep for, so an injected Sleep moves its clock as a real one would.
// what names the call for an error before any request was made.
type op struct {
	what  string
	start time.Time
	spent time.Duration
}

func newOp(what string) *op { return &op{what: what, start: time.Now()} }

func (o *op) now() time.Time { return o.start.Add(o.spent) }

// attempt makes one try of a request (or of a short sequence of them) and says which
// request it was at when it failed.
type attempt func(ctx context.Context, gh *github.Client) (what string, resp *github.Response, err error)

// retry runs fn until it succeeds, fails in a way that is not retried, or the next wait
// would pass the deadline.
//
// Each attempt runs under what is left of the call's deadline and of the run's Budget
// (each request under RequestTimeout, through the http.Client), so that no server can
// keep it longer.
func (c *Client) retry(ctx context.Context, o *op, fn attempt) error {
	var last *Error
	for n := 1; ; n++ {
		limit, which := c.deadline-o.spent, fmt.Sprintf("the %s retry deadline", c.deadline)
		if left := c.budget.Left(); left < limit {
			limit, which = left, c.budget.String()
		}
		if limit <= 0 {
			if last == nil {
				return &Error{Op: o.what, Message: "not sent: " + which + " is spent"}
			}
			last.GaveUp = fmt.Sprintf("gave up after %s: %s is spent", numtext.Count(n-1, "attempt"), which)
			return last
		}
		actx, cancel := context.WithTimeout(ctx, limit)
		t0 := time.Now()
		what, resp, err := fn(actx, c.gh())
		took, ranOut := time.Since(t0), actx.Err() != nil
		cancel()
		o.spent += took
		c.budget.spend(took)
		if err == nil {
			return nil
		}
		if what == "" {
			what = o.what
		}
		e := c.apiError(what, err)
		e.Attempts = n
		last = e
		if ctx.Err() != nil {
			e.Status, e.Message = 0, c.scrub(ctx.Err().Error())
			return e
		}
		if ranOut {
			// Not the caller's context: the time this attempt had, the whole of what was
			// left, ran out.
			e.Status, e.Message = 0, fmt.Sprintf("no answer from GitHub within the %s left", roundWait(limit))
			e.GaveUp = fmt.Sprintf("gave up after %s: %s ran out", numtext.Count(n, "attempt"), which)
			return e
		}
		wait, why, ok := retryWait(resp, err, n, o.now())
		if !ok {
			return e
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			e.GaveUp = fmt.Sprintf("gave up after %s: waiting %s more (%s) would pass the caller's deadline",
				numtext.Count(n, "attempt"), roundWait(wait), why)
			return e
		}
		if o.spent+wait > c.deadline {
			e.GaveUp = fmt.Sprintf("gave up after %s: waiting %s more (%s) would pass the %s retry deadline",
				numtext.Count(n, "attempt"), roundWait(wait), why, c.deadline)
			return e
		}
		if left := c.budget.Left(); wait >= left {
			e.GaveUp = fmt.Sprintf("gave up after %s: waiting %s more (%s) would pass %s",
				numtext.Count(n, "attempt"), roundWait(wait), why, c.budget)
			return e
		}
		c.logf("githubapi: %s: %s; retry %d in %s (%s)", what, e.detail(), n, roundWait(wait), why)
		if err := c.sleep(ctx, wait); err != nil {
			e.GaveUp = fmt.Sprintf("stopped waiting to retry: %v", err)
			return e
		}
		o.spent += wait
		c.budget.spend(wait)
	}
}

// Call makes one request (or a short sequence of them) through fn, retrying it as the
// Client retries its own: 429, 5xx, rate limits and lost connections within the retry
// deadline (Options.Deadline, counted afresh for each Call) and what is left of the
// run's Budget, each request within Options.RequestTimeout, after GitHub's Retry-After
// or the rate limit's reset when it gives one, else with exponential backoff and jitter;
// any other answer is final. Each attempt gets a new go-github client for the Client's
// repository, API URL and token. what says what kernel-gate was doing ("reading the
// branch x"): it is the *Error's Op, and it names the request in the retry log. A failure
// is an *Error, whose message never contains the token.
func (c *Client) Call(ctx context.Context, what string, fn func(ctx context.Context, gh *github.Client) (*github.Response, error)) error {
	return c.retry(ctx, newOp(what), func(ctx context.Context, gh *github.Client) (string, *github.Response, error) {
		resp, err := fn(ctx, gh)
		return what, resp, err
	})
}

// Owner is the owner of the Client's repository (Options.Repository's "owner").
func (c *Client) Owner() string { return c.owner }

// Repo is the name of the Client's repository (Options.Repository's "name").
func (c *Client) Repo() string { return c.repo }

// Sleep waits d as the Client waits between its retries: Options.Sleep, or a timer that
// ctx cancels. It is for callers with a retry loop of their own above Call.
func (c *Client) Sleep(ctx context.Context, d time.Duration) error { return c.sleep(ctx, d) }

// Logf writes one line to Options.Log, when set, with the token scrubbed out, any line
// break made a space and any workflow command made inert (workflowcmd.Neutralize). Lines
// from concurrent calls do not interleave.
func (c *Client) Logf(format string, args ...any) { c.logf(format, args...) }

func roundWait(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func (e *Error) detail() string {
	if e.Status != 0 {
		return strconv.Itoa(e.Status) + " " + e.Message
	}
	return e.Message
}

// apiError describes err in a line a user can act on.
func (c *Client) apiError(what string, err error) *Error {
	e := &Error{Op: what, Err: err}
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	var er *github.ErrorResponse
	switch {
	case errors.As(err, &rl):
		e.Status, e.Message = statusOf(rl.Response), rl.Message
		if !rl.Rate.Reset.IsZero() {
			e.Message += fmt.Sprintf(" (the rate limit resets at %s UTC)", rl.Rate.Reset.UTC().Format(time.TimeOnly))
		}
	case errors.As(err, &ab):
		e.Status, e.Message = statusOf(ab.Response), ab.Message
	case errors.As(err, &er):
		e.Status, e.Message = statusOf(er.Response), er.Message
		if e.Message == "" {
			e.Message = http.StatusText(e.Status)
		}
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
		var re *RedirectError
		switch {
		case errors.As(err, &re):
			e.Message = re.Error()
		case errors.As(err, &ue) && ue.Timeout():
			e.Message = fmt.Sprintf("no answer from GitHub within %s (%s %s)", c.requestTimeout, ue.Op, ue.URL)
		case errors.As(err, &ue):
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

// retryWait says whether a failure is retried and after how long: GitHub's Retry-After,
// else the rate limit's reset when none remain, else exponential backoff with jitter.
// 429, 5xx, rate-limited 403s and lost connections are retried; other 4xx are not.
func retryWait(resp *github.Response, err error, attempt int, now time.Time) (time.Duration, string, bool) {
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	var er *github.ErrorResponse
	var ue *url.Error
	var ne net.Error
	var h http.Header
	secondary := false
	switch {
	case errors.Is(err, ErrRedirect):
		return 0, "", false
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
	case errors.As(err, &ne) && ne.Timeout():
		// An answer cut off by the request's timeout while its body was read.
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
	return backoff(attempt), "backing off", true
}

// retryAfter reads Retry-After: delay seconds or an HTTP date.
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

func backoff(attempt int) time.Duration {
	d := maxBackoff
	if attempt < 6 {
		d = min(firstBackoff<<(attempt-1), maxBackoff)
	}
	return d/2 + rand.N(d/2+1)
}

// scrub removes the token from s.
func (c *Client) scrub(s string) string {
	if len(c.token) < 4 {
		return s
	}
	return strings.ReplaceAll(s, c.token, "[token]")
}

func (c *Client) logf(format string, args ...any) {
	if c.log == nil {
		return
	}
	line := c.scrub(fmt.Sprintf(format, args...))
	// A line quotes the server's answers (an error's message, a comment's author): none of
	// it may start a line of its own (the runner splits at CR too) or act as a command.
	line = workflowcmd.Neutralize(strings.NewReplacer("\n", " ", "\r", " ").Replace(line))
	c.logMu.Lock()
	defer c.logMu.Unlock()
	io.WriteString(c.log, line+"\n")
}
