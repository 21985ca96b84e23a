package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/explain"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// profileBudget bounds the wall time of a run's base-vs-head profiles, all of them: they
// explain a verdict the A/B rounds reached, and never delay it by more.
const profileBudget = 60 * time.Second

// profileLaunches is ncu's -c for one side's profile: the slow kernel's first launches.
const profileLaunches = 4

// profileKey is one side's profile of a harness's kernel.
type profileKey struct {
	side   int
	kernel string // the harness's label ("flash_fwd")
}

// benchExplained is the speedup step: the A/B rounds' verdict, then, for each kernel they
// found slower, one Nsight Compute run of each side on its first slow shape with
// explain.ProfileMetrics, for the explanation (profileSlow). The verdict is the rounds'.
func (p *pipeline) benchExplained(ctx context.Context, t target) (result.Gate, error) {
	g, err := p.bench(ctx, t)
	if err != nil {
		return g, err
	}
	return g, p.profileSlow(ctx, t, g)
}

// profileSlow profiles base and head on each slow kernel × shape of the speedup gate g,
// where the config runs Nsight Compute (an ncu section, the ncu gate wanted) and ncu is
// found, within profileBudget (a replay reads the profiles the recording holds). A
// profile that fails leaves the explanation without one; only a cancelled run is an error.
func (p *pipeline) profileSlow(ctx context.Context, t target, g result.Gate) error {
	if p.cfg.NCU.Empty() || !p.wants(ncu.Name) {
		return nil
	}
	var d speedup.Data
	if json.Unmarshal(g.Data, &d) != nil {
		return nil
	}
	var done []string
	for _, c := range d.Comparisons {
		if c.Verdict != speedup.Slower || slices.Contains(done, c.Kernel) {
			continue
		}
		done = append(done, c.Kernel)
		for _, side := range []int{sideBase, sideHead} {
			left := profileBudget - p.profileSpent
			if !p.replaying && left < time.Second {
				p.progress("%s: the base-vs-head profile of %s is left out: its %s budget is spent", t.Name, c.Kernel, profileBudget)
				return nil
			}
			start := time.Now()
			rep, err := p.profileSide(ctx, t, c.Kernel, c.Shape, side, left)
			p.profileSpent += time.Since(start)
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				if !errors.Is(err, ncu.ErrNCUMissing) {
					p.progress("%s: the %s profile of %s failed: %v", t.Name, sideName(side), c.Kernel, err)
				}
				return nil // no ncu, or it fails: no profile for any kernel
			}
			if rep != nil {
				if p.profiles == nil {
					p.profiles = map[profileKey]*ncu.Report{}
				}
				p.profiles[profileKey{side, c.Kernel}] = rep
			}
		}
	}
	return nil
}

// profileSide runs Nsight Compute on one side's harness (KG_MODE=check on the shape, the
// one kernel, --clock-control none as always), kept in TARGET/explain-profile/SIDE-KERNEL/,
// or re-reads it replaying; nil when the recording holds none.
func (p *pipeline) profileSide(ctx context.Context, t target, kernel, shape string, side int, budget time.Duration) (*ncu.Report, error) {
	id := "explain-profile/" + t.Name + "/" + sideName(side) + "/" + kernel
	if !p.x.has(id) {
		return nil, nil // a recording made before profiles were, or with the budget spent
	}
	rel := t.Name + "/explain-profile/" + sideName(side) + "-" + kernel
	dir := p.x.path(rel)
	cmd, env := p.inTree(t, side, t.Harness)
	o := ncu.Options{NCU: p.o.Tools.NCU, Command: cmd, Metrics: explain.ProfileMetrics(), Launches: profileLaunches,
		Shape: shape, Timeout: budget, ArtifactDir: dir, ExtraEnv: append(slices.Clone(env), kernelsVar([]string{kernel}))}
	var rep *ncu.Report
	_, err := p.x.stage(stage{
		id: id,
		live: func() (result.Gate, error) {
			if err := procgroup.MkdirArtifact(p.x.path(""), rel); err != nil {
				return result.Gate{}, err
			}
			var err error
			rep, err = ncu.Run(ctx, o)
			return result.Gate{}, err
		},
		script: func(result.Gate) []string { return ncuScript(o, dir) },
		reread: func() (result.Gate, error) {
			var perr, err error
			rep, perr, err = p.readNCULog(ctx, rel+"/"+ncu.LogFile)
			return result.Gate{}, cmp.Or(err, perr)
		},
	})
	if err != nil {
		return nil, err
	}
	if rep != nil && len(rep.Problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(rep.Problems, "; "))
	}
	return rep, nil
}

// profileOf is the median of each profiled metric over a side's launches of the function
// (its identity, kernelname.Name.Identity), for explain.Side.Profile; nil where it was not
// profiled.
func (p *pipeline) profileOf(side int, kernel, id string) []explain.Metric {
	rep := p.profiles[profileKey{side, kernel}]
	if rep == nil {
		return nil
	}
	values := map[string][]float64{}
	units := map[string]string{}
	for _, l := range rep.Launches {
		if l.Name.Identity() != id {
			continue
		}
		for _, m := range l.Metrics {
			if m.Kind == ncu.Number {
				values[m.Name] = append(values[m.Name], m.Value)
				units[m.Name] = m.Unit
			}
		}
	}
	var out []explain.Metric
	for _, name := range explain.ProfileMetrics() {
		vs := values[name]
		if len(vs) == 0 {
			continue
		}
		sort.Float64s(vs)
		med := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		out = append(out, explain.Metric{Name: name, Unit: units[name], Value: med})
	}
	return out
}

// profiledFunction is which of the candidates (a harness kernel's functions, by the target's
// globs) head's base-vs-head profile of the harness's kernel launched most (the first, on
// a tie): the function the harness's label runs, which its name does not say
// ("flash_fwd_causal" runs flash_fwd<64, 64, true>); nil without a profile or a launch of one.
func (p *pipeline) profiledFunction(kernel string, candidates []*ptxas.Kernel) *ptxas.Kernel {
	rep := p.profiles[profileKey{sideHead, kernel}]
	if rep == nil {
		return nil
	}
	launches := make([]int, len(candidates))
	for _, l := range rep.Launches {
		for i, c := range candidates {
			if kernelname.Parse(c.Name).Identity() == l.Name.Identity() {
				launches[i]++
			}
		}
	}
	best := -1
	for i, n := range launches {
		if n > 0 && (best < 0 || n > launches[best]) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return candidates[best]
}
