package abrun

import (
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

func TestParseSection(t *testing.T) {
	c, err := ParseSection([]byte(`cuda: ">=12.4"
bench:
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
speedup:
  min_rounds: 8
`), "kg.yml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Build != "nvcc -O3 -o build/harness kernels/harness.cu" || s.Harness != "./build/harness --fast" || s.BaseRef != "origin/develop" ||
		!slices.Equal(s.Shapes, []string{"mission", "long"}) || s.Samples != 50 || s.Timeout != 90*time.Second ||
		s.BuildTimeout != 20*time.Minute || s.RoundsBudget != 256 || s.Serve != ServeOn || s.RestartEvery != 8 || s.Servers != 2 ||
		s.RoundTimeout != 30*time.Second || s.WallBudget != 90*time.Second || s.RunWallBudget != 15*time.Minute ||
		!slices.Equal(s.Env, []string{"CUDA_VISIBLE_DEVICES=0", "KG_KERNELS=flash_fwd"}) {
		t.Errorf("settings %+v", s)
	}
}

func TestDefaults(t *testing.T) {
	for _, text := range []string{"", "cuda: \">=12\"\n", "bench: {}\n"} {
		c, err := ParseSection([]byte(text), "kg.yml")
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		s, err := c.Settings()
		if err != nil {
			t.Fatal(err)
		}
		if s.Samples != DefaultSamples || s.Timeout != DefaultTimeout || s.BuildTimeout != DefaultBuildTimeout || s.BaseRef != DefaultBaseRef || s.RoundsBudget != 0 || s.Harness != "" ||
			s.Serve != ServeAuto || s.RestartEvery != DefaultRestartEvery || s.Servers != DefaultServers || s.RoundTimeout != DefaultRoundTimeout || s.WallBudget != DefaultWallBudget || s.RunWallBudget != DefaultRunWallBudget {
			t.Errorf("%q: %+v", text, s)
		}
	}
}

// Every bad setting is an error that names the key and its line.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"bench:\n  harnes: ./h\n", `kg.yml:2: unknown key "harnes" in bench`},
		{"bench:\n  samples: 0\n", "kg.yml:2: bench.samples: must be between 1"},
		{"bench:\n  timeout: soon\n", `kg.yml:2: bench.timeout: "soon" is not a duration`},
		{"bench:\n  build_timeout: -1m\n", "kg.yml:2: bench.build_timeout: \"-1m\" must be positive"},
		{"bench:\n  build: make\n", "kg.yml:2: bench.build: set harness too"},
		{"bench:\n  harness: \"'unclosed\"\n", "kg.yml:2: bench.harness:"},
		{"bench:\n  shapes: [a, \"b,c\"]\n", "kg.yml:2: bench.shapes: shapes[1]"},
		{"bench:\n  env: {KG_OUT: /tmp/x}\n", "KG_OUT is set by the runner"},
		{"bench:\n  env: {\"A-B\": x}\n", `"A-B" is not a variable name`},
		{"bench:\n  rounds_budget: 0\n", "bench.rounds_budget: must be at least 1"},
		{"bench:\n  base_ref: --all\n", "bench.base_ref"},
		{"bench:\n  samples: many\n", "kg.yml: bench:"},
		{"bench:\n  serve: maybe\n", `kg.yml:2: bench.serve: "maybe": want auto, true or false`},
		{"bench:\n  restart_every: 0\n", "kg.yml:2: bench.restart_every: must be at least 1"},
		{"bench:\n  servers: 0\n", "kg.yml:2: bench.servers: must be between 1 and 64"},
		{"bench:\n  servers: 65\n", "kg.yml:2: bench.servers: must be between 1 and 64"},
		{"bench:\n  wall_budget: 0s\n", `kg.yml:2: bench.wall_budget: "0s" must be positive`},
		{"bench:\n  run_wall_budget: later\n", `kg.yml:2: bench.run_wall_budget: "later" is not a duration`},
		{"bench:\n  round_timeout: -5s\n", `bench.round_timeout: "-5s" must be positive`},
		{"bench:\n  env: {KG_SERVE_FD: \"4\"}\n", "KG_SERVE_FD is set by the runner"},
	} {
		_, err := ParseSection([]byte(tc.text), "kg.yml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
}

// The section decodes as part of a bigger file (as action/config will hold it).
func TestDecodeAsField(t *testing.T) {
	var f struct {
		Bench Config `yaml:"bench"`
	}
	if err := yaml.Unmarshal([]byte("bench:\n  harness: python3 bench.py\n  samples: 5\n"), &f); err != nil {
		t.Fatal(err)
	}
	f.Bench.File = "kernel-gate.yml"
	s, err := f.Bench.Settings()
	if err != nil || s.Harness != "python3 bench.py" || s.Samples != 5 {
		t.Fatalf("%+v %v", s, err)
	}
	f.Bench.Timeout = "x"
	if _, err := f.Bench.Settings(); err == nil || !strings.Contains(err.Error(), "kernel-gate.yml: bench.timeout") {
		t.Errorf("got %v", err)
	}
}

// The harness commands of the flags and the config run through sh -c, each checked first:
// a pipe or && is a command like any other, a quote left open or an empty one is bad input
// naming its flag.
func TestSidesApply(t *testing.T) {
	for _, tc := range []struct {
		sides      Sides
		base, head []string // want; nil: the worktree form
		harness    string   // the worktree's harness
		bad        string
	}{
		{sides: Sides{BaseCmd: `./harness --x "a b"`, HeadCmd: "python3 kernels/sdpa_reference.py"},
			base: []string{"sh", "-c", `./harness --x "a b"`}, head: []string{"sh", "-c", "python3 kernels/sdpa_reference.py"}},
		{sides: Sides{BaseCmd: "cd base && ./h | tee log", HeadCmd: "cd head && ./h"},
			base: []string{"sh", "-c", "cd base && ./h | tee log"}, head: []string{"sh", "-c", "cd head && ./h"}},
		{sides: Sides{Harness: "make -s harness && ./build/harness"}, harness: "make -s harness && ./build/harness"},
		{sides: Sides{}, harness: "./from/config"},
		{sides: Sides{BaseCmd: `./h "open`, HeadCmd: "./h"}, bad: "--base-cmd: "},
		{sides: Sides{BaseCmd: "./h", HeadCmd: " "}, bad: "--head-cmd: an empty command"},
		{sides: Sides{Harness: "./h &&"}, bad: "--harness: "},
		{sides: Sides{BaseCmd: "./h"}, bad: "go together"},
	} {
		var o Options
		err := tc.sides.Apply(&o, Settings{Harness: "./from/config"})
		switch {
		case tc.bad != "":
			if err == nil || !strings.Contains(err.Error(), tc.bad) || exitcode.Of(err) != exitcode.Usage {
				t.Errorf("%+v: got %v, want bad input saying %q", tc.sides, err, tc.bad)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc.sides, err)
		case tc.base != nil:
			if !slices.Equal(o.Base.Argv, tc.base) || !slices.Equal(o.Head.Argv, tc.head) || o.Worktree != nil {
				t.Errorf("%+v: base %q head %q", tc.sides, o.Base.Argv, o.Head.Argv)
			}
		default:
			if o.Worktree == nil || o.Worktree.Harness != tc.harness {
				t.Errorf("%+v: worktree %+v", tc.sides, o.Worktree)
			}
		}
	}
}

// A second YAML document is refused naming its line, as action/config refuses it: the
// bench settings after a "---" (a smaller rounds budget, a longer timeout) would otherwise be
// dropped without a word.
func TestParseSectionRefusesASecondDocument(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"bench:\n  samples: 5\n---\nbench:\n  samples: 50\n", "kg.yml:3: a second YAML document"},
		{"cuda: \">=12\"\n---\n", "kg.yml:2: a second YAML document"},
		{"---\nbench:\n  samples: 5\n---\nbench: {rounds_budget: 8}\n", "kg.yml:4: a second YAML document"},
		{"bench:\n  samples: 5\n---\n{{\n", "kg.yml: after its first YAML document"},
	} {
		_, err := ParseSection([]byte(tc.text), "kg.yml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
	// One document, with or without its "---" marker, still reads.
	for _, text := range []string{"bench:\n  samples: 5\n", "---\nbench:\n  samples: 5\n", "# only a comment\n"} {
		if _, err := ParseSection([]byte(text), "kg.yml"); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}
