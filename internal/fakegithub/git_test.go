package fakegithub

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func str(v any, key string) string {
	m, _ := v.(map[string]any)
	s, _ := m[key].(string)
	return s
}

// mustDo is do that fails the test unless the status is want.
func mustDo(t *testing.T, s *Server, want int, method, path string, body any) any {
	t.Helper()
	code, _, v := do(t, s, method, path, bearer(s), body)
	if code != want {
		t.Fatalf("%s %s: %d %v, want %d", method, path, code, v, want)
	}
	return v
}

// The SHAs are git's own (git hash-object, git mktree, git commit-tree), so that content
// written twice is one object, as on GitHub.
func TestGitObjectsHaveGitsSHAs(t *testing.T) {
	s := New()
	defer s.Close()
	hello := str(mustDo(t, s, 201, "POST", "/repos/o/r/git/blobs", map[string]any{"content": "hello\n"}), "sha")
	if hello != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Fatalf("blob sha %s", hello)
	}
	x := str(mustDo(t, s, 201, "POST", "/repos/o/r/git/blobs", map[string]any{"content": base64.StdEncoding.EncodeToString([]byte("x")), "encoding": "base64"}), "sha")
	if x != "c1b0730e0133447badcfd47fd144e254807b06e1" {
		t.Fatalf("base64 blob sha %s", x)
	}
	tree := mustDo(t, s, 201, "POST", "/repos/o/r/git/trees", map[string]any{"tree": []any{
		map[string]any{"path": "hello.txt", "mode": "100644", "type": "blob", "sha": hello},
		map[string]any{"path": "dir/b.txt", "mode": "100644", "type": "blob", "sha": x},
	}})
	if str(tree, "sha") != "33a3d98a6a6ed16e901237b3609e6ca2924b6db7" {
		t.Fatalf("tree %v", tree)
	}
	sig := map[string]any{"name": "a", "email": "a@x", "date": "2023-11-14T22:13:20Z"}
	c := mustDo(t, s, 201, "POST", "/repos/o/r/git/commits", map[string]any{"message": "first\n", "tree": str(tree, "sha"), "author": sig, "committer": sig})
	if str(c, "sha") != "9a1f4f8a1b9bdf201cf6f50b876e672bcdfa29e4" {
		t.Fatalf("commit %v", c)
	}

	blob := mustDo(t, s, 200, "GET", "/repos/o/r/git/blobs/"+hello, nil)
	raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(str(blob, "content"), "\n", ""))
	if err != nil || string(raw) != "hello\n" || str(blob, "encoding") != "base64" {
		t.Fatalf("blob %v", blob)
	}
	req, _ := http.NewRequest("GET", s.URL()+"repos/o/r/git/blobs/"+hello, nil)
	req.Header.Set("Authorization", bearer(s))
	req.Header.Set("Accept", "application/vnd.github.v3.raw")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello\n" {
		t.Fatalf("raw blob %q", body)
	}
	got := mustDo(t, s, 200, "GET", "/repos/o/r/git/commits/"+str(c, "sha"), nil)
	if str(got.(map[string]any)["tree"], "sha") != str(tree, "sha") || len(got.(map[string]any)["parents"].([]any)) != 0 {
		t.Fatalf("commit %v", got)
	}
	// Another repository has its own objects.
	if code, _, _ := do(t, s, "GET", "/repos/o/other/git/blobs/"+hello, bearer(s), nil); code != 404 {
		t.Fatalf("another repo's blob: %d", code)
	}
}

