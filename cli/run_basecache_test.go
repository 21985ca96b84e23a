//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The base cache (issue 22), end to end on the fake toolchain: a cold run saves base's side,
// the next run of the same base restores it and runs none of base's build steps (the journal
// marks them cached, the fake harness never ran base's first run), reaches the same
// verdicts, and replays; a tampered entry is ignored with a note and rebuilt; a link out of
// base's outputs is never followed and leaves nothing saved.

// testJournal is the journal's part the run tests read.
type testJournal struct {
	BaseCache *result.BaseCache `json:"base_cache"`
	Steps     []testJournalStep `json:"steps"`
}

type testJournalStep struct {
	ID       string `json:"id"`
	Cached   bool   `json:"cached"`
	Parallel bool   `json:"parallel"`
	Chain    string `json:"chain"`
}

func readJournal(t *testing.T, art string) testJournal {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(art, "journal.json"))
	if err != nil {
		t.Fatal(err)
	}
	var j testJournal
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// baseFirstRuns counts the fake harness's check-mode runs in base's cache directory.
func baseFirstRuns(t *testing.T, envLog string) int {
	n := 0
	for _, l := range envLines(t, envLog) {
		if strings.HasPrefix(l, "check ") && strings.HasSuffix(field(l, "cache"), "/base/attention-jit") {
			n++
		}
	}
	return n
}

