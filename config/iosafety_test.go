//go:build unix

package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/input"
)

// Every integer setting of every section, as YAML puts it, with the line its value is on: a
// fraction (which YAML would truncate) and a negative number are config errors that name
// the key and the line.
func TestIntegerSettingsAreWholeAndNotNegative(t *testing.T) {
	settings := []struct{ yaml, key string }{
		{"ptxas:\n  max_registers: %s\n", "ptxas.max_registers"},
		{"ptxas:\n  max_spill_stores: %s\n", "ptxas.max_spill_stores"},
		{"ptxas:\n  max_spill_loads: %s\n", "ptxas.max_spill_loads"},
		{"ptxas:\n  max_stack_frame: %s\n", "ptxas.max_stack_frame"},
		{"ptxas:\n  max_lmem: %s\n", "ptxas.max_lmem"},
		{"ptxas:\n  max_smem: %s\n", "ptxas.max_smem"},
		{"ptxas:\n  max_register_increase: %s\n", "ptxas.max_register_increase"},
		{"ptxas:\n  arch:\n    sm_90a: {max_registers: %s}\n", "ptxas.arch.sm_90a.max_registers"},
		{"ptxas:\n  kernels:\n    - match: \"f*\"\n      max_registers: %s\n", "ptxas.kernels[0].max_registers"},
		{"ptxas:\n  kernels:\n    - match: \"f*\"\n      arch: {sm_90a: {max_spill_stores: %s}}\n", "ptxas.kernels[0].arch.sm_90a.max_spill_stores"},
		{"correctness:\n  min_checks: %s\n", "correctness.min_checks"},
		{"correctness:\n  kernels:\n    - match: \"f*\"\n      min_checks: %s\n", "correctness.kernels[0].min_checks"},
		{"speedup:\n  min_rounds: %s\n", "speedup.min_rounds"},
		{"speedup:\n  max_rounds: %s\n", "speedup.max_rounds"},
		{"speedup:\n  samples: %s\n", "speedup.samples"},
		{"bench:\n  samples: %s\n", "bench.samples"},
		{"speedup:\n  rounds_budget: %s\n", "speedup.rounds_budget"},
		{"ncu:\n  launches: %s\n", "ncu.launches"},
		{"run:\n  check_rounds: %s\n", "run.check_rounds"},
	}
	for _, s := range settings {
		line := strings.Count(s.yaml[:strings.Index(s.yaml, "%s")], "\n") + 1
		for _, v := range []string{"1.5", "2.0", "1e3", "-1", "-0x10"} {
			_, err := Parse([]byte(strings.Replace(s.yaml, "%s", v, 1)), "k.yml")
			want := "k.yml:" + strconv.Itoa(line) + ": " + s.key + ": " + v
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %s: %v, want it to say %q", s.key, v, err, want)
			}
		}
	}
	// Whole numbers of at least 0 are taken as they are.
	c, err := Parse([]byte("ptxas:\n  max_registers: 0x80\n  max_spill_stores: 0\nbench:\n  samples: 30\n"), "k.yml")
	if err != nil || *c.PTXAS.MaxRegisters != 128 || *c.PTXAS.MaxSpillStores != 0 || *c.Speedup.ABRun.Samples != 30 {
		t.Errorf("whole numbers: %v", err)
	}
}

// A section built in Go, not read from YAML, is checked where it resolves: a negative ptxas
// limit at any level is an error there too.
func TestNegativePtxasLimitInGo(t *testing.T) {
	c, err := Parse([]byte("ptxas:\n  max_registers: 128\n"), "k.yml")
	if err != nil {
		t.Fatal(err)
	}
	neg := int64(-1)
	c.PTXAS.MaxSpillLoads = &neg
	if err := c.PTXAS.Resolve("k.yml"); err == nil || !strings.Contains(err.Error(), "ptxas.max_spill_loads: -1 is negative") {
		t.Errorf("Resolve: %v", err)
	}
}

// A kernel-gate.yml that is a link to nothing is a config error, not "no config": the
// defaults would silently replace every limit it set.
func TestFindRefusesADanglingLink(t *testing.T) {
	for _, p := range DefaultPaths {
		t.Run(p, func(t *testing.T) {
			t.Chdir(t.TempDir())
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink("nowhere.yml", p); err != nil {
				t.Fatal(err)
			}
			c, err := Find("")
			if err == nil || !strings.Contains(err.Error(), p) || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Find: %+v, %v", c, err)
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		t.Chdir(t.TempDir())
		if c, err := Find(""); err != nil || c.Path != "" {
			t.Errorf("no config at all: %+v, %v", c, err)
		}
	})
}

// Load reads a regular file of a bounded size: a FIFO or a device is refused at once, and
// so is a config bigger than input.Config.
func TestLoadIsBounded(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"/dev/zero", dir} {
		if _, err := Load(p); !errors.Is(err, input.ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("Load(%s): %v", p, err)
		}
	}
	big := filepath.Join(dir, "big.yml")
	os.WriteFile(big, []byte("# "+strings.Repeat("x", int(input.Config.Bytes))+"\n"), 0o644)
	if _, err := Load(big); !errors.Is(err, input.ErrTooBig) || !strings.Contains(err.Error(), "big.yml") || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("Load(big): %v", err)
	}
}
