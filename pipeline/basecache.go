package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/basecache"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// The base cache (Options.BaseCache, package basecache). Base's side of a run depends on
// nothing but its key: the merge base's tree, the toolkit, the driver and GPU, the config
// file's bytes, kernel-gate's version, the arch and targets built and the few inherited
// variables that change a build (keyEnv). So a live run with a base looks for the entry of
// its key after asking nvcc its version: when one verifies, its files go back where base's
// build left them (base's artifacts, the untracked files of base's worktree, base's cache
// directories) and the executor answers base's build steps (cachedKinds) from the entry's
// record of them instead of running them; the journal marks them "cached", so a replay
// reads them as any other step. Otherwise base is built as always and, when every step of
// it succeeded, saved under the key. Base is still timed, sanitized and profiled live: only
// what does not depend on the moment is kept. An entry that is missing, refused or cannot be
// saved is said in the progress and in the result's base_cache, never a failure: the run
// goes on cold.
//
// Builds that record their sources' paths (ninja, make, a JIT extension's build.ninja) would
// build again in a worktree at another path, and ninja compares its inputs' times with the
// times it logged: so with a base cache base's worktree and its cache directories are at
// paths named by the tree (fixedDir; a random one when taken), a restored file keeps its
// time, and base's tracked files are dated just before the oldest restored output
// (backdateSources).

// cachedKinds are the steps of base's side an entry stands in for: its builds (with a
// sources build's compiles), their SASS dumps (cuobjdump's listing and extraction of the
// cubins, nvdisasm of each), its first harness runs (check mode, where a JIT harness
// builds) and cuobjdump's reading of its binaries.
var cachedKinds = []string{"compile", "build", "sass", "check", "elf", "xelf", "res"}

