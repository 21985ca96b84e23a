package speedup

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// specials are the timings FuzzJudge mixes in; most values are ordinary.
var specials = [...]float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1, -0.0, 5e-324, 1e308, math.MaxFloat64, 1e-300}

// fuzzRounds builds n rounds of k timings from data: mostly timings near 100 × factor, some
// taken from specials, some arbitrary bit patterns.
func fuzzRounds(data []byte, off *int, n, k int, factor float64) [][]float64 {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[*off%len(data)]
		*off++
		return b
	}
	out := make([][]float64, n)
	for i := range out {
		m := k
		if next()%11 == 0 {
			m = int(next()) % (k + 1) // some rounds are short or empty
		}
		out[i] = make([]float64, m)
		for j := range out[i] {
			switch b := next(); {
			case b < 200:
				out[i][j] = 100 * factor * (1 + float64(int(next())-128)/2000)
			case b < 230:
				out[i][j] = specials[int(next())%len(specials)]
			default:
				var w [8]byte
				for x := range w {
					w[x] = next()
				}
				out[i][j] = math.Float64frombits(binary.LittleEndian.Uint64(w[:]))
			}
		}
	}
	return out
}

func validCount(rounds [][]float64) (valid, invalid int) {
	for _, r := range rounds {
		for _, v := range r {
			if v > 0 && !math.IsInf(v, 0) {
				valid++
			} else {
				invalid++
			}
		}
	}
	return
}

