package pipeline

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Where the time went: a live run's journal keeps each step's start (step.Start) and wall
// time, and the executor's timing keeps parts of the run that are no process of their own
// (the static gates, each sanitizer tool inside the sanitizer's stage). finish turns them
// into the result's stages and their critical path; a replay has none (what it read took
// no time).

// roundingSlack is the journal's rounding (to the millisecond): a stage that ends within it
// of another's start ended before it.
const roundingSlack = 0.0015

// stages are the run's steps and timed parts, named, in the order they began.
func (l *live) stages() []result.Stage {
	l.mu.Lock()
	defer l.mu.Unlock()
	steps := slices.Clone(l.j.Steps)
	for _, t := range l.timed {
		steps = append(steps, step{ID: t.ID, Start: t.StartSeconds, Seconds: t.WallSeconds})
	}
	return stagesOf(steps)
}

// stagesOf names each step.
func stagesOf(steps []step) []result.Stage {
	out := make([]result.Stage, 0, len(steps))
	for _, s := range steps {
		if s.Cached {
			continue // it did not run: the base cache's stage took its time
		}
		st := result.Stage{ID: s.ID, StartSeconds: s.Start, WallSeconds: s.Seconds}
		parts := strings.Split(s.ID, "/")
		st.Name = parts[0]
		rest := parts[1:]
		if len(rest) == 1 && (st.Name == stageCacheRestore || st.Name == stageCacheSave) {
			st.Name = map[string]string{stageCacheRestore: "restored from cache ", stageCacheSave: "saved to cache "}[st.Name] + rest[0]
			st.Side = "base"
			out = append(out, st)
			continue
		}
		if len(rest) > 0 && (rest[0] == "base" || rest[0] == "head") {
			st.Side, rest = rest[0], rest[1:]
		}
		if len(rest) > 0 {
			st.Target = rest[0]
		}
		switch st.Name {
		case "sass", "elf", "xelf", "res":
			st.Name = "cuobjdump"
			if len(s.Argv) > 0 && strings.Contains(filepath.Base(s.Argv[0]), "nvdisasm") {
				st.Name = "nvdisasm" // a cubin's SASS (sassdump.go)
			}
		case "check":
			if st.Side == "base" {
				st.Name = "first run"
			} else {
				st.Side = "head"
			}
		case "bench":
			st.Name = "timing"
		case "sanitize":
			st.Name = "sanitizer"
			if len(rest) > 1 {
				st.Name = rest[1] // one of its tools
			}
		case "build", "ncu":
			st.Side = cmp.Or(st.Side, "head")
		}
		out = append(out, st)
	}
	slices.SortStableFunc(out, func(a, b result.Stage) int { return cmp.Compare(a.StartSeconds, b.StartSeconds) })
	return out
}

// criticalPath is what the run's wall time waited on: from the stage that ended last,
// back through the stage that ended last before each began. A stage inside another (a
// sanitizer tool in the sanitizer's stage) is never before it, so the path names the
// outer one.
func criticalPath(stages []result.Stage) []string {
	end := func(s result.Stage) float64 { return s.StartSeconds + s.WallSeconds }
	// latest is the stage that ended last by before, not one inside inner's (its tools).
	latest := func(before float64, inner string) int {
		best := -1
		for i, s := range stages {
			if end(s) > before+roundingSlack || s.StartSeconds >= before || inner != "" && strings.HasPrefix(s.ID, inner+"/") {
				continue
			}
			if best < 0 || end(s) > end(stages[best]) || end(s) == end(stages[best]) && s.WallSeconds > stages[best].WallSeconds {
				best = i
			}
		}
		return best
	}
	var path []string
	i := latest(math.Inf(1), "")
	for i >= 0 && len(path) < len(stages) {
		path = append(path, stages[i].ID)
		i = latest(stages[i].StartSeconds, stages[i].ID)
	}
	slices.Reverse(path)
	return path
}

// sinceStart is seconds from the run's start, to the millisecond.
func sinceStart(started, t time.Time) float64 { return roundMillis(t.Sub(started).Seconds()) }
