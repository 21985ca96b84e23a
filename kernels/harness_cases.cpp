// The harness's kernels under test (harness_cases.h): buffers, checks against the fp64
// references on the GPU, timers and sanitize launches, per kernel family. Host-only, as
// harness.cpp: its device code is harness_device.cu's.
#include "harness_cases.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "check_errors.cuh"
#include "flash_fwd.h"
#include "gemm_wmma.h"
#include "harness_device.h"
#include "softmax.h"

namespace kgharness {
namespace {

// ---- buffers and errors ----

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) throw std::string(cudaGetErrorString(e_)) + " at " #x;           \
  } while (0)

// Output buffers in check and bench mode carry a tail, so that a stray write past the end
// cannot crash a correctness or timing run; finding such writes is the sanitizer gate's job,
// and sanitize mode allocates every buffer to its exact size.
constexpr size_t kTailBytes = 64 << 10;

template <class T>
struct Buf {
  T* p = nullptr;
  size_t n = 0;
  explicit Buf(size_t count, size_t tail_bytes = 0) : n(count) { CK(cudaMalloc(&p, count * sizeof(T) + tail_bytes)); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
};

// Fresh N(0, scale²) inputs from a seed; every check draws new ones (on the GPU:
// harness_device.cu's normal_kernel).
template <class T>
void fill_normal(Buf<T>& b, unsigned seed, float scale = 1.0f) {
  kgharness::launch_fill_normal(b.p, b.n, seed, scale);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
}

// Errors sums the comparisons of a case's checks (kgcheck::Compare, on the GPU): NaN and Inf
// in the output are counted (and bad) and left out of the rest.
struct Errors {
  double max_err = 0, sum_err = 0, ref_max_abs = 0;
  long long nan = 0, inf = 0, bad = 0, n = 0;
  template <class T>
  void add(const T* got, const float* ref, size_t count, double atol, double rtol) {
    kgcheck::ErrorSums s;
    CK(kgcheck::Compare(got, ref, count, atol, rtol, &s));
    max_err = std::max(max_err, s.max_err);
    sum_err += s.sum_err;
    ref_max_abs = std::max(ref_max_abs, s.ref_max_abs);
    nan += (long long)s.nan;
    inf += (long long)s.inf;
    bad += (long long)s.bad;
    n += (long long)count;
  }
};

// max_diff is the largest difference of two outputs on the GPU: Inf when a NaN of one is not
// a NaN of the other.
template <class T>
double max_diff(const T* a, const T* b, size_t count) {
  double d = 0;
  CK(kgcheck::MaxDiff(a, b, count, &d));
  return d;
}

// ---- kernels under test: each knows its shapes, how to check and how to time ----

// How many copies of the inputs to rotate through so the L2 (50-60 MB) cannot hold them.
int copies_for(size_t bytes) { return (int)std::clamp<size_t>((256u << 20) / std::max<size_t>(bytes, 1), 1, 64); }

// make_timer warms launch up (3 × copies + 10 launches, discarded) and returns the Timer
// that times it; launch(i) launches on copy i and must own (capture) its buffers.
template <class Launch>
Timer make_timer(int copies, Launch launch) {
  for (int i = 0; i < 3 * copies + 10; ++i) launch(i % copies);
  CK(cudaDeviceSynchronize());
  return [copies, launch](int samples) {
    std::vector<double> us = kgbench::TimeLaunches([&](int i) { launch(i % copies); }, samples, 0);
    CK(cudaGetLastError());
    return us;
  };
}

template <class T>
using Bufs = std::shared_ptr<std::vector<std::unique_ptr<Buf<T>>>>;

template <class T>
Bufs<T> new_bufs() { return std::make_shared<std::vector<std::unique_ptr<Buf<T>>>>(); }

struct Attention : Case {
  int b, h, n;
  bool causal;
  Attention(int b_, int h_, int n_, bool c) : b(b_), h(h_), n(n_), causal(c) {}
  int block_size() const override { return 64 / 16 * 32; }  // launch_flash_fwd: kBlockM / 16 * 32
  size_t elems() const { return (size_t)b * h * n * 64; }

