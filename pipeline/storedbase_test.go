package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// noBaseRecording is a copy of a recorded run as if it had had no base build (a push, or
// --base none): head's builds, dumps and GPU steps as recorded, nothing of base read.
func noBaseRecording(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "testdata", "replay", name))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, journalFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j journal
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	j.BaseRef, j.BaseRev, j.NoBase = "", "", "--base none"
	if raw, err = json.Marshal(j); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// storedEntry is a recorded run kept as a baseline entry, measured with cuda.
func storedEntry(t *testing.T, name, commit, cuda string, at time.Time) baseline.Entry {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "testdata", "replay", name, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	res.Device = &result.Device{Name: "NVIDIA H200", Arch: "sm_90", Driver: "580.159.04"}
	e, err := baseline.EntryFromResult(res, commit, at)
	if err != nil {
		t.Fatal(err)
	}
	e.Fingerprint.CUDA = cuda
	return e
}

// failingReader is a store that cannot be read; called tells whether anyone tried.
type failingReader struct{ called *bool }

func (r failingReader) Latest(context.Context, baseline.Key) (baseline.Entry, bool, error) {
	*r.called = true
	return baseline.Entry{}, false, errors.New("GitHub answered 502")
}

func (r failingReader) History(context.Context, baseline.Key, int) ([]baseline.Entry, error) {
	*r.called = true
	return nil, errors.New("baseline: reading the branch kernel-gate-baseline: GitHub answered 502")
}

func (r failingReader) Keys(context.Context) ([]baseline.Key, error) {
	*r.called = true
	return nil, errors.New("GitHub answered 502")
}

// Without a base build, the ptxas gate is judged against the newest stored entry of the
// GPU that the config's constraints allow, and says which; an incomparable, missing or
// unreadable one is reported, never used silently.
func TestStoredPtxasBaseline(t *testing.T) {
	ctx := context.Background()
	rec := noBaseRecording(t, "clean")
	day := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	// The spill case's registers (32 on sm_90a) are 121 below the clean build's: against
	// them the clean head grows past max_register_increase (32 in kernel-gate.yml) on sm_90a,
	// in both flash_fwd instances.
	spill := storedEntry(t, "spill", "5b111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "13.0.88", day)
	newerOtherCUDA := storedEntry(t, "clean", "c1ea2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "12.8.93", day.Add(time.Hour))
	raw, err := os.ReadFile(filepath.Join(root, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	withConstraint := func(c string) config.Config {
		cfg, err := config.Parse(append(raw, []byte("\nbaseline:\n  compatible_cuda: \""+c+"\"\n")...), "kernel-gate.yml")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	called := false
	for _, c := range []struct {
		name       string
		cfg        config.Config
		entries    []baseline.Entry
		reader     baseline.Reader
		severity   result.Severity
		message    []string
		verdict    result.Verdict
		increases  int
		withDeltas bool
	}{
		{name: "comparable", cfg: loadConfig(t), entries: []baseline.Entry{spill}, severity: result.Notice,
			message: []string{"no base build (--base none): deltas and max_register_increase are against the stored baseline NVIDIA H200 (sm_90) at 5b111aaaaaaa"},
			verdict: result.Fail, increases: 2, withDeltas: true},
		{name: "newer one passed over", cfg: withConstraint("~13.0"), entries: []baseline.Entry{spill, newerOtherCUDA}, severity: result.Notice,
			message: []string{"against the stored baseline NVIDIA H200 (sm_90) at 5b111aaaaaaa", "CUDA toolkit 13.0.88 satisfies baseline.compatible_cuda \"~13.0\"",
				"1 newer entry passed over as not comparable, the newest: baseline NVIDIA H200 (sm_90) at c1ea2bbbbbbb, 2026-05-01T13:00:00Z was measured with CUDA toolkit 12.8.93, outside baseline.compatible_cuda \"~13.0\""},
			verdict: result.Fail, increases: 2, withDeltas: true},
		{name: "incomparable", cfg: withConstraint("~12.8"), entries: []baseline.Entry{spill}, severity: result.Warning,
			message: []string{"none of the 1 stored entries of NVIDIA H200 (sm_90) is comparable, so none is used",
				"measured with CUDA toolkit 13.0.88, outside baseline.compatible_cuda \"~12.8\""},
			verdict: result.Pass},
		{name: "empty store", cfg: loadConfig(t), severity: result.Notice,
			message: []string{"the baseline store holds no entry of NVIDIA H200 (sm_90) yet"}, verdict: result.Pass},
		{name: "unreadable store", cfg: loadConfig(t), reader: failingReader{&called}, severity: result.Error,
			message: []string{"the baseline store could not be read: baseline: reading the branch kernel-gate-baseline: GitHub answered 502"},
			verdict: result.Fail},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := c.reader
			if store == nil {
				dir := baseline.NewDir(t.TempDir(), 0)
				for _, e := range c.entries {
					if err := dir.Update(ctx, e); err != nil {
						t.Fatal(err)
					}
				}
				store = dir
			}
			res, err := Run(ctx, c.cfg, Options{Replay: rec, Gates: []string{"ptxas"}, BaselineStore: store})
			if err != nil {
				t.Fatal(err)
			}
			g := gate(t, res, "ptxas")
			var stored []result.Finding
			increases, deltas := 0, 0
			for _, f := range g.Findings {
				switch {
				case f.Metric == MetricStoredBaseline:
					stored = append(stored, f)
				case f.Metric == ptxas.MetricRegisterIncrease && f.Severity == result.Error:
					increases++
				}
				if f.Baseline != nil {
					deltas++
				}
			}
			if len(stored) != 1 || stored[0].Severity != c.severity {
				t.Fatalf("stored-baseline findings %+v, want one %s", stored, c.severity)
			}
			for _, w := range c.message {
				if !strings.Contains(stored[0].Message, w) {
					t.Errorf("the finding lacks %q:\n%s", w, stored[0].Message)
				}
			}
			if g.Verdict != c.verdict || increases != c.increases || (deltas > 0) != c.withDeltas {
				t.Errorf("ptxas %s with %d register increases and %d deltas; want %s, %d, deltas %v", g.Verdict, increases, deltas, c.verdict, c.increases, c.withDeltas)
			}
		})
	}
	if !called {
		t.Error("the unreadable store was never read")
	}

	// With a base build the store is not read at all.
	called = false
	res, err := Run(ctx, loadConfig(t), Options{Replay: filepath.Join(root, "testdata/replay/clean"), Gates: []string{"ptxas"}, BaselineStore: failingReader{&called}})
	if err != nil {
		t.Fatal(err)
	}
	if called || gate(t, res, "ptxas").Verdict != result.Pass {
		t.Errorf("with a base: store read %v, ptxas %s", called, gate(t, res, "ptxas").Verdict)
	}
}
