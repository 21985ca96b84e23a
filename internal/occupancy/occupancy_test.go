package occupancy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// capture is testdata/occupancy-h200/occupancy-*.json: the CUDA runtime's answers.
type capture struct {
	Variant string `json:"variant"`
	Device  struct {
		CC                   string `json:"cc"`
		RegsPerSM            int    `json:"regs_per_sm"`
		SmemPerSM            int    `json:"smem_per_sm"`
		SmemPerBlock         int    `json:"smem_per_block"`
		SmemPerBlockOptIn    int    `json:"smem_per_block_optin"`
		ReservedSmemPerBlock int    `json:"reserved_smem_per_block"`
		MaxThreadsPerSM      int    `json:"max_threads_per_sm"`
		MaxBlocksPerSM       int    `json:"max_blocks_per_sm"`
	} `json:"device"`
	Kernels []struct {
		Kernel      string `json:"kernel"`
		LaunchBlock int    `json:"launch_block"`
		Regs        int    `json:"regs"`
		StaticSmem  int    `json:"static_smem"`
		Occupancy   []struct {
			Block       int  `json:"block"`
			DynamicSmem int  `json:"dynamic_smem"`
			BlocksPerSM int  `json:"blocks_per_sm"`
			Error       bool `json:"error"`
		} `json:"occupancy"`
	} `json:"kernels"`
}

// Every answer the runtime gave on the H200, for every kernel of kernels/ built three ways,
// every block size and the dynamic shared memory sizes: Compute agrees, and so do the
// device's limits with the table's.
func TestComputeAgreesWithTheRuntime(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "occupancy-h200", "occupancy-*.json"))
	if err != nil || len(files) != 3 {
		t.Fatalf("captures %v (%v)", files, err)
	}
	checked := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c capture
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		l, ok := For(c.Device.CC)
		if !ok {
			t.Fatalf("no limits for %s", c.Device.CC)
		}
		d := c.Device
		if l.RegsPerSM != d.RegsPerSM || l.SmemPerSM != d.SmemPerSM || l.SmemPerBlock != d.SmemPerBlock || l.SmemPerBlockOptIn != d.SmemPerBlockOptIn ||
			l.ReservedSmemPerBlock != d.ReservedSmemPerBlock || l.MaxWarpsPerSM*32 != d.MaxThreadsPerSM || l.MaxBlocksPerSM != d.MaxBlocksPerSM {
			t.Errorf("%s: table %+v, device %+v", file, l, d)
		}
		for _, k := range c.Kernels {
			if k.Kernel == "" || len(k.Occupancy) == 0 {
				t.Fatalf("%s: empty kernel record %+v", file, k)
			}
			for _, o := range k.Occupancy {
				got, err := Compute(l, Kernel{BlockSize: o.Block, Registers: k.Regs, StaticSmem: k.StaticSmem, DynamicSmem: o.DynamicSmem})
				want := o.BlocksPerSM
				if o.Error {
					want = -1
				}
				switch {
				case err != nil && want != 0:
					t.Errorf("%s %s block %d dyn %d: %v, runtime %d", c.Variant, k.Kernel, o.Block, o.DynamicSmem, err, want)
				case err == nil && got.BlocksPerSM != want:
					t.Errorf("%s %s block %d dyn %d: %d blocks (%s), runtime %d", c.Variant, k.Kernel, o.Block, o.DynamicSmem, got.BlocksPerSM, got.Limiter, want)
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d answers checked", checked)
	}
}

// The launches of kernels/ on the H200: the limiter named is the one a CUDA engineer would
// name, and gemm_wmma's -maxrregcount=128 build (72 -> 96 registers) is a pure occupancy
// step.
func TestComputeLimiters(t *testing.T) {
	h200, _ := For("sm_90a")
	for _, tt := range []struct {
		name    string
		k       Kernel
		blocks  int
		limiter Limiter
	}{
		{"flash_fwd, 153 registers", Kernel{BlockSize: 128, Registers: 153, StaticSmem: 45056}, 3, Registers},
		{"flash_fwd capped at 32 registers", Kernel{BlockSize: 128, Registers: 32, StaticSmem: 45056}, 5, SharedMemory},
		{"gemm_wmma, 72 registers", Kernel{BlockSize: 128, Registers: 72, StaticSmem: 9728}, 7, Registers},
		{"gemm_wmma, 96 registers", Kernel{BlockSize: 128, Registers: 96, StaticSmem: 9728}, 5, Registers},
		{"row_softmax", Kernel{BlockSize: 256, Registers: 32, StaticSmem: 32}, 8, Warps},
		{"tiny blocks", Kernel{BlockSize: 32, Registers: 16}, 32, Blocks},
	} {
		r, err := Compute(h200, tt.k)
		if err != nil || r.BlocksPerSM != tt.blocks || r.Limiter != tt.limiter || r.WarpsPerSM != tt.blocks*((tt.k.BlockSize+31)/32) {
			t.Errorf("%s: %+v, %v; want %d blocks limited by %s", tt.name, r, err, tt.blocks, tt.limiter)
		}
	}
}

func TestComputeRefusesWhatCannotLaunch(t *testing.T) {
	l, _ := For("8.9")
	for _, k := range []Kernel{
		{BlockSize: 0}, {BlockSize: 1025}, {BlockSize: 128, Registers: 256},
		{BlockSize: 128, StaticSmem: 40000, DynamicSmem: 10000},
		{BlockSize: 128, DynamicSmem: 200000, OptIn: true},
		{BlockSize: 128, Registers: -1},
	} {
		if r, err := Compute(l, k); err == nil {
			t.Errorf("%+v: %+v, want an error", k, r)
		}
	}
	if _, err := Compute(l, Kernel{BlockSize: 128, DynamicSmem: 80000, OptIn: true}); err != nil {
		t.Errorf("opted in: %v", err)
	}
}

func TestFor(t *testing.T) {
	for in, want := range map[string]string{"sm_90a": "9.0", "sm_89": "8.9", "8.0": "8.0", "sm_100a": "", "sm_": "", "x": "", "sm_120f": ""} {
		l, ok := For(in)
		if ok != (want != "") || l.CC != want {
			t.Errorf("For(%q) = %q, %v; want %q", in, l.CC, ok, want)
		}
	}
}

// flash_fwd on the H200 as ptxas reports it (153 registers, 45056 bytes of shared memory)
// at its launch's 128 threads.
func ExampleCompute() {
	h200, _ := For("sm_90a")
	r, _ := Compute(h200, Kernel{BlockSize: 128, Registers: 153, StaticSmem: 45056})
	fmt.Printf("%d blocks, %d warps per SM (%.0f%%), limited by %s; shared memory alone would allow %d\n",
		r.BlocksPerSM, r.WarpsPerSM, 100*r.Occupancy, r.Limiter, r.Bound[SharedMemory])
	// Output: 3 blocks, 12 warps per SM (19%), limited by registers; shared memory alone would allow 5
}
