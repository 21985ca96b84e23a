package ncu

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// lines returns lines [from, to) of a capture, for fuzz seeds.
func lines(t testing.TB, name string, from, to int) []byte {
	all := strings.SplitAfter(capture(t, name), "\n")
	from, to = min(from, len(all)), min(to, len(all))
	return []byte(strings.Join(all[from:to], ""))
}

// FuzzParse feeds Parse anything and judges what it read with a config that names the
// captures' kernels: neither may panic, and what they return must hold together.
func FuzzParse(f *testing.F) {
	// Short slices of the real captures (messages, header, a row, the rule row, program
	// output) and short rows in their shape: minimizing a new input costs an execution per
	// byte, so seeds stay small.
	f.Add(lines(f, "ncu-metrics.csv", 3, 5))
	// The other layouts: the summary's header and two rows; a raw page is one long row
	// per launch, so a short synthetic one in its shape (header, units line, a row).
	f.Add(lines(f, "ncu-summary-per-kernel.csv", 4, 7))
	f.Add([]byte(`"ID","Kernel Name","Block Size","gpu__time_duration.sum","launch__registers_per_thread"` + "\n" +
		`"","","","ns","register/thread"` + "\n" + `"0","void k()","(128, 1, 1)","36,512","153"` + "\n"))
	f.Add(lines(f, "ncu-base-units.csv", 0, 3))
	f.Add(lines(f, "ncu-sol.csv", 20, 21))
	f.Add(lines(f, "ncu-badmetric.csv", 2, 7))
	f.Add([]byte(hdr + row("0", "1", "void flash_fwd<64, 64, 0>(int)", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "1.80")))
	f.Add([]byte(hdr + row("0", "1", `void a<"x,y">(int)`, "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "n/a")))
	f.Add([]byte(strings.ReplaceAll(hdr+row("0", "1", "_Z1kv", "gpu__time_duration.sum", "ns", "1,234"), "\n", "\r\n")))
	f.Add([]byte(hdr + `"1","1","h","127.0.0.1","void a()","1","7","(128`))
	f.Add([]byte("==WARNING== No kernels were profiled.\n"))
	f.Add([]byte(""))
	// Hostile: output cut on a row boundary inside a launch (it lacks the config's
	// metrics), a launch of a kernel no rule names with one metric of the config.
	f.Add(lines(f, "ncu-metrics.csv", 3, 10))
	f.Add(lines(f, "ncu-base-units.csv", 10, 14))
	f.Add([]byte(hdr + row("0", "1", "void flash_fwd<64, 64, 0>(int)", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "1.80") +
		row("1", "1", "void other(int)", "gpu__time_duration.sum", "ns", "10")))
	cfg := config(f, issueConfig)
	requested := Metrics(cfg)
	f.Fuzz(func(t *testing.T, in []byte) {
		rep, err := Parse(bytes.NewReader(in), "fuzz")
		if err != nil {
			if rep != nil || !errors.Is(err, ErrNotNCU) || err.Error() == "" {
				t.Fatalf("report %v with error %v", rep, err)
			}
			return
		}
		if rep == nil {
			t.Fatal("no report and no error")
		}
		for _, l := range rep.Launches {
			if l.ID < 0 || l.Line <= 0 {
				t.Fatalf("launch %+v", l)
			}
			for _, m := range l.Metrics {
				if m.Name == "" || (m.Kind == Number && (math.IsNaN(m.Value) || math.IsInf(m.Value, 0))) {
					t.Fatalf("metric %+v", m)
				}
				if m.Kind != Number && m.Value != 0 {
					t.Fatalf("a %s value with a number: %+v", m.Kind, m)
				}
			}
		}
		if len(rep.Problems) > maxMessages || len(rep.Errors) > maxMessages || len(rep.Warnings) > maxMessages {
			t.Fatalf("unbounded messages: %d problems, %d errors, %d warnings", len(rep.Problems), len(rep.Errors), len(rep.Warnings))
		}
		g, err := Evaluate(rep, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(g.Data) || g.Findings == nil || g.Table == nil {
			t.Fatalf("gate %+v", g)
		}
		if g.Verdict == result.Pass && (len(rep.Problems) > 0 || len(rep.Errors) > 0 || len(rep.Launches) == 0) {
			t.Fatalf("a pass over problems %q, errors %q, %d launches", rep.Problems, rep.Errors, len(rep.Launches))
		}
		if g.Verdict == result.Pass {
			for _, l := range rep.Launches {
				for _, m := range requested {
					if _, ok := l.Metric(m); !ok {
						t.Fatalf("a pass with launch %d of %s lacking %s", l.ID, l.Kernel, m)
					}
				}
			}
		}
	})
}
