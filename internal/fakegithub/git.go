package fakegithub

// The Git Data API (blobs, trees, commits, refs), for the baseline store that keeps its
// files on a branch. Objects are content-addressed with Git's own SHA-1 of Git's own
// encoding, so writing the same blob or tree twice gives the same SHA as it does on
// GitHub, and a retried request is harmless. A ref moves only to an existing commit, and
// without force only forward: the fast-forward check walks the new commit's parents, as
// GitHub's does, because that check is what keeps two racing writers from losing each
// other's commits.

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Git object types and the tree modes GitHub accepts.
const (
	typeBlob   = "blob"
	typeTree   = "tree"
	typeCommit = "commit"

	modeFile       = "100644"
	modeExecutable = "100755"
	modeTree       = "040000"
	modeSubmodule  = "160000"
	modeSymlink    = "120000"
)

// BotEmail is the e-mail of commits created without an author, as GitHub gives the token's
// app.
const BotEmail = "41898282+github-actions[bot]@users.noreply.github.com"

// GitCommit is a commit as the fake stores it.
type GitCommit struct {
	SHA       string
	Tree      string
	Parents   []string
	Message   string
	Author    GitSignature
	Committer GitSignature
}

// GitSignature is a commit's author or committer.
type GitSignature struct {
	Name  string
	Email string
	Date  time.Time
}

// gitRepo is one repository's object database and refs.
type gitRepo struct {
	objects map[string]*gitObject
	refs    map[string]string // "refs/heads/main" -> commit SHA
}

type gitObject struct {
	typ     string
	data    []byte         // a blob's content
	entries []gitTreeEntry // a tree's entries, in Git's order
	commit  GitCommit
}

type gitTreeEntry struct {
	name, mode, typ, sha string
}

func (s *Server) repoGit(repo string) *gitRepo {
	g, ok := s.git[repo]
	if !ok {
		g = &gitRepo{objects: map[string]*gitObject{}, refs: map[string]string{}}
		s.git[repo] = g
	}
	return g
}

// store adds an object and returns its SHA: Git's SHA-1 of "TYPE LEN\0BODY".
func (g *gitRepo) store(o *gitObject) string {
	body := o.encode()
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", o.typ, len(body))
	h.Write(body)
	sha := hex.EncodeToString(h.Sum(nil))
	if o.typ == typeCommit {
		o.commit.SHA = sha
	}
	if _, ok := g.objects[sha]; !ok {
		g.objects[sha] = o
	}
	return sha
}

func (o *gitObject) encode() []byte {
	var b bytes.Buffer
	switch o.typ {
	case typeBlob:
		b.Write(o.data)
	case typeTree:
		for _, e := range o.entries {
			raw, _ := hex.DecodeString(e.sha)
			fmt.Fprintf(&b, "%s %s\x00", strings.TrimPrefix(e.mode, "0"), e.name)
			b.Write(raw)
		}
	case typeCommit:
		c := o.commit
		fmt.Fprintf(&b, "tree %s\n", c.Tree)
		for _, p := range c.Parents {
			fmt.Fprintf(&b, "parent %s\n", p)
		}
		fmt.Fprintf(&b, "author %s <%s> %d +0000\n", c.Author.Name, c.Author.Email, c.Author.Date.Unix())
		fmt.Fprintf(&b, "committer %s <%s> %d +0000\n\n", c.Committer.Name, c.Committer.Email, c.Committer.Date.Unix())
		b.WriteString(c.Message)
	}
	return b.Bytes()
}

// sortTree puts entries in Git's order: by name, a tree's name compared as if it ended in
// "/".
func sortTree(es []gitTreeEntry) {
	key := func(e gitTreeEntry) string {
		if e.typ == typeTree {
			return e.name + "/"
		}
		return e.name
	}
	slices.SortFunc(es, func(a, b gitTreeEntry) int { return strings.Compare(key(a), key(b)) })
}

func (g *gitRepo) object(sha, typ string) (*gitObject, bool) {
	o, ok := g.objects[strings.ToLower(sha)]
	if !ok || (typ != "" && o.typ != typ) {
		return nil, false
	}
	return o, true
}

