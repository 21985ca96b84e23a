// Quick self-test of the kernels against CPU references on small shapes. The full harness
// speaking kernel-gate/bench/v1 comes with the speedup and correctness gates.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "flash_fwd.cu"
#include "gemm_wmma.cu"
#include "softmax.cu"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); std::exit(2); } } while (0)

static float frand(unsigned& s) { s = s * 1664525u + 1013904223u; return ((s >> 8) & 0xffff) / 32768.0f - 1.0f; }

static double check_flash(int bh, int n, bool causal) {
  const int D = 64; size_t sz = (size_t)bh * n * D; unsigned seed = 7;
  std::vector<half> hq(sz), hk(sz), hv(sz), ho(sz);
  for (size_t i = 0; i < sz; ++i) { hq[i] = __float2half(frand(seed)); hk[i] = __float2half(frand(seed)); hv[i] = __float2half(frand(seed)); }
  half *q, *k, *v, *o;
  CK(cudaMalloc(&q, sz * 2)); CK(cudaMalloc(&k, sz * 2)); CK(cudaMalloc(&v, sz * 2)); CK(cudaMalloc(&o, sz * 2));
  CK(cudaMemcpy(q, hq.data(), sz * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(k, hk.data(), sz * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(v, hv.data(), sz * 2, cudaMemcpyHostToDevice));
  CK(kg::launch_flash_fwd(q, k, v, o, bh, n, causal)); CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(ho.data(), o, sz * 2, cudaMemcpyDeviceToHost));
  double max_err = 0; std::vector<double> p(n);
  for (int b = 0; b < bh; ++b) for (int i = 0; i < n; ++i) {
    const half* qi = &hq[((size_t)b * n + i) * D]; double m = -1e30, l = 0;
    int jend = causal ? i + 1 : n;
    for (int j = 0; j < jend; ++j) { const half* kj = &hk[((size_t)b * n + j) * D]; double s = 0;
      for (int d = 0; d < D; ++d) s += (double)__half2float(qi[d]) * __half2float(kj[d]);
      p[j] = s * 0.125; m = std::fmax(m, p[j]); }
    for (int j = 0; j < jend; ++j) { p[j] = std::exp(p[j] - m); l += p[j]; }
    for (int d = 0; d < D; ++d) { double acc = 0;
      for (int j = 0; j < jend; ++j) acc += p[j] * __half2float(hv[((size_t)b * n + j) * D + d]);
      double err = std::fabs(acc / l - __half2float(ho[((size_t)b * n + i) * D + d]));
      if (!(err <= max_err)) max_err = std::isnan(err) ? INFINITY : std::fmax(max_err, err); }
  }
  cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(o);
  return max_err;
}

static double check_gemm(int M, int N, int K) {
  unsigned seed = 11; std::vector<half> ha((size_t)M * K), hb((size_t)K * N); std::vector<float> hc((size_t)M * N);
  for (auto& x : ha) x = __float2half(frand(seed)); for (auto& x : hb) x = __float2half(frand(seed));
  half *a, *b; float* c;
  CK(cudaMalloc(&a, ha.size() * 2)); CK(cudaMalloc(&b, hb.size() * 2)); CK(cudaMalloc(&c, hc.size() * 4));
  CK(cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
  CK(kg::launch_gemm_wmma(a, b, c, M, N, K)); CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hc.data(), c, hc.size() * 4, cudaMemcpyDeviceToHost));
  double max_err = 0;
  for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) { double s = 0;
    for (int kk = 0; kk < K; ++kk) s += (double)__half2float(ha[(size_t)i * K + kk]) * __half2float(hb[(size_t)kk * N + j]);
    max_err = std::fmax(max_err, std::fabs(s - hc[(size_t)i * N + j])); }
  cudaFree(a); cudaFree(b); cudaFree(c);
  return max_err;
}

static double check_softmax(int rows, int cols) {
  unsigned seed = 5; std::vector<float> hx((size_t)rows * cols), hy(hx.size());
  for (auto& x : hx) x = 4 * frand(seed);
  float *x, *y; CK(cudaMalloc(&x, hx.size() * 4)); CK(cudaMalloc(&y, hx.size() * 4));
  CK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
  CK(kg::launch_row_softmax(x, y, rows, cols)); CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hy.data(), y, hy.size() * 4, cudaMemcpyDeviceToHost));
  double max_err = 0;
  for (int r = 0; r < rows; ++r) { double m = -1e30, s = 0;
    for (int c = 0; c < cols; ++c) m = std::fmax(m, hx[(size_t)r * cols + c]);
    for (int c = 0; c < cols; ++c) s += std::exp(hx[(size_t)r * cols + c] - m);
    for (int c = 0; c < cols; ++c) max_err = std::fmax(max_err, std::fabs(std::exp(hx[(size_t)r * cols + c] - m) / s - hy[(size_t)r * cols + c])); }
  cudaFree(x); cudaFree(y);
  return max_err;
}

int main() {
  double e1 = check_flash(8, 512, false), e2 = check_flash(8, 512, true), e3 = check_flash(2, 200, true);
  double e4 = check_gemm(256, 192, 320), e5 = check_softmax(64, 1000);
  std::printf("flash_fwd small non-causal max_err=%.5f\nflash_fwd small causal max_err=%.5f\n"
              "flash_fwd ragged(200) causal max_err=%.5f\ngemm_wmma 256x192x320 max_err=%.5f\n"
              "row_softmax 64x1000 max_err=%.7f\n", e1, e2, e3, e4, e5);
  bool ok = e1 < 0.06 && e2 < 0.06 && e3 < 0.06 && e4 < 0.05 && e5 < 1e-5;
  std::printf("%s\n", ok ? "SELFTEST PASS" : "SELFTEST FAIL");
  return ok ? 0 : 1;
}
