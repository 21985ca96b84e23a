// Package occupancy is the CUDA occupancy calculator: how many blocks of a kernel fit on
// one streaming multiprocessor at once, given the kernel's registers per thread, its shared
// memory and its block size, and which resource stops one more block from fitting.
//
// It computes what cudaOccupancyMaxActiveBlocksPerMultiprocessor answers, in three steps:
//
//  1. The GPU's per-SM limits come from a table per compute capability (For): warps,
//     blocks, registers and shared memory per SM, and how each is allocated (registers
//     per warp in units of 256 across four sub-partitions; shared memory in units of 128
//     bytes, plus 1 KiB the system reserves per block from compute capability 8.0).
//  2. Each resource bounds the blocks per SM on its own (Compute): warps, the block
//     limit, registers, shared memory.
//  3. The smallest bound is the answer, and the resource that set it is the limiter.
//
// The table and the arithmetic are checked against the CUDA runtime's own answers for
// every kernel of kernels/ on an H200 (testdata/occupancy-h200).
package occupancy

import (
	"fmt"
	"strings"
)

// Limits are a GPU's per-SM resources and allocation rules.
type Limits struct {
	// CC is the compute capability, "9.0".
	CC string
	// MaxWarpsPerSM and MaxBlocksPerSM bound resident warps and blocks.
	MaxWarpsPerSM, MaxBlocksPerSM int
	// RegsPerSM is the register file (32-bit registers); MaxRegsPerThread the most one
	// thread may have. Registers are allocated per warp in units of RegAllocUnit, from
	// SubPartitions equal shares of the file.
	RegsPerSM, MaxRegsPerThread, RegAllocUnit, SubPartitions int
	// SmemPerSM is the most shared memory an SM gives its blocks (bytes, the largest
	// carveout); SmemPerBlock what one block may use without opting in
	// (cudaFuncAttributeMaxDynamicSharedMemorySize), SmemPerBlockOptIn with it.
	SmemPerSM, SmemPerBlock, SmemPerBlockOptIn int
	// SmemAllocUnit is the granularity of a block's shared memory; ReservedSmemPerBlock
	// what the system takes per block beside it.
	SmemAllocUnit, ReservedSmemPerBlock int
}

// table holds the limits of the compute capabilities kernel-gate's users run (CUDA C++
// Programming Guide, "Features and Technical Specifications"; 9.0 checked against the
// runtime on an H200).
var table = []Limits{
	{CC: "7.0", MaxWarpsPerSM: 64, MaxBlocksPerSM: 32, RegsPerSM: 65536, MaxRegsPerThread: 255, RegAllocUnit: 256, SubPartitions: 4,
		SmemPerSM: 98304, SmemPerBlock: 49152, SmemPerBlockOptIn: 98304, SmemAllocUnit: 256},
	{CC: "7.5", MaxWarpsPerSM: 32, MaxBlocksPerSM: 16, RegsPerSM: 65536, MaxRegsPerThread: 255, RegAllocUnit: 256, SubPartitions: 4,
		SmemPerSM: 65536, SmemPerBlock: 49152, SmemPerBlockOptIn: 65536, SmemAllocUnit: 256},
	{CC: "8.0", MaxWarpsPerSM: 64, MaxBlocksPerSM: 32, RegsPerSM: 65536, MaxRegsPerThread: 255, RegAllocUnit: 256, SubPartitions: 4,
		SmemPerSM: 167936, SmemPerBlock: 49152, SmemPerBlockOptIn: 166912, SmemAllocUnit: 128, ReservedSmemPerBlock: 1024},
	{CC: "8.6", MaxWarpsPerSM: 48, MaxBlocksPerSM: 16, RegsPerSM: 65536, MaxRegsPerThread: 255, RegAllocUnit: 256, SubPartitions: 4,
		SmemPerSM: 102400, SmemPerBlock: 49152, SmemPerBlockOptIn: 101376, SmemAllocUnit: 128, ReservedSmemPerBlock: 1024},
	{CC: "8.7", MaxWarpsPerSM: 48, MaxBlocksPerSM: 16, RegsPerSM: 65536, MaxRegsPerThread: 255, RegAllocUnit: 256, SubPartitions: 4,
		SmemPerSM: 167936, SmemPerBlock: 49152, SmemPerBlockOptIn: 166912, SmemAllocUnit: 128, ReservedSmemPerBlock: 1024},
	{CC: "8.9", MaxWarpsPerSM: 48, MaxBlocksPerSM: 24, RegsPerSM: 65536, MaxRegsPerThread: 255, RegAllocUnit: 256, SubPartitions: 4,
		SmemPerSM: 102400, SmemPerBlock: 49152, SmemPerBlockOptIn: 101376, SmemAllocUnit: 128, ReservedSmemPerBlock: 1024},
	{CC: "9.0", MaxWarpsPerSM: 64, MaxBlocksPerSM: 32, RegsPerSM: 65536, MaxRegsPerThread: 255, RegAllocUnit: 256, SubPartitions: 4,
		SmemPerSM: 233472, SmemPerBlock: 49152, SmemPerBlockOptIn: 232448, SmemAllocUnit: 128, ReservedSmemPerBlock: 1024},
}