func TestRunBaseCache(t *testing.T) {
	repo := commandRepo(t, jitConfig(t, ""))
	t.Setenv("TMPDIR", t.TempDir())
	cache := filepath.Join(t.TempDir(), "base-cache")
	run := func(t *testing.T, wantAction string, more ...string) (result.Result, string, string) {
		t.Helper()
		art, envLog := filepath.Join(t.TempDir(), "art"), filepath.Join(t.TempDir(), "env.log")
		t.Setenv("FAKE_ENV_LOG", envLog)
		code, out, stderr := kg(t, "", runArgs(t, repo, art, append([]string{"--base", "main", "--all", "--base-cache", cache}, more...)...)...)
		if code != exitPass {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
		res := decode(t, out)
		if res.BaseCache == nil || res.BaseCache.Action != wantAction || len(res.BaseCache.Key) != 64 {
			t.Fatalf("base_cache %+v, want %s\n%s", res.BaseCache, wantAction, stderr)
		}
		return res, art, envLog
	}

	cold, coldArt, coldEnv := run(t, result.BaseCacheSaved)
	if n := baseFirstRuns(t, coldEnv); n != 1 {
		t.Errorf("the cold run ran base's first run %d times, want 1", n)
	}
	if j := readJournal(t, coldArt); slices.ContainsFunc(j.Steps, func(s testJournalStep) bool {
		return s.Cached
	}) {
		t.Error("the cold run has cached steps")
	}
	entry := filepath.Join(cache, cold.BaseCache.Key)
	if _, err := os.Stat(filepath.Join(entry, "manifest.json")); err != nil {
		t.Fatalf("no entry saved: %v", err)
	}

	t.Run("restored", func(t *testing.T) {
		warm, art, envLog := run(t, result.BaseCacheRestored)
		if warm.BaseCache.Key != cold.BaseCache.Key {
			t.Errorf("key %s, the cold run saved %s", warm.BaseCache.Key, cold.BaseCache.Key)
		}
		if !slices.Equal(verdicts(warm), verdicts(cold)) {
			t.Errorf("verdicts %v, cold %v", verdicts(warm), verdicts(cold))
		}
		if n := baseFirstRuns(t, envLog); n != 0 {
			t.Errorf("base's first run ran %d times from a restored base", n)
		}
		// Base's cache directory is at the path the cold run built in (a JIT build's
		// recorded paths stay valid), and gone after the run like the worktree.
		baseCache := func(envLog string) string {
			for _, l := range envLines(t, envLog) {
				if c := field(l, "cache"); strings.HasSuffix(c, "/base/attention-jit") {
					return c
				}
			}
			return ""
		}
		if got, want := baseCache(envLog), baseCache(coldEnv); got == "" || got != want {
			t.Errorf("base's cache directory %q, the cold run's %q", got, want)
		}
		left, _ := os.ReadDir(os.Getenv("TMPDIR"))
		for _, e := range left {
			if strings.HasPrefix(e.Name(), "kernel-gate-") {
				t.Errorf("left in TMPDIR: %s", e.Name())
			}
		}
		// Base is still timed live, from the restored JIT cache (no build: the .so is there).
		timed := false
		for _, l := range envLines(t, envLog) {
			timed = timed || strings.HasPrefix(l, "serve ") && strings.HasSuffix(field(l, "cache"), "/base/attention-jit") || strings.HasPrefix(l, "bench ") && strings.HasSuffix(field(l, "cache"), "/base/attention-jit")
		}
		if !timed {
			t.Errorf("base was not timed:\n%s", strings.Join(envLines(t, envLog), "\n"))
		}
		j := readJournal(t, art)
		cached := map[string]bool{}
		for _, s := range j.Steps {
			if s.Cached {
				cached[s.ID] = true
			}
		}
		for _, id := range []string{"check/base/attention-jit", "elf/base/attention-jit/0", "res/base/attention-jit/0", "sass/base/attention-jit/0"} {
			if !cached[id] {
				t.Errorf("step %s is not marked cached (cached: %v)", id, cached)
			}
		}
		if len(cached) != 4 || j.BaseCache == nil || j.BaseCache.Action != result.BaseCacheRestored {
			t.Errorf("cached steps %v, journal base_cache %+v", cached, j.BaseCache)
		}
		if !slices.ContainsFunc(warm.Stages, func(s result.Stage) bool {
			return s.Name == "restored from cache "+cold.BaseCache.Key[:12] && s.Side == "base"
		}) {
			t.Errorf("no restore stage in %+v", warm.Stages)
		}
		if script, err := os.ReadFile(filepath.Join(art, "commands.sh")); err != nil || !strings.Contains(string(script), "# check/base/attention-jit: restored from the base cache, not run") {
			t.Errorf("commands.sh: %v\n%s", err, script)
		}
		// The recording of a restored base replays to the same verdicts, and says so.
		replayAgrees(t, repo, art, warm, exitPass)
		code, out, _ := kg(t, "", "run", "--config", filepath.Join(repo, "kernel-gate.yml"), "--replay", art, "--format", "json")
		if r := decode(t, out); code != exitPass || r.BaseCache == nil || r.BaseCache.Action != result.BaseCacheRestored {
			t.Errorf("replay: exit %d, base_cache %+v", code, r.BaseCache)
		}
	})

	t.Run("read-only", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "empty-cache")
		art := filepath.Join(t.TempDir(), "art")
		code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--base-cache", other, "--base-cache-read-only")...)
		if code != exitPass {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if r := decode(t, out); r.BaseCache == nil || r.BaseCache.Action != result.BaseCacheBuilt || !strings.Contains(r.BaseCache.Note, "read-only") {
			t.Errorf("base_cache %+v", r.BaseCache)
		}
		if entries, _ := os.ReadDir(other); len(entries) != 0 {
			t.Errorf("a read-only cache was written: %v", entries)
		}
	})

	t.Run("another key", func(t *testing.T) {
		// A variable that changes what a build makes is part of the key: a miss, then its own entry.
		t.Setenv("NVCC_APPEND_FLAGS", "-DUSER_FLAG=1")
		res, _, envLog := run(t, result.BaseCacheSaved)
		if res.BaseCache.Key == cold.BaseCache.Key || baseFirstRuns(t, envLog) != 1 {
			t.Errorf("key %s (cold %s): base's first runs %d", res.BaseCache.Key, cold.BaseCache.Key, baseFirstRuns(t, envLog))
		}
	})

	t.Run("tampered", func(t *testing.T) {
		// A forged base binary: the entry is ignored, said, base built again and saved anew.
		so := filepath.Join(entry, "files", "cache", "attention-jit", "torch_extensions", "py312_cu130", "kg_ext", "kg_ext.so")
		if err := os.WriteFile(so, []byte("forged"), 0o755); err != nil {
			t.Fatal(err)
		}
		res, _, envLog := run(t, result.BaseCacheSaved)
		if !strings.Contains(res.BaseCache.Note, "entry ignored") || !strings.Contains(res.BaseCache.Note, "kg_ext.so") {
			t.Errorf("note %q", res.BaseCache.Note)
		}
		if n := baseFirstRuns(t, envLog); n != 1 {
			t.Errorf("base's first runs after a tampered entry: %d, want 1", n)
		}
		if !slices.Equal(verdicts(res), verdicts(cold)) {
			t.Errorf("verdicts %v, cold %v", verdicts(res), verdicts(cold))
		}
		if raw, err := os.ReadFile(so); err != nil || string(raw) == "forged" {
			t.Errorf("the tampered entry was not replaced: %v", err)
		}
		run(t, result.BaseCacheRestored)
	})
}

// A base whose build leaves a link out of its tree is never cached: the link is not
// followed, and the run says why.
func TestRunBaseCacheLinkOutNotSaved(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("not for the cache"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(jitConfig(t, ""), `build: ""`, `build: "ln -s `+secret+` leak.so"`, 1)
	repo := commandRepo(t, cfg)
	t.Setenv("TMPDIR", t.TempDir())
	cache := filepath.Join(t.TempDir(), "base-cache")
	art := filepath.Join(t.TempDir(), "art")
	code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--base-cache", cache)...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	r := decode(t, out)
	if r.BaseCache == nil || r.BaseCache.Action != result.BaseCacheBuilt || !strings.Contains(r.BaseCache.Note, "leak.so is a symbolic link out") {
		t.Errorf("base_cache %+v", r.BaseCache)
	}
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		t.Errorf("left in the cache: %s", e.Name())
	}
}

