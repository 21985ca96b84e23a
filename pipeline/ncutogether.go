package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// One Nsight Compute run for targets that share a harness. Every ncu run pays ncu's and
// the harness's start-up, which on an H200 was most of each target's 2-3 s profile; targets
// built into one binary, profiled on the same shape, need not pay it once each. When a
// target's profile comes due, the later targets whose profile would run now with the same
// harness command, environment, shape and timeout join it: one ncu run asks for every
// rule's metrics, every target's kernels (KG_KERNELS) and every target's launches (-c, the
// sum), and each target is judged on its own rules' launches, the first of them up to its
// own ncu.launches, as if profiled alone.
//
// The joint run stands for the runs apart only where it proves as much: a run that ncu or
// the harness failed, that printed an error or profiled nothing, or that reached its -c (a
// target's launches may lie beyond it) is not used, nor one in which a target's launches
// cannot be told from the others' (notWhose): each target is then profiled alone, as
// before. A replay decides the same from the recorded run.
// Why: docs/threat-model.md, threat-model T21.

// profileRun is one target's Nsight Compute run as it would be alone: its config (the rules
// of its kernels) and options.
type profileRun struct {
	r   *targetRun
	cfg ncu.Config
	o   ncu.Options
}

// profileOptions are the target's Nsight Compute config and run options (head's harness,
// in its tree).
func (p *pipeline) profileOptions(t target) (ncu.Config, ncu.Options, error) {
	cfg := p.targetNCU(t)
	cmd, env := p.inTree(t, sideHead, t.Harness)
	o, err := cfg.Options(cmd)
	if err != nil {
		return cfg, o, err
	}
	o.NCU = p.o.Tools.NCU
	o.ExtraEnv = append(o.ExtraEnv, env...)
	if len(t.Kernels) > 0 {
		o.ExtraEnv = append(o.ExtraEnv, kernelsVar(t.Kernels))
	}
	return cfg, o, nil
}

// profileGroup is the target's profile and those of the later targets that would run now
// with the same harness, shape and timeout: the target alone when none would.
func (p *pipeline) profileGroup(t target) ([]profileRun, error) {
	first := slices.IndexFunc(p.runs, func(r *targetRun) bool { return r.t.Name == t.Name })
	cfg, o, err := p.profileOptions(t)
	if err != nil || first < 0 {
		return []profileRun{{cfg: cfg, o: o}}, err
	}
	group := []profileRun{{r: p.runs[first], cfg: cfg, o: o}}
	steps := p.gpuSteps()
	ncuStep := steps[slices.IndexFunc(steps, func(s gpuStep) bool { return s.gate == ncu.Name })]
	for _, r := range p.runs[first+1:] {
		if !r.begun || r.profiledWith != "" {
			continue
		}
		if skipped, failed, _ := p.stepDecision(r, ncuStep); skipped != "" || failed != nil {
			continue
		}
		c, ro, err := p.profileOptions(r.t)
		if err != nil {
			continue // its own run says so
		}
		if sameHarnessRun(o, ro) {
			group = append(group, profileRun{r: r, cfg: c, o: ro})
		}
	}
	return group, nil
}

// sameHarnessRun: the two runs differ in their rules, kernels and launches at most.
func sameHarnessRun(a, b ncu.Options) bool {
	return a.NCU == b.NCU && slices.Equal(a.Command, b.Command) && a.Shape == b.Shape && a.Timeout == b.Timeout &&
		slices.Equal(withoutKernelsVar(a.ExtraEnv), withoutKernelsVar(b.ExtraEnv))
}

// togetherOptions are the joint run's: every target's metrics, kernels and launches.
func togetherOptions(group []profileRun) (ncu.Config, ncu.Options, bool) {
	o := group[0].o
	var cfg ncu.Config
	var kernels []string
	all, launches := false, 0
	for _, g := range group {
		cfg.Kernels = append(cfg.Kernels, g.cfg.Kernels...)
		launches += launchLimit(g.o)
		if len(g.r.t.Kernels) == 0 {
			all = true // a target of every kernel: KG_KERNELS stays unset
		}
		for _, k := range g.r.t.Kernels {
			if !slices.Contains(kernels, k) {
				kernels = append(kernels, k)
			}
		}
	}
	if launches > ncu.MaxLaunches {
		return cfg, o, false
	}
	o.Metrics, o.KernelFilter, o.Launches = ncu.Metrics(cfg), ncu.KernelFilter(cfg), launches
	o.ExtraEnv = withoutKernelsVar(o.ExtraEnv)
	if !all {
		o.ExtraEnv = append(o.ExtraEnv, kernelsVar(kernels))
	}
	return cfg, o, true
}

