package speedup

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
)

// Verdict is the outcome of one head-versus-base comparison.
type Verdict string

const (
	// Faster: the interval lies below 1 - max_slowdown (faster by more than the margin).
	Faster Verdict = "faster"
	// Same: the interval lies below 1 + max_slowdown, not all of it below 1 - max_slowdown.
	Same Verdict = "same"
	// Slower: the interval lies above 1 + max_slowdown. It fails the gate.
	Slower Verdict = "slower"
	// Inconclusive: the interval straddles 1 + max_slowdown, or there are too few rounds.
	// The runner adds rounds (NeedMore); once the budget is spent it is a warning.
	Inconclusive Verdict = "inconclusive"
)

// GoalVerdict is the outcome of a min_speedup_vs_reference goal.
type GoalVerdict string

const (
	// NoGoal: the speedup is measured but no goal is set.
	NoGoal GoalVerdict = "none"
	// GoalMet: the interval's lower bound is at or above the goal.
	GoalMet GoalVerdict = "met"
	// GoalMissed: the interval's upper bound is below the goal. It fails the gate.
	GoalMissed GoalVerdict = "missed"
	// GoalInconclusive: the interval straddles the goal, or there are too few rounds.
	GoalInconclusive GoalVerdict = "inconclusive"
)

// Limits are the settings for one kernel × shape, resolved from the config
// (Config.Limits).
type Limits struct {
	// MaxSlowdown is the effect-size margin (0.02 = 2%).
	MaxSlowdown float64
	// Confidence is the family-wide level before the corrections (Level).
	Confidence float64
	// MinRounds is the first look of the add-rounds loop and the fewest rounds a decision
	// is made on; MaxRounds is the last look. The loop doubles the rounds between them.
	MinRounds, MaxRounds int
	// GPUSecondsBudget bounds the GPU time the loop spends on this kernel × shape.
	GPUSecondsBudget float64
	// MinSpeedupVsReference is the reference goal (reference median / head median);
	// 0 when there is none.
	MinSpeedupVsReference float64
}

// DefaultLimits returns the defaults.
func DefaultLimits() Limits {
	return Limits{
		MaxSlowdown: DefaultMaxSlowdown, Confidence: DefaultConfidence,
		MinRounds: DefaultMinRounds, MaxRounds: DefaultMaxRounds, GPUSecondsBudget: DefaultGPUSecondsBudget,
	}
}

func (l Limits) validate() error {
	switch {
	case !(l.MaxSlowdown >= 0 && l.MaxSlowdown < 1):
		return fmt.Errorf("speedup: max_slowdown must be in [0, 1), got %s", numtext.Short(l.MaxSlowdown))
	case !(l.Confidence >= 0.5 && l.Confidence < 1):
		return fmt.Errorf("speedup: confidence must be in [0.5, 1), got %s", numtext.Short(l.Confidence))
	case l.MinRounds < 2 || l.MaxRounds < l.MinRounds:
		return fmt.Errorf("speedup: need 2 <= min_rounds <= max_rounds, got %d and %d", l.MinRounds, l.MaxRounds)
	case !(l.GPUSecondsBudget > 0) || math.IsInf(l.GPUSecondsBudget, 0):
		return fmt.Errorf("speedup: gpu_seconds_budget must be a finite number > 0, got %s", numtext.Short(l.GPUSecondsBudget))
	case !(l.MinSpeedupVsReference >= 0) || math.IsInf(l.MinSpeedupVsReference, 0):
		return fmt.Errorf("speedup: min_speedup_vs_reference must be a finite number >= 0, got %s", numtext.Short(l.MinSpeedupVsReference))
	}
	return nil
}

// Looks is how many times the add-rounds loop may judge one kernel × shape: at MinRounds,
// then at each doubling, capped at MaxRounds (16, 32, ..., 512: 6 looks).
func (l Limits) Looks() int {
	k, n := 1, max(l.MinRounds, 1)
	for n < l.MaxRounds {
		n = min(2*n, l.MaxRounds)
		k++
	}
	return k
}

// Level is the confidence of each interval when family comparisons (kernel × shape pairs,
// and reference goals) are judged together, each at up to Looks looks: Bonferroni over
// both, 1 - (1 - Confidence) / (family × Looks). The chance that any comparison of the run
// is called slower (or its goal missed) at any look when it is not is then at most
// 1 - Confidence, and so is the chance that any is passed when it should fail.
func (l Limits) Level(family int) float64 {
	return 1 - (1-l.Confidence)/float64(max(family, 1)*l.Looks())
}

