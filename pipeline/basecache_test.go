package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// An entry's record of base's steps is read strictly: only base's build steps, once each,
// each one that succeeded with its log under base/; anything else refuses the entry.
func TestCachedStepsRefuseWhatBaseDidNotRun(t *testing.T) {
	good := `{"steps": [{"id": "build/base/attention", "log": "base/attention/build.log", "exit": 0, "seconds": 9.1},
		{"id": "check/base/torch", "log": "base/torch/check.log", "exit": 0, "seconds": 38, "tail": "ok\u001b[31m"}]}`
	steps, err := cachedSteps([]byte(good))
	if err != nil || len(steps) != 2 || strings.ContainsRune(steps["check/base/torch"].Tail, 0x1b) {
		t.Fatalf("good record: %v %+v", err, steps)
	}
	for _, tc := range []struct{ name, raw, want string }{
		{"a head step", `{"steps": [{"id": "check/attention", "log": "attention/check.log", "exit": 0}]}`, "not one of base's build steps"},
		{"base's timing", `{"steps": [{"id": "bench/base/attention", "log": "base/x.log", "exit": 0}]}`, "not one of base's build steps"},
		{"twice", `{"steps": [{"id": "build/base/a", "log": "base/a/build.log", "exit": 0}, {"id": "build/base/a", "log": "base/a/build.log", "exit": 0}]}`, "twice"},
		{"a failed step", `{"steps": [{"id": "build/base/a", "log": "base/a/build.log", "exit": 1, "why": "exited with status 1"}]}`, "did not succeed"},
		{"a cut log", `{"steps": [{"id": "build/base/a", "log": "base/a/build.log", "exit": 0, "log_cut": "cap"}]}`, "did not succeed"},
		{"a log out of base/", `{"steps": [{"id": "build/base/a", "log": "base/../../etc/passwd", "exit": 0}]}`, "no log under base/"},
		{"a log of head", `{"steps": [{"id": "build/base/a", "log": "head/a/build.log", "exit": 0}]}`, "no log under base/"},
		{"a key given twice", `{"steps": [], "steps": [{"id": "build/base/a", "log": "base/a/build.log", "exit": 0}]}`, "duplicate key"},
		{"no steps", `{"steps": []}`, "no step"},
		{"a field kernel-gate does not know", `{"steps": [{"id": "build/base/a", "log": "base/a/build.log", "exit": 0, "ok": true}]}`, "unknown field"},
		{"a record kernel-gate does not know", `{"steps": [{"id": "build/base/a", "log": "base/a/build.log", "exit": 0}], "verdict": "pass"}`, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := cachedSteps([]byte(tc.raw)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// A restored step is answered from the record without running: it takes the call's own
// argv, is marked cached, and is left out of the stages; the restore's own stage names the
// entry. A step whose log the record puts elsewhere runs.
func TestRestoredStepsAreCachedAndNotStages(t *testing.T) {
	l := &live{j: journal{Steps: []step{}}, cached: map[string]step{"build/base/a": {ID: "build/base/a", Log: "base/a/build.log", Tail: "ok"}}}
	s, ok := l.fromCache(proc{id: "build/base/a", argv: []string{"nvcc", "-o", "x"}, log: "base/a/build.log"})
	if !ok || !s.Cached || !slices.Equal(s.Argv, []string{"nvcc", "-o", "x"}) || s.Why != "" || s.Seconds != 0 {
		t.Fatalf("restored step %+v (%v)", s, ok)
	}
	if _, ok := l.fromCache(proc{id: "build/base/a", log: "base/a/other.log"}); ok {
		t.Error("a step whose log differs from the record's was answered from it")
	}
	if _, ok := l.fromCache(proc{id: "build/head/a", log: "head/a/build.log"}); ok {
		t.Error("a step the record lacks was answered from it")
	}
	l.note(stageCacheRestore+"/98edf34c39c3", 0, "#")
	var names []string
	for _, st := range l.stages() {
		names = append(names, st.Name+"|"+st.Side)
	}
	if want := []string{"restored from cache 98edf34c39c3|base"}; !slices.Equal(names, want) {
		t.Errorf("stages %q, want %q", names, want)
	}
	if sc := script(l.j.Steps, func(r string) string { return r }); !strings.Contains(sc, "# build/base/a: restored from the base cache, not run") || strings.Contains(sc, "nvcc") {
		t.Errorf("commands.sh:\n%s", sc)
	}
}

// Head builds alone, with every core, when base's side is restored.
func TestJobLimitWithRestoredBase(t *testing.T) {
	p := &pipeline{decided: Decisions{BaseRev: "abc", BaseCache: &result.BaseCache{Action: result.BaseCacheRestored}}}
	if got := p.jobLimit(config.Target{}); got != nil {
		t.Errorf("jobLimit = %q, want nothing", got)
	}
}