func TestGitTrees(t *testing.T) {
	s := New()
	defer s.Close()
	blob := func(content string) string {
		return str(mustDo(t, s, 201, "POST", "/repos/o/r/git/blobs", map[string]any{"content": content}), "sha")
	}
	a, b := blob("a"), blob("b")
	base := str(mustDo(t, s, 201, "POST", "/repos/o/r/git/trees", map[string]any{"tree": []any{
		map[string]any{"path": "keep.json", "mode": "100644", "type": "blob", "sha": a},
		map[string]any{"path": "d/x.json", "mode": "100644", "type": "blob", "sha": a},
		map[string]any{"path": "d/y.json", "mode": "100644", "type": "blob", "sha": a},
	}}), "sha")
	// On base_tree: one file changed, one deleted (sha null), one added from content.
	next := mustDo(t, s, 201, "POST", "/repos/o/r/git/trees", map[string]any{"base_tree": base, "tree": []any{
		map[string]any{"path": "d/x.json", "mode": "100644", "type": "blob", "sha": b},
		map[string]any{"path": "d/y.json", "mode": "100644", "type": "blob", "sha": nil},
		map[string]any{"path": "new.txt", "mode": "100644", "type": "blob", "content": "c"},
	}})
	commit := str(mustDo(t, s, 201, "POST", "/repos/o/r/git/commits", map[string]any{"message": "m", "tree": str(next, "sha")}), "sha")
	files, ok := s.Files("o/r", commit)
	if !ok || len(files) != 3 || string(files["keep.json"]) != "a" || string(files["d/x.json"]) != "b" || string(files["new.txt"]) != "c" {
		t.Fatalf("files %v", files)
	}
	flat := mustDo(t, s, 200, "GET", "/repos/o/r/git/trees/"+str(next, "sha"), nil)
	rec := mustDo(t, s, 200, "GET", "/repos/o/r/git/trees/"+commit+"?recursive=1", nil)
	paths := func(v any) string {
		var out []string
		for _, e := range v.(map[string]any)["tree"].([]any) {
			out = append(out, str(e, "path")+":"+str(e, "type"))
		}
		return strings.Join(out, " ")
	}
	if got := paths(flat); got != "d:tree keep.json:blob new.txt:blob" {
		t.Errorf("tree: %s", got)
	}
	if got := paths(rec); got != "d:tree d/x.json:blob keep.json:blob new.txt:blob" {
		t.Errorf("recursive tree of the commit: %s", got)
	}

	for name, body := range map[string]map[string]any{
		"no tree":       {"base_tree": base},
		"bad base":      {"base_tree": a, "tree": []any{}},
		"unknown blob":  {"tree": []any{map[string]any{"path": "f", "mode": "100644", "type": "blob", "sha": strings.Repeat("1", 40)}}},
		"bad mode":      {"tree": []any{map[string]any{"path": "f", "mode": "644", "type": "blob", "sha": a}}},
		"type vs mode":  {"tree": []any{map[string]any{"path": "f", "mode": "100644", "type": "tree", "sha": a}}},
		"dot-dot path":  {"tree": []any{map[string]any{"path": "../f", "mode": "100644", "type": "blob", "sha": a}}},
		"trailing path": {"tree": []any{map[string]any{"path": "d/", "mode": "100644", "type": "blob", "sha": a}}},
	} {
		if code, _, v := do(t, s, "POST", "/repos/o/r/git/trees", bearer(s), body); code != 422 {
			t.Errorf("%s: %d %v, want 422", name, code, v)
		}
	}
}

