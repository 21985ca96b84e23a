package baseline

// Timing summaries: a harness's thousands of launches reduced to a median with an
// honest interval and a distribution that can be drawn again.

import (
	"math"
	"slices"
	"strconv"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
)

// summary is one kernel × shape's timings reduced to what an entry keeps.
type summary struct {
	median, low, high *float64
	rounds, samples   int
	quantiles         []float64
	roundMedians      []float64
}

// summarize reduces a harness result's timings. Launches within a round share the GPU's
// state (clocks, caches, the other side's last run), so they are not independent; the
// rounds are, and the median and its interval are taken over per-round medians. Invalid
// timings (NaN, Inf, zero, negative) are dropped, as the speedup gate drops them.
func summarize(r benchfile.Result) (summary, bool) {
	rounds := r.RoundsUs
	if len(rounds) == 0 && len(r.SamplesUs) > 0 {
		rounds = [][]benchfile.Float{r.SamplesUs}
	}
	var all, medians []float64
	for _, round := range rounds {
		var xs []float64
		for _, x := range round {
			if x.Finite() && x > 0 {
				xs = append(xs, float64(x))
			}
		}
		if len(xs) == 0 {
			continue
		}
		all = append(all, xs...)
		slices.Sort(xs)
		medians = append(medians, quantile(xs, 0.5))
	}
	if len(all) == 0 {
		if r.P50Us != nil && r.P50Us.Finite() && *r.P50Us > 0 {
			m := float64(*r.P50Us)
			return summary{median: &m}, true
		}
		return summary{}, false
	}
	s := summary{rounds: len(medians), samples: len(all), roundMedians: round7s(medians)}
	units := slices.Clone(medians)
	if len(medians) == 1 {
		units = slices.Clone(all) // one round: its launches are all there is
	}
	slices.Sort(units)
	m := round7(quantile(units, 0.5))
	s.median = &m
	if lo, hi, ok := medianInterval(units, TimingLevel); ok {
		lo, hi = round7(lo), round7(hi)
		s.low, s.high = &lo, &hi
	}
	slices.Sort(all)
	s.quantiles = make([]float64, 101)
	for i := range s.quantiles {
		s.quantiles[i] = round7(quantile(all, float64(i)/100))
	}
	return s, true
}

// round7 keeps 7 significant digits: harnesses time in float32, and digits beyond its
// precision (interpolation's 38.511998950000006) would only make the file longer.
func round7(x float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 7, 64), 64)
	if err != nil {
		return x
	}
	return r
}

func round7s(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = round7(x)
	}
	return out
}

// quantile is the p-quantile of sorted xs, linearly interpolated between order statistics
// (type 7, numpy's and R's default).
func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := p * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// medianInterval is the distribution-free interval of the median of sorted xs at level
// (at least): the order statistics x(k) and x(n+1-k) for the largest k with
// P(Binomial(n, 1/2) < k) <= (1-level)/2. With too few values for any such k there is
// none.
func medianInterval(sorted []float64, level float64) (float64, float64, bool) {
	n := len(sorted)
	alpha := (1 - level) / 2
	k, cdf := 0, 0.0 // cdf = P(B < k+1) once the loop has added P(B = k)
	for j := 0; j <= n/2; j++ {
		cdf += binomialHalf(n, j)
		if cdf > alpha {
			break
		}
		k = j + 1
	}
	if k == 0 {
		return 0, 0, false
	}
	return sorted[k-1], sorted[n-k], true
}

// binomialHalf is P(Binomial(n, 1/2) = j).
func binomialHalf(n, j int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(j) - lg(n-j) - float64(n)*math.Ln2)
}