// The C++ form: an nvcc build of sources restored: base's compiles, its link and its SASS
// dump are answered from the entry.
func TestRunBaseCacheSourcesTarget(t *testing.T) {
	repo := fakeRepo(t)
	t.Setenv("TMPDIR", t.TempDir())
	cache := filepath.Join(t.TempDir(), "base-cache")
	var results []result.Result
	for i, want := range []string{result.BaseCacheSaved, result.BaseCacheRestored} {
		art := filepath.Join(t.TempDir(), "art")
		code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--base-cache", cache)...)
		if code != exitPass {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, out, stderr)
		}
		r := decode(t, out)
		if r.BaseCache == nil || r.BaseCache.Action != want {
			t.Fatalf("run %d: base_cache %+v, want %s\n%s", i, r.BaseCache, want, stderr)
		}
		results = append(results, r)
		if want != result.BaseCacheRestored {
			continue
		}
		j := readJournal(t, art)
		for _, s := range j.Steps {
			if isBase := strings.HasPrefix(s.ID, "compile/base/") || strings.HasPrefix(s.ID, "build/base/") || strings.HasPrefix(s.ID, "sass/base/"); isBase != s.Cached {
				t.Errorf("step %s: cached %v", s.ID, s.Cached)
			}
		}
		if _, err := os.Stat(filepath.Join(art, "base", "attention", "harness")); err != nil {
			t.Errorf("base's harness binary was not restored: %v", err)
		}
		replayAgrees(t, repo, art, r, exitPass)
	}
	// The same verdicts, but for the steps that judge head alone: unchanged SASS skips them
	// with base built, not with base restored (threat-model T19).
	cold, warm := verdicts(results[0]), verdicts(results[1])
	for i, v := range cold {
		if v == "sanitizer=skip" || v == "ncu=skip" {
			cold[i] = strings.TrimSuffix(v, "skip") + "pass"
		}
	}
	if !slices.Equal(cold, warm) {
		t.Errorf("verdicts %v, cold %v (the sanitizer and ncu run)", warm, verdicts(results[0]))
	}
}

// The attack on the unchanged-SASS skip (threat-model T19): an entry whose base SASS is
// head's (on a pull request, written by an earlier push of it: the pull request's own
// scope of actions/cache) makes head's SASS look unchanged, and a changed head was not
// sanitized. The fake toolchain dumps the same SASS on both sides, so the entry the first
// run saves is that entry; the second run's head is out of bounds (FAKE_CASE=oob). With
// base built, unchanged SASS still skips the sanitizer (base's SASS is then base's own);
// with base restored, the sanitizer runs and fails.
func TestRunBaseCacheUnchangedSASSNeverSkipsTheSanitizer(t *testing.T) {
	repo := fakeRepo(t)
	t.Setenv("TMPDIR", t.TempDir())
	cache := filepath.Join(t.TempDir(), "base-cache")
	run := func(t *testing.T, args ...string) (int, result.Result, string) {
		t.Helper()
		art := filepath.Join(t.TempDir(), "art")
		code, out, stderr := kg(t, "", runArgs(t, repo, art, append([]string{"--base", "main"}, args...)...)...)
		return code, decode(t, out), stderr
	}
	if code, r, stderr := run(t, "--base-cache", cache); code != exitPass || r.BaseCache == nil || r.BaseCache.Action != result.BaseCacheSaved {
		t.Fatalf("the saving run: exit %d, base_cache %+v\n%s", code, r.BaseCache, stderr)
	}
	t.Setenv("FAKE_CASE", "oob")
	code, cold, stderr := run(t)
	if g := gateOf(t, cold, "sanitizer"); code != exitPass || g.Verdict != result.Skip {
		t.Fatalf("built base, unchanged SASS: exit %d, sanitizer %s, want it skipped\n%s", code, g.Verdict, stderr)
	}
	code, warm, stderr := run(t, "--base-cache", cache)
	if warm.BaseCache == nil || warm.BaseCache.Action != result.BaseCacheRestored {
		t.Fatalf("base_cache %+v, want restored\n%s", warm.BaseCache, stderr)
	}
	if g := gateOf(t, warm, "sanitizer"); code != exitFail || g.Verdict != result.Fail {
		t.Errorf("restored base, head out of bounds: exit %d, sanitizer %s (%s), want it run and failed\n%s", code, g.Verdict, g.Summary, stderr)
	}
	if !strings.Contains(stderr, "sanitizer runs although its SASS is unchanged: base's SASS came from the base cache") {
		t.Errorf("the progress does not say why the sanitizer ran:\n%s", stderr)
	}
}