// Estimate is a median of per-round ratios with its distribution-free interval.
type Estimate struct {
	// Center is the median of the per-round ratios; Lo and Hi bound it at Level. Lo and Hi
	// are -Inf and +Inf when there are too few rounds for an interval at that level, and
	// NaN for summary-only inputs, whose noise is not assessed.
	Center, Lo, Hi float64
	Level          float64
	// Rounds is how many rounds were judged, DroppedRounds how many were left out (a side
	// with no valid timing in that round, or a round only one side has).
	Rounds, DroppedRounds int
	// Samples counts the valid timings of the judged rounds, both sides.
	Samples int
	// InvalidSamples counts timings dropped as NaN, ±Inf, zero or negative.
	InvalidSamples int
	// SummaryOnly marks an estimate from p50/mean/min summaries: a plain ratio.
	SummaryOnly bool
	// SummaryField names the summary the plain ratio was taken of ("p50_us").
	SummaryField string

	// ratios are the per-round ratios, sorted.
	ratios []float64
}

// Comparison is head versus base for one kernel × shape: ratio = head / base.
type Comparison struct {
	Estimate
	Verdict Verdict
	// PValue is a sign test of "head is no slower than base by more than the margin": the
	// chance, were the median per-round ratio 1 + max_slowdown, of at least as many rounds
	// above 1 + max_slowdown. NaN for summary-only inputs.
	PValue float64
	// PThreshold is the exact one-sided level of the interval's lower bound: Verdict is
	// Slower exactly when PValue <= PThreshold (and there are MinRounds rounds).
	PThreshold float64
	// Why says what an Inconclusive verdict lacks.
	Why string
}

// Speedup is the reference's time over head's for one kernel × shape: speedup =
// reference / head, from the head run's reference timings.
type Speedup struct {
	Estimate
	Name    string
	Goal    float64
	Verdict GoalVerdict
	Why     string
}

// Pair is one kernel × shape's timings in microseconds, grouped by round: round i of Base
// ran beside round i of Head. Reference holds the head run's reference implementation,
// round i beside Head's round i; nil when there is none. It may hold fewer rounds than
// Head (the A/B runner stops timing it once its goal is decided): Head's first ones.
type Pair struct {
	Base, Head, Reference [][]float64
}

// Judgement is everything judged for one kernel × shape.
type Judgement struct {
	Comparison
	// Reference is nil without reference timings.
	Reference *Speedup
	// RecordedRounds is the most rounds any side recorded; GPUSeconds the time of every
	// valid timing recorded, all sides. NeedMore reads both.
	RecordedRounds int
	GPUSeconds     float64
}

// clean returns a round's valid timings (finite, > 0) and how many it dropped.
func clean(round []float64) ([]float64, int) {
	out := make([]float64, 0, len(round))
	for _, v := range round {
		if v > 0 && !math.IsInf(v, 1) { // NaN fails v > 0
			out = append(out, v)
		}
	}
	return out, len(round) - len(out)
}

// median sorts v in place and returns its median (the mean of the middle two for an even
// count); NaN for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	h := len(v) / 2
	if len(v)%2 == 1 {
		return v[h]
	}
	return v[h-1]/2 + v[h]/2 // halves first: no overflow
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// side is one side's rounds, cleaned: per-round medians (NaN for an empty round).
type side struct {
	medians  []float64
	counts   []int
	invalid  int
	recorded float64 // µs of valid timings over every round
}

func prepare(rounds [][]float64) side {
	s := side{medians: make([]float64, len(rounds)), counts: make([]int, len(rounds))}
	for i, r := range rounds {
		v, bad := clean(r)
		s.invalid += bad
		s.recorded += sum(v)
		s.counts[i] = len(v)
		s.medians[i] = median(v)
	}
	return s
}

// ratioEstimate pairs num's rounds with den's and returns the median of the per-round
// ratios num/den with its interval at level. A round is dropped when either side has no
// valid timing in it, when only one side recorded it, or when its ratio is not a finite
// positive number (timings so far apart that the ratio overflows).
func ratioEstimate(num, den side, level float64) Estimate {
	n := max(len(num.medians), len(den.medians))
	e := Estimate{Level: level, InvalidSamples: num.invalid + den.invalid}
	for i := 0; i < min(len(num.medians), len(den.medians)); i++ {
		r := num.medians[i] / den.medians[i]
		if num.counts[i] == 0 || den.counts[i] == 0 || !(r > 0) || math.IsInf(r, 1) {
			continue
		}
		e.ratios = append(e.ratios, r)
		e.Samples += num.counts[i] + den.counts[i]
	}
	e.Rounds = len(e.ratios)
	e.DroppedRounds = n - e.Rounds
	e.Center, e.Lo, e.Hi = math.NaN(), math.Inf(-1), math.Inf(1)
	switch {
	case e.Rounds == 0:
	case e.Rounds == 1:
		e.Center = e.ratios[0]
	default:
		// benchmath sorts the slice it is given: e.ratios stays sorted for the sign test.
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(e.ratios, &benchmath.DefaultThresholds), level)
		e.Center, e.Lo, e.Hi = s.Center, s.Lo, s.Hi
	}
	return e
}

