package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
)

// every is each of the A/B run's keys, set, beside the judge's under speedup:.
const every = `cuda: ">=12.4"
speedup:
  min_rounds: 8
  build: "nvcc -O3 -o build/harness kernels/harness.cu"
  harness: "./build/harness --fast"
  base_ref: origin/develop
  shapes: [mission, long]
  samples: 50
  timeout: 90s
  build_timeout: 20m
  rounds_budget: 256
  serve: true
  restart_every: 8
  servers: 2
  round_timeout: 30s
  wall_budget: 90s
  run_wall_budget: 15m
  env: {KG_KERNELS: flash_fwd, CUDA_VISIBLE_DEVICES: "0"}
  max_slowdown: 0.05
`

func checkEvery(t *testing.T, c Config) {
	t.Helper()
	s, err := c.Speedup.ABRun.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Build != "nvcc -O3 -o build/harness kernels/harness.cu" || s.Harness != "./build/harness --fast" || s.BaseRef != "origin/develop" ||
		!slices.Equal(s.Shapes, []string{"mission", "long"}) || s.Samples != 50 || s.Timeout != 90*time.Second ||
		s.BuildTimeout != 20*time.Minute || s.RoundsBudget != 256 || s.Serve != abrun.ServeOn || s.RestartEvery != 8 || s.Servers != 2 ||
		s.RoundTimeout != 30*time.Second || s.WallBudget != 90*time.Second || s.RunWallBudget != 15*time.Minute ||
		!slices.Equal(s.Env, []string{"CUDA_VISIBLE_DEVICES=0", "KG_KERNELS=flash_fwd"}) {
		t.Errorf("settings %+v", s)
	}
	if c.Speedup.MinRounds == nil || *c.Speedup.MinRounds != 8 || c.Speedup.MaxSlowdown == nil || *c.Speedup.MaxSlowdown != 0.05 {
		t.Errorf("the judge's settings: %+v", c.Speedup.Config)
	}
	if lim := c.Speedup.Limits("k", "s"); lim.MaxSlowdown != 0.05 || lim.MinRounds != 8 {
		t.Errorf("the judge's limits: %+v", lim)
	}
}

// The A/B run's settings and the judge's share the speedup section.
func TestSpeedupHoldsTheABRun(t *testing.T) {
	c, err := Parse([]byte(every), "kg.yml")
	if err != nil {
		t.Fatal(err)
	}
	checkEvery(t, c)
	if len(c.Notices) != 0 {
		t.Errorf("notices %q", c.Notices)
	}
	if got := c.Speedup.ABRun.KeyLine("samples"); got != 8 {
		t.Errorf("samples is on line %d, want 8", got)
	}
}

// bench:, the A/B run's settings' old section, is read as part of speedup: with a notice
// naming its line; its keys keep their lines. Written there, every key means what it means
// under speedup:.
func TestBenchIsADeprecatedAlias(t *testing.T) {
	old := strings.Replace(every, "  max_slowdown: 0.05\n", "", 1)
	old = strings.Replace(old, "  min_rounds: 8\n", "  min_rounds: 8\n  max_slowdown: 0.05\nbench:\n", 1)
	c, err := Parse([]byte(old), "kg.yml")
	if err != nil {
		t.Fatal(err)
	}
	checkEvery(t, c)
	if len(c.Notices) != 1 || !strings.HasPrefix(c.Notices[0], "kg.yml:5: bench: is deprecated, move its keys under speedup:") {
		t.Errorf("notices %q", c.Notices)
	}
	if got := c.Speedup.ABRun.KeyLine("samples"); got != 10 {
		t.Errorf("samples is on line %d, want 10 (under bench:)", got)
	}
	// bench: alone, before speedup: or without it; empty; the repository's own old spelling.
	for _, text := range []string{"bench:\n  samples: 7\n", "bench: {samples: 7}\nspeedup: {max_slowdown: 0.1}\n", "speedup:\nbench:\n  samples: 7\n"} {
		c, err := Parse([]byte(text), "kg.yml")
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if s, err := c.Speedup.ABRun.Settings(); err != nil || s.Samples != 7 || len(c.Notices) != 1 {
			t.Errorf("%q: %+v %v %q", text, s, err, c.Notices)
		}
	}
	if c, err := Parse([]byte("bench:\n"), "kg.yml"); err != nil || len(c.Notices) != 1 {
		t.Errorf("an empty bench: %v %q", err, c.Notices)
	}
}

