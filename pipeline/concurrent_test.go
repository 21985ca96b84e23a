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

// Steps are named by what they did, with their side and target; the critical path runs back
// from the stage that ended last through the one that ended last before each began, and
// names an outer stage, not the tools inside it.
func TestStagesAndCriticalPath(t *testing.T) {
	stages := stagesOf([]step{
		{ID: "gpu", Start: 0, Seconds: 0.1},
		{ID: "build/base/attention", Start: 0.2, Seconds: 5},
		{ID: "build/head/attention", Start: 0.2, Seconds: 6},
		{ID: "check/base/attention", Start: 6.3, Seconds: 2},
		{ID: "check/attention", Start: 6.3, Seconds: 3},
		{ID: "sanitize/attention/memcheck", Start: 9.4, Seconds: 3},
		{ID: "sanitize/attention/racecheck", Start: 9.4, Seconds: 4},
		{ID: "sanitize/attention", Start: 9.35, Seconds: 4.1},
		{ID: "bench/attention", Start: 13.5, Seconds: 2},
	})
	var got []string
	for _, s := range stages {
		got = append(got, s.Name+"|"+s.Side+"|"+s.Target)
	}
	want := []string{"gpu||", "build|base|attention", "build|head|attention", "first run|base|attention", "check|head|attention",
		"sanitizer||attention", "memcheck||attention", "racecheck||attention", "timing||attention"}
	if !slices.Equal(got, want) {
		t.Errorf("stages %q, want %q", got, want)
	}
	path := criticalPath(stages)
	if want := []string{"gpu", "build/head/attention", "check/attention", "sanitize/attention", "bench/attention"}; !slices.Equal(path, want) {
		t.Errorf("critical path %q, want %q", path, want)
	}
}
