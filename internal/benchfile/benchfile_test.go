package benchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReadRealHarnessOutput(t *testing.T) {
	// Written by kernels/harness.cu on an H200 (testdata/sanitizer-kernels-h200/capture.sh).
	for _, tt := range []struct {
		file    string
		mode    string
		results int
	}{
		{"harness_check_clean.json", ModeCheck, 12},
		{"harness_check_wrong.json", ModeCheck, 12},
		{"harness_bench_clean.json", ModeBench, 12},
		{"harness_sanitize_clean.json", ModeSanitize, 4},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sanitizer-kernels-h200", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Read(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if f.Request == nil || f.Request.Mode != tt.mode || len(f.Results) != tt.results || f.Device.Name != "NVIDIA H200" || f.Device.ComputeCap != "9.0" {
			t.Errorf("%s: request %+v, %d results, device %+v", tt.file, f.Request, len(f.Results), f.Device)
		}
		switch tt.mode {
		case ModeCheck:
			r := f.Results[0]
			if r.MaxErr == nil || r.NaNCount == nil || r.Checks == nil || *r.Checks != 3 || r.RepeatMaxDiff == nil {
				t.Errorf("%s: check fields missing in %+v", tt.file, r)
			}
		case ModeBench:
			r := f.Results[0]
			if len(r.RoundsUs) != 3 || len(r.RoundsUs[0]) != 20 || !r.RoundsUs[0][0].Finite() || r.RoundsUs[0][0] <= 0 {
				t.Errorf("%s: rounds %v", tt.file, r.RoundsUs)
			}
		case ModeSanitize:
			if r := f.Results[0]; r.Launches == nil || *r.Launches != 1 {
				t.Errorf("%s: launches %+v", tt.file, r)
			}
		}
	}
}

func TestReadNonFinite(t *testing.T) {
	// Python's json.dumps writes bare NaN and Infinity; C++ helpers write strings.
	in := `{"schema": "kernel-gate/bench/v1", "device": {"name": "x", "compute_cap": "9.0", "driver": "1", "cuda": "13.0"},
	 "results": [{"kernel": "k", "shape": "s", "max_err": NaN, "mean_err": "Infinity", "ref_max_abs": -Infinity,
	              "bad_fraction": "nan", "extra": {"note": "NaN in a string stays a string"}}]}`
	f, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Results[0]
	if !math.IsNaN(float64(*r.MaxErr)) || !math.IsInf(float64(*r.MeanErr), 1) || !math.IsInf(float64(*r.RefMaxAbs), -1) || !math.IsNaN(float64(*r.BadFraction)) {
		t.Errorf("got %+v", r)
	}
	if r.Extra["note"] != "NaN in a string stays a string" {
		t.Errorf("extra = %v", r.Extra)
	}
	var b bytes.Buffer
	if err := Write(&b, f); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(&b); err != nil {
		t.Errorf("what Write writes must read back: %v", err)
	}
}

func TestReadRejects(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "empty (did the harness crash"},
		{"not json", "harness: CUDA error", "line 1, column 1"},
		{"wrong schema", `{"schema": "other", "results": [{"kernel": "k", "shape": "s"}]}`, `schema is "other"`},
		{"no results", `{"schema": "kernel-gate/bench/v1", "results": []}`, "no results"},
		{"misspelt field", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "max_error": 1}]}`, `unknown field "max_error"`},
		{"duplicate", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s"}, {"kernel": "k", "shape": "s"}]}`, "appears twice"},
		{"negative count", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "checks": -1}]}`, "negative"},
		{"block of no size", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "block_size": 0}]}`, "block_size 0 is not a block"},
		{"block too big", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "block_size": 2048}]}`, "1 to 1024 threads"},
		{"negative dynamic smem", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "dynamic_smem": -1}]}`, "dynamic_smem is negative"},
		{"null timing", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "rounds_us": [[1.5, null]]}]}`, "null is not a number"},
		{"truncated", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k",`, "unexpected EOF"},
		{"two values", `{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s"}]} {}`, "more than one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in))
			if !errors.Is(err, ErrNotBenchFile) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read error = %v, want ErrNotBenchFile mentioning %q", err, tt.want)
			}
		})
	}
}

