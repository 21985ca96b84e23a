package pipeline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A sharded run (Options.Shard, `kernel-gate run --shard i/n`) gates the targets whose names
// hash to its shard (internal/shard) and records which run it is part of, for kernel-gate
// merge. Every shard runs the gates that are not per target on its own runner — the ptxas
// and sass gates of its own builds, the toolkit gate of its own nvcc — because a runner's
// toolkit is its own: a shard on a runner with the wrong CUDA must fail, whichever shard
// it is. Merge keeps each identical finding once.

// shardTargets narrows p.targets to the shard's and returns its record: nil for a run that
// is not sharded. The record names head's commit and the config's digest; the base is
// added when the run has resolved it.
func (p *pipeline) shardTargets(ctx context.Context) (*result.Shard, error) {
	if !p.o.Shard.Sharded() {
		return nil, nil
	}
	s := &result.Shard{Index: p.o.Shard.Index, Count: p.o.Shard.Count, Targets: []string{}, AllTargets: []string{}}
	var kept []config.Target
	for _, t := range p.targets {
		s.AllTargets = append(s.AllTargets, t.Name)
		if p.o.Shard.Owns(t.Name) {
			kept = append(kept, t)
			s.Targets = append(s.Targets, t.Name)
		}
	}
	p.targets = kept
	if p.cfg.Path != "" {
		raw, err := input.ReadFile(ctx, p.cfg.Path, input.Config)
		if err != nil {
			return nil, exitcode.BadInputf("the config's digest for the shard record: %w", err)
		}
		s.Config = fmt.Sprintf("sha256:%x", sha256.Sum256(raw))
	}
	// Outside a git repository (--no-base) there is no commit to name: every shard then
	// records none, and merge compares that.
	s.Commit, _ = abrun.Git(ctx, cmp.Or(p.o.Dir, "."), "rev-parse", "HEAD")
	return s, nil
}

// recordedShardTargets are a sharded recording's targets — exactly those it ran, none
// included (an empty shard replays as one) — and its run's, every shard's.
func recordedShardTargets(all []config.Target, rec *Decisions) (shardTargets, runTargets []config.Target, err error) {
	find := func(names []string) ([]config.Target, error) {
		var out []config.Target
		for _, name := range names {
			i := slices.IndexFunc(all, func(t config.Target) bool { return t.Name == name })
			if i < 0 {
				return nil, exitcode.BadInputf("--replay: the recording's shard names target %q, which the config does not have", cleanText(name, 200, false))
			}
			out = append(out, all[i])
		}
		return out, nil
	}
	s := rec.Shard
	if shardTargets, err = find(rec.Targets); err != nil {
		return nil, nil, err
	}
	if runTargets, err = find(s.AllTargets); err != nil {
		return nil, nil, err
	}
	s.Commit, s.Base, s.Config = cleanText(s.Commit, 100, false), cleanText(s.Base, 100, false), cleanText(s.Config, 100, false)
	s.Targets = slices.Clone(rec.Targets)
	return shardTargets, runTargets, nil
}

// emptyShard is the run of a shard that has no targets: it builds and runs nothing, but
// asks for the GPU (merge keeps each GPU's shards apart) and resolves the base (every
// shard of a run names the same one), as every shard does.
func (p *pipeline) emptyShard(ctx context.Context, replaying bool) (result.Result, error) {
	if err := p.group("GPU", func() error { return p.detectGPU(ctx, replaying) }); err != nil {
		return result.Result{}, err
	}
	if err := p.group("base", func() error { return p.resolveBase(ctx, replaying) }); err != nil {
		return result.Result{}, err
	}
	if p.cleanupBase != nil {
		p.cleanupBase()
	}
	p.progress("no targets in shard %d/%d: nothing to build or run", p.decided.Shard.Index, p.decided.Shard.Count)
	res := result.New(p.o.Tool)
	if p.gpu != nil {
		res.Device = &result.Device{Name: p.gpu.Name, Arch: p.gpu.Arch(), Driver: p.gpu.Driver}
	}
	return res, nil
}

// withShard puts the shard's record and its gate into the result: the "shards" gate comes
// first and says which targets the shard gated. It is a pass that says "no targets in
// shard" when it had none; otherwise it passes when another gate judged anything and skips
// when none did, so it never changes the run's verdict.
func (p *pipeline) withShard(res result.Result) (result.Result, error) {
	s := *p.decided.Shard
	s.Base = p.decided.BaseRev
	p.decided.Shard.Base = s.Base
	g := result.Gate{Name: result.ShardsGate}
	if len(s.Targets) == 0 {
		g.Summary = fmt.Sprintf("no targets in shard %d/%d", s.Index, s.Count)
		g.Findings = []result.Finding{{Severity: result.Notice, Metric: "shard", Message: fmt.Sprintf(
			"no targets in shard %d/%d: each of the run's %d target(s) (%s) hashes to another shard", s.Index, s.Count, len(s.AllTargets), strings.Join(s.AllTargets, ", "))}}
		g.Verdict = result.Pass
	} else {
		g.Summary = fmt.Sprintf("shard %d/%d: %s", s.Index, s.Count, strings.Join(s.Targets, ", "))
		g.Findings = []result.Finding{{Severity: result.Notice, Metric: "shard", Message: fmt.Sprintf(
			"shard %d/%d gated %d of the run's %d target(s): %s; kernel-gate merge joins it with the other shards' results", s.Index, s.Count, len(s.Targets), len(s.AllTargets), strings.Join(s.Targets, ", "))}}
		g.Decide(slices.ContainsFunc(res.Gates, func(g result.Gate) bool { return g.Verdict != result.Skip }))
	}
	if err := g.SetData(s); err != nil {
		return res, exitcode.CouldNotRun(err)
	}
	out := result.New(res.Tool, append([]result.Gate{g}, res.Gates...)...)
	out.Replay, out.Device, out.Trigger, out.Shard = res.Replay, res.Device, res.Trigger, &s
	return out, nil
}