// keyEnv are the inherited variables that change what base's builds make.
var keyEnv = []string{"NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "TORCH_CUDA_ARCH_LIST", "CMAKE_CUDA_ARCHITECTURES", "CUDAHOSTCXX", "CC", "CXX"}

// The base cache's roots: base's artifacts, its worktree's untracked files, its cache
// directories (KG_CACHE_DIR of each harness target).
const (
	rootArtifacts = "artifacts"
	rootTree      = "tree"
	rootCache     = "cache"
)

// Fixed directory names' prefixes (fixedDir), and the stages of the cache in the journal.
const (
	baseDirPrefix     = "kernel-gate-base-"
	workDirPrefix     = "kernel-gate-cache-"
	stageCacheRestore = "base-cache"
	stageCacheSave    = "base-cache-save"
)

// cacheMeta is what an entry keeps of the journal: base's build steps, as they ended.
type cacheMeta struct {
	Steps []step `json:"steps"`
}

// isCachedStep reports whether a step id is one of base's build steps.
func isCachedStep(id string) bool {
	kind, rest, ok := strings.Cut(id, "/")
	return ok && slices.Contains(cachedKinds, kind) && strings.HasPrefix(rest, "base/")
}

// baseRestored reports whether base's build steps come from the base cache.
func (p *pipeline) baseRestored() bool {
	return p.decided.BaseCache != nil && p.decided.BaseCache.Action == result.BaseCacheRestored
}

// usesBaseCache reports whether this run reads or writes the base cache: live, with a base.
func (p *pipeline) usesBaseCache() bool {
	return p.o.BaseCache != "" && !p.replaying && p.hasBase()
}

// fixedDir makes, for a live run with a base cache, the directory os.TempDir()/prefix+tree
// (the first 16 digits of the merge base's tree id) and returns it; "" (a random directory
// then) without a base cache, or when it is taken (another run at once, one that ended
// without removing it, or anything else of that name: never used, never followed).
func (p *pipeline) fixedDir(ctx context.Context, top, rev, prefix string) string {
	if p.o.BaseCache == "" || p.replaying {
		return ""
	}
	tree, err := abrun.Git(ctx, top, "rev-parse", rev+"^{tree}")
	if err != nil || len(tree) < 16 {
		return ""
	}
	dir := filepath.Join(os.TempDir(), prefix+tree[:16])
	if err := os.Mkdir(dir, 0o700); err != nil {
		p.progress("base cache: %s is taken (%v): a random directory instead, where a restored build that records its paths may build again", dir, msgtext.FirstLine(err.Error()))
		return ""
	}
	return dir
}

// workDir is the directory of the harness targets' caches: fixed by base's tree with a base
// cache (fixedDir), else a new temporary one.
func (p *pipeline) workDir() (string, error) {
	if p.usesBaseCache() {
		if dir := p.fixedDir(context.Background(), p.headDir, p.decided.BaseRev, workDirPrefix); dir != "" {
			return dir, nil
		}
	}
	return os.MkdirTemp("", workDirPrefix)
}

// baseCacheKey is the key of this run's base. nvcc is the nvcc --version step.
func (p *pipeline) baseCacheKey(ctx context.Context, nvcc step) (basecache.Key, error) {
	var k basecache.Key
	if p.gpu == nil {
		return k, errors.New("there is no GPU, so base's first harness runs cannot run and nothing of base is kept")
	}
	if nvcc.Why != "" || nvcc.LogCut != "" {
		return k, fmt.Errorf("nvcc --version did not answer (%s): the toolkit is part of the key", cmp.Or(nvcc.Why, nvcc.LogCut))
	}
	version, err := input.ReadFile(ctx, p.x.path(nvccVersionFile), input.Line)
	if err != nil {
		return k, fmt.Errorf("nvcc --version's output: %w", err)
	}
	tree, err := abrun.Git(ctx, p.headDir, "rev-parse", p.decided.BaseRev+"^{tree}")
	if err != nil {
		return k, err
	}
	cfg := sha256.New()
	if p.cfg.Path != "" {
		raw, err := input.ReadFile(ctx, p.cfg.Path, input.Config)
		if err != nil {
			return k, fmt.Errorf("the config: %w", err)
		}
		cfg.Write(raw)
	}
	k = basecache.Key{Tree: tree, Toolkit: string(version), Driver: p.gpu.Driver, GPU: p.gpu.Name,
		Config: hex.EncodeToString(cfg.Sum(nil)), Tool: toolBuild(p.o.Tool), Arch: slices.Clone(p.decided.Arch),
		Targets: slices.Clone(p.decided.Targets), Env: []string{}, SASS: p.disassembler()}
	for _, name := range keyEnv {
		if v, ok := abrun.LookupEnv(p.o.Environ, name); ok {
			k.Env = append(k.Env, name+"="+v)
		}
	}
	return k, nil
}

// toolBuild is kernel-gate's version with its build's revision, where the binary knows it:
// two builds of one version string may keep different steps.
func toolBuild(tool string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return tool
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			tool += " " + s.Value
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			tool += "+modified"
		}
	}
	return tool
}

// cacheRoots are where the roots of an entry live in this run.
func (p *pipeline) cacheRoots() map[string]string {
	roots := map[string]string{rootArtifacts: p.x.path("base"), rootTree: p.baseDir}
	if p.work != "" {
		roots[rootCache] = filepath.Join(p.work, "base")
	}
	return roots
}

