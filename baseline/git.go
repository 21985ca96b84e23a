package baseline

// The git store: a branch that concurrent workflow runs update through GitHub's Git Data
// API without losing each other's entries or ever showing a half-written commit.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	github "github.com/google/go-github/v60/github"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/input"
)

// DefaultBranch is the branch the git store keeps its files on.
const DefaultBranch = "kernel-gate-baseline"

// DefaultAttempts is how many times an update reads the branch, merges its entry and
// tries to move the branch, when other writers keep moving it first. Each failed try is
// another writer's success, so N concurrent writers need at most N tries.
const DefaultAttempts = 10

// Waits between those tries: 250 ms, 500 ms, ... up to 4 s, each with jitter so that the
// writers that lost one race do not meet again in the next.
const (
	firstRaceWait = 250 * time.Millisecond
	maxRaceWait   = 4 * time.Second
)

// readmeFile is written into the branch's first commit, for whoever finds the branch.
const readmeFile = "README.md"

const readme = `# kernel-gate baseline

This branch is written by kernel-gate: one JSON file per GPU and compute capability
(` + Schema + `), each the history of the baselines measured on that GPU, oldest
first. kernel-gate only ever moves this branch forward, to commits whose files are
complete; do not push to it by hand or rewrite it.
`

// GitOptions configures a git store: the API options as githubapi takes them (the token
// needs contents: write), and the branch.
type GitOptions struct {
	githubapi.Options
	// Branch holds the files; DefaultBranch when empty. It is created on the first update,
	// from a commit with no parent, so it shares no history with the code.
	Branch string
	// Keep is how many entries per key an update keeps; DefaultKeep when zero.
	Keep int
	// Attempts bounds the read-merge-write tries of one update or prune; DefaultAttempts
	// when zero.
	Attempts int
}

// Git is a Store on a branch of a GitHub repository, written through the Git Data API:
// the key's file as a blob, a tree on the branch's tree, a commit whose parent is the
// branch's head, and then the branch moved to it without force. Whatever fails before
// that last step leaves objects nobody refers to and the branch where it was, so readers
// only ever see complete commits. When another writer moved the branch first, GitHub
// refuses the move (422: not a fast forward); the update then reads the branch again,
// adds its entry to the newer file and tries again (Attempts), so no update is lost.
//
// Every request goes through a githubapi.Client (githubapi.New on GitOptions.Options) and
// its Call, so it is retried as the check run's are (429, 5xx, rate limits, lost
// connections, within Options.Deadline per request) and fails as a *githubapi.Error; the
// 422 and 409 of a lost race are final there and handled here.
//
// Files are at the branch's root, named as in a Dir (Key.File), with a README.md.
type Git struct {
	c        *githubapi.Client
	branch   string
	keep     int
	attempts int
}

var _ Store = (*Git)(nil)

// NewGit checks the options and returns the store. It makes no request.
func NewGit(ctx context.Context, o GitOptions) (*Git, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	if o.Token == "" {
		return nil, errors.New("baseline: no token: the git store needs GITHUB_TOKEN with contents: write")
	}
	c, err := githubapi.New(ctx, o.Options)
	if err != nil {
		return nil, fmt.Errorf("baseline: the git store: %w", err)
	}
	branch := strings.TrimPrefix(strings.TrimPrefix(o.Branch, "refs/"), "heads/")
	if branch == "" {
		branch = DefaultBranch
	}
	if !validBranch(branch) {
		return nil, fmt.Errorf("baseline: %q is not a branch name git accepts", o.Branch)
	}
	attempts := o.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	return &Git{c: c, branch: branch, keep: keepOrDefault(o.Keep), attempts: attempts}, nil
}

// validBranch applies git check-ref-format's rules to refs/heads/NAME.
func validBranch(b string) bool {
	if strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".") || strings.HasSuffix(b, ".lock") ||
		strings.Contains(b, "..") || strings.Contains(b, "//") || strings.Contains(b, "@{") || b == "@" ||
		strings.ContainsAny(b, " ~^:?*[\\\x7f") {
		return false
	}
	for _, part := range strings.Split(b, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	for _, r := range b {
		if r < 0x20 {
			return false
		}
	}
	return true
}

