// Package fakegithub is a fake of the GitHub REST API endpoints that kernel-gate calls
// (check runs, pull-request comments, and the Git Data API that the baseline store writes
// its branch through), for tests: it listens on 127.0.0.1 only, checks
// requests as GitHub does where a client could get them wrong, records every request,
// keeps the state the requests build up and answers with injected faults on demand.
//
// Served, under both / (api.github.com) and /api/v3/ (GitHub Enterprise Server):
//
//	POST  /repos/{owner}/{repo}/check-runs
//	GET   /repos/{owner}/{repo}/check-runs/{id}
//	PATCH /repos/{owner}/{repo}/check-runs/{id}
//	GET   /repos/{owner}/{repo}/issues/{number}/comments   (paginated: per_page, page, Link)
//	POST  /repos/{owner}/{repo}/issues/{number}/comments
//	PATCH /repos/{owner}/{repo}/issues/comments/{id}
//	GET   /user                                          (403 for the default, installation token: SetUser)
//	POST  /repos/{owner}/{repo}/git/blobs
//	GET   /repos/{owner}/{repo}/git/blobs/{sha}            (JSON, or raw with Accept: ...raw)
//	POST  /repos/{owner}/{repo}/git/trees                  (base_tree, nested paths, sha: null deletes)
//	GET   /repos/{owner}/{repo}/git/trees/{sha}            (a tree, a commit or a branch; ?recursive=1)
//	POST  /repos/{owner}/{repo}/git/commits
//	GET   /repos/{owner}/{repo}/git/commits/{sha}
//	GET   /repos/{owner}/{repo}/git/ref/{ref}
//	GET   /repos/{owner}/{repo}/git/refs[/{ref}], /git/matching-refs/{ref}
//	POST  /repos/{owner}/{repo}/git/refs
//	PATCH /repos/{owner}/{repo}/git/refs/{ref}             (force=false: fast-forward only)
//	DELETE /repos/{owner}/{repo}/git/refs/{ref}
//	GET   /repos/{owner}/{repo}/pulls                      (state, head=user:ref, base; paginated;
//	                                                         AddPullRequest makes them)
//
// Besides faults before a request is served, a Fault can answer after serving it (the
// effect stays, the answer is lost), and Hold makes requests wait for each other, so that
// a test can force racing writers to collide instead of hoping they do.
//
// A Server is safe for concurrent use.
package fakegithub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultToken is the token a new Server accepts (SetToken changes it).
const DefaultToken = "kg-fake-token-0123456789"

// BotLogin is the author of the comments the API creates.
const BotLogin = "github-actions[bot]"

// GitHub's limits, which the fake enforces with a 422 as GitHub does.
const (
	// MaxAnnotationsPerRequest is how many annotations one create or update may carry.
	MaxAnnotationsPerRequest = 50
	// MaxOutputChars bounds a check run's output summary and text.
	MaxOutputChars = 65535
	// MaxAnnotationBytes bounds an annotation's message and raw_details (64 KiB).
	MaxAnnotationBytes = 64 * 1024
	// MaxAnnotationTitleChars bounds an annotation's title.
	MaxAnnotationTitleChars = 255
	// MaxCommentChars bounds an issue comment's body.
	MaxCommentChars = 65536
)

// maxRequestBytes caps a request body the fake reads; GitHub refuses far smaller ones.
const maxRequestBytes = 64 << 20

// Server is a running fake API. Close it when done.
type Server struct {
	srv *httptest.Server

	mu        sync.Mutex
	token     string
	nextID    int64
	requests  []Request
	checkRuns map[int64]*CheckRun
	comments  map[int64]*Comment
	faults    []*Fault
	holds     []*hold
	git       map[string]*gitRepo // by "owner/name"
	user      string              // the token's user (SetUser); "" for an installation token
	closing   chan struct{}       // closed by Close: a Hang fault's request ends
	closeOnce sync.Once
	pulls     []PullRequest
}