// signTestP is the one-sided sign test of "the median of x is at most t": with k of the n
// values above t, the chance of k or more heads in n fair coin flips. A value equal to t
// counts against the alternative, which keeps the test conservative and makes it agree
// exactly with the order-statistic interval (lowOrderP).
func signTestP(x []float64, t float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	k := 0
	for _, v := range x {
		if v > t {
			k++
		}
	}
	if k == 0 {
		return 1
	}
	// P(X >= k) = P(X <= n-k) for a fair coin; the lower tail keeps tiny p-values exact.
	return distuv.Binomial{N: float64(len(x)), P: 0.5}.CDF(float64(len(x) - k))
}

// lowOrderP is the exact one-sided level of the interval's lower bound: benchmath's
// interval for n rounds at level has the L'th smallest ratio as its lower bound (the order
// go-moremath's stats.QuantileCI picks, which benchmath calls), so the bound exceeds t
// exactly when at least n-L+1 ratios exceed t, that is when signTestP <= P(X >= n-L+1).
func lowOrderP(n int, level float64) float64 {
	if n < 2 {
		return 0
	}
	lo := stats.QuantileCI(n, 0.5, level).LoOrder
	if lo < 1 {
		return 0
	}
	return distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(lo - 1))
}

// RoundsForInterval is the fewest rounds whose median has a finite interval at level (at
// Limits.Level for 3 pairs and 6 looks, 12): with fewer, a judgement is Inconclusive
// whatever the timings say.
func RoundsForInterval(level float64) int {
	if !(level > 0 && level < 1) {
		return 2
	}
	// 2 × 2^-n <= 1 - level, checked against the real order statistics.
	n := max(2, int(math.Ceil(math.Log2(2/(1-level)))))
	for n < 1<<20 {
		if ci := stats.QuantileCI(n, 0.5, level); ci.LoOrder >= 1 && ci.HiOrder <= n {
			break
		}
		n++
	}
	return n
}

// JudgePair judges one kernel × shape: head against base and, when the pair has reference
// timings, the speedup over the reference. family is how many comparisons are judged
// together (Limits.Level). Timings that are NaN, ±Inf, zero or negative are dropped and
// counted, never judged; the error is only for limits that cannot work.
func JudgePair(p Pair, lim Limits, family int) (Judgement, error) {
	if err := lim.validate(); err != nil {
		return Judgement{}, err
	}
	level := lim.Level(family)
	base, head := prepare(p.Base), prepare(p.Head)
	j := Judgement{
		Comparison:     compare(ratioEstimate(head, base, level), lim),
		RecordedRounds: max(len(p.Base), len(p.Head)),
		GPUSeconds:     (base.recorded + head.recorded) / 1e6,
	}
	if p.Reference != nil {
		ref, beside := prepare(p.Reference), head
		if len(p.Reference) < len(p.Head) {
			// The runner stops timing the reference once its goal is decided: its rounds
			// are head's first ones, and only those stand beside it.
			beside = prepare(p.Head[:len(p.Reference)])
		}
		sp := goal(ratioEstimate(ref, beside, level), lim)
		j.Reference = &sp
		j.RecordedRounds = max(j.RecordedRounds, len(p.Reference))
		j.GPUSeconds += ref.recorded / 1e6
	}
	return j, nil
}

// compare decides head versus base from the estimate of head / base.
func compare(e Estimate, lim Limits) Comparison {
	t := 1 + lim.MaxSlowdown
	c := Comparison{Estimate: e, PValue: signTestP(e.ratios, t), PThreshold: lowOrderP(e.Rounds, e.Level)}
	c.Verdict, c.Why = decide(e, lim.MinRounds, func(lo, hi float64) (Verdict, bool) {
		switch {
		case lo > t:
			return Slower, true
		case hi < 1-lim.MaxSlowdown:
			return Faster, true
		case hi < t:
			return Same, true
		}
		return Inconclusive, false
	}, fmt.Sprintf("1 + max_slowdown = %s", numtext.Short(t)))
	return c
}

