//go:build unix

package sanitizer

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunToolsReal runs RunTools with the real compute-sanitizer over bugs.cu (the program
// of the shared captures) on a GPU machine. It is skipped unless KG_REAL_SANITIZER=1; set
// KG_REAL_OUT=DIR to keep each case's artifacts and rendered runs there.
//
//	KG_REAL_SANITIZER=1 KG_REAL_OUT=/tmp/real go test -run TestRunToolsReal -v ./gates/sanitizer/
func TestRunToolsReal(t *testing.T) {
	if os.Getenv("KG_REAL_SANITIZER") == "" {
		t.Skip("set KG_REAL_SANITIZER=1 on a machine with a GPU, nvcc and compute-sanitizer")
	}
	dir := t.TempDir()
	bugs := filepath.Join(dir, "bugs")
	src, err := filepath.Abs(capturePath("sanitizer-h200-cuda13.0/bugs.cu"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("nvcc", "-lineinfo", "-o", bugs, src).CombinedOutput(); err != nil {
		t.Fatalf("nvcc: %v\n%s", err, out)
	}
	keep := os.Getenv("KG_REAL_OUT")
	tests := []struct {
		arg     string
		timeout time.Duration
		check   func(t *testing.T, runs []Run)
	}{
		{"oob", 0, func(t *testing.T, runs []Run) {
			m := runs[0]
			// 256 writes past the end (padding catches them all), the launch failure
			// cudaDeviceSynchronize reports, and the 4 buffers bugs.cu never frees.
			want := map[string]int{KindOutOfBounds: 256, KindAPIError: 1, KindLeak: 4}
			for _, r := range m.Records {
				want[r.Kind] -= r.Count
				if r.Kind == KindOutOfBounds && (r.Kernel != "_Z9oob_writePfi" || r.Line != 10 || !strings.HasSuffix(r.File, "bugs.cu")) {
					t.Errorf("oob record %+v", r)
				}
			}
			for k, n := range want {
				if n != 0 {
					t.Errorf("%s: %d records missing", k, n)
				}
			}
			if m.Errors != 261 || m.NotPrinted != 0 || m.Source != SourceXML || *m.ExitCode != ErrorExitCode {
				t.Errorf("memcheck: %+v", m)
			}
		}},
		{"race", 0, func(t *testing.T, runs []Run) {
			r := runs[1]
			if len(r.Records) != 1 || r.Records[0].Hazards != 358 || r.Records[0].Kernel != "_Z9smem_racePf" || r.Records[0].Line != 14 {
				t.Errorf("racecheck: %+v", r)
			}
		}},
		{"uninit", 0, func(t *testing.T, runs []Run) {
			r := runs[2]
			if len(r.Records) != 1 || r.Records[0].Count != 64 || r.Records[0].Kind != KindUninitializedRead || r.Records[0].Line != 20 {
				t.Errorf("initcheck: %+v", r)
			}
		}},
		{"sync", 0, func(t *testing.T, runs []Run) {
			r := runs[3]
			if len(r.Records) != 1 || r.Records[0].Count != 16 || r.Records[0].Kind != KindBarrierDivergence || r.Records[0].Line != 24 {
				t.Errorf("synccheck: %+v", r)
			}
		}},
		{"clean", 0, func(t *testing.T, runs []Run) {
			for _, r := range runs[1:] {
				if len(r.Records) != 0 || r.Errors != 0 || *r.ExitCode != 0 {
					t.Errorf("%s: %+v", r.Tool, r)
				}
			}
		}},
		{"hang", 15 * time.Second, func(t *testing.T, runs []Run) {
			if !runs[0].TimedOut || runs[0].Problems[0] != "the kernel hung: killed after 15s with its process group" {
				t.Errorf("hang: %+v", runs[0])
			}
			time.Sleep(2 * time.Second)
			out, _ := exec.Command("sh", "-c", "ps -eo pid,args | grep -v grep | grep -E 'bugs hang|TreeLauncher' || true").CombinedOutput()
			if strings.TrimSpace(string(out)) != "" {
				t.Errorf("left running after the kill:\n%s", out)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			art := t.TempDir()
			if keep != "" {
				art = filepath.Join(keep, tt.arg)
			}
			start := time.Now()
			runs, err := RunTools(context.Background(), []string{bugs, tt.arg}, RunOptions{ArtifactDir: art, Timeout: tt.timeout})
			t.Logf("%s: %v", tt.arg, time.Since(start))
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, r := range runs {
				all = append(all, render(r)...)
				for _, p := range r.Problems {
					if tt.arg != "hang" {
						t.Errorf("%s: problem %s", r.Tool, p)
					}
				}
			}
			t.Log("\n" + strings.Join(all, "\n"))
			if keep != "" {
				_ = os.WriteFile(filepath.Join(art, "runs.txt"), []byte(strings.Join(all, "\n")+"\n"), 0o644)
			}
			if len(runs) != 4 {
				t.Fatalf("%d runs", len(runs))
			}
			tt.check(t, runs)
		})
	}
}
