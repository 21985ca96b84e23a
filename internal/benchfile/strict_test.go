package benchfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/benchfiletest"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

const head = `{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"},` + "\n"

// TestReadDuplicateKeys: a key twice in one object is refused wherever it is, with the
// line, the column, the path and the byte offset of the second one. encoding/json would
// keep the last: "max_err": 0.9 then 0.0003 read as a pass.
func TestReadDuplicateKeys(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"the report", head + ` "results": [{"kernel": "k", "shape": "s", "max_err": 0.9, "max_err": 0.0003, "nan_count": 0}]}`,
			`line 2, column 60: duplicate key "max_err" at results[0].max_err, byte offset 191; first at byte offset 175`},
		{"a later result", head + ` "results": [{"kernel": "a", "shape": "s"},` + "\n" + `  {"kernel": "b", "shape": "s", "checks": 3, "checks": 1}]}`,
			`line 3, column 46: duplicate key "checks" at results[1].checks, byte offset 221`},
		{"top level", head + ` "results": [{"kernel": "k", "shape": "s"}], "schema": "kernel-gate/bench/v1"}`,
			`line 2, column 46: duplicate key "schema" at schema, byte offset 177; first at byte offset 1`},
		{"results twice", head + ` "results": [{"kernel": "k", "shape": "s", "max_err": 0.9}],` + "\n" + ` "results": [{"kernel": "k", "shape": "s", "max_err": 0.0}]}`,
			`line 3, column 2: duplicate key "results" at results`},
		{"device", `{"schema": "kernel-gate/bench/v1", "device": {"name": "A", "name": "B"}, "results": [{"kernel": "k", "shape": "s"}]}`,
			`line 1, column 60: duplicate key "name" at device.name`},
		{"request", `{"schema": "kernel-gate/bench/v1", "request": {"mode": "check", "rounds": 3, "rounds": 1}, "results": [{"kernel": "k", "shape": "s"}]}`,
			`duplicate key "rounds" at request.rounds`},
		{"reference", head + ` "results": [{"kernel": "k", "shape": "s", "reference": {"name": "a", "p50_us": 1, "p50_us": 9}}]}`,
			`duplicate key "p50_us" at results[0].reference.p50_us`},
		{"another case", head + ` "results": [{"kernel": "k", "shape": "s", "max_err": 0.9, "MAX_ERR": 0.0003}]}`,
			`line 2, column 60: duplicate key "MAX_ERR" at results[0].MAX_ERR, byte offset 191 (the same field as "max_err"`},
		{"an escape", head + ` "results": [{"kernel": "k", "shape": "s", "max_err": 0.9, "max\u005ferr": 0.0003}]}`,
			`duplicate key "max_err" at results[0].max_err`},
		{"after NaN tokens", head + ` "results": [{"kernel": "k", "shape": "s", "rounds_us": [[NaN, Infinity, -Infinity]], "max_err": NaN, "max_err": 0.1}]}`,
			`line 2, column 103: duplicate key "max_err" at results[0].max_err, byte offset 234`},
		{"inside extra", head + ` "results": [{"kernel": "k", "shape": "s", "extra": {"seed": 1, "seed": 2}}]}`,
			`duplicate key "seed" at results[0].extra.seed`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			if !errors.Is(err, ErrNotBenchFile) || !strictjson.IsDuplicate(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a duplicate key: %q", err, tc.want)
			}
			var d *strictjson.DuplicateKeyError
			errors.As(err, &d)
			if tc.in[d.Offset] != '"' || tc.in[d.FirstOffset] != '"' || d.FirstOffset >= d.Offset {
				t.Errorf("offsets %d and %d do not point at the keys: %q, %q", d.Offset, d.FirstOffset, tc.in[d.Offset:], tc.in[d.FirstOffset:])
			}
		})
	}
	// Keys that differ in case inside extra are two keys of a map.
	if _, err := Read(strings.NewReader(head + ` "results": [{"kernel": "k", "shape": "s", "extra": {"seed": 1, "Seed": 2}}]}`)); err != nil {
		t.Errorf("extra: %v", err)
	}
	// Every real harness file has none.
	files, _ := filepath.Glob("../../testdata/*/*.json")
	more, _ := filepath.Glob("../../testdata/*/*/*.json")
	n := 0
	for _, f := range append(files, more...) {
		raw, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(raw, []byte(Schema)) || bytes.Contains(raw, []byte(`"kernel-gate/result/v1"`)) {
			continue
		}
		if _, err := Read(bytes.NewReader(raw)); strictjson.IsDuplicate(err) {
			t.Errorf("%s: %v", f, err)
		}
		n++
	}
	if n < 10 {
		t.Errorf("only %d real harness files read", n)
	}
}

