package main

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
)

// options are the judge's settings and the rounds the trials are cut from.
type options struct {
	lim speedup.Limits
	// family is how many comparisons one run judges together: the three kernel kinds of
	// the capture, as three kernel × shape pairs of one harness file.
	family int
	// from and to bound the rounds [from, to) that trials are cut from.
	from, to int
}

func defaultOptions() options {
	return options{lim: speedup.DefaultLimits(), family: 3, from: 0, to: math.MaxInt}
}

// trial is one independent comparison: the judge's add-rounds loop run on consecutive
// rounds of the capture, and the other rules on the same rounds.
type trial struct {
	start, rounds int
	verdict       speedup.Verdict
	ratio         float64
	// The other rules' "slower" calls on the same rounds.
	gab, benchstat, asv bool
}

// runTrials cuts a pair's rounds [o.from, o.to) into consecutive, non-overlapping trials.
// Each trial starts where the previous one stopped, judges MinRounds rounds and adds rounds
// while NeedMore asks for them, exactly as the runner would, reading them from the recorded
// sequence. A trial that runs out of recorded rounds before it is decided (or its budget
// spent) is dropped, never counted. A is base, B is head.
func runTrials(p pair, o options) ([]trial, error) {
	to := min(o.to, len(p.A), len(p.B))
	var out []trial
	for start := o.from; ; {
		n := o.lim.MinRounds
		var j speedup.Judgement
		done := false
		for start+n <= to {
			var err error
			j, err = speedup.JudgePair(speedup.Pair{Base: p.A[start : start+n], Head: p.B[start : start+n]}, o.lim, o.family)
			if err != nil {
				return nil, err
			}
			add := speedup.NeedMore(j, o.lim)
			if add == 0 {
				done = true
				break
			}
			n += add
		}
		if !done {
			return out, nil
		}
		a, b := p.A[start:start+n], p.B[start:start+n]
		out = append(out, trial{start: start, rounds: n, verdict: j.Verdict, ratio: j.Center,
			gab: gabSlower(a, b), benchstat: benchstatSlower(a, b), asv: asvSlower(a, b)})
		start += n
	}
}

func flat(rounds [][]float64) []float64 {
	var out []float64
	for _, r := range rounds {
		out = append(out, r...)
	}
	return out
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// gabSlower is github-action-benchmark's default rule: alert when the current value over
// the previous one exceeds alert-threshold "200%", on the mean its tools report.
func gabSlower(a, b [][]float64) bool {
	return mean(flat(b))/mean(flat(a)) > 2.0
}

// uTest is benchmath's Mann-Whitney U test (benchstat's engine) on every launch of the
// trial, pooled across rounds, with the two medians.
func uTest(a, b [][]float64) (p, medA, medB float64) {
	sa := benchmath.NewSample(flat(a), &benchmath.DefaultThresholds)
	sb := benchmath.NewSample(flat(b), &benchmath.DefaultThresholds)
	c := benchmath.AssumeNothing.Compare(sa, sb)
	return c.P, benchmath.AssumeNothing.Summary(sa, 0.95).Center, benchmath.AssumeNothing.Summary(sb, 0.95).Center
}

// benchstatSlower is benchstat's rule: a delta is reported (not "~") when the U test gives
// p < 0.05; slower when head's median is then the higher.
func benchstatSlower(a, b [][]float64) bool {
	p, ma, mb := uTest(a, b)
	return p < benchmath.DefaultThresholds.CompareAlpha && mb > ma
}

// asvSlower is asv compare's default: a regression when the ratio of medians exceeds its
// factor 1.1 and statistics.is_different holds (Mann-Whitney U, p < 0.002).
func asvSlower(a, b [][]float64) bool {
	p, ma, mb := uTest(a, b)
	return p < 0.002 && mb/ma > 1.1
}

// cell summarises the trials of one pair.
type cell struct {
	trials                       int
	slower, inconclusive, passed int // ours; passed = same or faster
	gab, benchstat, asv          int
	roundsMedian, roundsMax      int
}

func summarise(ts []trial) cell {
	c := cell{trials: len(ts)}
	var rounds []int
	for _, t := range ts {
		switch t.verdict {
		case speedup.Slower:
			c.slower++
		case speedup.Inconclusive:
			c.inconclusive++
		default:
			c.passed++
		}
		c.gab += b2i(t.gab)
		c.benchstat += b2i(t.benchstat)
		c.asv += b2i(t.asv)
		rounds = append(rounds, t.rounds)
	}
	if len(rounds) > 0 {
		slices.Sort(rounds)
		c.roundsMedian, c.roundsMax = rounds[len(rounds)/2], rounds[len(rounds)-1]
	}
	return c
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// realised is the median over the rounds [from, to) of the per-round ratio of medians B/A.
func realised(p pair, from, to int) float64 {
	var r []float64
	for i := from; i < min(to, len(p.A), len(p.B)); i++ {
		r = append(r, med(p.B[i])/med(p.A[i]))
	}
	return med(r)
}

func med(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	h := len(s) / 2
	if len(s)%2 == 1 {
		return s[h]
	}
	return (s[h-1] + s[h]) / 2
}
