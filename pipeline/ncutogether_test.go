package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A target's share of a joint run is its rules' kernels' launches, in order, the first of
// them up to its own limit; the others' launches and the joint limit are not its.
func TestLaunchesOf(t *testing.T) {
	var rep ncu.Report
	for i, k := range []string{"flash_fwd<64, 64, 0>", "row_softmax<256>", "flash_fwd<64, 64, 1>", "normal_kernel", "flash_fwd<64, 64, 0>", "row_softmax<256>"} {
		rep.Launches = append(rep.Launches, ncu.Launch{ID: i, Kernel: k, Name: kernelname.Name{Mangled: k, Demangled: k, Short: k, Base: k}})
	}
	rep.Limit = 64
	cfg := ncu.Config{Kernels: []ncu.Rule{{Match: "flash_fwd<*>"}}}
	for _, tc := range []struct {
		limit int
		want  []int
	}{{32, []int{0, 2, 4}}, {2, []int{0, 2}}} {
		got := launchesOf(&rep, cfg, tc.limit)
		var ids []int
		for _, l := range got.Launches {
			ids = append(ids, l.ID)
		}
		if len(ids) != len(tc.want) || got.Limit != tc.limit {
			t.Errorf("limit %d: launches %v (limit %d), want %v", tc.limit, ids, got.Limit, tc.want)
			continue
		}
		for i := range ids {
			if ids[i] != tc.want[i] {
				t.Errorf("limit %d: launches %v, want %v", tc.limit, ids, tc.want)
			}
		}
	}
	if len(rep.Launches) != 6 {
		t.Errorf("the joint report was changed: %d launches", len(rep.Launches))
	}
}

