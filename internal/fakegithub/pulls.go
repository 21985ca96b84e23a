package fakegithub

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// PullRequest is a pull request the fake lists, as GET /repos/{owner}/{repo}/pulls
// answers it: AddPullRequest puts one there (the fake has no endpoint that opens one).
type PullRequest struct {
	Number int
	// Repo is the base repository, "owner/name".
	Repo string
	// State is "open" or "closed" ("" is open).
	State string
	// HeadRef is the head branch's name, HeadSHA its commit, HeadRepo the repository it
	// is in ("owner/name": a fork's for a fork's pull request).
	HeadRef, HeadSHA, HeadRepo string
	BaseRef                    string
	// Files are what GET /repos/{owner}/{repo}/pulls/{number}/files lists.
	Files []PullFile
}

// PullFile is a file a pull request changes, as GitHub lists it: Patch is its diff's hunks
// ("" where GitHub gives none: a binary or very large file).
type PullFile struct {
	Filename, Status, Patch string
}

// AddPullRequest adds a pull request that GET /repos/{owner}/{repo}/pulls lists.
func (s *Server) AddPullRequest(pr PullRequest) {
	if pr.State == "" {
		pr.State = "open"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls = append(s.pulls, pr)
}

type pullJSON struct {
	URL     string      `json:"url"`
	HTMLURL string      `json:"html_url"`
	Number  int         `json:"number"`
	State   string      `json:"state"`
	Head    pullRefJSON `json:"head"`
	Base    pullRefJSON `json:"base"`
}

type pullRefJSON struct {
	Label string       `json:"label"`
	Ref   string       `json:"ref"`
	SHA   string       `json:"sha"`
	User  userJSON     `json:"user"`
	Repo  pullRepoJSON `json:"repo"`
}

type pullRepoJSON struct {
	FullName string   `json:"full_name"`
	Name     string   `json:"name"`
	Owner    userJSON `json:"owner"`
	Fork     bool     `json:"fork"`
}

func (p PullRequest) json(r *http.Request) pullJSON {
	owner := func(repo string) string { o, _, _ := strings.Cut(repo, "/"); return o }
	name := func(repo string) string { _, n, _ := strings.Cut(repo, "/"); return n }
	ref := func(repo, ref, sha string) pullRefJSON {
		u := userJSON{Login: owner(repo), Type: "User"}
		return pullRefJSON{Label: owner(repo) + ":" + ref, Ref: ref, SHA: sha, User: u,
			Repo: pullRepoJSON{FullName: repo, Name: name(repo), Owner: u, Fork: !strings.EqualFold(repo, p.Repo)}}
	}
	return pullJSON{
		URL:     fmt.Sprintf("http://%s/repos/%s/pulls/%d", r.Host, p.Repo, p.Number),
		HTMLURL: fmt.Sprintf("https://github.com/%s/pull/%d", p.Repo, p.Number),
		Number:  p.Number, State: p.State,
		Head: ref(p.HeadRepo, p.HeadRef, p.HeadSHA),
		Base: ref(p.Repo, p.BaseRef, ""),
	}
}

// listPulls answers GET /repos/{owner}/{repo}/pulls with GitHub's filters: state (open by
// default; closed, all), head ("user:ref-name": the head repository's owner and branch)
// and base (the base branch), paginated as GitHub does.
func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	switch state {
	case "":
		state = "open"
	case "open", "closed", "all":
	default:
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed",
			[]fieldError{{Resource: "Issue", Field: "state", Code: "invalid", Message: "state is not one of open, closed, all"}})
		return
	}
	headUser, headRef, byHead := strings.Cut(q.Get("head"), ":")
	s.mu.Lock()
	var all []PullRequest
	for _, p := range s.pulls {
		owner, _, _ := strings.Cut(p.HeadRepo, "/")
		switch {
		case !strings.EqualFold(p.Repo, repoOf(r)),
			state != "all" && p.State != state,
			byHead && (!strings.EqualFold(owner, headUser) || p.HeadRef != headRef),
			q.Get("base") != "" && p.BaseRef != q.Get("base"):
			continue
		}
		all = append(all, p)
	}
	s.mu.Unlock()
	// Newest first, GitHub's default order (sort=created, direction=desc).
	slices.SortStableFunc(all, func(a, b PullRequest) int { return b.Number - a.Number })
	from, to := paginate(w, r, len(all))
	out := make([]pullJSON, 0, to-from)
	for _, p := range all[from:to] {
		out = append(out, p.json(r))
	}
	writeJSON(w, http.StatusOK, out)
}

// pull is the pull request number of the request's repository.
func (s *Server) pull(r *http.Request) (PullRequest, bool) {
	n, err := strconv.Atoi(r.PathValue("number"))
	if err != nil {
		return PullRequest{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pulls {
		if p.Number == n && strings.EqualFold(p.Repo, repoOf(r)) {
			return p, true
		}
	}
	return PullRequest{}, false
}

// getPull answers GET /repos/{owner}/{repo}/pulls/{number}.
func (s *Server) getPull(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pull(r)
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	writeJSON(w, http.StatusOK, p.json(r))
}

type pullFileJSON struct {
	Filename string `json:"filename"`
	Status   string `json:"status"`
	Patch    string `json:"patch,omitempty"`
}

// listPullFiles answers GET /repos/{owner}/{repo}/pulls/{number}/files, paginated as
// GitHub does.
func (s *Server) listPullFiles(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pull(r)
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	from, to := paginate(w, r, len(p.Files))
	out := make([]pullFileJSON, 0, to-from)
	for _, f := range p.Files[from:to] {
		out = append(out, pullFileJSON{Filename: f.Filename, Status: cmp.Or(f.Status, "modified"), Patch: f.Patch})
	}
	writeJSON(w, http.StatusOK, out)
}

// SetPullRequestHead moves pull request number of repo to another head commit, as a push
// to its branch does.
func (s *Server) SetPullRequestHead(repo string, number int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.pulls {
		if s.pulls[i].Number == number && strings.EqualFold(s.pulls[i].Repo, repo) {
			s.pulls[i].HeadSHA = sha
		}
	}
}