// profileTogether runs (or re-reads) the group's joint profile and judges each target of
// it on its own launches. ok is false when the joint run proves less than the runs apart
// (see above) or was recorded apart: each target is then profiled alone.
func (p *pipeline) profileTogether(ctx context.Context, group []profileRun) (gates []result.Gate, ok bool, err error) {
	cfg, o, fits := togetherOptions(group)
	if !fits {
		return nil, false, nil
	}
	var names []string
	for _, g := range group {
		names = append(names, g.r.t.Name)
	}
	id := "ncu/" + strings.Join(names, "+")
	if p.replaying && !p.x.has(id) {
		return nil, false, nil // recorded with each target profiled alone
	}
	rel := names[0] + "/ncu-together"
	dir := p.x.path(rel)
	o.ArtifactDir = dir
	p.progress("%s: Nsight Compute, one run for %s (the same harness and shape; %d rule(s), --clock-control none)",
		names[0], strings.Join(names, ", "), len(cfg.Kernels))
	var rep *ncu.Report
	var runErr error
	_, err = p.x.stage(stage{
		id: id,
		live: func() (result.Gate, error) {
			if err := procgroup.MkdirArtifact(p.x.path(""), rel); err != nil {
				return result.Gate{}, err
			}
			rep, runErr = ncu.Run(ctx, o)
			if ctx.Err() != nil {
				return result.Gate{}, ctx.Err()
			}
			return result.Gate{}, p.noteNCUMissing(rel, runErr)
		},
		script: func(result.Gate) []string { return ncuScript(o, dir) },
		reread: func() (result.Gate, error) {
			if runErr = p.recordedNCUMissing(ctx, rel); runErr != nil {
				return result.Gate{}, nil
			}
			var perr, err error
			if rep, perr, err = p.readNCULog(ctx, rel+"/"+ncu.LogFile); perr != nil {
				rep = nil // provesLess: its output could not be read
			}
			return result.Gate{}, err
		},
	})
	if err != nil {
		return nil, false, err
	}
	gates, why, err := judgeTogether(rep, runErr, o.Launches, group)
	if err != nil || why != "" {
		if why != "" {
			p.progress("%s: the joint Nsight Compute run is not used (%s): each target is profiled alone", names[0], why)
		}
		return nil, false, err
	}
	return gates, true, nil
}

// judgeTogether judges each target of the group on its share of the joint run (limit is
// the run's -c), or says why the run does not stand for the runs apart.
func judgeTogether(rep *ncu.Report, runErr error, limit int, group []profileRun) ([]result.Gate, string, error) {
	if why := provesLess(rep, runErr, limit); why != "" {
		return nil, why, nil
	}
	if why := notWhose(rep, group); why != "" {
		return nil, why, nil
	}
	var gates []result.Gate
	for _, g := range group {
		gate, err := ncu.Evaluate(launchesOf(rep, g.cfg, launchLimit(g.o)), g.cfg)
		if err != nil {
			return nil, "", err
		}
		gates = append(gates, gate)
	}
	return gates, "", nil
}

// provesLess says why a joint run does not stand for the runs apart ("" when it does): it
// did not run or was not read, failed, printed an error or profiled nothing, or reached its
// launch limit, beyond which a target's launches may lie.
func provesLess(rep *ncu.Report, err error, limit int) string {
	switch {
	case err != nil:
		return err.Error()
	case rep == nil:
		return "its output could not be read"
	case len(rep.Problems) > 0:
		return rep.Problems[0]
	case len(rep.Errors) > 0:
		return "ncu reported errors"
	case len(rep.Launches) == 0:
		return "it profiled nothing"
	case len(rep.Launches) >= limit:
		return fmt.Sprintf("it reached its launch limit, %d", limit)
	}
	return ""
}