// FuzzJudge judges random rounds, NaN, ±Inf, zero and negative timings included: it never
// panics, invalid timings are dropped and counted, the counts add up, the verdict agrees
// with the interval and the p-value, and Compare's output always encodes.
func FuzzJudge(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, uint8(16), uint8(16), uint8(20), 1.1, uint8(0), uint8(1), 0.02, false)
	f.Add([]byte{250, 251, 252, 253, 254, 255, 0, 1}, uint8(20), uint8(18), uint8(5), 1.0, uint8(1), uint8(3), 0.0, true)
	f.Add([]byte{201, 0, 202, 1, 203, 2, 204, 3, 205, 4}, uint8(32), uint8(32), uint8(3), 0.9, uint8(2), uint8(100), 0.5, false)
	f.Add([]byte{}, uint8(0), uint8(5), uint8(0), math.NaN(), uint8(3), uint8(0), math.Inf(1), true)
	f.Add([]byte{11, 0, 11, 0, 11, 0}, uint8(64), uint8(64), uint8(1), -1.0, uint8(4), uint8(255), -0.5, false)
	// Hostile pairs: every timing special (NaN first), far fewer head rounds than base,
	// rounds cut to nothing.
	f.Add([]byte{210, 0}, uint8(20), uint8(20), uint8(4), 1.0, uint8(0), uint8(1), 0.02, false)
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, uint8(64), uint8(3), uint8(8), 1.0, uint8(0), uint8(1), 0.02, false)
	f.Add([]byte{11, 0}, uint8(16), uint8(16), uint8(5), 1.0, uint8(1), uint8(1), 0.02, true)
	f.Add([]byte{210, 3, 211, 4, 212, 1}, uint8(16), uint8(16), uint8(2), 1.0, uint8(0), uint8(1), 0.02, false)
	f.Fuzz(func(t *testing.T, data []byte, nb, nh, k uint8, factor float64, confSel, famSel uint8, margin float64, withRef bool) {
		off := 0
		kk := int(k)%24 + 1
		base := fuzzRounds(data, &off, int(nb)%65, kk, 1)
		head := fuzzRounds(data, &off, int(nh)%65, kk, factor)
		var ref [][]float64
		if withRef {
			ref = fuzzRounds(data, &off, int(nh)%65, kk, 15)
		}
		lim := DefaultLimits()
		lim.Confidence = [...]float64{0.99, 0.95, 0.5, 0.999999, 0.9}[int(confSel)%5]
		if margin >= 0 && margin < 1 {
			lim.MaxSlowdown = margin
		}
		lim.MinRounds = int(confSel)%8*2 + 2
		lim.MaxRounds = lim.MinRounds * (int(famSel)%5 + 1)
		lim.MinSpeedupVsReference = float64(famSel % 20)
		family := int(famSel)%200 + 1

		j, err := JudgePair(Pair{Base: base, Head: head, Reference: ref}, lim, family)
		if err != nil {
			t.Fatalf("valid limits rejected: %v", err)
		}
		_, badB := validCount(base)
		_, badH := validCount(head)
		if j.InvalidSamples != badB+badH {
			t.Errorf("invalid samples %d, want %d", j.InvalidSamples, badB+badH)
		}
		if j.Rounds+j.DroppedRounds != max(len(base), len(head)) {
			t.Errorf("rounds %d + dropped %d != %d recorded", j.Rounds, j.DroppedRounds, max(len(base), len(head)))
		}
		used, _ := validCount(base)
		usedH, _ := validCount(head)
		if j.Samples > used+usedH || (j.Rounds > 0 && j.Samples < 2*j.Rounds) {
			t.Errorf("samples %d out of range (%d valid, %d rounds)", j.Samples, used+usedH, j.Rounds)
		}
		if j.Rounds > 0 && (!(j.Center > 0) || math.IsInf(j.Center, 0)) {
			t.Errorf("ratio %v is not a finite positive number", j.Center)
		}
		if j.Lo > j.Hi || (j.Rounds >= 2 && !math.IsInf(j.Lo, -1) && j.Lo > j.Center) || (j.Rounds >= 2 && !math.IsInf(j.Hi, 1) && j.Hi < j.Center) {
			t.Errorf("interval [%v, %v] around %v", j.Lo, j.Hi, j.Center)
		}
		th := 1 + lim.MaxSlowdown
		switch j.Verdict {
		case Slower:
			if !(j.Lo > th) || j.Rounds < lim.MinRounds {
				t.Errorf("slower with lower bound %v <= %v or %d rounds", j.Lo, th, j.Rounds)
			}
		case Same, Faster:
			if !(j.Hi < th) || j.Rounds < lim.MinRounds {
				t.Errorf("%s with upper bound %v >= %v or %d rounds", j.Verdict, j.Hi, th, j.Rounds)
			}
		case Inconclusive:
			if j.Why == "" {
				t.Error("inconclusive without a reason")
			}
		default:
			t.Errorf("verdict %q", j.Verdict)
		}
		if j.Rounds > 0 && j.Rounds >= lim.MinRounds && (j.Verdict == Slower) != (j.PValue <= j.PThreshold) {
			t.Errorf("verdict %s disagrees with p %v vs threshold %v", j.Verdict, j.PValue, j.PThreshold)
		}
		if j.Rounds > 0 && !(j.PValue > 0 && j.PValue <= 1) {
			t.Errorf("p-value %v", j.PValue)
		}
		if more := NeedMore(j, lim); more < 0 || j.RecordedRounds+more > max(lim.MaxRounds, j.RecordedRounds) {
			t.Errorf("NeedMore %d with %d recorded, max %d", more, j.RecordedRounds, lim.MaxRounds)
		}
		if withRef && j.Reference == nil {
			t.Error("no reference judgement")
		}

		// The same rounds through Compare: no panic, and the result encodes.
		mk := func(rounds [][]float64) [][]benchfile.Float {
			out := make([][]benchfile.Float, len(rounds))
			for i, r := range rounds {
				out[i] = make([]benchfile.Float, len(r))
				for x, v := range r {
					out[i][x] = benchfile.Float(v)
				}
			}
			return out
		}
		bf := &benchfile.File{Schema: benchfile.Schema, Device: h200, Results: []benchfile.Result{{Kernel: "k", Shape: "s", RoundsUs: mk(base)}}}
		hr := benchfile.Result{Kernel: "k", Shape: "s", RoundsUs: mk(head)}
		if withRef {
			hr.Reference = &benchfile.Reference{Name: "ref", RoundsUs: mk(ref)}
		}
		if len(head) == 0 {
			p50 := benchfile.Float(factor)
			hr.P50Us = &p50
		}
		hf := &benchfile.File{Schema: benchfile.Schema, Device: h200, Results: []benchfile.Result{hr}}
		cfg := Config{MaxSlowdown: &lim.MaxSlowdown}
		if lim.MinSpeedupVsReference > 0 {
			cfg.Kernels = []Rule{{Match: "*", MinSpeedupVsReference: &lim.MinSpeedupVsReference}}
		}
		g, err := Compare(bf, hf, cfg)
		if err != nil {
			t.Fatalf("Compare: %v", err)
		}
		if err := result.Write(discard{}, result.New("fuzz", g)); err != nil {
			t.Fatalf("the result does not encode: %v", err)
		}
		// Never a pass on head timings that cannot be judged, or with nothing on base's side.
		if len(head) > 0 {
			baseValid, headValid, paired := roundCounts(base, head)
			switch {
			case headValid == 0 || baseValid > 0 && paired < (baseValid+1)/2:
				if g.Verdict != result.Fail {
					t.Errorf("verdict %s with %d valid head rounds, %d base, %d paired", g.Verdict, headValid, baseValid, paired)
				}
			case baseValid == 0 && g.Verdict == result.Pass:
				t.Errorf("a pass with no valid base timing: %+v", g.Findings)
			}
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