// goal decides a reference goal from the estimate of reference / head.
func goal(e Estimate, lim Limits) Speedup {
	s := Speedup{Estimate: e, Goal: lim.MinSpeedupVsReference, Verdict: NoGoal}
	if s.Goal <= 0 {
		return s
	}
	v, why := decide(e, lim.MinRounds, func(lo, hi float64) (Verdict, bool) {
		switch {
		case hi < s.Goal:
			return Slower, true
		case lo >= s.Goal:
			return Same, true
		}
		return Inconclusive, false
	}, fmt.Sprintf("the goal %s×", numtext.Short(s.Goal)))
	switch v {
	case Slower:
		s.Verdict = GoalMissed
	case Same:
		s.Verdict = GoalMet
	default:
		s.Verdict, s.Why = GoalInconclusive, why
	}
	return s
}

// decide applies rule to an estimate's interval once there are enough rounds; otherwise,
// or when the interval straddles (rule reports false), the verdict is Inconclusive and the
// reason says what is missing.
func decide(e Estimate, minRounds int, rule func(lo, hi float64) (Verdict, bool), threshold string) (Verdict, string) {
	switch {
	case e.Rounds == 0:
		return Inconclusive, "no round has valid timings on both sides"
	case e.Rounds < minRounds:
		return Inconclusive, fmt.Sprintf("%d round(s), fewer than min_rounds %d", e.Rounds, minRounds)
	}
	if v, ok := rule(e.Lo, e.Hi); ok {
		return v, ""
	}
	if math.IsInf(e.Lo, 0) || math.IsInf(e.Hi, 0) {
		return Inconclusive, fmt.Sprintf("%d rounds are too few for an interval at %s confidence (need %d)", e.Rounds, pct(e.Level), RoundsForInterval(e.Level))
	}
	return Inconclusive, "the interval straddles " + threshold
}

// judgeSummary judges summary-only timings by plain ratio against the margin: no samples,
// so the noise is not assessed and nothing is claimed significant.
func judgeSummary(baseUs, headUs float64, field string, lim Limits) (Comparison, error) {
	if !(baseUs > 0) || !(headUs > 0) || math.IsInf(baseUs, 0) || math.IsInf(headUs, 0) {
		return Comparison{}, errors.New("a summary timing is not a finite number > 0")
	}
	r := headUs / baseUs
	c := Comparison{Estimate: Estimate{Center: r, Lo: math.NaN(), Hi: math.NaN(), SummaryOnly: true, SummaryField: field},
		PValue: math.NaN(), PThreshold: math.NaN()}
	switch {
	case r > 1+lim.MaxSlowdown:
		c.Verdict = Slower
	case r < 1-lim.MaxSlowdown:
		c.Verdict = Faster
	default:
		c.Verdict = Same
	}
	return c, nil
}

// NeedMore says how many rounds the runner should add to a kernel × shape before judging it
// again: 0 when it is decided (head versus base, and the reference goal when there is one)
// or when the budget is spent, so that an Inconclusive verdict is then final and reported
// as a warning. The rounds double at each look (MinRounds, 2×MinRounds, ... MaxRounds),
// never past MaxRounds, nor past what GPUSecondsBudget leaves at the GPU time a round has
// cost so far; added rounds come in pairs, so ABBA order stays balanced.
func NeedMore(j Judgement, lim Limits) int {
	undecided := j.Verdict == Inconclusive && !j.SummaryOnly
	if r := j.Reference; r != nil && r.Verdict == GoalInconclusive && !r.SummaryOnly {
		undecided = true
	}
	have := j.RecordedRounds
	if !undecided || have >= lim.MaxRounds {
		return 0
	}
	add := min(max(lim.MinRounds, 2*have), lim.MaxRounds) - have
	if have > 0 && j.GPUSeconds > 0 {
		perRound := j.GPUSeconds / float64(have)
		left := lim.GPUSecondsBudget - j.GPUSeconds
		switch afford := math.Floor(left / perRound); {
		case afford >= float64(add):
		case afford >= 1:
			add = int(afford)
		default: // spent, or a time too large to be a number: add nothing
			add = 0
		}
	}
	if add > 1 && add%2 == 1 && have+add < lim.MaxRounds {
		add--
	}
	return add
}

// pct renders a confidence level: "99%", "99.94%".
func pct(level float64) string { return fmt.Sprintf("%.4g%%", 100*level) }