// treeOf resolves what GET git/trees/{sha} accepts: a tree, a commit (its tree) or a
// branch or tag name.
func (g *gitRepo) treeOf(rev string) (string, bool) {
	if o, ok := g.object(rev, ""); ok {
		switch o.typ {
		case typeTree:
			return strings.ToLower(rev), true
		case typeCommit:
			return o.commit.Tree, true
		}
		return "", false
	}
	for _, ref := range []string{rev, "refs/" + rev, "refs/heads/" + rev, "refs/tags/" + rev} {
		if sha, ok := g.refs[ref]; ok {
			if c, ok := g.object(sha, typeCommit); ok {
				return c.commit.Tree, true
			}
		}
	}
	return "", false
}

// flatLeaf is a non-tree entry of a tree flattened to its full path.
type flatLeaf struct{ mode, typ, sha string }

// flatten lists every non-tree entry under tree sha by its full path.
func (g *gitRepo) flatten(sha, prefix string, out map[string]flatLeaf) {
	o, ok := g.object(sha, typeTree)
	if !ok {
		return
	}
	for _, e := range o.entries {
		if e.typ == typeTree {
			g.flatten(e.sha, prefix+e.name+"/", out)
			continue
		}
		out[prefix+e.name] = flatLeaf{e.mode, e.typ, e.sha}
	}
}

// build stores the trees that hold the flat entries and returns the root's SHA.
func (g *gitRepo) build(flat map[string]flatLeaf) string {
	type dir struct {
		files map[string]flatLeaf
		dirs  map[string]map[string]flatLeaf
	}
	d := dir{files: map[string]flatLeaf{}, dirs: map[string]map[string]flatLeaf{}}
	for p, l := range flat {
		head, rest, nested := strings.Cut(p, "/")
		if !nested {
			d.files[head] = l
			continue
		}
		if d.dirs[head] == nil {
			d.dirs[head] = map[string]flatLeaf{}
		}
		d.dirs[head][rest] = l
	}
	var es []gitTreeEntry
	for name, l := range d.files {
		es = append(es, gitTreeEntry{name: name, mode: l.mode, typ: l.typ, sha: l.sha})
	}
	for name, sub := range d.dirs {
		es = append(es, gitTreeEntry{name: name, mode: modeTree, typ: typeTree, sha: g.build(sub)})
	}
	sortTree(es)
	return g.store(&gitObject{typ: typeTree, entries: es})
}

// isAncestor reports whether old is new or one of its ancestors.
func (g *gitRepo) isAncestor(old, new string) bool {
	seen := map[string]bool{}
	queue := []string{new}
	for len(queue) > 0 {
		sha := queue[0]
		queue = queue[1:]
		if sha == old {
			return true
		}
		if seen[sha] {
			continue
		}
		seen[sha] = true
		if c, ok := g.object(sha, typeCommit); ok {
			queue = append(queue, c.commit.Parents...)
		}
	}
	return false
}

// Ref returns the commit SHA that ref ("heads/main" or "refs/heads/main") of repo
// ("owner/name") points to.
func (s *Server) Ref(repo, ref string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sha, ok := s.repoGit(repo).refs[fullRef(ref)]
	return sha, ok
}

// GitCommit returns commit sha of repo.
func (s *Server) GitCommit(repo, sha string) (GitCommit, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.repoGit(repo).object(sha, typeCommit)
	if !ok {
		return GitCommit{}, false
	}
	c := o.commit
	c.Parents = slices.Clone(c.Parents)
	return c, true
}

// Files returns every file of repo at rev (a commit, a tree, or a branch or tag name) by
// its full path, as a checkout would have them.
func (s *Server) Files(repo, rev string) (map[string][]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.repoGit(repo)
	tree, ok := g.treeOf(rev)
	if !ok {
		return nil, false
	}
	flat := map[string]flatLeaf{}
	g.flatten(tree, "", flat)
	out := map[string][]byte{}
	for p, l := range flat {
		if b, ok := g.object(l.sha, typeBlob); ok {
			out[p] = slices.Clone(b.data)
		}
	}
	return out, true
}

func fullRef(ref string) string {
	if strings.HasPrefix(ref, "refs/") {
		return ref
	}
	return "refs/" + ref
}

func (s *Server) gitURL(r *http.Request, kind, sha string) string {
	return fmt.Sprintf("http://%s/repos/%s/git/%s/%s", r.Host, repoOf(r), kind, sha)
}

