package fakegithub

import (
	"hash/fnv"
	"net/http"
)

// Who the fake's token is. By default it is the Actions GITHUB_TOKEN, an installation
// token of the GitHub Actions app: GET /user refuses it (403 "Resource not accessible by
// integration"), the check runs it creates are the app's (AppSlug), and the comments it
// makes are by the app's bot (BotLogin, user type Bot). SetUser makes it a user's token
// (a personal access token): GET /user answers the user, who is the author of the
// comments it makes, and creating a check run is refused (403), as GitHub refuses it to
// anything but an App.
const (
	// BotID is the user id of BotLogin (github-actions[bot]'s on github.com).
	BotID = 41898282
	// AppSlug, AppID and AppName are the GitHub Actions app's.
	AppSlug = "github-actions"
	AppID   = 15368
	AppName = "GitHub Actions"
)

type appJSON struct {
	ID     int64    `json:"id"`
	Slug   string   `json:"slug"`
	NodeID string   `json:"node_id"`
	Name   string   `json:"name"`
	Owner  userJSON `json:"owner"`
}

// actionsApp is the app of the check runs the token creates.
func actionsApp() *appJSON {
	return &appJSON{ID: AppID, Slug: AppSlug, NodeID: "MDM6QXBwMTUzNjg=", Name: AppName,
		Owner: userJSON{Login: "github", ID: 9919, Type: "Organization"}}
}

// SetUser makes the token a user's (login's) instead of an installation's; "" makes it
// the Actions GITHUB_TOKEN again.
func (s *Server) SetUser(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user = login
}

// author is who the token's comments are by. Call with s.mu held.
func (s *Server) author() string {
	if s.user != "" {
		return s.user
	}
	return BotLogin
}

// UserID is the fake's user id of login: BotID for BotLogin, else one derived from the
// login (a user renamed and its login taken by another is not modelled).
func UserID(login string) int64 {
	if login == BotLogin {
		return BotID
	}
	h := fnv.New32a()
	h.Write([]byte(login))
	return int64(h.Sum32()%90_000_000) + 1_000_000
}

func userType(login string) string {
	if len(login) > 5 && login[len(login)-5:] == "[bot]" {
		return "Bot"
	}
	return "User"
}

func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	user := s.user
	s.mu.Unlock()
	if user == "" {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration", nil)
		return
	}
	writeJSON(w, http.StatusOK, userJSON{Login: user, ID: UserID(user), Type: userType(user)})
}

// appOnly refuses a request only an App may make (creating a check run) to a user's
// token, as GitHub does; it reports whether the request may go on.
func (s *Server) appOnly(w http.ResponseWriter) bool {
	s.mu.Lock()
	user := s.user
	s.mu.Unlock()
	if user != "" {
		writeError(w, http.StatusForbidden, "You must authenticate via a GitHub App.", nil)
		return false
	}
	return true
}
