package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// externalCases are the live runs of testdata/external/run.sh: public repositories gated
// as a new user would (issue 21) and a real slowdown from one's history (issue 24), each case's artifacts directory kept as
// testdata/external/<repo>/recorded/<case>/ and replayed here with the repository's own
// config, against its sources as testdata keeps them.
var externalCases = []struct {
	name, repo string
	// fail: the gates the live run failed, in the result's order; every other gate that
	// ran passed (speedup may also be left inconclusive, a warning, in the A/A cases).
	fail []string
	// errors: per gate, the error findings every one of which must match one of these
	// "kernel file:line" (file relative to the repository, line 0 for none) or "kernel"
	// alone; at least one error per listed gate.
	errors map[string][]string
	// folded: the gates whose live findings a later kernel-gate joins (issue 21: racecheck
	// reports that differ only in their other sides are one finding); their replay is held
	// to the live run's findings added up per severity, kernel and metric.
	folded []string
	// explained: per gate, what every error finding's explanation must say (issue 24): the
	// first in its sentence (the headline), the rest in its clauses, in this order (most
	// telling first).
	explained map[string][]string
}{
	// Liger-Kernel's RMSNorm before its fix #804: int32 row × stride overflows past 2^31
	// elements, so the huge shape's rows past 524288 are wrong or the launch faults. The
	// block kernel (qk-huge) has the same overflow on both sides: #804 did not fix it.
	// The live run (H200): an illegal address on huge and qk-huge, so each target's check
	// run also fails as a whole (a harness_run error with no kernel: "").
	{"liger-int32", "linkedin-Liger-Kernel", []string{"correctness"},
		map[string][]string{"correctness": {"_rms_norm_forward_kernel", "_block_rms_norm_forward_kernel", ""}}, nil, nil},
	// cuda_hgemm's mmaAsyncStage3Kernel with a planted missing __syncthreads(): racecheck's
	// shared-memory hazard on the C tile's read-back.
	// The live run (H100) showed what the race does beside racecheck's report: repeated
	// launches disagree and the mission shape's result is wrong, so correctness fails too.
	// The live run's 8 racecheck findings at :519 (2 reports each) are one since the fold:
	// 16 reports, against the stores at :509 and :510.
	{"hgemm-race", "Bruce-Lee-LY-cuda_hgemm", []string{"sanitizer", "correctness"},
		map[string][]string{"sanitizer": {"mmaAsyncStage3Kernel src/src/mma/mma_async_stage3.cu:519"}, "correctness": {"mmaAsyncStage3Kernel"}},
		[]string{"sanitizer"}, nil},
	// A/A: a comment-only change, --all: every gate on the real repositories. Liger's block
	// kernel still overflows past 2^31 elements at b27b4c5f (and at its newest commit).
	{"hgemm-clean", "Bruce-Lee-LY-cuda_hgemm", nil, nil, nil, nil},
	// The live run (H200) confirmed it: an illegal address on qk-huge in the block kernel at
	// upstream's own commit, and so its target's check run fails as a whole ("").
	{"liger-clean", "linkedin-Liger-Kernel", []string{"correctness"},
		map[string][]string{"correctness": {"_block_rms_norm_forward_kernel", ""}}, nil, nil},
	// A real slowdown from a public repository's history (issue 24): llm.c's commit 7d0891f6
	// "Fully deterministic layernorm (slight perf loss)". The live run (H100): 5.4% slower.
	// The commit renamed the kernel (layernorm_backward_kernel8 → 9), so the explanation
	// pairs it with base's by the target's globs, and names what the commit did, most
	// telling first: the per-element __syncthreads() pairs (barrier stalls, barriers) and
	// the shared memory traffic, with a profile whose one-at-a-time launches do not show
	// the slowdown; then an occupancy drop the 2-blocks-per-SM grid never reaches, the
	// registers, and last what got better: the spills its looser launch bound removed.
	{"llmc-layernorm", "karpathy-llm.c", []string{"speedup"},
		map[string][]string{"speedup": {"layernorm_backward"}}, nil,
		map[string][]string{"speedup": {
			"(layernorm_backward_kernel9, sm_90; base's layernorm_backward_kernel8, taken as renamed (the only one of its arch gone, this the only one new)): barrier stalls +58% (4.13 → 6.55 warps per issued instruction); ",
			"barrier stalls +58% (4.13 → 6.55 warps per issued instruction)",
			"duration 48960 → 48640 ns under Nsight Compute (-0.7%): its launches do not show the slowdown",
			"barriers +120% (15 → 33)", "shared loads +846% (35 → 331)",
			"occupancy 48 → 32 warps/SM (75% → 50% of the SM) at 512 threads per block, limited by registers, in theory only: achieved occupancy 48.4% → 48.6% (Nsight Compute)",
			"registers 40 → 64", "local memory traffic is gone (local loads 31 → 0, local stores 32 → 0)", "spill stores 106 → 0 bytes",
			"DRAM bytes 58.9 MB → 40.1 MB (-32%)",
		}}},
}