func shaLike(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func validationFailed(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusUnprocessableEntity, msg, nil)
}

func notSupplied(w http.ResponseWriter, field string) {
	validationFailed(w, fmt.Sprintf("Invalid request.\n\n%q wasn't supplied.", field))
}

// reply is an answer worked out under s.mu and written once it is released: the request
// recorder takes s.mu when the status is written.
type reply struct {
	status int
	body   any // nil: no body
}

func invalid(msg string) reply {
	return reply{http.StatusUnprocessableEntity, errorBody{Message: msg, DocumentationURL: docsREST}}
}

func notFound() reply {
	return reply{http.StatusNotFound, errorBody{Message: "Not Found", DocumentationURL: docsREST}}
}

// locked runs fn under s.mu and writes its reply after.
func (s *Server) locked(w http.ResponseWriter, fn func() reply) {
	s.mu.Lock()
	rep := fn()
	s.mu.Unlock()
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	writeJSON(w, rep.status, rep.body)
}

// --- blobs ---

type blobRequest struct {
	Content  *string `json:"content"`
	Encoding *string `json:"encoding"`
}

func (s *Server) createBlob(w http.ResponseWriter, r *http.Request) {
	var b blobRequest
	if !decode(w, r, &b) {
		return
	}
	if b.Content == nil {
		notSupplied(w, "content")
		return
	}
	data := []byte(*b.Content)
	enc := "utf-8"
	if b.Encoding != nil {
		enc = *b.Encoding
	}
	switch enc {
	case "utf-8":
	case "base64":
		raw, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(*b.Content))
		if err != nil {
			validationFailed(w, "Invalid request.\n\ncontent is not valid Base64.")
			return
		}
		data = raw
	default:
		validationFailed(w, fmt.Sprintf("Invalid request.\n\nencoding %q is not one of utf-8, base64.", enc))
		return
	}
	s.mu.Lock()
	sha := s.repoGit(repoOf(r)).store(&gitObject{typ: typeBlob, data: data})
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha, "url": s.gitURL(r, "blobs", sha)})
}

func (s *Server) getBlob(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	s.mu.Lock()
	o, ok := s.repoGit(repoOf(r)).object(sha, typeBlob)
	var data []byte
	if ok {
		data = slices.Clone(o.data)
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	if accept := r.Header.Get("Accept"); strings.Contains(accept, ".raw") {
		w.Header().Set("Content-Type", "application/vnd.github.raw")
		w.WriteHeader(http.StatusOK)
		w.Write(data)
		return
	}
	// GitHub wraps the Base64 at 60 characters, with a trailing newline.
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60] + "\n")
		enc = enc[60:]
	}
	if enc != "" {
		b.WriteString(enc + "\n")
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"sha": strings.ToLower(sha), "node_id": "B_fake" + sha[:min(len(sha), 12)], "size": len(data),
		"url": s.gitURL(r, "blobs", sha), "content": b.String(), "encoding": "base64",
	})
}

// --- trees ---

type treeRequest struct {
	BaseTree *string            `json:"base_tree"`
	Tree     []treeEntryRequest `json:"tree"`
}

type treeEntryRequest struct {
	Path    *string         `json:"path"`
	Mode    *string         `json:"mode"`
	Type    *string         `json:"type"`
	SHA     json.RawMessage `json:"sha"` // null deletes the path
	Content *string         `json:"content"`
}

type treeEntryJSON struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Type string `json:"type"`
	SHA  string `json:"sha"`
	Size *int   `json:"size,omitempty"`
	URL  string `json:"url"`
}

func modeType(mode string) (string, bool) {
	switch mode {
	case modeFile, modeExecutable, modeSymlink:
		return typeBlob, true
	case modeTree:
		return typeTree, true
	case modeSubmodule:
		return typeCommit, true
	}
	return "", false
}

// validPath refuses what Git refuses in a tree: empty, ".", ".." or ".git" components.
func validPath(p string) bool {
	if p == "" {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") || strings.ContainsRune(c, 0) {
			return false
		}
	}
	return true
}

