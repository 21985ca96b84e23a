// Records what the CUDA runtime says about the occupancy of every kernel of kernels/, for
// the occupancy calculator's tests (issue 24): cudaFuncGetAttributes (registers, static
// shared memory, local memory) and cudaOccupancyMaxActiveBlocksPerMultiprocessor over block
// sizes and dynamic shared memory, plus the device's per-SM limits. One JSON document on
// standard output. Built and run by capture.sh beside it; the flags it was built with
// (KG_FLASH_MIN_BLOCKS, -maxrregcount) are named in "variant".
#include <cstdio>
#include <cuda_runtime.h>

#include "../../kernels/flash_fwd.cu"
#include "../../kernels/gemm_wmma.cu"
#include "../../kernels/softmax.cu"

#ifndef KG_VARIANT
#define KG_VARIANT "default"
#endif

static bool first_kernel = true;

template <typename F>
static void record(const char* name, F* fn, int launch_block) {
  cudaFuncAttributes a{};
  if (cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(fn)) != cudaSuccess) {
    fprintf(stderr, "cudaFuncGetAttributes(%s) failed\n", name);
    return;
  }
  printf("%s\n    {\"kernel\": \"%s\", \"launch_block\": %d, \"regs\": %d, \"static_smem\": %zu, \"local\": %zu, "
         "\"max_threads_per_block\": %d, \"ptx_version\": %d, \"binary_version\": %d,\n     \"occupancy\": [",
         first_kernel ? "" : ",", name, launch_block, a.numRegs, a.sharedSizeBytes, a.localSizeBytes,
         a.maxThreadsPerBlock, a.ptxVersion, a.binaryVersion);
  first_kernel = false;
  bool first = true;
  const size_t dyn[] = {0, 1024, 8192, 16384, 32768, 49152};
  for (int block = 32; block <= a.maxThreadsPerBlock; block += 32) {
    for (size_t d : dyn) {
      // Only the launch's block size with every dynamic size; every block size without.
      if (d != 0 && block != launch_block) continue;
      int blocks = -1;
      cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, block, d);
      printf("%s{\"block\": %d, \"dynamic_smem\": %zu, \"blocks_per_sm\": %d%s}", first ? "" : ", ", block, d,
             e == cudaSuccess ? blocks : -1, e == cudaSuccess ? "" : ", \"error\": true");
      first = false;
    }
  }
  printf("]}");
}

int main() {
  int dev = 0;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    fprintf(stderr, "no CUDA device\n");
    return 3;
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  printf("{\"schema\": \"kernel-gate/occupancy-capture/v1\", \"variant\": \"%s\",\n", KG_VARIANT);
  printf(" \"device\": {\"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, \"regs_per_sm\": %d, \"regs_per_block\": %d, "
         "\"smem_per_sm\": %zu, \"smem_per_block\": %zu, \"smem_per_block_optin\": %zu, \"reserved_smem_per_block\": %zu, "
         "\"max_threads_per_sm\": %d, \"max_blocks_per_sm\": %d, \"warp_size\": %d, \"driver\": %d, \"runtime\": %d},\n",
         p.name, p.major, p.minor, p.multiProcessorCount, p.regsPerMultiprocessor, p.regsPerBlock,
         p.sharedMemPerMultiprocessor, p.sharedMemPerBlock, p.sharedMemPerBlockOptin, p.reservedSharedMemPerBlock,
         p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor, p.warpSize, driver, runtime);
  printf(" \"kernels\": [");
  record("kg::flash_fwd<64, 64, false>", kg::flash_fwd<64, 64, false>, 128);
  record("kg::flash_fwd<64, 64, true>", kg::flash_fwd<64, 64, true>, 128);
  record("kg::gemm_wmma<64, 64, 32>", kg::gemm_wmma<64, 64, 32>, 128);
  record("kg::row_softmax<256>", kg::row_softmax<256>, 256);
  printf("\n ]}\n");
  return 0;
}