// Request is one request as the fake received it.
type Request struct {
	Method string
	// Path is the URL path as sent; APIPath is the same without a GitHub Enterprise
	// Server "/api/v3" prefix.
	Path    string
	APIPath string
	Query   url.Values
	// Header is the request's headers with the credential of Authorization replaced by
	// "[redacted]" (the scheme, "Bearer" or "token", is kept).
	Header http.Header
	// Body is the decoded JSON body (map[string]any, []any, ...), nil when there was none
	// or it was not JSON; Raw is the body as sent.
	Body any
	Raw  []byte
	// Status is what the fake answered (0 for a dropped connection); Fault says the
	// answer was an injected fault.
	Status int
	Fault  bool
}

// Decode decodes the request's body into v.
func (r Request) Decode(v any) error {
	return json.Unmarshal(r.Raw, v)
}

// CheckRun is the state of one check run.
type CheckRun struct {
	ID          int64
	Repo        string // owner/name
	Name        string
	HeadSHA     string
	DetailsURL  string
	ExternalID  string
	Status      string // queued, in_progress, completed
	Conclusion  string
	StartedAt   time.Time
	CompletedAt time.Time
	// Title, Summary and Text are the output as last set.
	Title   string
	Summary string
	Text    string
	// Annotations holds every annotation ever posted to the run, in the order posted.
	Annotations []Annotation
	// Updates counts the PATCHes the run accepted.
	Updates int
}

// Annotation is one check-run annotation as posted. Columns are nil when not sent.
type Annotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	StartColumn     *int   `json:"start_column,omitempty"`
	EndColumn       *int   `json:"end_column,omitempty"`
	AnnotationLevel string `json:"annotation_level"`
	Message         string `json:"message"`
	Title           string `json:"title,omitempty"`
	RawDetails      string `json:"raw_details,omitempty"`
}

// Comment is one issue (pull-request) comment.
type Comment struct {
	ID      int64
	Repo    string // owner/name
	Issue   int
	User    string
	Body    string
	Created time.Time
	Updated time.Time
	// Edits counts the PATCHes the comment accepted.
	Edits int
}

// Fault is an answer the fake gives instead of serving a request.
type Fault struct {
	// Method ("" for any) and Path (a substring of the request's path, "" for any) say
	// which requests the fault applies to.
	Method string
	Path   string
	// Times is how many matching requests get the fault (0 means 1).
	Times int
	// Status and Headers are the answer's. Body is its raw body; when empty the fake
	// writes the JSON error GitHub writes for Status (for a 403, the primary rate limit's
	// when X-RateLimit-Remaining is "0", the secondary one's when Retry-After is set).
	Status  int
	Headers map[string]string
	Body    string
	// Drop closes the connection without answering: the client sees a network error.
	Drop bool
	// After serves the request first, keeping whatever it changed, and then gives the
	// fault instead of the answer: a write that happened although the client saw it fail.
	After bool
	// Hang never answers: the request waits until the client gives up on it (or the
	// Server is closed), and then the connection is closed.
	Hang bool
}

