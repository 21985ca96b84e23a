package baseline

import (
	"io"
	"testing"
	"time"
)

// FuzzKeyFile reads a key's file as a store reads it from a directory or the branch
// (content anyone with write access to the branch controls), then diffs and writes what
// it holds: no input may panic or hang any of it, and what is read back is a file that
// encodes again.
func FuzzKeyFile(f *testing.F) {
	k, _ := NewKey("NVIDIA H200", "sm_90")
	e0 := entry("NVIDIA H200", "sm_90", "a", 0)
	e1 := entry("NVIDIA H200", "sm_90", "b", 1)
	us := 1.5
	e1.Timings = []Timing{{Kernel: "k", Shape: "s", MedianUs: &us, LowUs: &us, HighUs: &us}}
	e1.Sanitizer = []SanitizerRun{{Tool: "memcheck", Status: SanitizerErrors, Errors: 2}}
	raw, err := (&keyFile{Schema: Schema, Key: k, Entries: []Entry{e0, e1}}).encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"schema":"kernel-gate/baseline/v1","key":{"gpu":"x","arch":"sm_90"},"entries":[{"commit":"a","time":"2026-01-01T00:00:00Z","kernels":[{"name":"_Z1kv","arch":"sm_90","ptxas":{"registers":3},"sass":{"instructions":1,"digest":"x"}}],"correctness":[{"kernel":"k","shape":"s","max_err":"NaN"}]}]}`))
	f.Add([]byte(`{"schema":"kernel-gate/baseline/v2"}`))
	f.Add([]byte(`{"key":{"gpu":"","arch":""},"schema":"kernel-gate/baseline/v1","entries":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = readKey(raw, "fuzz.json")
		kf, err := decodeKeyFile(raw, "fuzz.json", nil)
		if err != nil {
			return
		}
		if _, err := kf.encode(); err != nil {
			t.Fatalf("a file that was read does not encode: %v", err)
		}
		es := kf.newest(0)
		if len(es) == 0 {
			return
		}
		to, from := es[0], es[len(es)-1]
		d := DiffEntries(from, to)
		if err := d.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := d.WriteJSON(io.Discard); err != nil {
			t.Fatal(err)
		}
		_, _ = Comparable(to, Constraints{CUDA: "~13.0", Driver: ">=570"})
		_ = to.PtxasBaseline()
		kf.add(entry("NVIDIA H200", "sm_90", "c", int(time.Hour/time.Second)), 2)
	})
}