// For returns the limits of a compute capability ("9.0") or an arch ("sm_90a", "sm_89").
func For(ccOrArch string) (Limits, bool) {
	cc := ccOrArch
	if a, ok := strings.CutPrefix(ccOrArch, "sm_"); ok {
		a = strings.TrimRight(a, "af")
		if len(a) < 2 {
			return Limits{}, false
		}
		cc = a[:len(a)-1] + "." + a[len(a)-1:]
	}
	for _, l := range table {
		if l.CC == cc {
			return l, true
		}
	}
	return Limits{}, false
}

// MaxBlockSize is the most threads a CUDA block can have, on every compute capability.
const MaxBlockSize = 1024

// Kernel is what occupancy depends on of one launch.
type Kernel struct {
	// BlockSize is threads per block.
	BlockSize int
	// Registers is registers per thread (ptxas's "Used N registers").
	Registers int
	// StaticSmem and DynamicSmem are the block's shared memory in bytes: what ptxas
	// reports ("bytes smem") and what the launch asks for.
	StaticSmem, DynamicSmem int
	// OptIn says the kernel raised its dynamic shared memory limit
	// (cudaFuncAttributeMaxDynamicSharedMemorySize) past the default 48 KiB per block.
	OptIn bool
}

// Limiter names the resource that bounds the blocks per SM.
type Limiter string

const (
	Warps        Limiter = "warps"
	Blocks       Limiter = "blocks"
	Registers    Limiter = "registers"
	SharedMemory Limiter = "shared memory"
)

// Result is a kernel's occupancy on one SM.
type Result struct {
	BlocksPerSM, WarpsPerSM int
	// Occupancy is WarpsPerSM over the SM's maximum, 0..1.
	Occupancy float64
	// Limiter is the resource that set BlocksPerSM (the first of warps, blocks, registers,
	// shared memory when several tie).
	Limiter Limiter
	// Bound holds each resource's own bound on blocks per SM.
	Bound map[Limiter]int
}

// Compute returns the occupancy of k on a GPU with limits l. A kernel that cannot launch
// at all (a block over 1024 threads or the SM's warps, more registers than a thread may
// have, more shared memory than a block may use) is an error naming the resource.
func Compute(l Limits, k Kernel) (Result, error) {
	const warpSize = 32
	if k.BlockSize <= 0 || k.BlockSize > MaxBlockSize {
		return Result{}, fmt.Errorf("a block of %d threads cannot launch (1 to %d)", k.BlockSize, MaxBlockSize)
	}
	if k.Registers < 0 || k.StaticSmem < 0 || k.DynamicSmem < 0 {
		return Result{}, fmt.Errorf("negative resources: %d registers, %d + %d bytes of shared memory", k.Registers, k.StaticSmem, k.DynamicSmem)
	}
	warps := ceilDiv(k.BlockSize, warpSize)
	bound := map[Limiter]int{Warps: l.MaxWarpsPerSM / warps, Blocks: l.MaxBlocksPerSM}

	if k.Registers > l.MaxRegsPerThread {
		return Result{}, fmt.Errorf("%d registers per thread: a thread may have at most %d", k.Registers, l.MaxRegsPerThread)
	}
	bound[Registers] = l.MaxBlocksPerSM
	if k.Registers > 0 {
		perWarp := roundUp(k.Registers*warpSize, l.RegAllocUnit)
		warpsPerSub := l.RegsPerSM / l.SubPartitions / perWarp
		bound[Registers] = warpsPerSub * l.SubPartitions / warps
	}

	smem := k.StaticSmem + k.DynamicSmem
	perBlock := l.SmemPerBlock
	if k.OptIn {
		perBlock = l.SmemPerBlockOptIn
	}
	if smem > perBlock {
		return Result{}, fmt.Errorf("%d bytes of shared memory per block: at most %d", smem, perBlock)
	}
	bound[SharedMemory] = l.MaxBlocksPerSM
	if smem > 0 {
		bound[SharedMemory] = l.SmemPerSM / roundUp(smem+l.ReservedSmemPerBlock, l.SmemAllocUnit)
	}

	r := Result{Bound: bound, BlocksPerSM: bound[Warps], Limiter: Warps}
	for _, lim := range []Limiter{Blocks, Registers, SharedMemory} {
		if bound[lim] < r.BlocksPerSM {
			r.BlocksPerSM, r.Limiter = bound[lim], lim
		}
	}
	r.WarpsPerSM = r.BlocksPerSM * warps
	r.Occupancy = float64(r.WarpsPerSM) / float64(l.MaxWarpsPerSM)
	return r, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(a, unit int) int {
	if unit <= 0 {
		return a
	}
	return ceilDiv(a, unit) * unit
}