func (s *Server) createTree(w http.ResponseWriter, r *http.Request) {
	var b treeRequest
	if !decode(w, r, &b) {
		return
	}
	if b.Tree == nil {
		notSupplied(w, "tree")
		return
	}
	s.locked(w, func() reply {
		g := s.repoGit(repoOf(r))
		flat := map[string]flatLeaf{}
		if b.BaseTree != nil && *b.BaseTree != "" {
			if _, ok := g.object(*b.BaseTree, typeTree); !ok {
				return invalid(fmt.Sprintf("base_tree %s is not a tree object", *b.BaseTree))
			}
			g.flatten(strings.ToLower(*b.BaseTree), "", flat)
		}
		for i, e := range b.Tree {
			if e.Path == nil || !validPath(*e.Path) {
				return invalid(fmt.Sprintf("tree.%d.path contains a malformed path component", i))
			}
			if e.Mode == nil {
				return invalid(fmt.Sprintf("Invalid request.\n\n\"tree.%d.mode\" wasn't supplied.", i))
			}
			typ, ok := modeType(*e.Mode)
			if !ok {
				return invalid(fmt.Sprintf("tree.%d.mode %q is not one of 100644, 100755, 040000, 160000, 120000", i, *e.Mode))
			}
			if e.Type != nil && *e.Type != typ {
				return invalid(fmt.Sprintf("tree.%d.type %q does not match mode %s", i, *e.Type, *e.Mode))
			}
			path := *e.Path
			var sha string
			del := false
			switch {
			case e.Content != nil:
				if typ != typeBlob {
					return invalid(fmt.Sprintf("tree.%d: content is only for blobs", i))
				}
				sha = g.store(&gitObject{typ: typeBlob, data: []byte(*e.Content)})
			case len(e.SHA) == 0 || string(e.SHA) == "null":
				del = true
			default:
				if json.Unmarshal(e.SHA, &sha) != nil || !shaLike(sha) {
					return invalid(fmt.Sprintf("tree.%d.sha is not a SHA", i))
				}
				sha = strings.ToLower(sha)
				if _, ok := g.object(sha, typ); !ok && typ != typeCommit { // a submodule's commit lives elsewhere
					return invalid(fmt.Sprintf("tree.sha %s is not a valid %s", sha, typ))
				}
			}
			// The path replaces whatever was there: a file, or a whole directory.
			delete(flat, path)
			for p := range flat {
				if strings.HasPrefix(p, path+"/") {
					delete(flat, p)
				}
			}
			// A file on the way to it gives way to the directory.
			for dir := path; ; {
				slash := strings.LastIndexByte(dir, '/')
				if slash < 0 {
					break
				}
				dir = dir[:slash]
				delete(flat, dir)
			}
			if del {
				continue
			}
			if typ == typeTree {
				g.flatten(sha, path+"/", flat)
				continue
			}
			flat[path] = flatLeaf{*e.Mode, typ, sha}
		}
		root := g.build(flat)
		return reply{http.StatusCreated, s.treeJSON(r, g, root, false)}
	})
}

func (s *Server) treeJSON(r *http.Request, g *gitRepo, sha string, recursive bool) map[string]any {
	entries := []treeEntryJSON{}
	var walk func(sha, prefix string)
	walk = func(sha, prefix string) {
		o, _ := g.object(sha, typeTree)
		for _, e := range o.entries {
			j := treeEntryJSON{Path: prefix + e.name, Mode: e.mode, Type: e.typ, SHA: e.sha}
			switch e.typ {
			case typeBlob:
				if b, ok := g.object(e.sha, typeBlob); ok {
					n := len(b.data)
					j.Size = &n
				}
				j.URL = s.gitURL(r, "blobs", e.sha)
			case typeTree:
				j.URL = s.gitURL(r, "trees", e.sha)
			}
			entries = append(entries, j)
			if recursive && e.typ == typeTree {
				walk(e.sha, prefix+e.name+"/")
			}
		}
	}
	walk(sha, "")
	return map[string]any{"sha": sha, "url": s.gitURL(r, "trees", sha), "tree": entries, "truncated": false}
}

func (s *Server) getTree(w http.ResponseWriter, r *http.Request) {
	s.locked(w, func() reply {
		g := s.repoGit(repoOf(r))
		sha, ok := g.treeOf(r.PathValue("sha"))
		if !ok {
			return notFound()
		}
		// GitHub: "setting this parameter to any value returns the objects or subtrees".
		return reply{http.StatusOK, s.treeJSON(r, g, sha, r.URL.Query().Get("recursive") != "")}
	})
}