func TestQuoteNonFiniteLeavesStringsAlone(t *testing.T) {
	in := `{"a": "NaN \"Infinity\" NaN", "b": NaN, "c": [Infinity, -Infinity]}`
	want := `{"a": "NaN \"Infinity\" NaN", "b": "NaN", "c": ["Infinity", "-Infinity"]}`
	if got := string(quoteNonFinite([]byte(in))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func FuzzRead(f *testing.F) {
	for _, name := range []string{"harness_check_clean.json", "harness_sanitize_clean.json"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sanitizer-kernels-h200", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "max_err": NaN}]}`))
	// Duplicate keys, at the top, in a result, in case, in extra; a later bad result.
	f.Add([]byte(`{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "max_err": 0.9, "max_err": 0.0003}]}`))
	f.Add([]byte(`{"schema": "kernel-gate/bench/v1", "Schema": "x", "results": [{"kernel": "k", "shape": "s", "MAX_ERR": 1, "max_err": 2}]}`))
	f.Add([]byte(`{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "extra": {"a": 1, "A": 2, "b": {"c": 1, "c": 2}}}]}`))
	f.Add([]byte("{\"schema\": \"kernel-gate/bench/v1\", \"results\": [{\"kernel\": \"a\", \"shape\": \"s\"},\n {\"kernel\": \"b\", \"shape\": \"s\", \"rounds_us\": [[NaN, -Infinity], \"x\"]}, 5]}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		file, err := Read(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrNotBenchFile) {
				t.Fatalf("error without ErrNotBenchFile: %v", err)
			}
			if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "empty") &&
				!strings.Contains(err.Error(), "schema is") && !strings.Contains(err.Error(), "no results") {
				t.Fatalf("an error that does not say where: %v", err)
			}
			return
		}
		if file.Schema != Schema || len(file.Results) == 0 {
			t.Fatalf("accepted %+v", file)
		}
		var b bytes.Buffer
		if err := Write(&b, file); err != nil {
			t.Fatal(err)
		}
		// What Read accepts, encoding/json reads the same (it is stricter, never looser).
		var ref File
		if err := json.Unmarshal(quoteNonFinite(in), &ref); err != nil {
			t.Fatalf("Read accepted what encoding/json refuses: %v", err)
		}
		var rb bytes.Buffer
		if err := Write(&rb, &ref); err != nil || rb.String() != b.String() {
			t.Fatalf("Read and encoding/json disagree:\n%s\n%s", b.String(), rb.String())
		}
		if _, err := Read(&b); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestErrorMessage(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"  cudaErrorIllegalAddress\n", "cudaErrorIllegalAddress"},
		{" \n\t", "(an error made of white space)"},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		if got := ErrorMessage(tt.in); got != tt.want {
			t.Errorf("ErrorMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A long error is cut on a rune boundary: "é" is two bytes, so the cut falls inside one.
	long := "x" + strings.Repeat("é", MaxErrorMessage)
	got := ErrorMessage(long)
	if !strings.HasSuffix(got, "…") || len(got) > MaxErrorMessage+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) ||
		!utf8.ValidString(got) {
		t.Errorf("ErrorMessage(long) = %d bytes %.40q…%q", len(got), got, got[len(got)-8:])
	}
}

// The launch's block size and dynamic shared memory (optional, for an explanation's
// occupancy) read as written.
func TestReadLaunchFields(t *testing.T) {
	f, err := Read(strings.NewReader(`{"schema": "kernel-gate/bench/v1", "results": [{"kernel": "k", "shape": "s", "block_size": 128, "dynamic_smem": 0}, {"kernel": "j", "shape": "s"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Results[0]; r.BlockSize == nil || *r.BlockSize != 128 || r.DynamicSmem == nil || *r.DynamicSmem != 0 {
		t.Errorf("%+v", r)
	}
	if r := f.Results[1]; r.BlockSize != nil || r.DynamicSmem != nil {
		t.Errorf("unsaid fields read as %+v", r)
	}
}