// New starts a fake API on 127.0.0.1 that accepts DefaultToken.
func New() *Server {
	s := &Server{
		token:     DefaultToken,
		nextID:    1,
		checkRuns: map[int64]*CheckRun{},
		comments:  map[int64]*Comment{},
		git:       map[string]*gitRepo{},
		closing:   make(chan struct{}),
	}
	mux := http.NewServeMux()
	for _, prefix := range []string{"", "/api/v3"} {
		mux.HandleFunc("POST "+prefix+"/repos/{owner}/{repo}/check-runs", s.createCheckRun)
		mux.HandleFunc("GET "+prefix+"/repos/{owner}/{repo}/check-runs/{id}", s.getCheckRun)
		mux.HandleFunc("PATCH "+prefix+"/repos/{owner}/{repo}/check-runs/{id}", s.updateCheckRun)
		mux.HandleFunc("GET "+prefix+"/repos/{owner}/{repo}/issues/{number}/comments", s.listComments)
		mux.HandleFunc("POST "+prefix+"/repos/{owner}/{repo}/issues/{number}/comments", s.createComment)
		mux.HandleFunc("PATCH "+prefix+"/repos/{owner}/{repo}/issues/comments/{id}", s.editComment)
		mux.HandleFunc("GET "+prefix+"/user", s.getUser)
		mux.HandleFunc("GET "+prefix+"/repos/{owner}/{repo}/pulls", s.listPulls)
		mux.HandleFunc("GET "+prefix+"/repos/{owner}/{repo}/pulls/{number}", s.getPull)
		mux.HandleFunc("GET "+prefix+"/repos/{owner}/{repo}/pulls/{number}/files", s.listPullFiles)
		git := prefix + "/repos/{owner}/{repo}/git/"
		mux.HandleFunc("POST "+git+"blobs", s.createBlob)
		mux.HandleFunc("GET "+git+"blobs/{sha}", s.getBlob)
		mux.HandleFunc("POST "+git+"trees", s.createTree)
		mux.HandleFunc("GET "+git+"trees/{sha}", s.getTree)
		mux.HandleFunc("POST "+git+"commits", s.createCommit)
		mux.HandleFunc("GET "+git+"commits/{sha}", s.getCommit)
		mux.HandleFunc("GET "+git+"ref/{ref...}", s.getRef)
		mux.HandleFunc("GET "+git+"refs", s.listRefs(true))
		mux.HandleFunc("GET "+git+"refs/{ref...}", s.listRefs(false))
		mux.HandleFunc("GET "+git+"matching-refs/{ref...}", s.listRefs(true))
		mux.HandleFunc("POST "+git+"refs", s.createRef)
		mux.HandleFunc("PATCH "+git+"refs/{ref...}", s.updateRef)
		mux.HandleFunc("DELETE "+git+"refs/{ref...}", s.deleteRef)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "Not Found", nil)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("fakegithub: listening on 127.0.0.1: %v", err))
	}
	s.srv = httptest.NewUnstartedServer(s.front(mux))
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	return s
}

// URL is the API's base URL with its trailing slash, as GITHUB_API_URL would give it
// (go-github needs the slash). The same API answers under URL()+"api/v3/".
func (s *Server) URL() string { return s.srv.URL + "/" }

// Client is an HTTP client for the fake (a plain one: the fake is HTTP).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close shuts the fake down (a request a Hang fault holds ends first).
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.srv.Close()
}

// Token is the token the fake accepts.
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// SetToken sets the token the fake accepts.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// Inject queues a fault. Faults apply in the order injected: a request gets the first
// one it matches that has answers left.
func (s *Server) Inject(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	f.Headers = cloneMap(f.Headers)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// FailNext answers the next n requests, whatever they are, with status and headers
// (e.g. 429 with Retry-After, 403 with X-RateLimit-Remaining: 0 and X-RateLimit-Reset).
func (s *Server) FailNext(n, status int, headers map[string]string) {
	s.Inject(Fault{Times: n, Status: status, Headers: headers})
}

// DropNext closes the connection of the next n requests without answering.
func (s *Server) DropNext(n int) {
	s.Inject(Fault{Times: n, Drop: true})
}

// PendingFaults is how many injected answers have not been given yet.
func (s *Server) PendingFaults() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.faults {
		n += f.Times
	}
	return n
}

// Requests returns every request received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r
		out[i].Header = r.Header.Clone()
		out[i].Raw = slices.Clone(r.Raw)
	}
	return out
}

// CheckRun returns the state of check run id.
func (s *Server) CheckRun(id int64) (CheckRun, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.checkRuns[id]
	if !ok {
		return CheckRun{}, false
	}
	return c.clone(), true
}

// CheckRuns returns every check run, in order of creation.
func (s *Server) CheckRuns() []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, c := range s.checkRuns {
		out = append(out, c.clone())
	}
	slices.SortFunc(out, func(a, b CheckRun) int { return int(a.ID - b.ID) })
	return out
}

// Comments returns the comments on issue (or pull request) number of repo
// ("owner/name"), oldest first.
func (s *Server) Comments(repo string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commentsOf(repo, number)
}