// --- commits ---

type signatureRequest struct {
	Name  *string    `json:"name"`
	Email *string    `json:"email"`
	Date  *time.Time `json:"date"`
}

type commitRequest struct {
	Message   *string           `json:"message"`
	Tree      *string           `json:"tree"`
	Parents   []string          `json:"parents"`
	Author    *signatureRequest `json:"author"`
	Committer *signatureRequest `json:"committer"`
}

func signature(sr *signatureRequest, now time.Time) GitSignature {
	sig := GitSignature{Name: BotLogin, Email: BotEmail, Date: now}
	if sr == nil {
		return sig
	}
	if sr.Name != nil {
		sig.Name = *sr.Name
	}
	if sr.Email != nil {
		sig.Email = *sr.Email
	}
	if sr.Date != nil {
		sig.Date = sr.Date.UTC().Truncate(time.Second)
	}
	return sig
}

func (s *Server) createCommit(w http.ResponseWriter, r *http.Request) {
	var b commitRequest
	if !decode(w, r, &b) {
		return
	}
	switch {
	case b.Message == nil:
		notSupplied(w, "message")
		return
	case b.Tree == nil:
		notSupplied(w, "tree")
		return
	}
	s.locked(w, func() reply {
		g := s.repoGit(repoOf(r))
		if _, ok := g.object(*b.Tree, typeTree); !ok {
			return invalid("Tree SHA does not exist")
		}
		parents := []string{}
		for _, p := range b.Parents {
			if _, ok := g.object(p, typeCommit); !ok {
				return invalid("Parent SHA does not exist or is not a commit object")
			}
			parents = append(parents, strings.ToLower(p))
		}
		now := time.Now().UTC().Truncate(time.Second)
		author := signature(b.Author, now)
		committer := author
		if b.Committer != nil {
			committer = signature(b.Committer, now)
		}
		o := &gitObject{typ: typeCommit, commit: GitCommit{
			Tree: strings.ToLower(*b.Tree), Parents: parents, Message: *b.Message, Author: author, Committer: committer,
		}}
		sha := g.store(o)
		return reply{http.StatusCreated, s.commitJSON(r, g.objects[sha].commit)}
	})
}

func (s *Server) commitJSON(r *http.Request, c GitCommit) map[string]any {
	sig := func(g GitSignature) map[string]any {
		return map[string]any{"name": g.Name, "email": g.Email, "date": g.Date.UTC().Format(time.RFC3339)}
	}
	parents := []any{}
	for _, p := range c.Parents {
		parents = append(parents, map[string]any{"sha": p, "url": s.gitURL(r, "commits", p),
			"html_url": fmt.Sprintf("https://github.com/%s/commit/%s", repoOf(r), p)})
	}
	return map[string]any{
		"sha": c.SHA, "node_id": "C_fake" + c.SHA[:12], "url": s.gitURL(r, "commits", c.SHA),
		"html_url": fmt.Sprintf("https://github.com/%s/commit/%s", repoOf(r), c.SHA),
		"author":   sig(c.Author), "committer": sig(c.Committer), "message": c.Message,
		"tree":         map[string]any{"sha": c.Tree, "url": s.gitURL(r, "trees", c.Tree)},
		"parents":      parents,
		"verification": map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil},
	}
}

func (s *Server) getCommit(w http.ResponseWriter, r *http.Request) {
	s.locked(w, func() reply {
		o, ok := s.repoGit(repoOf(r)).object(r.PathValue("sha"), typeCommit)
		if !ok {
			return notFound()
		}
		return reply{http.StatusOK, s.commitJSON(r, o.commit)}
	})
}

// --- refs ---

type refRequest struct {
	Ref   *string `json:"ref"`
	SHA   *string `json:"sha"`
	Force *bool   `json:"force"`
}