// snapshot is the branch at one commit.
type snapshot struct {
	head  string            // the commit; "" when the branch does not exist
	tree  string            // its tree
	files map[string]string // root file name -> blob SHA
	sizes map[string]int    // root file name -> blob size, as the tree gives it
}

// snapshot reads the branch's head, its commit and its root tree.
func (g *Git) snapshot(ctx context.Context) (snapshot, error) {
	s := snapshot{files: map[string]string{}, sizes: map[string]int{}}
	o, r := g.c.Owner(), g.c.Repo()
	var ref *github.Reference
	err := g.c.Call(ctx, "reading the branch "+g.branch, func(ctx context.Context, gh *github.Client) (resp *github.Response, err error) {
		ref, resp, err = gh.Git.GetRef(ctx, o, r, "heads/"+g.branch)
		return resp, err
	})
	if githubapi.StatusCode(err) == http.StatusNotFound {
		return s, nil // no branch yet: the first update creates it
	}
	if err != nil {
		return s, err
	}
	if ref.GetObject().GetSHA() == "" {
		return s, fmt.Errorf("baseline: the branch %s points to no commit", g.branch)
	}
	s.head = ref.GetObject().GetSHA()
	var c *github.Commit
	err = g.c.Call(ctx, "reading the commit "+s.head, func(ctx context.Context, gh *github.Client) (resp *github.Response, err error) {
		c, resp, err = gh.Git.GetCommit(ctx, o, r, s.head)
		return resp, err
	})
	if err != nil {
		return s, err
	}
	s.tree = c.GetTree().GetSHA()
	var t *github.Tree
	err = g.c.Call(ctx, "reading the tree "+s.tree, func(ctx context.Context, gh *github.Client) (resp *github.Response, err error) {
		t, resp, err = gh.Git.GetTree(ctx, o, r, s.tree, false)
		return resp, err
	})
	if err != nil {
		return s, err
	}
	for _, e := range t.Entries {
		if e.GetType() == "blob" {
			s.files[e.GetPath()] = e.GetSHA()
			if e.Size != nil {
				s.sizes[e.GetPath()] = e.GetSize()
			}
		}
	}
	return s, nil
}

// readBlob returns the content of the file name of s. A file over MaxFileBytes is refused
// before it is fetched (the tree gives its size) and again by what GitHub sends.
func (g *Git) readBlob(ctx context.Context, s snapshot, name string) ([]byte, error) {
	where, sha := g.where(name), s.files[name]
	if size, ok := s.sizes[name]; ok && size > MaxFileBytes {
		return nil, input.TooBig(where, fileLimit)
	}
	raw, err := g.fetchBlob(ctx, where, sha)
	if err == nil && len(raw) > MaxFileBytes {
		return nil, input.TooBig(where, fileLimit)
	}
	return raw, err
}

