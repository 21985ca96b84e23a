package fakegithub

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// GitHub's page sizes for lists.
const (
	defaultPerPage = 30
	maxPerPage     = 100
)

type commentRequest struct {
	Body *string `json:"body"`
}

type commentJSON struct {
	ID        int64     `json:"id"`
	NodeID    string    `json:"node_id"`
	URL       string    `json:"url"`
	HTMLURL   string    `json:"html_url"`
	IssueURL  string    `json:"issue_url"`
	Body      string    `json:"body"`
	User      userJSON  `json:"user"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

type userJSON struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

func (c *Comment) json(r *http.Request) commentJSON {
	return commentJSON{
		ID:        c.ID,
		NodeID:    fmt.Sprintf("IC_fake%d", c.ID),
		URL:       fmt.Sprintf("http://%s/repos/%s/issues/comments/%d", r.Host, c.Repo, c.ID),
		HTMLURL:   fmt.Sprintf("https://github.com/%s/pull/%d#issuecomment-%d", c.Repo, c.Issue, c.ID),
		IssueURL:  fmt.Sprintf("http://%s/repos/%s/issues/%d", r.Host, c.Repo, c.Issue),
		Body:      c.Body,
		User:      userJSON{Login: c.User, ID: UserID(c.User), Type: userType(c.User)},
		CreatedAt: c.Created,
		UpdatedAt: c.Updated,
	}
}

// validBody answers a 422 for a missing, empty or too long body.
func validBody(w http.ResponseWriter, b commentRequest) bool {
	var errs []fieldError
	switch {
	case b.Body == nil || *b.Body == "":
		errs = append(errs, fieldError{Resource: "IssueComment", Field: "body", Code: "missing_field", Message: "body is required"})
	case chars(*b.Body) > MaxCommentChars:
		errs = append(errs, fieldError{Resource: "IssueComment", Field: "body", Code: "custom",
			Message: fmt.Sprintf("body is too long (maximum is %d characters)", MaxCommentChars)})
	}
	if len(errs) > 0 {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", errs)
		return false
	}
	return true
}

func issueNumber(w http.ResponseWriter, r *http.Request) (int, bool) {
	n, err := strconv.Atoi(r.PathValue("number"))
	if err != nil || n <= 0 {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return 0, false
	}
	return n, true
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	number, ok := issueNumber(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	all := s.commentsOf(repoOf(r), number)
	s.mu.Unlock()
	from, to := paginate(w, r, len(all))
	out := make([]commentJSON, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, all[i].json(r))
	}
	writeJSON(w, http.StatusOK, out)
}

// paginate is the page of n items the request asks for (per_page, page), as GitHub serves
// it: [from, to) of them, with GitHub's Link header set on w.
func paginate(w http.ResponseWriter, r *http.Request, n int) (from, to int) {
	q := r.URL.Query()
	perPage, page := defaultPerPage, 1
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		perPage = min(v, maxPerPage)
	}
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	last := max(1, (n+perPage-1)/perPage)
	from = min((page-1)*perPage, n)
	to = min(from+perPage, n)
	if link := linkHeader(r, page, perPage, last); link != "" {
		w.Header().Set("Link", link)
	}
	return from, to
}

// linkHeader is GitHub's pagination header: next and last after the first page's, prev
// and first from the second on.
func linkHeader(r *http.Request, page, perPage, last int) string {
	at := func(p int, rel string) string {
		q := url.Values{}
		q.Set("per_page", strconv.Itoa(perPage))
		q.Set("page", strconv.Itoa(p))
		return fmt.Sprintf(`<http://%s%s?%s>; rel="%s"`, r.Host, r.URL.Path, q.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, at(page+1, "next"), at(last, "last"))
	}
	if page > 1 {
		links = append(links, at(min(page-1, last), "prev"), at(1, "first"))
	}
	return strings.Join(links, ", ")
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	number, ok := issueNumber(w, r)
	if !ok {
		return
	}
	var b commentRequest
	if !decode(w, r, &b) || !validBody(w, b) {
		return
	}
	now := time.Now().UTC()
	s.mu.Lock()
	c := &Comment{ID: s.newID(), Repo: repoOf(r), Issue: number, User: s.author(), Body: *b.Body, Created: now, Updated: now}
	s.comments[c.ID] = c
	out := c.json(r)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var b commentRequest
	if !decode(w, r, &b) {
		return
	}
	s.mu.Lock()
	c, ok := s.comments[id]
	if !ok || c.Repo != repoOf(r) {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	s.mu.Unlock()
	if !validBody(w, b) {
		return
	}
	s.mu.Lock()
	c.Body = *b.Body
	c.Updated = time.Now().UTC()
	c.Edits++
	out := c.json(r)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}