// restoreBase looks for the entry of this run's base and, when one verifies, puts its files
// back and has the executor answer base's build steps from it.
func (p *pipeline) restoreBase(ctx context.Context, nvcc step) error {
	if !p.usesBaseCache() {
		return nil
	}
	l, ok := p.x.(*live)
	if !ok {
		return nil
	}
	if outfile.Within(p.o.BaseCache, p.headDir) {
		// The checkout is the pull request's: an entry committed in it would be restored
		// as base's side (threat-model T19).
		return exitcode.BadInputf("--base-cache %s is inside the repository's checkout (%s), whose files a pull request writes; put the base cache outside it (in Actions, under runner.temp)", p.o.BaseCache, p.headDir)
	}
	start := time.Now()
	key, err := p.baseCacheKey(ctx, nvcc)
	if err != nil {
		p.cacheDid(result.BaseCache{Action: result.BaseCacheBuilt, Note: "no key: " + err.Error()})
		return ctx.Err()
	}
	p.cacheKey = &key
	sum := key.Sum()
	var steps map[string]step
	m, err := basecache.Restore(ctx, p.o.BaseCache, key, p.cacheRoots(), func(m basecache.Manifest) error {
		var err error
		steps, err = cachedSteps(m.Meta)
		return err
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, basecache.ErrMiss):
		p.progress("base cache: no entry %s for this base: base is built", basecache.Short(sum))
		return nil
	case err != nil:
		note := "entry ignored: " + strings.TrimPrefix(err.Error(), "entry "+basecache.Short(sum)+": ")
		p.cacheDid(result.BaseCache{Key: sum, Action: result.BaseCacheBuilt, Note: note})
		return nil
	}
	if err := p.backdateSources(ctx, m); err != nil {
		// Base's own tree was checked out by this run: a date it cannot set is a broken
		// machine, and a later build would run against a half-dated tree.
		return exitcode.CouldNotRunf("base cache: dating base's sources before its restored outputs: %v", err)
	}
	l.mu.Lock()
	l.cached = steps
	l.mu.Unlock()
	l.note(stageCacheRestore+"/"+basecache.Short(sum), time.Since(start), "# base's builds and first runs: restored from the base cache's entry "+sum)
	p.decided.BaseCache = &result.BaseCache{Key: sum, Action: result.BaseCacheRestored}
	p.progress("base: restored from cache %s (%d files, %s, saved %s): base's builds and first runs do not run", basecache.Short(sum), len(m.Files), numtext.Bytes(m.Bytes()), m.Saved)
	return nil
}

// cachedSteps reads an entry's record of base's build steps, strictly: only base's build
// steps, each once, each one that succeeded with its whole log under base/.
func cachedSteps(raw json.RawMessage) (map[string]step, error) {
	// A field this kernel-gate does not know is refused, not skipped: the record says what
	// base's steps did, and a reader that skips what it cannot read could miss a failure.
	var meta cacheMeta
	if err := strictjson.UnmarshalKnown(raw, &meta, strictjson.Options{}); err != nil {
		return nil, fmt.Errorf("its record of base's steps: %w", err)
	}
	steps := map[string]step{}
	for _, s := range meta.Steps {
		id := cleanText(s.ID, 200, false)
		switch {
		case !isCachedStep(s.ID):
			return nil, fmt.Errorf("its record holds step %q, which is not one of base's build steps", id)
		case steps[s.ID].ID != "":
			return nil, fmt.Errorf("its record holds step %q twice", id)
		case s.Why != "" || s.Exit != 0 || s.TimedOut || s.LogCut != "":
			return nil, fmt.Errorf("its record holds step %q, which did not succeed", id)
		case s.Log == "" || !strings.HasPrefix(s.Log, "base/") || path.Clean(s.Log) != s.Log || !filepath.IsLocal(filepath.FromSlash(s.Log)):
			return nil, fmt.Errorf("its record's step %q has no log under base/", id)
		}
		s.Tail = cleanText(s.Tail, replayTailBytes, true)
		steps[s.ID] = s
	}
	if len(steps) == 0 {
		return nil, errors.New("its record holds no step")
	}
	return steps, nil
}

// fromCache answers a step of base's side from the restored entry: how it ended then, its
// log and files already in place. It runs nothing and takes no time; a step the entry does
// not hold, or whose log is elsewhere, runs.
func (l *live) fromCache(p proc) (step, bool) {
	l.mu.Lock()
	c, ok := l.cached[p.id]
	l.mu.Unlock()
	if !ok || c.Log != p.log {
		return step{}, false
	}
	s := step{ID: p.id, Argv: p.argv, Dir: p.dir, Env: p.env, Log: p.log, Tail: c.Tail, Cached: true, Start: sinceStart(l.started, time.Now())}
	l.add(s)
	return s, true
}