func TestGitRefsFastForwardOnly(t *testing.T) {
	s := New()
	defer s.Close()
	tree := str(mustDo(t, s, 201, "POST", "/repos/o/r/git/trees", map[string]any{"tree": []any{}}), "sha")
	if tree != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Fatalf("the empty tree is %s", tree)
	}
	commit := func(msg string, parents ...string) string {
		if parents == nil {
			parents = []string{}
		}
		return str(mustDo(t, s, 201, "POST", "/repos/o/r/git/commits", map[string]any{"message": msg, "tree": tree, "parents": parents}), "sha")
	}
	root := commit("root")
	a := commit("a", root)
	b := commit("b", a)
	side := commit("side", root)

	const ref = "/repos/o/r/git/refs/heads/kg/base"
	mustDo(t, s, 201, "POST", "/repos/o/r/git/refs", map[string]any{"ref": "refs/heads/kg/base", "sha": root})
	if code, _, v := do(t, s, "POST", "/repos/o/r/git/refs", bearer(s), map[string]any{"ref": "refs/heads/kg/base", "sha": a}); code != 422 || !strings.Contains(fmt.Sprint(v), "Reference already exists") {
		t.Fatalf("creating it again: %d %v", code, v)
	}
	if got := mustDo(t, s, 200, "GET", "/repos/o/r/git/ref/heads/kg/base", nil); str(got.(map[string]any)["object"], "sha") != root || str(got, "ref") != "refs/heads/kg/base" {
		t.Fatalf("GET git/ref: %v", got)
	}
	mustDo(t, s, 200, "GET", ref, nil)
	mustDo(t, s, 200, "PATCH", ref, map[string]any{"sha": b, "force": false}) // two commits forward
	mustDo(t, s, 200, "PATCH", ref, map[string]any{"sha": b, "force": false}) // to where it is
	for name, body := range map[string]map[string]any{
		"backwards":       {"sha": a, "force": false},
		"sideways":        {"sha": side},
		"unknown commit":  {"sha": strings.Repeat("2", 40), "force": true},
		"a tree, forced":  {"sha": tree, "force": true},
		"sha not sent":    {"force": true},
		"not json object": nil,
	} {
		if body == nil {
			if code, _, _ := do(t, s, "PATCH", ref, bearer(s), "[1]"); code != 400 && code != 422 {
				t.Errorf("%s: %d", name, code)
			}
			continue
		}
		if code, _, v := do(t, s, "PATCH", ref, bearer(s), body); code != 422 {
			t.Errorf("%s: %d %v, want 422", name, code, v)
		}
	}
	if code, _, v := do(t, s, "PATCH", ref, bearer(s), map[string]any{"sha": a}); !strings.Contains(fmt.Sprint(v), "Update is not a fast forward") {
		t.Errorf("backwards: %d %v", code, v)
	}
	if sha, _ := s.Ref("o/r", "heads/kg/base"); sha != b {
		t.Fatalf("refused updates moved the ref to %s", sha)
	}
	mustDo(t, s, 200, "PATCH", ref, map[string]any{"sha": side, "force": true})
	if sha, _ := s.Ref("o/r", "refs/heads/kg/base"); sha != side {
		t.Fatalf("a forced update left the ref at %s", sha)
	}
	if code, _, _ := do(t, s, "PATCH", "/repos/o/r/git/refs/heads/missing", bearer(s), map[string]any{"sha": a}); code != 422 {
		t.Errorf("updating a missing ref: %d", code)
	}
	if code, _, _ := do(t, s, "GET", "/repos/o/r/git/ref/heads/missing", bearer(s), nil); code != 404 {
		t.Errorf("GET a missing ref: %d", code)
	}
	for _, bad := range []string{"heads/x", "refs/x", "refs/heads/a..b", "refs/heads/a b", "refs/heads/x.lock"} {
		if code, _, _ := do(t, s, "POST", "/repos/o/r/git/refs", bearer(s), map[string]any{"ref": bad, "sha": a}); code != 422 {
			t.Errorf("ref name %q: %d, want 422", bad, code)
		}
	}
	if list := mustDo(t, s, 200, "GET", "/repos/o/r/git/matching-refs/heads/kg", nil); len(list.([]any)) != 1 {
		t.Errorf("matching-refs: %v", list)
	}
	mustDo(t, s, 204, "DELETE", ref, nil)
	if _, ok := s.Ref("o/r", "heads/kg/base"); ok {
		t.Error("DELETE left the ref")
	}
	if c, ok := s.GitCommit("o/r", b); !ok || len(c.Parents) != 1 || c.Parents[0] != a || c.Author.Name != BotLogin {
		t.Errorf("GitCommit: %+v", c)
	}
}

// A fault with After keeps the write and loses the answer.
func TestFaultAfterServing(t *testing.T) {
	s := New()
	defer s.Close()
	tree := str(mustDo(t, s, 201, "POST", "/repos/o/r/git/trees", map[string]any{"tree": []any{}}), "sha")
	c := str(mustDo(t, s, 201, "POST", "/repos/o/r/git/commits", map[string]any{"message": "m", "tree": tree}), "sha")
	s.Inject(Fault{Method: "POST", Path: "/git/refs", Status: 502, After: true})
	if code, _, _ := do(t, s, "POST", "/repos/o/r/git/refs", bearer(s), map[string]any{"ref": "refs/heads/b", "sha": c}); code != 502 {
		t.Fatalf("answer %d, want the fault's 502", code)
	}
	if sha, ok := s.Ref("o/r", "heads/b"); !ok || sha != c {
		t.Fatalf("the served request's write is lost: %q %v", sha, ok)
	}
	reqs := s.Requests()
	if last := reqs[len(reqs)-1]; !last.Fault || last.Status != 502 {
		t.Fatalf("recorded %+v", last)
	}
}

// Hold keeps a group's requests from being served until the whole group has arrived.
func TestHold(t *testing.T) {
	s := New()
	defer s.Close()
	s.Hold("GET", "/git/ref/", 3)
	var wg sync.WaitGroup
	get := func() {
		defer wg.Done()
		if code, _, _ := do(t, s, "GET", "/repos/o/r/git/ref/heads/x", bearer(s), nil); code != 404 {
			t.Errorf("held request: %d", code)
		}
	}
	wg.Add(2)
	go get()
	go get()
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Requests()) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	for _, r := range s.Requests() {
		if r.Status != 0 {
			t.Fatalf("a request was answered (%d) before its group was complete", r.Status)
		}
	}
	wg.Add(1)
	go get()
	wg.Wait()
	// The hold is spent: the next request goes through at once.
	start := time.Now()
	do(t, s, "GET", "/repos/o/r/git/ref/heads/x", bearer(s), nil)
	if time.Since(start) > time.Second {
		t.Fatal("a request after the group was held")
	}
}