// Comment returns comment id.
func (s *Server) Comment(id int64) (Comment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comments[id]
	if !ok {
		return Comment{}, false
	}
	return *c, true
}

// AddComment adds a comment by user to issue number of repo directly, as if posted
// earlier (for tests that need existing comments), and returns its id.
func (s *Server) AddComment(repo string, number int, user, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	c := &Comment{ID: s.newID(), Repo: repo, Issue: number, User: user, Body: body, Created: now, Updated: now}
	s.comments[c.ID] = c
	return c.ID
}

func (c *CheckRun) clone() CheckRun {
	out := *c
	out.Annotations = slices.Clone(c.Annotations)
	return out
}

func (s *Server) newID() int64 {
	id := s.nextID
	s.nextID++
	return id
}

func (s *Server) commentsOf(repo string, number int) []Comment {
	var out []Comment
	for _, c := range s.comments {
		if c.Repo == repo && c.Issue == number {
			out = append(out, *c)
		}
	}
	slices.SortFunc(out, func(a, b Comment) int { return int(a.ID - b.ID) })
	return out
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// statusWriter records the status a handler writes, before the client can see it.
type statusWriter struct {
	http.ResponseWriter
	wrote  bool
	record func(status int)
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.record(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// front records the request, then answers with a fault, refuses a bad token, or serves.
// A request is recorded when it arrives, and its status before the answer is sent, so
// that the record's order is the order the client sent them in.
func (s *Server) front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
		rec := Request{
			Method:  r.Method,
			Path:    r.URL.Path,
			APIPath: apiPath(r.URL.Path),
			Query:   r.URL.Query(),
			Header:  redactedHeader(r.Header),
			Raw:     raw,
		}
		if len(raw) > 0 {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				rec.Body = v
			}
		}
		s.mu.Lock()
		i := len(s.requests)
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w, record: func(status int) {
			s.mu.Lock()
			s.requests[i].Status = status
			s.mu.Unlock()
		}}
		if err != nil {
			writeError(sw, http.StatusBadRequest, "Problems reading the request body", nil)
			return
		}
		if len(raw) > maxRequestBytes {
			writeError(sw, http.StatusRequestEntityTooLarge, "Request body too large", nil)
			return
		}
		s.wait(r)
		f, faulted := s.takeFault(r)
		answer := func() {
			s.mu.Lock()
			s.requests[i].Fault = true
			s.mu.Unlock()
			if f.Hang {
				select {
				case <-r.Context().Done():
				case <-s.closing:
				}
				dropConnection(w)
				return
			}
			if f.Drop {
				dropConnection(w)
				return
			}
			writeFault(sw, f)
		}
		if faulted && !f.After {
			answer()
			return
		}
		if !s.authorized(r.Header.Get("Authorization")) {
			writeError(sw, http.StatusUnauthorized, "Bad credentials", nil)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if faulted {
			next.ServeHTTP(&discardWriter{h: http.Header{}}, r)
			answer()
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// discardWriter takes an answer nobody will see (a Fault with After).
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// HoldTimeout is how long Hold keeps requests waiting for the rest of their group.
const HoldTimeout = 10 * time.Second

// hold is a group of requests that wait for each other.
type hold struct {
	method, path string
	n, arrived   int
	release      chan struct{}
}

// Hold makes the next n requests that match method and path (as a Fault matches them)
// wait until all n have arrived, then lets them go on together. Racing clients that all
// read the same state before any of them writes cannot be had by timing alone; Hold on
// their writes forces it. A group that is still short after HoldTimeout goes on anyway,
// so a test that miscounts fails instead of hanging. Holds apply in the order made,
// before faults.
func (s *Server) Hold(method, path string, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds = append(s.holds, &hold{method: method, path: path, n: n, release: make(chan struct{})})
}

// wait blocks r while a hold it belongs to waits for the rest of its group.
func (s *Server) wait(r *http.Request) {
	s.mu.Lock()
	var release chan struct{}
	for i, h := range s.holds {
		if (h.method != "" && !strings.EqualFold(h.method, r.Method)) || (h.path != "" && !strings.Contains(r.URL.Path, h.path)) {
			continue
		}
		h.arrived++
		release = h.release
		if h.arrived == h.n {
			close(h.release)
			s.holds = slices.Delete(s.holds, i, i+1)
		}
		break
	}
	s.mu.Unlock()
	if release == nil {
		return
	}
	t := time.NewTimer(HoldTimeout)
	defer t.Stop()
	select {
	case <-release:
	case <-t.C:
	case <-r.Context().Done():
	}
}

func apiPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "/api/v3/"); ok {
		return "/" + rest
	}
	return p
}

func redactedHeader(h http.Header) http.Header {
	out := h.Clone()
	if v := out.Get("Authorization"); v != "" {
		if scheme, _, ok := strings.Cut(v, " "); ok {
			out.Set("Authorization", scheme+" [redacted]")
		} else {
			out.Set("Authorization", "[redacted]")
		}
	}
	return out
}

func (s *Server) authorized(header string) bool {
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok || (!strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token")) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token != "" && cred == s.token
}

func (s *Server) takeFault(r *http.Request) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
			continue
		}
		if f.Path != "" && !strings.Contains(r.URL.Path, f.Path) {
			continue
		}
		f.Times--
		out := *f
		if f.Times == 0 {
			s.faults = slices.Delete(s.faults, i, i+1)
		}
		return out, true
	}
	return Fault{}, false
}

