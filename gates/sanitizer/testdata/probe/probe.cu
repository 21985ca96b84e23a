// probe.cu: planted bugs for capturing compute-sanitizer output that bugs.cu does not cover.
// Built and run by capture.sh on the GPU machine; not a kernel of the project.
#include <cassert>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e!=cudaSuccess){printf("CUDA error %s at %s:%d\n",cudaGetErrorString(e),__FILE__,__LINE__);}}while(0)

__global__ void misaligned(float* p) { float* q = (float*)((char*)p + 2); q[threadIdx.x] = 1.0f; }
__global__ void bad_address(float* p) { p[threadIdx.x] = 2.0f; }
__global__ void smem_oob(float* out, int n) {
  extern __shared__ float s[];
  s[threadIdx.x + n] = 1.0f;
  out[threadIdx.x] = s[threadIdx.x];
}
__global__ void same_value_race(float* out) {
  __shared__ float s[1];
  s[0] = 1.0f;                  // every thread writes the same value
  out[threadIdx.x] = s[0];
}
__global__ void war_race(float* out) {
  __shared__ float s[64];
  float v = s[(threadIdx.x + 1) % 64];  // read ...
  s[threadIdx.x % 64] = v + 1.0f;       // ... then another thread writes: WAR
  out[threadIdx.x] = v;
}
__global__ void bad_syncwarp(float* out) {
  if (threadIdx.x < 16) __syncwarp(0xffffffff);
  out[threadIdx.x] = 1.0f;
}
__global__ void dev_assert(const int* p) { assert(p[threadIdx.x] == 42); }
__global__ void fine(float* out) { out[threadIdx.x] = threadIdx.x; }
__global__ void hang(float* out) { volatile float* p = out; while (p[0] < 1e30f) { p[1] += 1.0f; } }
template <typename T, int N>
__global__ void tmpl_oob(T* out, int n) { out[n + threadIdx.x] = T(N); }
namespace kg {
__global__ void ns_oob(float* out, int n) { out[n + threadIdx.x] = 1.0f; }
}

int main(int argc, char** argv) {
  const char* c = argc > 1 ? argv[1] : "fine";
  if (!strcmp(c, "nocuda")) { printf("done nocuda\n"); return 0; }
  float* d; int* di;
  CK(cudaMalloc(&d, 256 * sizeof(float)));
  CK(cudaMalloc(&di, 256 * sizeof(int)));
  CK(cudaMemset(d, 0, 256 * sizeof(float)));
  CK(cudaMemset(di, 0, 256 * sizeof(int)));
  if (!strcmp(c, "misaligned")) { misaligned<<<1, 32>>>(d); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "badaddr")) { bad_address<<<1, 32>>>((float*)0x10); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "smem")) { smem_oob<<<1, 32, 32 * sizeof(float)>>>(d, 64); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "samevalue")) { same_value_race<<<1, 64>>>(d); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "war")) { war_race<<<1, 64>>>(d); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "syncwarp")) { bad_syncwarp<<<1, 32>>>(d); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "assert")) { dev_assert<<<1, 4>>>(di); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "apierr")) { float h[4]; CK(cudaMemcpy(h, (void*)0x1234, 16, cudaMemcpyDeviceToHost)); }
  if (!strcmp(c, "doublefree")) { float* f; CK(cudaMalloc(&f, 64)); CK(cudaFree(f)); CK(cudaFree(f)); }
  if (!strcmp(c, "tmpl")) {
    tmpl_oob<float, 3><<<1, 4>>>(d, 256); CK(cudaDeviceSynchronize());
  }
  if (!strcmp(c, "ns")) { kg::ns_oob<<<1, 4>>>(d, 256); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "uninitcopy")) {
    float* u; float h[64]; CK(cudaMalloc(&u, 64 * sizeof(float)));
    CK(cudaMemcpy(h, u, sizeof(h), cudaMemcpyDeviceToHost)); CK(cudaFree(u));
  }
  if (!strcmp(c, "unused")) { float* u; CK(cudaMalloc(&u, 4096)); fine<<<1, 32>>>(d); CK(cudaDeviceSynchronize()); CK(cudaFree(u)); }
  if (!strcmp(c, "leak")) { float* l; CK(cudaMalloc(&l, 4096)); fine<<<1, 32>>>(d); CK(cudaDeviceSynchronize()); }
  if (!strcmp(c, "fine") || !strcmp(c, "exit3") || !strcmp(c, "abort") || !strcmp(c, "segv")) {
    fine<<<1, 32>>>(d); fine<<<2, 32>>>(d); CK(cudaDeviceSynchronize());
  }
  if (!strcmp(c, "hang")) { hang<<<1, 1>>>(d); CK(cudaDeviceSynchronize()); }
  // "nolaunch": allocations only.
  CK(cudaFree(d)); CK(cudaFree(di));
  printf("done %s\n", c);
  fflush(stdout);
  if (!strcmp(c, "exit3")) return 3;
  if (!strcmp(c, "abort")) abort();
  if (!strcmp(c, "segv")) raise(SIGSEGV);
  return 0;
}