// A base cache inside the checkout is refused: the checkout is the pull request's, and an
// entry it committed there would be restored as base's side.
func TestRunBaseCacheInsideTheCheckoutIsRefused(t *testing.T) {
	repo := fakeRepo(t)
	t.Setenv("TMPDIR", t.TempDir())
	for _, cache := range []string{filepath.Join(repo, ".kg-cache"), filepath.Join(repo, "kernels", "..", "cache")} {
		art := filepath.Join(t.TempDir(), "art")
		code, out, stderr := kg(t, "", runArgs(t, repo, art, "--base", "main", "--base-cache", cache)...)
		if code != exitUsage || !strings.Contains(stderr, "inside the repository's checkout") {
			t.Errorf("--base-cache %s: exit %d, want %d naming the checkout\n%s\n%s", cache, code, exitUsage, out, stderr)
		}
	}
}

// With nvdisasm, base's SASS dumps by cubins are kept and restored as every other step of
// base's side: the listing, the extraction (whose record, cubins.json, comes back with the
// logs; its cubins do not, nor are they needed) and each cubin's nvdisasm are answered from
// the entry, the verdicts and the sass gate's data are the cold run's, and the recording
// replays. A run without nvdisasm has another key: its digests would not compare.
func TestRunBaseCacheSASSByCubins(t *testing.T) {
	cfg := jitConfig(t, "")
	i := strings.Index(cfg, "sass:\n")
	cfg = cfg[:i] + "sass:\n  kernels:\n    - match: \"gemm_wmma<*>\"\n      require: [\"HMMA|HGMMA\"]\n"
	repo := commandRepo(t, cfg)
	t.Setenv("TMPDIR", t.TempDir())
	cubins := absPath(t, "testdata/cuda11.8-cpu")
	t.Setenv("FAKE_ELF", "sm_89 sm_90")
	t.Setenv("FAKE_BIN_CUBINS", cubins)
	t.Setenv("FAKE_BIN_SASS", filepath.Join(cubins, "cuobjdump-sass.txt.gz"))
	cache := filepath.Join(t.TempDir(), "base-cache")
	run := func(t *testing.T, wantAction string, more ...string) (result.Result, string) {
		t.Helper()
		art := filepath.Join(t.TempDir(), "art")
		t.Setenv("FAKE_ENV_LOG", filepath.Join(t.TempDir(), "env.log"))
		code, out, stderr := kg(t, "", runArgs(t, repo, art, append([]string{"--base", "main", "--all", "--base-cache", cache}, more...)...)...)
		res := decode(t, out)
		if code != exitPass && code != exitFail || res.BaseCache == nil || res.BaseCache.Action != wantAction {
			t.Fatalf("exit %d, base_cache %+v, want %s\n%s", code, res.BaseCache, wantAction, stderr)
		}
		return res, art
	}
	nvdisasm := absPath(t, "testdata/fakegpu/disasm/nvdisasm")
	cold, _ := run(t, result.BaseCacheSaved, "--nvdisasm", nvdisasm)
	warm, art := run(t, result.BaseCacheRestored, "--nvdisasm", nvdisasm)
	if warm.BaseCache.Key != cold.BaseCache.Key || !slices.Equal(verdicts(warm), verdicts(cold)) {
		t.Errorf("key %s, verdicts %v; cold %s, %v", warm.BaseCache.Key, verdicts(warm), cold.BaseCache.Key, verdicts(cold))
	}
	if w, c := gateOf(t, warm, "sass"), gateOf(t, cold, "sass"); w.Verdict != result.Pass || string(w.Data) != string(c.Data) {
		t.Errorf("sass %s, data\n%s\ncold\n%s", w.Verdict, w.Data, c.Data)
	}
	cached := map[string]bool{}
	for _, s := range readJournal(t, art).Steps {
		cached[s.ID] = s.Cached
	}
	for _, id := range []string{"elf/base/attention-jit/0", "xelf/base/attention-jit/0", "sass/base/attention-jit/0/1", "sass/base/attention-jit/0/6"} {
		if !cached[id] {
			t.Errorf("step %s is not restored (steps: %v)", id, cached)
		}
	}
	if _, ok := cached["sass/base/attention-jit/0"]; ok {
		t.Error("base's binary was dumped whole")
	}
	replayAgrees(t, repo, art, warm, map[bool]int{true: exitPass, false: exitFail}[warm.Verdict == result.Pass])
	if other, _ := run(t, result.BaseCacheSaved); other.BaseCache.Key == cold.BaseCache.Key {
		t.Error("a run without nvdisasm has the key of one with it")
	}
}