// fetchBlob returns a file's content by its blob SHA; name is for messages.
func (g *Git) fetchBlob(ctx context.Context, name, sha string) ([]byte, error) {
	var b *github.Blob
	err := g.c.Call(ctx, "reading "+name, func(ctx context.Context, gh *github.Client) (resp *github.Response, err error) {
		b, resp, err = gh.Git.GetBlob(ctx, g.c.Owner(), g.c.Repo(), sha)
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	if b.GetSize() > MaxFileBytes {
		return nil, input.TooBig(name, fileLimit)
	}
	switch b.GetEncoding() {
	case "base64":
		raw, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(b.GetContent()))
		if err != nil {
			return nil, fmt.Errorf("baseline: %s: GitHub sent content that is not Base64: %v", name, err)
		}
		return raw, nil
	case "utf-8", "":
		return []byte(b.GetContent()), nil
	}
	return nil, fmt.Errorf("baseline: %s: GitHub sent the blob in encoding %q", name, b.GetEncoding())
}

// where names a file on the branch in messages.
func (g *Git) where(name string) string { return g.branch + ":" + name }

// readKeyFile returns key k's file in s; nil when it has none.
func (g *Git) readKeyFile(ctx context.Context, s snapshot, k Key) (*keyFile, error) {
	name := k.File()
	if _, ok := s.files[name]; !ok {
		return nil, nil
	}
	raw, err := g.readBlob(ctx, s, name)
	if err != nil {
		return nil, err
	}
	f, err := decodeKeyFile(raw, g.where(name), &k)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	return f, nil
}

// change works out, from one snapshot of the branch, the files to write and the commit's
// message; no files means there is nothing to do.
type change func(ctx context.Context, s snapshot) (files map[string][]byte, message string, err error)

// commit applies ch to the branch: snapshot, change, objects, then the branch moved
// forward; a move another writer's made impossible starts again from a new snapshot.
func (g *Git) commit(ctx context.Context, what string, ch change) error {
	var last error
	for attempt := 1; ; attempt++ {
		s, err := g.snapshot(ctx)
		if err != nil {
			return fmt.Errorf("baseline: %s: %w", what, err)
		}
		files, msg, err := ch(ctx, s)
		if err != nil {
			return fmt.Errorf("baseline: %s: %w", what, err)
		}
		if len(files) == 0 {
			return nil
		}
		sha, err := g.writeCommit(ctx, s, files, msg)
		if err != nil {
			return fmt.Errorf("baseline: %s: %w%s", what, err, writeHint(err))
		}
		err = g.moveBranch(ctx, s, sha)
		if err == nil {
			return nil
		}
		if st := githubapi.StatusCode(err); st != http.StatusUnprocessableEntity && st != http.StatusConflict {
			return fmt.Errorf("baseline: %s: %w%s", what, err, writeHint(err))
		}
		last = err
		if attempt >= g.attempts {
			break
		}
		d := min(firstRaceWait<<(attempt-1), maxRaceWait)
		d = d/2 + mrand.N(d/2+1)
		g.c.Logf("baseline: %s: another writer moved %s first (%v); reading it again, attempt %d of %d in %s",
			what, g.branch, err, attempt+1, g.attempts, d.Round(time.Millisecond))
		if err := g.c.Sleep(ctx, d); err != nil {
			return fmt.Errorf("baseline: %s: stopped waiting to try again: %w (after %w)", what, err, last)
		}
	}
	return fmt.Errorf("baseline: %s: gave up after %d attempts: the branch %s kept moving under other writers, "+
		"or GitHub refuses to move it (a protected branch?): %w", what, g.attempts, g.branch, last)
}

// writeHint says what a refused write most often means.
func writeHint(err error) string {
	switch githubapi.StatusCode(err) {
	case http.StatusForbidden, http.StatusNotFound:
		return " (the token needs contents: write on the repository)"
	case http.StatusConflict:
		return " (GitHub's Git Data API cannot write to a repository with no commit at all)"
	}
	return ""
}

// writeCommit creates the files' blobs, a tree on the snapshot's tree and a commit on its
// head (with no parent when the branch does not exist yet, plus the README), and returns
// the commit's SHA.
func (g *Git) writeCommit(ctx context.Context, s snapshot, files map[string][]byte, msg string) (string, error) {
	o, r := g.c.Owner(), g.c.Repo()
	if s.head == "" {
		files[readmeFile] = []byte(readme)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var entries []*github.TreeEntry
	for _, name := range names {
		content := base64.StdEncoding.EncodeToString(files[name])
		var b *github.Blob
		err := g.c.Call(ctx, "creating the blob of "+g.where(name), func(ctx context.Context, gh *github.Client) (resp *github.Response, err error) {
			b, resp, err = gh.Git.CreateBlob(ctx, o, r, &github.Blob{Content: &content, Encoding: github.String("base64")})
			return resp, err
		})
		if err != nil {
			return "", err
		}
		entries = append(entries, &github.TreeEntry{Path: github.String(name), Mode: github.String("100644"),
			Type: github.String("blob"), SHA: github.String(b.GetSHA())})
	}
	var t *github.Tree
	err := g.c.Call(ctx, "creating the tree", func(ctx context.Context, gh *github.Client) (resp *github.Response, err error) {
		t, resp, err = gh.Git.CreateTree(ctx, o, r, s.tree, entries)
		return resp, err
	})
	if err != nil {
		return "", err
	}
	commit := &github.Commit{Message: github.String(msg), Tree: &github.Tree{SHA: t.SHA}}
	if s.head != "" {
		commit.Parents = []*github.Commit{{SHA: github.String(s.head)}}
	}
	var c *github.Commit
	err = g.c.Call(ctx, "creating the commit", func(ctx context.Context, gh *github.Client) (resp *github.Response, err error) {
		c, resp, err = gh.Git.CreateCommit(ctx, o, r, commit, nil)
		return resp, err
	})
	if err != nil {
		return "", err
	}
	return c.GetSHA(), nil
}

// moveBranch points the branch at sha: created when the snapshot had no branch, else
// moved without force, which GitHub refuses unless sha descends from the head.
func (g *Git) moveBranch(ctx context.Context, s snapshot, sha string) error {
	o, r := g.c.Owner(), g.c.Repo()
	ref := &github.Reference{Ref: github.String("refs/heads/" + g.branch), Object: &github.GitObject{SHA: github.String(sha)}}
	if s.head == "" {
		return g.c.Call(ctx, "creating the branch "+g.branch, func(ctx context.Context, gh *github.Client) (*github.Response, error) {
			_, resp, err := gh.Git.CreateRef(ctx, o, r, ref)
			return resp, err
		})
	}
	return g.c.Call(ctx, "moving the branch "+g.branch, func(ctx context.Context, gh *github.Client) (*github.Response, error) {
		_, resp, err := gh.Git.UpdateRef(ctx, o, r, ref, false)
		return resp, err
	})
}

// Update adds e to its key's file in a new commit on the branch.
func (g *Git) Update(ctx context.Context, e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	k := e.Key()
	return g.commit(ctx, "updating "+k.String(), func(ctx context.Context, s snapshot) (map[string][]byte, string, error) {
		f, err := g.readKeyFile(ctx, s, k)
		if err != nil {
			return nil, "", err
		}
		if f == nil {
			f = &keyFile{Schema: Schema, Key: k}
		}
		changed, err := f.add(e, g.keep)
		if err != nil || !changed {
			return nil, "", err
		}
		raw, err := f.encode()
		if err != nil {
			return nil, "", err
		}
		return map[string][]byte{k.File(): raw}, commitMessage(e), nil
	})
}

// commitMessage says in the branch's log what each commit added.
func commitMessage(e Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel-gate %s\n\n", e.Describe())
	fmt.Fprintf(&b, "verdict: %s\n", e.Verdict)
	if e.Tool != "" {
		fmt.Fprintf(&b, "tool: %s\n", e.Tool)
	}
	if t := e.Trigger; t != nil {
		fmt.Fprintf(&b, "event: %s\n", t.Event)
		if t.Reason != "" {
			fmt.Fprintf(&b, "reason: %s\n", t.Reason)
		}
	}
	return b.String()
}

// Latest returns k's newest entry on the branch.
func (g *Git) Latest(ctx context.Context, k Key) (Entry, bool, error) { return latest(ctx, g, k) }

// History returns up to n of k's entries, newest first.
func (g *Git) History(ctx context.Context, k Key, n int) ([]Entry, error) {
	s, err := g.snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	f, err := g.readKeyFile(ctx, s, k)
	if err != nil || f == nil {
		return nil, err
	}
	return f.newest(n), nil
}

// Keys lists the keys of the branch's files; a missing branch has none.
func (g *Git) Keys(ctx context.Context) ([]Key, error) {
	s, err := g.snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	var keys []Key
	for _, name := range sortedKeyFiles(s) {
		raw, err := g.readBlob(ctx, s, name)
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		k, err := readKey(raw, g.where(name))
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		keys = append(keys, k)
	}
	sortKeys(keys)
	return keys, nil
}

func sortedKeyFiles(s snapshot) []string {
	var names []string
	for name := range s.files {
		if isKeyFile(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Prune keeps the newest keep entries of every key, in one commit.
func (g *Git) Prune(ctx context.Context, keep int) error {
	if err := checkKeep(keep); err != nil {
		return err
	}
	return g.commit(ctx, fmt.Sprintf("pruning to %d entries per key", keep), func(ctx context.Context, s snapshot) (map[string][]byte, string, error) {
		files := map[string][]byte{}
		for _, name := range sortedKeyFiles(s) {
			raw, err := g.readBlob(ctx, s, name)
			if err != nil {
				return nil, "", err
			}
			f, err := decodeKeyFile(raw, g.where(name), nil)
			if err != nil {
				return nil, "", err
			}
			if !f.prune(keep) {
				continue
			}
			if files[name], err = f.encode(); err != nil {
				return nil, "", err
			}
		}
		return files, fmt.Sprintf("kernel-gate baseline: keep the newest %d entries per key\n", keep), nil
	})
}