// backdateSources dates every tracked file of base's worktree a second before the oldest
// file the entry put back in the tree or the caches, so that make and ninja (which compare
// an output's time with its inputs', and ninja with the time it logged) take the restored
// outputs for up to date: git's checkout dated the sources now, after them.
func (p *pipeline) backdateSources(ctx context.Context, m basecache.Manifest) error {
	var oldest int64
	for _, f := range m.Files {
		if f.Root != rootArtifacts && f.Link == "" && (oldest == 0 || f.MTime < oldest) {
			oldest = f.MTime
		}
	}
	if oldest == 0 {
		return nil
	}
	when := time.Unix(0, oldest).Add(-time.Second)
	list, err := gitList(ctx, p.baseDir, "ls-files", "-z")
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(p.baseDir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, name := range list {
		native := filepath.FromSlash(name)
		if st, err := root.Lstat(native); err != nil || !st.Mode().IsRegular() {
			continue // a link (its target is dated, or is not the tree's), a submodule
		}
		if err := root.Chtimes(native, when, when); err != nil {
			return err
		}
	}
	return nil
}

// saveBase saves base's side under the run's key once base was built and every step of it
// succeeded; why it did not is said in the progress and the result.
func (p *pipeline) saveBase(ctx context.Context) error {
	if !p.usesBaseCache() || p.cacheKey == nil || p.baseRestored() {
		return nil
	}
	l, ok := p.x.(*live)
	if !ok {
		return nil
	}
	sum := p.cacheKey.Sum()
	did := result.BaseCache{Key: sum, Action: result.BaseCacheBuilt}
	if p.decided.BaseCache != nil {
		did.Note = p.decided.BaseCache.Note // why an entry was ignored
	}
	if p.o.BaseCacheReadOnly {
		did.Note = strings.TrimPrefix(did.Note+"; not saved: the base cache is read-only", "; ")
		p.decided.BaseCache = &did
		return nil
	}
	start := time.Now()
	steps, why := p.savedSteps(l)
	var untracked []string
	if why == "" {
		untracked, why = p.buildOutputsInTree(ctx)
	}
	if why != "" {
		did.Note = strings.TrimPrefix(did.Note+"; not saved: "+why, "; ")
		p.cacheDid(did)
		return nil
	}
	meta, err := json.Marshal(cacheMeta{Steps: steps})
	if err != nil {
		return exitcode.CouldNotRun(err)
	}
	sources := []basecache.Source{{Root: rootArtifacts, Dir: p.x.path("base"), Paths: []string{"."}},
		{Root: rootTree, Dir: p.baseDir, Paths: untracked}}
	if p.work != "" {
		if _, err := os.Lstat(filepath.Join(p.work, "base")); err == nil {
			sources = append(sources, basecache.Source{Root: rootCache, Dir: filepath.Join(p.work, "base"), Paths: []string{"."}})
		}
	}
	m, err := basecache.Save(ctx, p.o.BaseCache, *p.cacheKey, meta, sources, basecache.Limits{})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		did.Note = strings.TrimPrefix(did.Note+"; not saved: "+err.Error(), "; ")
		p.cacheDid(did)
		return nil
	}
	l.note(stageCacheSave+"/"+basecache.Short(sum), time.Since(start), "# base's builds and first runs: saved to the base cache as "+sum)
	did.Action = result.BaseCacheSaved
	p.decided.BaseCache = &did
	p.progress("base: saved to cache %s (%d files, %s) in %s", basecache.Short(sum), len(m.Files), numtext.Bytes(m.Bytes()), time.Since(start).Round(time.Millisecond))
	return nil
}

