package githubapi

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ErrRedirect is wrapped by the error of a request that GitHub (or what answered for it)
// redirected to another origin than the API's: the redirect is not followed, so the
// token cannot go with it, and the request is not retried.
var ErrRedirect = errors.New("redirected away from the API")

// maxRedirects is http.Client's own limit, kept.
const maxRedirects = 10

// RedirectError is a redirect kernel-gate did not follow. It names the origins only: a
// Location's path and query are the server's to choose and are not repeated.
type RedirectError struct {
	From, To string // scheme://host:port
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the API at %s redirected to %s: not followed, as the token goes to the API's own origin only", e.From, e.To)
}

func (e *RedirectError) Unwrap() error { return ErrRedirect }

// originOf is scheme://host:port in lower case, with the scheme's default port written
// out, so that https://API.github.com and https://api.github.com:443 are one origin.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// newHTTPClient is the http.Client every go-github client of c uses: base's transport
// (http.DefaultTransport when none), the token added by authTransport, redirects kept to
// the API's origin, and each request bounded by RequestTimeout (or base's Timeout, when
// shorter). base itself is left as it was.
func (c *Client) newHTTPClient(base *http.Client) *http.Client {
	next, timeout := http.DefaultTransport, c.requestTimeout
	if base != nil {
		if base.Transport != nil {
			next = base.Transport
		}
		if base.Timeout > 0 && base.Timeout < timeout {
			timeout = base.Timeout
		}
	}
	return &http.Client{
		Transport: &authTransport{next: next, token: c.token, origin: c.origin},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if to := originOf(req.URL); to != c.origin {
				return &RedirectError{From: c.origin, To: to}
			}
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil
		},
	}
}

// authTransport adds the token to the requests for the API's origin, and removes any
// Authorization header from a request for another: go-github's WithAuthToken adds it to
// every request, a redirect's to another host included.
type authTransport struct {
	next   http.RoundTripper
	token  string
	origin string
}

// Why: docs/threat-model.md, threat-model T9.
func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if originOf(req.URL) == t.origin {
		req.Header.Set("Authorization", "Bearer "+t.token)
	} else {
		req.Header.Del("Authorization")
	}
	resp, err := t.next.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: MaxResponseBytes}
	}
	return resp, err
}

// MaxResponseBytes bounds an answer's body, as RequestTimeout bounds its time: GitHub's
// largest answers (a page of 100 comments of 65,536 characters, a baseline file's blob of
// 32 MiB in base64) fit; a server that streams without end is not read into memory.
const MaxResponseBytes = 64 << 20

// errTooLarge ends the reading of an answer over MaxResponseBytes.
var errTooLarge = fmt.Errorf("the answer is larger than %d MiB: not read further", MaxResponseBytes>>20)

// cappedBody is an answer's body that fails once more than left bytes were read.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// An answer of exactly the limit ends here; one byte more is one too many.
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// Budget is the time the API calls of one run may take together: every request and
// every wait between retries of every Client given it (Options.Budget). Once it is spent
// a call fails at once, sending nothing. Calls made at the same time each may use what
// was left when they began. It is safe for concurrent use.
type Budget struct {
	total time.Duration

	mu    sync.Mutex
	spent time.Duration
}

// NewBudget returns a Budget of total; DefaultBudget when total is not positive.
// Why: docs/threat-model.md, threat-model T9.
func NewBudget(total time.Duration) *Budget {
	if total <= 0 {
		total = DefaultBudget
	}
	return &Budget{total: total}
}

// Left is what is left of the budget (0 when spent).
func (b *Budget) Left() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.total-b.spent, 0)
}

// String names the budget in an error: "the 3m0s budget of this run's API calls".
func (b *Budget) String() string {
	return fmt.Sprintf("the %s budget of this run's API calls", b.total)
}

func (b *Budget) spend(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent += d
}