// Every bad setting is an error that names the key and its line, under speedup: and under
// bench: alike; a key under both is an error naming both lines; bench: holds only the A/B
// run's keys.
func TestSpeedupABRunErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"speedup:\n  harnes: ./h\n", `kg.yml:2: unknown key "harnes" in speedup (did you mean "harness"?)`},
		{"speedup:\n  samples: 0\n", "kg.yml:2: speedup.samples: must be between 1"},
		{"speedup:\n  timeout: soon\n", `kg.yml:2: speedup.timeout: "soon" is not a duration`},
		{"speedup:\n  build_timeout: -1m\n", "kg.yml:2: speedup.build_timeout: \"-1m\" must be positive"},
		{"speedup:\n  build: make\n", "kg.yml:2: speedup.build: set harness too"},
		{"speedup:\n  harness: \"'unclosed\"\n", "kg.yml:2: speedup.harness:"},
		{"speedup:\n  harness: \" \"\n  build: make\n", "kg.yml:3: speedup.build: set harness too"},
		{"speedup:\n  shapes: [a, \"b,c\"]\n", "kg.yml:2: speedup.shapes: shapes[1]"},
		{"speedup:\n  env: {KG_OUT: /tmp/x}\n", "KG_OUT is set by the runner"},
		{"speedup:\n  env: {\"A-B\": x}\n", `"A-B" is not a variable name`},
		{"speedup:\n  rounds_budget: 0\n", "speedup.rounds_budget: must be at least 1"},
		{"speedup:\n  base_ref: --all\n", "speedup.base_ref"},
		{"speedup:\n  samples: many\n", "kg.yml: "},
		{"speedup:\n  serve: maybe\n", `kg.yml:2: speedup.serve: "maybe": want auto, true or false`},
		{"speedup:\n  restart_every: 0\n", "kg.yml:2: speedup.restart_every: must be at least 1"},
		{"speedup:\n  servers: 0\n", "kg.yml:2: speedup.servers: must be between 1 and 64"},
		{"speedup:\n  servers: 65\n", "kg.yml:2: speedup.servers: must be between 1 and 64"},
		{"speedup:\n  wall_budget: 0s\n", `kg.yml:2: speedup.wall_budget: "0s" must be positive`},
		{"speedup:\n  run_wall_budget: later\n", `kg.yml:2: speedup.run_wall_budget: "later" is not a duration`},
		{"speedup:\n  round_timeout: -5s\n", `speedup.round_timeout: "-5s" must be positive`},
		{"speedup:\n  env: {KG_SERVE_FD: \"4\"}\n", "KG_SERVE_FD is set by the runner"},
		{"speedup:\n  samples: 0\n  max_rounds: 1\n", "kg.yml:3: speedup.max_rounds: must be at least 2"},
		// bench:
		{"bench:\n  samples: 0\n", "kg.yml:2: speedup.samples: must be between 1"},
		{"bench:\n  harnes: ./h\n", `kg.yml:2: unknown key "harnes" in bench (did you mean "harness"?)`},
		{"bench:\n  max_slowdown: 0.1\n", `kg.yml:2: unknown key "max_slowdown" in bench`},
		{"bench: [samples]\n", "kg.yml:1: bench: want a mapping"},
		{"speedup:\n  samples: 5\n  timeout: 1m\nbench:\n  timeout: 2m\n  samples: 6\n",
			"kg.yml:5: bench.timeout and kg.yml:3: speedup.timeout are the same setting: keep the one under speedup:; kg.yml:6: bench.samples and kg.yml:2: speedup.samples are the same setting"},
	} {
		_, err := Parse([]byte(tc.text), "kg.yml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
}