  void check(kgbench::Result& r, int checks) override {
    Buf<half> q(elems()), k(elems()), v(elems()), o(elems(), kTailBytes), o2(elems(), kTailBytes), first(elems());
    Buf<float> ref(elems());
    Errors err;
    for (int c = 0; c < checks; ++c) {
      fill_normal(q, 100 + 3 * c);
      fill_normal(k, 101 + 3 * c);
      fill_normal(v, 102 + 3 * c);
      CK(kg::launch_flash_fwd(q.p, k.p, v.p, o.p, b * h, n, causal));
      kgharness::launch_attention_reference(q.p, k.p, v.p, ref.p, b * h, n, causal, 0.125);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      err.add(o.p, ref.p, elems(), 0.02, 0.02);
    }
    // The same input again: a kernel with state left from its first call fails here. The last
    // check's output is kept aside, where no launch under test writes, and compared on the GPU.
    CK(cudaMemcpy(first.p, o.p, elems() * sizeof(half), cudaMemcpyDeviceToDevice));
    double rep = 0;
    const int repeats = 3;
    for (int i = 0; i < repeats; ++i) {
      CK(kg::launch_flash_fwd(q.p, k.p, v.p, o2.p, b * h, n, causal));
      CK(cudaDeviceSynchronize());
      rep = std::max(rep, max_diff(first.p, o2.p, elems()));
    }
    fill(r, err, checks, repeats + 1, rep);
  }

  static void fill(kgbench::Result& r, const Errors& e, int checks, int launches, double rep) {
    r.max_err = e.max_err;
    r.mean_err = e.n ? e.sum_err / e.n : 0;
    r.ref_max_abs = e.ref_max_abs;
    r.bad_fraction = e.n ? (double)e.bad / e.n : 0;
    r.nan_count = e.nan;
    r.inf_count = e.inf;
    r.checks = checks;
    r.repeat_launches = launches;
    r.repeat_max_diff = rep;
  }

  Timer timer() override {
    const int copies = copies_for(4 * elems() * sizeof(half));
    Bufs<half> bufs = new_bufs<half>();
    for (int i = 0; i < 4 * copies; ++i) bufs->push_back(std::make_unique<Buf<half>>(elems(), i % 4 == 3 ? kTailBytes : 0));
    for (int i = 0; i < copies; ++i)
      for (int j = 0; j < 3; ++j) fill_normal(*(*bufs)[4 * i + j], 7 + 4 * i + j);
    const int bh = b * h, seqlen = n;
    const bool c = causal;
    return make_timer(copies, [bufs, bh, seqlen, c](int i) {
      const auto& v = *bufs;
      kg::launch_flash_fwd(v[4 * i]->p, v[4 * i + 1]->p, v[4 * i + 2]->p, v[4 * i + 3]->p, bh, seqlen, c);
    });
  }