// validRefName applies the rules of git check-ref-format that a client can trip on.
func validRefName(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.Count(ref, "/") < 2 || strings.HasSuffix(ref, "/") ||
		strings.HasSuffix(ref, ".lock") || strings.HasSuffix(ref, ".") || strings.Contains(ref, "..") ||
		strings.Contains(ref, "//") || strings.Contains(ref, "@{") || strings.ContainsAny(ref, " ~^:?*[\\\x7f") {
		return false
	}
	for _, c := range ref {
		if c < 0x20 {
			return false
		}
	}
	return true
}

func (s *Server) refJSON(r *http.Request, ref, sha string) map[string]any {
	return map[string]any{
		"ref": ref, "node_id": "REF_fake", "url": fmt.Sprintf("http://%s/repos/%s/git/%s", r.Host, repoOf(r), ref),
		"object": map[string]any{"type": typeCommit, "sha": sha, "url": s.gitURL(r, "commits", sha)},
	}
}

// getRef answers GET git/ref/{ref}: exactly one ref.
func (s *Server) getRef(w http.ResponseWriter, r *http.Request) {
	ref := fullRef(r.PathValue("ref"))
	s.mu.Lock()
	sha, ok := s.repoGit(repoOf(r)).refs[ref]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	writeJSON(w, http.StatusOK, s.refJSON(r, ref, sha))
}

// listRefs answers GET git/refs[/{ref}] (the ref itself when one matches exactly, else
// those it is a prefix of) and git/matching-refs/{ref} (always a list).
func (s *Server) listRefs(list bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		prefix := "refs/" + r.PathValue("ref")
		s.mu.Lock()
		refs := s.repoGit(repoOf(r)).refs
		if sha, ok := refs[prefix]; ok && !list {
			s.mu.Unlock()
			writeJSON(w, http.StatusOK, s.refJSON(r, prefix, sha))
			return
		}
		var names []string
		for name := range refs {
			if strings.HasPrefix(name, prefix) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		out := []any{}
		for _, name := range names {
			out = append(out, s.refJSON(r, name, refs[name]))
		}
		s.mu.Unlock()
		if len(out) == 0 && !list {
			writeError(w, http.StatusNotFound, "Not Found", nil)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func (s *Server) createRef(w http.ResponseWriter, r *http.Request) {
	var b refRequest
	if !decode(w, r, &b) {
		return
	}
	switch {
	case b.Ref == nil:
		notSupplied(w, "ref")
		return
	case b.SHA == nil:
		notSupplied(w, "sha")
		return
	case !validRefName(*b.Ref):
		validationFailed(w, "ref must start with 'refs' and have at least two slashes.")
		return
	}
	s.locked(w, func() reply {
		g := s.repoGit(repoOf(r))
		if _, ok := g.refs[*b.Ref]; ok {
			return invalid("Reference already exists")
		}
		if _, ok := g.object(*b.SHA, typeCommit); !ok {
			return invalid("Object does not exist")
		}
		g.refs[*b.Ref] = strings.ToLower(*b.SHA)
		return reply{http.StatusCreated, s.refJSON(r, *b.Ref, g.refs[*b.Ref])}
	})
}

// updateRef moves a ref to an existing commit; without force only forward.
func (s *Server) updateRef(w http.ResponseWriter, r *http.Request) {
	var b refRequest
	if !decode(w, r, &b) {
		return
	}
	if b.SHA == nil {
		notSupplied(w, "sha")
		return
	}
	ref := fullRef(r.PathValue("ref"))
	s.locked(w, func() reply {
		g := s.repoGit(repoOf(r))
		cur, ok := g.refs[ref]
		if !ok {
			return invalid("Reference does not exist")
		}
		sha := strings.ToLower(*b.SHA)
		if _, ok := g.object(sha, typeCommit); !ok {
			return invalid("Object does not exist")
		}
		if (b.Force == nil || !*b.Force) && !g.isAncestor(cur, sha) {
			return invalid("Update is not a fast forward")
		}
		g.refs[ref] = sha
		return reply{http.StatusOK, s.refJSON(r, ref, sha)}
	})
}

func (s *Server) deleteRef(w http.ResponseWriter, r *http.Request) {
	ref := fullRef(r.PathValue("ref"))
	s.locked(w, func() reply {
		g := s.repoGit(repoOf(r))
		if _, ok := g.refs[ref]; !ok {
			return invalid("Reference does not exist")
		}
		delete(g.refs, ref)
		return reply{status: http.StatusNoContent}
	})
}