// TestReadPositions: errors name the line and column of the cause, in the file as written
// (NaN tokens included).
func TestReadPositions(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"unknown field", head + ` "results": [{"kernel": "k", "shape": "s",` + "\n" + `  "max_error": 1}]}`, `line 3, column 3: json: unknown field "max_error"`},
		{"wrong type", head + ` "results": [{"kernel": "k", "shape": "s", "rounds_us": [[NaN, 1], "x"]}]}`, `line 2, column 71: json: cannot unmarshal string`},
		{"syntax", head + ` "results": [{"kernel": "k", "shape": "s", "max_err": 0.1 "x": 1}]}`, `line 2, column 59`},
		{"unknown top-level key", head + ` "resutls": []}`, `line 2, column 2: json: unknown field "resutls"`},
		{"missing comma", head + ` "results": [{"kernel": "k", "shape": "s"} {"kernel": "j", "shape": "s"}]}`, `line 2, column 44: want , or ] after results[0]`},
		{"duplicate result", head + ` "results": [{"kernel": "k", "shape": "s"},` + "\n" + `{"kernel": "k", "shape": "s"}]}`, `results[1] (line 3): k × s appears twice (first at line 2)`},
		{"missing kernel", head + ` "results": [{"shape": "s"}]}`, `results[0] (line 2): kernel and shape are required`},
		{"cut in a result", head + ` "results": [{"kernel": "k", "shape`, `line 2, column 36: unexpected EOF`},
		{"cut after a result", head + ` "results": [{"kernel": "k", "shape": "s"}`, `unexpected EOF`},
		{"a BOM", "\ufeff" + head, `line 1, column 1: want a JSON object`},
		{"results not a list", head + ` "results": {"kernel": "k"}}`, `cannot unmarshal object`},
		{"results null", head + ` "results": null}`, `no results`},
		{"empty object", `{}`, `schema is ""`},
		{"spaces only", " \n\t ", `empty`},
		{"a bare value", `12`, `want a JSON object`},
		{"trailing comma", head + ` "results": [{"kernel": "k", "shape": "s"}],}`, `want a key (a string), found "}"`},
		{"key not a string", `{schema: 1}`, `want a key (a string), found "s"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			if !errors.Is(err, ErrNotBenchFile) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReadLimits: the file and each value are bounded.
func TestReadLimits(t *testing.T) {
	defer func(s int64, v int) { maxSize, maxValue = s, v }(maxSize, maxValue)
	maxSize, maxValue = 1<<20, 64<<10
	big := &benchfiletest.CheckFile{N: 1 << 30}
	if _, err := Read(big); !errors.Is(err, ErrNotBenchFile) || !strings.Contains(err.Error(), "larger than 1 MiB") || big.Size > 2<<20 {
		t.Errorf("error %v after %d bytes", err, big.Size)
	}
	in := head + ` "results": [{"kernel": "k", "shape": "s", "samples_us": [` + strings.Repeat("1.5, ", 20000) + `1]}]}`
	if _, err := Read(strings.NewReader(in)); !errors.Is(err, ErrNotBenchFile) || !strings.Contains(err.Error(), "line 2, column 14: a value larger than 64 KiB") {
		t.Errorf("error %v", err)
	}
	in = strings.Repeat("[", 20000)
	if _, err := Read(strings.NewReader(`{"results": ` + in)); !errors.Is(err, ErrNotBenchFile) || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("error %v", err)
	}
}

// BenchmarkRead reads check-mode files of 10^5 and 10^6 results (19 and 189 MiB) as they
// stream. peak-heap-MiB is the most the heap held while reading (garbage not yet collected
// included), kept-MiB what the results hold once read, per-result-B that per result:
// memory follows the results kept, not the file.
//
//	go test -run '^$' -bench Read -benchtime 1x ./internal/benchfile/
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("results=%d", n), func(b *testing.B) {
			var peak, kept uint64
			var size int64
			for b.Loop() {
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := benchfiletest.HeapPeak()
				src := &benchfiletest.CheckFile{N: n}
				f, err := Read(src)
				p := stop()
				if err != nil || len(f.Results) != n {
					b.Fatal(err)
				}
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(f)
				kept = after.HeapAlloc - before.HeapAlloc
				peak = max(peak, p-before.HeapAlloc)
				size = src.Size
			}
			b.ReportMetric(float64(size)/(1<<20), "file-MiB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(kept)/(1<<20), "kept-MiB")
			b.ReportMetric(float64(kept)/float64(n), "per-result-B")
		})
	}
}