func TestExternalRepositoriesReplay(t *testing.T) {
	for _, c := range externalCases {
		t.Run(c.name, func(t *testing.T) {
			repo := filepath.Join(root, "testdata", "external", c.repo)
			dir := filepath.Join(repo, "recorded", c.name)
			// The capture comes from one GPU run of testdata/external/run.sh; until it is
			// committed there is nothing to replay.
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				t.Skipf("no capture at %s (testdata/external/run.sh on a GPU makes it)", dir)
			}
			cfg, err := config.Load(filepath.Join(repo, "kernel-gate.yml"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), cfg, Options{Replay: dir, Dir: repo, Tool: "kernel-gate test"})
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, g := range res.Gates {
				switch {
				case g.Verdict == result.Fail:
					failed = append(failed, g.Name)
				case g.Verdict == result.Skip && len(c.fail) == 0:
					t.Errorf("%s skipped in a case run with --all that fails nothing: %s", g.Name, messages(g))
				}
			}
			if !slices.Equal(failed, c.fail) {
				t.Errorf("failed gates %q, want %q", failed, c.fail)
			}
			for name, want := range c.errors {
				n := 0
				for _, f := range gate(t, res, name).Findings {
					if f.Severity != result.Error {
						continue
					}
					n++
					if !matchesOne(f, c.repo, want) {
						t.Errorf("%s error %q on %q at %s:%d, want one of %q", name, f.Message, f.Kernel, f.File, f.Line, want)
					}
				}
				if n == 0 {
					t.Errorf("no %s error", name)
				}
			}
			for name, want := range c.explained {
				for _, f := range gate(t, res, name).Findings {
					if f.Severity != result.Error {
						continue
					}
					if f.Explain == nil {
						t.Errorf("%s error on %q has no explanation", name, f.Kernel)
						continue
					}
					if !strings.Contains(f.Explain.Sentence, want[0]) {
						t.Errorf("%s explanation of %q: the sentence lacks %q:\n%s", name, f.Kernel, want[0], f.Explain.Sentence)
					}
					var all strings.Builder
					for _, c := range f.Explain.Clauses {
						all.WriteString(c.Text + "\n")
					}
					at := 0
					for _, w := range want[1:] {
						i := strings.Index(all.String()[at:], w)
						if i < 0 {
							t.Errorf("%s explanation of %q: no %q after the clauses before it:\n%s", name, f.Kernel, w, all.String())
							continue
						}
						at += i + len(w)
					}
				}
			}
			agreesWithLive(t, res, filepath.Join(dir, "result.json"), c.folded)
		})
	}
}

// matchesOne: the finding's kernel and, where a want names one, its file (relative to the
// repository) and line.
func matchesOne(f result.Finding, repo string, want []string) bool {
	for _, w := range want {
		kernel, at, located := strings.Cut(w, " ")
		if f.Kernel != kernel {
			continue
		}
		if !located {
			return true
		}
		file := filepath.ToSlash(f.File)
		if i := strings.Index(file, repo+"/"); i >= 0 {
			file = file[i+len(repo)+1:]
		}
		if file+":"+strconv.Itoa(f.Line) == at {
			return true
		}
	}
	return false
}

func messages(g result.Gate) string {
	var m []string
	for _, f := range g.Findings {
		m = append(m, f.Message)
	}
	return strings.Join(m, "; ")
}

// agreesWithLive: the replay reaches the live run's verdict per gate and the same findings
// that judge (severity, kernel, metric, value and limit).
func agreesWithLive(t *testing.T, replayed result.Result, liveFile string, folded []string) {
	t.Helper()
	f, err := os.Open(liveFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	live, err := result.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", liveFile, err)
	}
	for _, lg := range live.Gates {
		i := slices.IndexFunc(replayed.Gates, func(g result.Gate) bool { return g.Name == lg.Name })
		if i < 0 {
			t.Errorf("gate %s missing from the replay", lg.Name)
			continue
		}
		rg := replayed.Gates[i]
		if rg.Verdict != lg.Verdict {
			t.Errorf("%s: replay %s, live %s", lg.Name, rg.Verdict, lg.Verdict)
		}
		judge := judging
		if slices.Contains(folded, lg.Name) {
			judge = judgingFolded
		}
		if got, want := judge(rg), judge(lg); !slices.Equal(got, want) {
			t.Errorf("%s findings:\n replay %q\n   live %q", lg.Name, got, want)
		}
	}
}

func judging(g result.Gate) []string {
	var out []string
	for _, f := range g.Findings {
		if f.Severity == result.Notice {
			continue
		}
		b, _ := json.Marshal([]any{f.Severity, f.Kernel, f.Arch, f.Metric, f.Value, f.Limit})
		out = append(out, string(b))
	}
	return out
}

// judgingFolded is judging with the findings of one severity, kernel, arch and metric added
// up into one (their values summed), in the order each first appears.
func judgingFolded(g result.Gate) []string {
	type key struct {
		sev          result.Severity
		kernel, arch string
		metric       string
	}
	var order []key
	sum := map[key]float64{}
	for _, f := range g.Findings {
		if f.Severity == result.Notice {
			continue
		}
		k := key{f.Severity, f.Kernel, f.Arch, f.Metric}
		if _, ok := sum[k]; !ok {
			order = append(order, k)
		}
		if f.Value != nil {
			sum[k] += *f.Value
		}
	}
	var out []string
	for _, k := range order {
		b, _ := json.Marshal([]any{k.sev, k.kernel, k.arch, k.metric, sum[k]})
		out = append(out, string(b))
	}
	return out
}
