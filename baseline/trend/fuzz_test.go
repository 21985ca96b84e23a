package trend

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// badCoordRE is a coordinate that is not a number: a scale that let NaN or Inf through.
var badCoordRE = regexp.MustCompile(`\s(c[xy]|[xy][12]?|d)="[^"]*(NaN|Inf)`)

// FuzzWriteHTML draws two entries from fuzzed names and numbers: the page must keep every
// tag whole and its coordinates numbers, whatever the names hold and however large, small
// or non-finite the values are.
func FuzzWriteHTML(f *testing.F) {
	f.Add("kg::flash_fwd<64>", "1a2b3c4d", "CUDA 13.1", 38.5, 38.4, 38.6, int64(153))
	f.Add(`"><script>x</script>`, "\n::error::", "</td>", math.NaN(), math.Inf(1), -0.0, int64(-1))
	f.Add("::", "0", "::", 1.284e308, 0.0, 0.0, int64(9223372036854775807)) // CI's fuzzing found a key line beginning "::"
	f.Add("a", "b", "", math.MaxFloat64, -math.MaxFloat64, 5e-324, int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, name, commit, reason string, a, b, c float64, regs int64) {
		es := fixture()[:2]
		for i := range es {
			e := &es[i]
			e.Commit = commit + strings.Repeat("x", i)
			e.Trigger = &result.Trigger{Event: "workflow_dispatch", Reason: reason}
			e.Kernels = append(e.Kernels, rec(name, "sm_90a", regs, regs, regs))
			e.Timings = append(e.Timings, baseline.Timing{Target: name, Kernel: name, Shape: reason, MedianUs: f64(a), LowUs: f64(b), HighUs: f64(c)})
			e.Correctness = append(e.Correctness, baseline.Correctness{Kernel: name, Shape: reason, MaxErr: bf(a * float64(i+1)), Limit: f64(b)})
		}
		es[1].Time = es[0].Time.Add(time.Hour)
		h := FromEntries(baseline.Key{GPU: name, Arch: "sm_90"}, es)
		var out bytes.Buffer
		if err := WriteHTML(&out, []History{h}, PageOptions{Source: reason}); err != nil {
			t.Fatal(err)
		}
		page := out.String()
		checkMarkup(t, page)
		if m := badCoordRE.FindString(page); m != "" {
			t.Errorf("a coordinate that is not a number: %q", m)
		}
		if o, c := strings.Count(page, "<svg "), strings.Count(page, "</svg>"); o != c || o == 0 {
			t.Errorf("%d charts opened, %d closed", o, c)
		}
		var text bytes.Buffer
		if err := WriteText(&text, []History{h}, 5); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(text.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "::") {
				t.Errorf("a text line starts a workflow command: %q", line)
			}
		}
	})
}
