package baseline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	github "github.com/google/go-github/v60/github"
	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

const repo = "octo/kernels"

// gitStore is a git store on srv with its own HTTP client (its own connections), whose
// waits return at once.
func gitStore(t *testing.T, srv *fakegithub.Server, log *hangtest.SyncBuffer) *Git {
	t.Helper()
	o := GitOptions{Options: githubapi.Options{
		APIURL: srv.URL(), Token: srv.Token(), Repository: repo,
		HTTPClient: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 30 * time.Second},
		Sleep:      func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	}}
	if log != nil {
		o.Log = log
	}
	g, err := NewGit(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// branch checks what readers of the branch can see: every commit from its head down is
// complete (each key file parses), the history is a line that starts with the orphan
// commit holding the README, and it returns the head and the head's entries per file.
func branch(t *testing.T, srv *fakegithub.Server) (string, map[string][]string) {
	t.Helper()
	head, ok := srv.Ref(repo, "heads/"+DefaultBranch)
	if !ok {
		return "", nil
	}
	var entries map[string][]string
	for sha := head; sha != ""; {
		files, ok := srv.Files(repo, sha)
		if !ok {
			t.Fatalf("commit %s has no tree", sha)
		}
		got := map[string][]string{}
		for name, raw := range files {
			if name == readmeFile {
				continue
			}
			f, err := decodeKeyFile(raw, name, nil)
			if err != nil {
				t.Fatalf("commit %s: %v", sha, err)
			}
			cs := commits(f.Entries)
			slices.Sort(cs)
			got[name] = cs
		}
		if entries == nil {
			entries = got
		}
		c, _ := srv.GitCommit(repo, sha)
		switch len(c.Parents) {
		case 0:
			if _, ok := files[readmeFile]; !ok {
				t.Fatalf("the first commit %s has no %s", sha, readmeFile)
			}
			sha = ""
		case 1:
			sha = c.Parents[0]
		default:
			t.Fatalf("commit %s is a merge", sha)
		}
	}
	return head, entries
}

func TestGitStore(t *testing.T) {
	ctx := context.Background()
	srv := fakegithub.New()
	defer srv.Close()
	log := &hangtest.SyncBuffer{}
	g := gitStore(t, srv, log)
	if keys, err := g.Keys(ctx); err != nil || keys != nil {
		t.Fatalf("no branch yet: %v %v", keys, err)
	}
	if _, ok, err := g.Latest(ctx, h200()); ok || err != nil {
		t.Fatalf("Latest with no branch: %v %v", ok, err)
	}
	e := entry("NVIDIA H200", "sm_90", "c0", 0)
	if err := g.Update(ctx, e); err != nil {
		t.Fatal(err)
	}
	first, files := branch(t, srv)
	if c, _ := srv.GitCommit(repo, first); len(c.Parents) != 0 || !strings.Contains(c.Message, "NVIDIA H200 (sm_90) at c0") {
		t.Fatalf("the branch starts from an orphan commit: %+v", c)
	}
	if !slices.Equal(files["nvidia-h200.sm_90.json"], []string{"c0"}) {
		t.Fatalf("files %v", files)
	}
	// An L4 runner and an H100 runner keep separate histories; each update is one commit
	// on the last.
	for i := 1; i <= 4; i++ {
		for _, gpu := range [][2]string{{"NVIDIA L4", "8.9"}, {"NVIDIA H100 80GB HBM3", "sm_90"}} {
			if err := g.Update(ctx, entry(gpu[0], gpu[1], fmt.Sprint(gpu[0], i), i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Updating with an entry that is there already commits nothing.
	head, _ := srv.Ref(repo, "heads/"+DefaultBranch)
	if err := g.Update(ctx, e); err != nil {
		t.Fatal(err)
	}
	if again, _ := srv.Ref(repo, "heads/"+DefaultBranch); again != head {
		t.Error("a repeated update made a commit")
	}
	keys, err := g.Keys(ctx)
	if err != nil || len(keys) != 3 || keys[2].File() != "nvidia-l4.sm_89.json" {
		t.Fatalf("keys %v %v", keys, err)
	}
	latest, ok, err := g.Latest(ctx, keys[2])
	if err != nil || !ok || latest.Commit != "NVIDIA L44" || !latest.Time.Equal(when.Add(4*time.Second)) {
		t.Fatalf("latest %+v %v %v", latest, ok, err)
	}
	if es, _ := g.History(ctx, keys[2], 3); !slices.Equal(commits(es), []string{"NVIDIA L44", "NVIDIA L43", "NVIDIA L42"}) {
		t.Fatalf("history %v", commits(es))
	}
	if err := g.Prune(ctx, 2); err != nil {
		t.Fatal(err)
	}
	_, files = branch(t, srv)
	if len(files) != 3 || len(files["nvidia-l4.sm_89.json"]) != 2 || len(files["nvidia-h200.sm_90.json"]) != 1 {
		t.Fatalf("after Prune(2): %v", files)
	}
	var patches, fileReads int
	for _, r := range srv.Requests() {
		if r.Method == "PATCH" {
			patches++
			var body struct{ Force *bool }
			if r.Decode(&body) != nil || body.Force == nil || *body.Force {
				t.Errorf("a branch update not sent as force=false: %s", r.Raw)
			}
		}
		if strings.Contains(r.Path, "/git/blobs/") {
			fileReads++
		}
	}
	if patches != 9 || fileReads == 0 {
		t.Errorf("%d branch updates (want 8 updates and 1 prune)", patches)
	}
	if strings.Contains(log.String(), srv.Token()) {
		t.Error("the log holds the token")
	}
}

// Eight writers, each with its own client, race to update the same key, and the fake
// holds their branch writes until all eight have read the same head and sent one: seven
// lose, read again, merge and retry. Every entry survives, and every commit the branch
// ever pointed at is complete.
func TestGitConcurrentUpdaters(t *testing.T) {
	for _, c := range []struct {
		name   string
		seeded bool // the branch exists before the race
	}{{"existing branch", true}, {"new branch", false}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			srv := fakegithub.New()
			defer srv.Close()
			want := []string{}
			if c.seeded {
				if err := gitStore(t, srv, nil).Update(ctx, entry("NVIDIA H200", "sm_90", "seed", -1)); err != nil {
					t.Fatal(err)
				}
				want = append(want, "seed")
				srv.Hold("PATCH", "/git/refs/heads/"+DefaultBranch, 8)
			} else {
				srv.Hold("POST", "/git/refs", 8)
			}
			log := &hangtest.SyncBuffer{}
			var wg sync.WaitGroup
			for w := range 8 {
				want = append(want, fmt.Sprint("racer", w))
				g := gitStore(t, srv, log)
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := g.Update(ctx, entry("NVIDIA H200", "sm_90", fmt.Sprint("racer", w), w)); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			slices.Sort(want)
			_, files := branch(t, srv)
			if got := files["nvidia-h200.sm_90.json"]; !slices.Equal(got, want) {
				t.Fatalf("entries %v, want %v", got, want)
			}
			lost := 0
			for _, r := range srv.Requests() {
				if strings.Contains(r.Path, "/git/refs") && r.Status == http.StatusUnprocessableEntity {
					lost++
				}
			}
			if lost < 7 {
				t.Errorf("%d refused branch writes: the writers did not collide", lost)
			}
			if !strings.Contains(log.String(), "another writer moved") {
				t.Errorf("log:\n%s", log)
			}
		})
	}
}

// A request that fails in the middle of an update never leaves a half-written branch:
// the branch still points at the complete commit it pointed at, or at the new complete
// one when the failure was retried away (a lost answer to a write that happened counts
// once).
func TestGitFailuresMidUpdate(t *testing.T) {
	jsonError := func(msg string) (map[string]string, string) {
		return map[string]string{"Content-Type": "application/json"}, `{"message":"` + msg + `","documentation_url":"https://docs.github.com/rest"}`
	}
	protectedH, protectedB := jsonError("Reference cannot be updated")
	for _, c := range []struct {
		name   string
		fault  fakegithub.Fault
		seeded bool
		ok     bool   // the update succeeds in the end
		errHas string // else its error says this
	}{
		{"500 creating the tree, every time", fakegithub.Fault{Method: "POST", Path: "/git/trees", Status: 500, Times: 100}, true, false, "creating the tree: 500"},
		{"500 creating the commit, once", fakegithub.Fault{Method: "POST", Path: "/git/commits", Status: 500}, true, true, ""},
		{"500 reading the file, every time", fakegithub.Fault{Method: "GET", Path: "/git/blobs/", Status: 500, Times: 100}, true, false, "reading kernel-gate-baseline:nvidia-h200.sm_90.json: 500"},
		{"403 creating the blob", fakegithub.Fault{Method: "POST", Path: "/git/blobs", Status: 403}, true, false, "contents: write"},
		{"dropped connection moving the branch", fakegithub.Fault{Method: "PATCH", Path: "/git/refs/", Drop: true}, true, true, ""},
		{"dropped connection after the branch moved", fakegithub.Fault{Method: "PATCH", Path: "/git/refs/", Drop: true, After: true}, true, true, ""},
		{"502 after the branch was created", fakegithub.Fault{Method: "POST", Path: "/git/refs", Status: 502, After: true}, false, true, ""},
		{"422 moving the branch, every time", fakegithub.Fault{Method: "PATCH", Path: "/git/refs/", Status: 422, Times: 100, Headers: protectedH, Body: protectedB}, true, false, "gave up after 10 attempts"},
		{"422 moving the branch, once", fakegithub.Fault{Method: "PATCH", Path: "/git/refs/", Status: 422, Headers: protectedH, Body: protectedB}, true, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			srv := fakegithub.New()
			defer srv.Close()
			g := gitStore(t, srv, nil)
			want := []string{"new"}
			if c.seeded {
				if err := g.Update(ctx, entry("NVIDIA H200", "sm_90", "seed", 0)); err != nil {
					t.Fatal(err)
				}
				want = []string{"new", "seed"}
			}
			before, _ := srv.Ref(repo, "heads/"+DefaultBranch)
			srv.Inject(c.fault)
			err := g.Update(ctx, entry("NVIDIA H200", "sm_90", "new", 1))
			faulted := 0
			for _, r := range srv.Requests() {
				if r.Fault {
					faulted++
				}
			}
			if faulted == 0 {
				t.Fatal("the fault was never given")
			}
			after, files := branch(t, srv)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				if got := files["nvidia-h200.sm_90.json"]; !slices.Equal(got, want) {
					t.Fatalf("entries %v, want %v", got, want)
				}
				if c, _ := srv.GitCommit(repo, after); before != "" && (len(c.Parents) != 1 || c.Parents[0] != before) {
					t.Fatalf("the new head %s is not one commit on %s", after, before)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Fatalf("error %v, want one that says %q", err, c.errHas)
			}
			if !strings.Contains(err.Error(), "updating NVIDIA H200 (sm_90)") {
				t.Errorf("the error does not say what failed: %v", err)
			}
			if after != before || !slices.Equal(files["nvidia-h200.sm_90.json"], []string{"seed"}) {
				t.Fatalf("a failed update moved the branch from %s to %s: %v", before, after, files)
			}
		})
	}
}

// A file of a newer format on the branch is neither read nor overwritten.
func TestGitRefusesOtherFormats(t *testing.T) {
	ctx := context.Background()
	srv := fakegithub.New()
	defer srv.Close()
	g := gitStore(t, srv, nil)
	if err := g.Update(ctx, entry("NVIDIA H200", "sm_90", "seed", 0)); err != nil {
		t.Fatal(err)
	}
	// Another writer, a newer kernel-gate, commits a v2 file.
	gh := github.NewClient(srv.Client()).WithAuthToken(srv.Token())
	gh.BaseURL, _ = gh.BaseURL.Parse(srv.URL())
	head, _ := srv.Ref(repo, "heads/"+DefaultBranch)
	c, _ := srv.GitCommit(repo, head)
	v2 := `{"schema":"kernel-gate/baseline/v2","key":{"gpu":"NVIDIA H200","arch":"sm_90"},"entries":[]}`
	tree, _, err := gh.Git.CreateTree(ctx, "octo", "kernels", c.Tree, []*github.TreeEntry{{
		Path: github.String("nvidia-h200.sm_90.json"), Mode: github.String("100644"), Type: github.String("blob"), Content: &v2}})
	if err != nil {
		t.Fatal(err)
	}
	nc, _, err := gh.Git.CreateCommit(ctx, "octo", "kernels", &github.Commit{Message: github.String("v2"), Tree: tree,
		Parents: []*github.Commit{{SHA: &head}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gh.Git.UpdateRef(ctx, "octo", "kernels", &github.Reference{Ref: github.String("refs/heads/" + DefaultBranch),
		Object: &github.GitObject{SHA: nc.SHA}}, false); err != nil {
		t.Fatal(err)
	}
	err = g.Update(ctx, entry("NVIDIA H200", "sm_90", "new", 1))
	if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "kernel-gate-baseline:nvidia-h200.sm_90.json is kernel-gate/baseline/v2") {
		t.Fatalf("Update over v2: %v", err)
	}
	if now, _ := srv.Ref(repo, "heads/"+DefaultBranch); now != nc.GetSHA() {
		t.Fatal("the branch moved")
	}
	if _, err := g.History(ctx, h200(), 0); !errors.Is(err, ErrSchema) {
		t.Errorf("History: %v", err)
	}
	if err := g.Prune(ctx, 1); !errors.Is(err, ErrSchema) {
		t.Errorf("Prune: %v", err)
	}
}

func TestNewGitOptions(t *testing.T) {
	ctx := context.Background()
	base := githubapi.Options{APIURL: "https://api.github.com/", Token: "t0ken-value", Repository: "o/r"}
	for _, c := range []struct {
		name string
		mod  func(*GitOptions)
		want string
	}{
		{"no token", func(o *GitOptions) { o.Token = "" }, "contents: write"},
		{"bad repository", func(o *GitOptions) { o.Repository = "o" }, "not owner/name"},
		{"http off loopback", func(o *GitOptions) { o.APIURL = "http://ghe.example.com/api/v3/" }, "not https"},
		{"bad branch", func(o *GitOptions) { o.Branch = "a..b" }, "not a branch name"},
	} {
		o := GitOptions{Options: base}
		c.mod(&o)
		if _, err := NewGit(ctx, o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	g, err := NewGit(ctx, GitOptions{Options: base, Branch: "refs/heads/perf/baseline"})
	if err != nil || g.branch != "perf/baseline" || g.keep != DefaultKeep || g.attempts != DefaultAttempts {
		t.Fatalf("%+v %v", g, err)
	}
	// Entries never reach the network malformed.
	if err := g.Update(ctx, Entry{Commit: "c", Time: when}); err == nil || !strings.Contains(err.Error(), "GPU") {
		t.Errorf("an entry without a fingerprint: %v", err)
	}
}
