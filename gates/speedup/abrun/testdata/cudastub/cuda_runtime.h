// A stand-in for the CUDA runtime's header, for tests only: it lets kernels/kg_bench.h be
// compiled as plain C++ without a CUDA toolkit (gates/speedup/abrun's kg_bench.h tests). An
// "event" is the host's clock when it is recorded, so TimeLaunches times whatever launch(i)
// does on the host; the device is a fixed fake H200. Nothing here touches a GPU.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstring>
#include <new>

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorUnknown = 999 };
enum { cudaHostAllocPortable = 1, cudaHostAllocMapped = 2 };
typedef struct CUstream_st* cudaStream_t;
struct kgStubEvent {
  std::chrono::steady_clock::time_point t;
};
typedef kgStubEvent* cudaEvent_t;
struct cudaDeviceProp {
  char name[256];
  int major, minor;
};

inline cudaError_t cudaEventCreate(cudaEvent_t* e) { *e = new kgStubEvent{}; return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = nullptr) {
  e->t = std::chrono::steady_clock::now();
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  std::strcpy(p->name, "NVIDIA H200");
  p->major = 9;
  p->minor = 0;
  return cudaSuccess;
}
inline cudaError_t cudaRuntimeGetVersion(int* v) { *v = 13000; return cudaSuccess; }
inline cudaError_t cudaDriverGetVersion(int* v) { *v = 13000; return cudaSuccess; }
#ifdef KG_STUB_PINNED
// Pinned, mapped memory as ordinary host memory whose device pointer is itself (unified
// addressing): for tests of kg_bench.h's holds, whose "kernel" is the test's own function.
inline cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) {
  *p = ::operator new(n);
  std::memset(*p, 0, n);
  return cudaSuccess;
}
inline cudaError_t cudaFreeHost(void* p) {
  ::operator delete(p);
  return cudaSuccess;
}
inline cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned) {
  *d = h;
  return cudaSuccess;
}
#else
inline cudaError_t cudaHostAlloc(void**, size_t, unsigned) { return cudaErrorUnknown; }
inline cudaError_t cudaFreeHost(void*) { return cudaSuccess; }
inline cudaError_t cudaHostGetDevicePointer(void**, void*, unsigned) { return cudaErrorUnknown; }
#endif
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
