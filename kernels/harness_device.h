// The harness's own device code, as harness_cases.cpp (host-only, compiled without CUDA's front end)
// calls it: the launchers of harness_device.cu's fp64 reference kernels and random fills.
// Each queues its kernel on the default stream and returns, as the <<<...>>> launch it stands
// for did in harness.cu: the caller checks cudaGetLastError() and synchronises. The
// comparisons on the GPU are check_errors.cuh's (instantiated in harness_device.cu), the
// stream's hold kg_bench.h's (KG_BENCH_EXTERN_HOLD, defined in harness_device.cu).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace kgharness {

// o[bh][i][:] = softmax(q k^T * scale) v in fp64, rows of 64 (as flash_fwd), stored as float;
// causal: row i sees keys 0..i. One thread per output row.
void launch_attention_reference(const half* q, const half* k, const half* v, float* o, int bh_count, int n,
                                bool causal, double scale);
// c[M][N] = a[M][K] b[K][N] in fp64, stored as float. One thread per output element.
void launch_gemm_reference(const half* a, const half* b, float* c, int M, int N, int K);
// y[r][:] = softmax(x[r][:]) in fp64, stored as float. One thread per row.
void launch_softmax_reference(const float* x, float* y, int rows, int cols);

// p[0..n) = N(0, scale²) draws from seed, on the GPU (a counter-based hash and Box-Muller):
// the same seed draws the same values.
void launch_fill_normal(half* p, size_t n, unsigned seed, float scale);
void launch_fill_normal(float* p, size_t n, unsigned seed, float scale);

}  // namespace kgharness