// savedSteps are base's build steps from the journal, or why base is not saved: a build
// that failed, a first run that did not run or failed, binaries that could not be read, a
// log cut short. Only a base whose every part ran and succeeded is kept.
func (p *pipeline) savedSteps(l *live) ([]step, string) {
	for _, b := range p.builds {
		if !b.ok[sideBase] {
			return nil, fmt.Sprintf("base's build of %s did not succeed", b.name)
		}
		if b.cmd == nil {
			continue
		}
		s := b.cmd.sides[sideBase]
		switch {
		case s.firstLog == "":
			return nil, fmt.Sprintf("base's first harness run of %s did not run", b.name)
		case s.list.Problem != "":
			return nil, fmt.Sprintf("base's binaries of %s could not be listed", b.name)
		}
		for _, rb := range s.binaries {
			if rb.problem != "" {
				return nil, fmt.Sprintf("base's binary %s of %s could not be read", rb.Path, b.name)
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var steps []step
	for _, s := range l.j.Steps {
		if s.reserved || !isCachedStep(s.ID) {
			continue
		}
		if s.Why != "" || s.LogCut != "" {
			return nil, fmt.Sprintf("base's step %s did not succeed whole", s.ID)
		}
		steps = append(steps, step{ID: s.ID, Log: s.Log, Tail: s.Tail, Seconds: s.Seconds})
	}
	if len(steps) == 0 {
		return nil, "base ran no build step"
	}
	return steps, ""
}

// buildOutputsInTree are the files base's build and first runs left in its worktree (every
// untracked one, ignored ones included), or why base is not saved: a tracked file changed,
// which an entry of added files cannot put back.
func (p *pipeline) buildOutputsInTree(ctx context.Context) ([]string, string) {
	changed, err := abrun.Git(ctx, p.baseDir, "status", "--porcelain", "--untracked-files=no")
	switch {
	case err != nil:
		return nil, err.Error()
	case changed != "":
		return nil, "base's build changed tracked files of its tree (" + msgtext.Clip(msgtext.FirstLine(changed), 200) + ")"
	}
	list, err := gitList(ctx, p.baseDir, "ls-files", "-z", "--others")
	if err != nil {
		return nil, err.Error()
	}
	return list, ""
}

// cacheDid records what the run did with the base cache and says it.
func (p *pipeline) cacheDid(did result.BaseCache) {
	p.decided.BaseCache = &did
	key := ""
	if did.Key != "" {
		key = " " + basecache.Short(did.Key)
	}
	p.progress("base cache%s: %s", key, cleanText(did.Note, 1000, false))
}

// maxGitList bounds the names gitList reads: a tree of a million files' names.
const maxGitList = 128 << 20

// gitList runs a git command whose output is NUL-separated names (-z) in dir and returns
// them. Unlike abrun.Git it keeps names as they are (spaces included) and fails on output
// past maxGitList, never returning a list cut short: a file left out of an entry would be
// missing from a restored base.
func gitList(ctx context.Context, dir string, args ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout*4)
	defer cancel()
	cmd := procgroup.Command(ctx, nil, "git", args...)
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	// CapWriter marks a cut after the bytes it keeps: a longer buffer was cut.
	cmd.Stdout, cmd.Stderr = &procgroup.CapWriter{W: &out, Left: maxGitList}, &procgroup.CapWriter{W: &stderr, Left: 4 << 10}
	err := cmd.Run()
	procgroup.KillRest(cmd)
	switch {
	case err != nil:
		return nil, fmt.Errorf("git %s: %v %s", strings.Join(args, " "), err, msgtext.Clip(strings.TrimSpace(stderr.String()), 500))
	case out.Len() > maxGitList:
		return nil, fmt.Errorf("git %s: more than %s of names", strings.Join(args, " "), numtext.Bytes(maxGitList))
	}
	var names []string
	for name := range strings.SplitSeq(out.String(), "\x00") {
		if name != "" {
			names = append(names, name)
		}
	}
	return names, nil
}