  void sanitize() override {
    Buf<half> q(elems()), k(elems()), v(elems()), o(elems());  // O stays uninitialised on purpose
    fill_normal(q, 1);
    fill_normal(k, 2);
    fill_normal(v, 3);
    CK(kg::launch_flash_fwd(q.p, k.p, v.p, o.p, b * h, n, causal));
    CK(cudaDeviceSynchronize());
  }
};

struct Gemm : Case {
  int m, nn, kk;
  Gemm(int m_, int n_, int k_) : m(m_), nn(n_), kk(k_) {}
  int block_size() const override { return 128; }  // launch_gemm_wmma
  void check(kgbench::Result& r, int checks) override {
    Buf<half> a((size_t)m * kk), b((size_t)kk * nn);
    Buf<float> c((size_t)m * nn), c2((size_t)m * nn), ref((size_t)m * nn), first((size_t)m * nn);
    Errors err;
    for (int i = 0; i < checks; ++i) {
      fill_normal(a, 200 + 2 * i);
      fill_normal(b, 201 + 2 * i);
      CK(kg::launch_gemm_wmma(a.p, b.p, c.p, m, nn, kk));
      kgharness::launch_gemm_reference(a.p, b.p, ref.p, m, nn, kk);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      err.add(c.p, ref.p, c.n, 1e-2, 1e-3);
    }
    CK(cudaMemcpy(first.p, c.p, c.n * sizeof(float), cudaMemcpyDeviceToDevice));  // as Attention's
    double rep = 0;
    for (int i = 0; i < 3; ++i) {
      CK(kg::launch_gemm_wmma(a.p, b.p, c2.p, m, nn, kk));
      CK(cudaDeviceSynchronize());
      rep = std::max(rep, max_diff(first.p, c2.p, c.n));
    }
    Attention::fill(r, err, checks, 4, rep);
  }
  Timer timer() override {
    const size_t bytes = ((size_t)m * kk + (size_t)kk * nn) * 2 + (size_t)m * nn * 4;
    const int copies = copies_for(bytes);
    Bufs<half> ab = new_bufs<half>();
    Bufs<float> cs = new_bufs<float>();
    for (int i = 0; i < copies; ++i) {
      ab->push_back(std::make_unique<Buf<half>>((size_t)m * kk));
      ab->push_back(std::make_unique<Buf<half>>((size_t)kk * nn));
      cs->push_back(std::make_unique<Buf<float>>((size_t)m * nn));
      fill_normal(*(*ab)[2 * i], 9 + i);
      fill_normal(*(*ab)[2 * i + 1], 99 + i);
    }
    const int M = m, N = nn, K = kk;
    return make_timer(copies, [ab, cs, M, N, K](int i) {
      kg::launch_gemm_wmma((*ab)[2 * i]->p, (*ab)[2 * i + 1]->p, (*cs)[i]->p, M, N, K);
    });
  }
  void sanitize() override {
    Buf<half> a((size_t)m * kk), b((size_t)kk * nn);
    Buf<float> c((size_t)m * nn);
    fill_normal(a, 1);
    fill_normal(b, 2);
    CK(kg::launch_gemm_wmma(a.p, b.p, c.p, m, nn, kk));
    CK(cudaDeviceSynchronize());
  }
};

struct Softmax : Case {
  int rows, cols;
  Softmax(int r, int c) : rows(r), cols(c) {}
  int block_size() const override { return 256; }  // launch_row_softmax
  void check(kgbench::Result& r, int checks) override {
    Buf<float> x((size_t)rows * cols), y(x.n), y2(x.n), ref(x.n), first(x.n);
    Errors err;
    for (int i = 0; i < checks; ++i) {
      fill_normal(x, 300 + i, 4.0f);
      CK(kg::launch_row_softmax(x.p, y.p, rows, cols));
      kgharness::launch_softmax_reference(x.p, ref.p, rows, cols);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      err.add(y.p, ref.p, y.n, 1e-6, 1e-3);
    }
    CK(cudaMemcpy(first.p, y.p, y.n * sizeof(float), cudaMemcpyDeviceToDevice));  // as Attention's
    double rep = 0;
    for (int i = 0; i < 3; ++i) {
      CK(kg::launch_row_softmax(x.p, y2.p, rows, cols));
      CK(cudaDeviceSynchronize());
      rep = std::max(rep, max_diff(first.p, y2.p, y.n));
    }
    Attention::fill(r, err, checks, 4, rep);
  }
  Timer timer() override {
    const int copies = copies_for((size_t)rows * cols * 8);
    Bufs<float> xs = new_bufs<float>(), ys = new_bufs<float>();
    for (int i = 0; i < copies; ++i) {
      xs->push_back(std::make_unique<Buf<float>>((size_t)rows * cols));
      ys->push_back(std::make_unique<Buf<float>>((size_t)rows * cols));
      fill_normal(*(*xs)[i], 5 + i, 4.0f);
    }
    const int R = rows, C = cols;
    return make_timer(copies, [xs, ys, R, C](int i) { kg::launch_row_softmax((*xs)[i]->p, (*ys)[i]->p, R, C); });
  }
  void sanitize() override {
    Buf<float> x((size_t)rows * cols), y(x.n);
    fill_normal(x, 1, 4.0f);
    CK(kg::launch_row_softmax(x.p, y.p, rows, cols));
    CK(cudaDeviceSynchronize());
  }
};

}  // namespace

Case* make_case(const std::string& kernel, const std::string& shape) {
  static const std::map<std::string, std::vector<int>> attn = {
      {"small", {1, 8, 512}}, {"mission", {2, 8, 512}}, {"long", {2, 8, 2048}}};
  static const std::map<std::string, std::vector<int>> gemm = {
      {"small", {512, 512, 512}}, {"mission", {2048, 2048, 2048}}, {"long", {4096, 4096, 4096}}};
  static const std::map<std::string, std::vector<int>> smax = {
      {"small", {1024, 512}}, {"mission", {8192, 1024}}, {"long", {32768, 2048}}};
  if (kernel == "flash_fwd" || kernel == "flash_fwd_causal") {
    auto it = attn.find(shape);
    return it == attn.end() ? nullptr : new Attention(it->second[0], it->second[1], it->second[2], kernel == "flash_fwd_causal");
  }
  if (kernel == "gemm_wmma") {
    auto it = gemm.find(shape);
    return it == gemm.end() ? nullptr : new Gemm(it->second[0], it->second[1], it->second[2]);
  }
  if (kernel == "row_softmax") {
    auto it = smax.find(shape);
    return it == smax.end() ? nullptr : new Softmax(it->second[0], it->second[1]);
  }
  return nullptr;
}

}  // namespace kgharness
