// Command evaluate measures the speedup gate's judge on real GPU timings of injected
// slowdowns (testdata/timing/slowdowns-h200.json.gz, made by testdata/timing/slowdowns.cu)
// and prints a markdown report: how often it calls an A/A pair slower, how often it finds
// 1%, 3%, 5% and 10% slowdowns, beside three rules in common use.
//
//	go run ./cmd/speedup-evaluate testdata/timing/slowdowns-h200.json.gz > docs/speedup-evaluation.md
package main

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: evaluate slowdowns-h200.json.gz > report.md")
		os.Exit(2)
	}
	c, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "evaluate:", err)
		os.Exit(2)
	}
	if err := report(os.Stdout, c, os.Args[1], defaultOptions()); err != nil {
		fmt.Fprintln(os.Stderr, "evaluate:", err)
		os.Exit(1)
	}
}

// capture is kernel-gate/slowdown-capture/v1, written by testdata/timing/slowdowns.cu.
type capture struct {
	Schema string `json:"schema"`
	Device string `json:"device"`
	// Driver and CUDA are the kernel driver's and the runtime's versions; captures made before
	// they were recorded lack them.
	Driver string `json:"driver"`
	CUDA   string `json:"cuda"`
	// Timing is "blocking" when every round's launches were queued behind a blocking kernel
	// (kernels/kg_bench.h's TimeLaunches), HoldChunk samples per hold; empty for the earlier
	// captures, whose event pairs were recorded while the GPU was idle. HoldTimeouts counts
	// the timings taken after a hold timed out (none in a usable capture).
	Timing       string   `json:"timing"`
	HoldChunk    int      `json:"hold_chunk"`
	HoldTimeouts int      `json:"hold_timeouts"`
	Rounds       int      `json:"rounds"`
	Samples      int      `json:"samples"`
	Families     []family `json:"families"`
}

type family struct {
	Name        string `json:"name"`
	Unit        string `json:"unit"`
	BaseWork    int64  `json:"base_work"`
	Calibration struct {
		TBaseUs   float64 `json:"t_base_us"`
		TDoubleUs float64 `json:"t_double_us"`
		// SpanWork and TSpanUs: the slope is the secant from the base work to SpanWork (the
		// 10% pair's work); absent in captures whose slope came from base and double work.
		SpanWork  int64   `json:"span_work"`
		TSpanUs   float64 `json:"t_span_us"`
		FixedUs   float64 `json:"fixed_us"`
		UsPerUnit float64 `json:"us_per_unit"`
	} `json:"calibration"`
	Pairs []pair `json:"pairs"`
}

// pair is one A/B pair: B is slowed by Nominal (0 for A/A). A[i] and B[i] are round i's
// launches, in ABBA order (even rounds A first).
type pair struct {
	Nominal float64     `json:"nominal_slowdown"`
	AWork   int64       `json:"a_work"`
	BWork   int64       `json:"b_work"`
	A       [][]float64 `json:"a"`
	B       [][]float64 `json:"b"`
}

// load reads a capture, gzip-compressed or not.
func load(path string) (*capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	var c capture
	if err := json.NewDecoder(r).Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Schema != "kernel-gate/slowdown-capture/v1" {
		return nil, fmt.Errorf("%s: schema %q, want kernel-gate/slowdown-capture/v1", path, c.Schema)
	}
	if len(c.Families) == 0 {
		return nil, errors.New(path + ": no kernel families")
	}
	if c.HoldTimeouts > 0 {
		return nil, fmt.Errorf("%s: %d timings were taken after a blocking kernel timed out: they may hold host gaps", path, c.HoldTimeouts)
	}
	for _, fam := range c.Families {
		for _, p := range fam.Pairs {
			if len(p.A) != len(p.B) {
				return nil, fmt.Errorf("%s: %s %g: %d rounds of A, %d of B", path, fam.Name, p.Nominal, len(p.A), len(p.B))
			}
		}
	}
	return &c, nil
}