// notWhose says why the joint run cannot tell a target's launches from the others' ("" when
// it can). Alone, a target's run profiles its own harness cases' launches, the first of them
// up to its limit; together, the launches its rules match may hold others': another
// target's case's launches of a kernel both targets' rules match (alone, each median would
// be over its own launches), or of one only its rules match, or rows of ncu's table that
// the harness printed itself. Where a launch is matched by two targets' rules, or a
// target's rules match more launches than its limit (its share, the first of them, could
// then be the others' and leave its own out), the joint run is not used. What remains, a
// case of one target launching a kernel only another's rules match within that one's
// limit, adds launches to its share and leaves none of its own out; a harness could add as
// much to a run alone (threat-model T21).
func notWhose(rep *ncu.Report, group []profileRun) string {
	globs := make([][]string, len(group))
	for i, g := range group {
		globs[i] = ruleGlobs(g.cfg)
	}
	matched := make([]int, len(group))
	for _, l := range rep.Launches {
		whose := -1
		for i := range group {
			if !matchesAny(l.Name, globs[i]) {
				continue
			}
			if whose >= 0 {
				return fmt.Sprintf("launch %d is matched by the ncu rules of both %s and %s", l.ID, group[whose].r.t.Name, group[i].r.t.Name)
			}
			whose = i
			matched[i]++
		}
	}
	for i, g := range group {
		if n, limit := matched[i], launchLimit(g.o); n > limit {
			return fmt.Sprintf("%s's ncu rules match %d launches, more than its ncu.launches (%d)", g.r.t.Name, n, limit)
		}
	}
	return ""
}

// ncuMissingFile, in an Nsight Compute run's directory, says that ncu could not be found or
// started, which left no log: a replay reads it and fails the gate as the run did, where the
// missing log would be an unreadable recording.
const ncuMissingFile = "ncu-missing.txt"

// noteNCUMissing keeps err in the run's directory rel when it is ncu's absence.
func (p *pipeline) noteNCUMissing(rel string, err error) error {
	if !errors.Is(err, ncu.ErrNCUMissing) {
		return nil
	}
	return procgroup.WriteArtifact(p.x.path(""), rel+"/"+ncuMissingFile, []byte(msgtext.FirstLine(err.Error())+"\n"), 0o644)
}

// recordedNCUMissing is the absence of ncu that a recording's run in rel kept, as the run
// said it (nil: none).
func (p *pipeline) recordedNCUMissing(ctx context.Context, rel string) error {
	path := p.x.path(rel + "/" + ncuMissingFile)
	if !input.Exists(path) {
		return nil
	}
	raw, err := input.ReadFile(ctx, path, input.Line)
	if err != nil {
		return fmt.Errorf("%w (the recording's %s cannot be read: %v)", ncu.ErrNCUMissing, rel+"/"+ncuMissingFile, err)
	}
	// As the run said it (it wraps ErrNCUMissing there): a failure either way.
	return errors.New(strings.TrimSpace(string(raw)))
}

// launchLimit is a run's -c.
func launchLimit(o ncu.Options) int {
	if o.Launches > 0 {
		return o.Launches
	}
	return ncu.DefaultLaunches
}

// launchesOf is the joint report as one target's run alone would have it: the launches of
// its rules' kernels, the first limit of them.
func launchesOf(rep *ncu.Report, cfg ncu.Config, limit int) *ncu.Report {
	out := *rep
	out.Launches = nil
	globs := ruleGlobs(cfg)
	for _, l := range rep.Launches {
		if len(out.Launches) == limit {
			break
		}
		if matchesAny(l.Name, globs) {
			out.Launches = append(out.Launches, l)
		}
	}
	out.Limit = limit
	return &out
}

// ruleGlobs are the kernel globs of the config's rules.
func ruleGlobs(cfg ncu.Config) []string {
	var globs []string
	for _, r := range cfg.Kernels {
		globs = append(globs, r.Match)
	}
	return globs
}
