package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/ncu"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
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
