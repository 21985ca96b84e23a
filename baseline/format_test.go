package baseline

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// entry is a small entry of key gpu/arch for commit, measured i seconds after when.
func entry(gpu, arch, commit string, i int) Entry {
	return Entry{
		Commit: commit, Time: when.Add(time.Duration(i) * time.Second), Tool: "kernel-gate test", Verdict: result.Pass,
		Fingerprint: Fingerprint{GPU: gpu, Arch: arch, Driver: "580.159.04", CUDA: "13.0.88", CUDAFrom: "toolkit"},
		Kernels:     []Kernel{{Name: "_Z1kv", Demangled: "k<64>()", Arch: arch, SASS: &SASS{Instructions: i}}},
	}
}

func TestFileFormat(t *testing.T) {
	k, _ := NewKey("NVIDIA H200", "sm_90")
	f := &keyFile{Schema: Schema, Key: k}
	for i := range 3 {
		if changed, err := f.add(entry("NVIDIA H200", "sm_90", fmt.Sprint("c", i), i), 10); err != nil || !changed {
			t.Fatal(changed, err)
		}
	}
	raw, err := f.encode()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 5 || lines[0] != `{"schema":"kernel-gate/baseline/v1","key":{"gpu":"NVIDIA H200","arch":"sm_90"},"entries":[` ||
		lines[4] != "]}" || !strings.Contains(lines[1], `"time":"2026-03-04T05:06:07Z"`) || !strings.Contains(lines[1], `k<64>()`) {
		t.Fatalf("file:\n%s", raw)
	}
	back, err := decodeKeyFile(raw, "f", &k)
	if err != nil || len(back.Entries) != 3 || back.Entries[2].Commit != "c2" {
		t.Fatalf("decode: %+v %v", back, err)
	}
	if got, err := readKey(raw, "f"); err != nil || got != k {
		t.Fatalf("readKey: %v %v", got, err)
	}
	// The same entry again changes nothing; the same commit at another time is history.
	if changed, _ := f.add(entry("NVIDIA H200", "sm_90", "c1", 1), 10); changed {
		t.Error("adding an entry that is there changed the file")
	}
	if changed, _ := f.add(entry("NVIDIA H200", "sm_90", "c1", 9), 10); !changed || len(f.Entries) != 4 {
		t.Error("a rerun of a commit was not kept")
	}
	// Keep drops the oldest, whatever order they came in.
	f.add(entry("NVIDIA H200", "sm_90", "old", -5), 3)
	if len(f.Entries) != 3 || f.Entries[0].Commit != "c1" || f.newest(1)[0].Commit != "c1" || f.newest(1)[0].Time != when.Add(9*time.Second) {
		t.Errorf("after keep 3: %v", commits(f.Entries))
	}
	if _, err := decodeKeyFile(raw, "f", &Key{GPU: "NVIDIA L4", Arch: "sm_89"}); err == nil || !strings.Contains(err.Error(), "NVIDIA L4") {
		t.Errorf("a file of another key: %v", err)
	}
}

func commits(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Commit)
	}
	return out
}

// A file of another format is refused with a message that names it, never misread.
func TestOtherFormatsRefused(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"schema":"kernel-gate/baseline/v2","key":{"gpu":"NVIDIA H200","arch":"sm_90"},"entries":[]}`, "is kernel-gate/baseline/v2, which this kernel-gate cannot read (it reads kernel-gate/baseline/v1 only)"},
		{`{"schema":"kernel-gate/baseline/v0","entries":[]}`, "kernel-gate/baseline/v0"},
		{`{"key":{"gpu":"NVIDIA H200","arch":"sm_90"},"entries":[]}`, "has no schema"},
		{`{"schema":"kernel-gate/result/v1","gates":[]}`, `has schema "kernel-gate/result/v1"`},
	} {
		_, err := decodeKeyFile([]byte(c.raw), "branch:nvidia-h200.sm_90.json", nil)
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nvidia-h200.sm_90.json") {
			t.Errorf("%s: %v", c.raw, err)
		}
		if _, err := readKey([]byte(c.raw), "x"); !errors.Is(err, ErrSchema) {
			t.Errorf("readKey of %s: %v", c.raw, err)
		}
	}
	if _, err := decodeKeyFile([]byte("<html>"), "f", nil); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("not JSON: %v", err)
	}
}

func TestComparable(t *testing.T) {
	e := entry("NVIDIA H200", "sm_90", "c", 0)
	for _, c := range []struct {
		con  Constraints
		ok   bool
		want string
	}{
		{Constraints{}, true, "every entry of NVIDIA H200 (sm_90) is comparable"},
		{Constraints{CUDA: "~13.0"}, true, `CUDA toolkit 13.0.88 satisfies baseline.compatible_cuda "~13.0"`},
		{Constraints{CUDA: "~13.0", Driver: ">=570, <590"}, true, "driver 580.159.04 satisfies"},
		{Constraints{CUDA: "~12.8"}, false, "was measured with CUDA toolkit 13.0.88, outside baseline.compatible_cuda \"~12.8\""},
		{Constraints{Driver: ">=590"}, false, "driver 580.159.04, outside baseline.compatible_driver"},
		{Constraints{CUDA: "thirteen"}, false, `baseline.compatible_cuda "thirteen" is not a version constraint`},
	} {
		ok, why := Comparable(e, c.con)
		if ok != c.ok || !strings.Contains(why, c.want) {
			t.Errorf("%+v: %v %q, want %v and %q", c.con, ok, why, c.ok, c.want)
		}
		if (c.con.Check() != nil) != strings.Contains(c.want, "is not a version constraint") {
			t.Errorf("Check(%+v) = %v", c.con, c.con.Check())
		}
	}
	// What cannot be shown to satisfy a constraint is not comparable.
	old := e
	old.Fingerprint.CUDA = ""
	if ok, why := Comparable(old, Constraints{CUDA: "~13.0"}); ok || !strings.Contains(why, "records no CUDA toolkit version") {
		t.Errorf("no version: %v %q", ok, why)
	}
	old.Fingerprint.Driver = "r580"
	if ok, why := Comparable(old, Constraints{Driver: ">=570"}); ok || !strings.Contains(why, `"r580"`) {
		t.Errorf("a driver that is no version: %v %q", ok, why)
	}
}

func TestTimingStatistics(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	// n = 16 at 95%: P(B <= 3) = 0.0106 <= 0.025 < P(B <= 4) = 0.0384, so x(4)..x(13).
	if lo, hi, ok := medianInterval(xs, 0.95); !ok || lo != 4 || hi != 13 {
		t.Errorf("interval of 16: %v %v %v", lo, hi, ok)
	}
	if _, _, ok := medianInterval(xs[:5], 0.95); ok {
		t.Error("5 values give no 95% interval")
	}
	if lo, hi, ok := medianInterval(xs[:6], 0.95); !ok || lo != 1 || hi != 6 {
		t.Errorf("interval of 6: %v %v", lo, hi)
	}
	if q := quantile(xs, 0.5); q != 8.5 {
		t.Errorf("median %v", q)
	}
	if q := quantile([]float64{1, 2, 3, 4, 5}, 0.25); q != 2 {
		t.Errorf("quartile %v", q)
	}
	if !bytes.Equal([]byte(fmt.Sprint(quantile([]float64{7}, 0.9))), []byte("7")) {
		t.Error("one value")
	}
}
