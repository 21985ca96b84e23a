package pipeline

import (
	"slices"
	"strconv"
	"testing"

	"github.com/kernel-gate/kernel-gate/config"
)

// With a base, each side's build commands get half the cores through MAX_JOBS and
// CMAKE_BUILD_PARALLEL_LEVEL, unless the environment or the target sets one; head alone
// gets nothing added.
func TestJobLimit(t *testing.T) {
	half := strconv.Itoa(sideJobs())
	for _, tc := range []struct {
		name    string
		base    string
		environ []string
		env     map[string]string
		want    []string
	}{
		{"no base", "", nil, nil, nil},
		{"base", "abc", []string{"PATH=/bin"}, nil, []string{"MAX_JOBS=" + half, "CMAKE_BUILD_PARALLEL_LEVEL=" + half}},
		{"the environment's", "abc", []string{"MAX_JOBS=3"}, nil, []string{"CMAKE_BUILD_PARALLEL_LEVEL=" + half}},
		{"the target's", "abc", nil, map[string]string{"CMAKE_BUILD_PARALLEL_LEVEL": "2"}, []string{"MAX_JOBS=" + half}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pipeline{o: Options{Environ: tc.environ}, decided: Decisions{BaseRev: tc.base}}
			if got := p.jobLimit(config.Target{Env: tc.env}); !slices.Equal(got, tc.want) {
				t.Errorf("jobLimit = %q, want %q", got, tc.want)
			}
		})
	}
}

// The journal keeps steps run at once in the order atOnce named them, whichever ended
// first, marked parallel; a place kept for a step that never ran is dropped.
func TestAtOnceOrder(t *testing.T) {
	l := &live{j: journal{Steps: []step{}}}
	l.add(step{ID: "nvcc-version"})
	l.atOnce("build/base/t", "build/head/t", "build/base/never")
	l.add(step{ID: "build/head/t"})
	l.add(step{ID: "build/base/t"})
	l.add(step{ID: "sass/head/t"})
	l.dropReserved()
	var ids []string
	for _, s := range l.j.Steps {
		ids = append(ids, s.ID+":"+strconv.FormatBool(s.Parallel))
	}
	want := []string{"nvcc-version:false", "build/base/t:true", "build/head/t:true", "sass/head/t:false"}
	if !slices.Equal(ids, want) {
		t.Errorf("journal %q, want %q", ids, want)
	}
}