// A joint run stands for the runs apart only when it ran, read whole, without an error, and
// stopped short of its launch limit.
func TestProvesLess(t *testing.T) {
	two := &ncu.Report{Launches: make([]ncu.Launch, 2)}
	for _, tc := range []struct {
		name string
		rep  *ncu.Report
		err  error
		want string
	}{
		{"used", two, nil, ""},
		{"ncu missing", nil, errors.New("ncu: not found"), "ncu: not found"},
		{"unread", nil, nil, "could not be read"},
		{"problem", &ncu.Report{Launches: make([]ncu.Launch, 2), Problems: []string{"ncu exited 1"}}, nil, "ncu exited 1"},
		{"error", &ncu.Report{Launches: make([]ncu.Launch, 2), Errors: []string{"==ERROR== x"}}, nil, "errors"},
		{"nothing", &ncu.Report{}, nil, "profiled nothing"},
		{"limit", &ncu.Report{Launches: make([]ncu.Launch, 4)}, nil, "launch limit, 4"},
	} {
		got := provesLess(tc.rep, tc.err, 4)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Mangled names of the recording's kernels (testdata/replay/clean/attention/ncu-together).
const (
	ffNoncausal = "_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if"
	ffCausal    = "_ZN2kg9flash_fwdILi64ELi64ELb1EEEvPK6__halfS3_S3_PS1_if"
	softmax256  = "_ZN2kg11row_softmaxILi256EEEvPKfPfi"
)

// ncuLaunch is one launch of a joint run's log: its ID, kernel and DRAM throughput (%).
type ncuLaunch struct {
	id     int
	kernel string
	dram   float64
}

// ncuLog is an ncu --csv log as Run keeps it: what the harness printed (harness), ncu's
// lines, then its table of the launches, one metric each.
func ncuLog(harness string, launches []ncuLaunch) string {
	var b strings.Builder
	b.WriteString(harness)
	b.WriteString("==PROF== Connected to process 2088 (/w/build/harness)\n==PROF== Disconnected from process 2088\n")
	b.WriteString(`"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"` + "\n")
	for _, l := range launches {
		fmt.Fprintf(&b, `"%d","2088","harness","127.0.0.1","%s","1","7","(128, 1, 1)","(8, 16, 1)","0","9.0","Command line profiler metrics","dram__throughput.avg.pct_of_peak_sustained_elapsed","%%","%g"`+"\n", l.id, l.kernel, l.dram)
	}
	return b.String()
}

// togetherRun is a target of a joint run: its ncu rules (a kernel-gate.yml ncu section) and
// limit.
func togetherRun(t *testing.T, name, section string) profileRun {
	t.Helper()
	var doc struct {
		NCU ncu.Config `yaml:"ncu"`
	}
	if err := yaml.Unmarshal([]byte(section), &doc); err != nil {
		t.Fatal(err)
	}
	if err := doc.NCU.Resolve("kernel-gate.yml"); err != nil {
		t.Fatal(err)
	}
	o, err := doc.NCU.Options([]string{"./build/harness"})
	if err != nil {
		t.Fatal(err)
	}
	return profileRun{r: &targetRun{t: target{Target: config.Target{Name: name}}}, cfg: doc.NCU, o: o}
}

// A pull request must not turn a target's failing profile into a pass by profiling it with
// another target's: attention's own flash_fwd<64, 64, false> keeps DRAM 80% busy (its rule
// allows 50), which alone fails. Every attack below would pass attention on its share of
// the joint run (the first launches its rules match, up to its ncu.launches); each must
// leave the joint run unused (every target then profiled alone) or fail attention.
func TestJointRunCannotHideALaunch(t *testing.T) {
	attention := func(launches int) profileRun {
		return togetherRun(t, "attention", fmt.Sprintf(`ncu:
  launches: %d
  kernels:
    - match: "flash_fwd<*>"
      all: [{metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}]
`, launches))
	}
	softmax := togetherRun(t, "softmax", `ncu:
  launches: 8
  kernels:
    - match: "row_softmax<*>"
      all: [{metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, min: 30}]
`)
	causal := togetherRun(t, "causal", `ncu:
  launches: 8
  kernels:
    - match: "flash_fwd<64, 64, true>"
      all: [{metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}]
`)
	bad := []ncuLaunch{{10, ffNoncausal, 80}, {11, ffNoncausal, 80}, {12, ffNoncausal, 80}}
	rows := func(ls ...[]ncuLaunch) []ncuLaunch { return slices.Concat(ls...) }
	for _, tc := range []struct {
		name     string
		group    []profileRun
		harness  string
		launches []ncuLaunch
		// used: the joint run stands (benign cases), and attention's verdict then.
		used bool
		want result.Verdict
	}{
		{"apart, good", []profileRun{attention(4), softmax}, "",
			rows([]ncuLaunch{{0, ffNoncausal, 10}, {1, ffNoncausal, 10}}, []ncuLaunch{{2, softmax256, 60}}), true, result.Pass},
		{"apart, bad", []profileRun{attention(4), softmax}, "",
			rows(bad, []ncuLaunch{{2, softmax256, 60}}), true, result.Fail},
		// softmax's case launches a flash_fwd (no rule of softmax's names it) before
		// attention's: attention's first 3 launches would be that good kernel's.
		{"another case's kernel first", []profileRun{attention(3), softmax}, "",
			rows([]ncuLaunch{{0, ffCausal, 10}, {1, ffCausal, 10}, {2, ffCausal, 10}}, bad, []ncuLaunch{{20, softmax256, 60}}), false, ""},
		// causal's rules match its kernel, and so do attention's: attention's own launch
		// of it is one among causal's four, whose median is good.
		{"another target's rules match", []profileRun{attention(8), causal}, "",
			[]ncuLaunch{{0, ffCausal, 10}, {1, ffCausal, 10}, {2, ffCausal, 10}, {3, ffCausal, 80}}, false, ""},
		// The harness prints rows of ncu's table before ncu does: attention's limit would
		// keep them and drop ncu's own.
		{"the harness prints rows", []profileRun{attention(2), softmax}, ncuLog("", []ncuLaunch{{100, ffNoncausal, 10}, {101, ffNoncausal, 10}}),
			rows(bad, []ncuLaunch{{20, softmax256, 60}}), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := ncu.Parse(strings.NewReader(ncuLog(tc.harness, tc.launches)), "attention/ncu-together/ncu.log")
			if err != nil {
				t.Fatal(err)
			}
			_, o, fits := togetherOptions(tc.group)
			if !fits {
				t.Fatal("the group does not fit one run")
			}
			gates, why, err := judgeTogether(rep, nil, o.Launches, tc.group)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.used && why != "":
				t.Errorf("the joint run is not used (%s), want it used", why)
			case tc.used && gates[0].Verdict != tc.want:
				t.Errorf("attention: %s, want %s: %s", gates[0].Verdict, tc.want, gates[0].Summary)
			case !tc.used && why == "" && gates[0].Verdict != result.Fail:
				t.Errorf("attention passes on its share of the joint run (%s); alone its own launches fail", gates[0].Summary)
			}
		})
	}
}