func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

const (
	docsRateLimit          = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-rate-limits"
	docsSecondaryRateLimit = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
	docsREST               = "https://docs.github.com/rest"
)

func writeFault(w http.ResponseWriter, f Fault) {
	for k, v := range f.Headers {
		w.Header().Set(k, v)
	}
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if f.Body != "" {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		w.WriteHeader(status)
		io.WriteString(w, f.Body)
		return
	}
	msg, docs := http.StatusText(status), docsREST
	switch {
	case status == http.StatusUnauthorized:
		msg = "Bad credentials"
	case status == http.StatusForbidden && w.Header().Get("X-RateLimit-Remaining") == "0":
		msg, docs = "API rate limit exceeded for installation ID 1.", docsRateLimit
	case status == http.StatusForbidden && w.Header().Get("Retry-After") != "":
		msg, docs = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", docsSecondaryRateLimit
	case status == http.StatusForbidden:
		msg = "Resource not accessible by integration"
	case status == http.StatusTooManyRequests:
		msg, docs = "API rate limit exceeded", docsRateLimit
	case status == http.StatusUnprocessableEntity:
		msg = "Validation Failed"
	}
	writeJSON(w, status, errorBody{Message: msg, DocumentationURL: docs})
}

// fieldError is one entry of a 422's "errors", as GitHub writes them.
type fieldError struct {
	Resource string `json:"resource"`
	Field    string `json:"field"`
	Code     string `json:"code"`
	Message  string `json:"message,omitempty"`
}

type errorBody struct {
	Message          string       `json:"message"`
	Errors           []fieldError `json:"errors,omitempty"`
	DocumentationURL string       `json:"documentation_url"`
}

func writeError(w http.ResponseWriter, status int, msg string, errs []fieldError) {
	writeJSON(w, status, errorBody{Message: msg, Errors: errs, DocumentationURL: docsREST})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// decode reads a JSON object; a body that is not one is answered as GitHub does.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, _ := io.ReadAll(r.Body)
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			writeError(w, http.StatusUnprocessableEntity, "Invalid request.", []fieldError{{
				Field: te.Field, Code: "invalid", Message: fmt.Sprintf("%s is not a %s", te.Value, te.Type),
			}})
			return false
		}
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", nil)
		return false
	}
	return true
}

func pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return 0, false
	}
	return id, true
}

func repoOf(r *http.Request) string {
	return r.PathValue("owner") + "/" + r.PathValue("repo")
}

func chars(s string) int { return utf8.RuneCountInString(s) }
