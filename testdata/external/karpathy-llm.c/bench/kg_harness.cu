// kg_harness.cu: a kernel-gate/bench/v1 harness (docs/harness-protocol.md) for llm.c's
// LayerNorm backward, written from the docs as a new user would, with kg_bench.h
// (kernel-gate's kernels/kg_bench.h, copied beside it by testdata/external/run.sh).
//
// It includes the repository's own train_gpt2.cu (src/, unmodified) the way the repository's
// test_gpt2.cu does, with TESTING defined so that its main() is left out, and calls its host
// function layernorm_backward(), which launches one kernel: layernorm_backward_kernel8 at the
// base commit, layernorm_backward_kernel9 after "Fully deterministic layernorm" (head.patch).
// Both launch 512 threads per block, 2 blocks per SM on an H100 (grid = 2 × SMs).
//
// One harness kernel, layernorm_backward, bf16 (train_gpt2.cu's default floatX):
//
//   small   B = 1, T = 64,   C = 768    the sanitizer's shape (GPT-2 124M's channels)
//   mission B = 8, T = 1024, C = 768    a training micro-batch: checked and timed
//
//   KG_MODE=check     KG_ROUNDS checks on fresh inputs (inp N(0, 1) + a row offset, dout
//                     N(0, 1), weight 1 + 0.1 N(0, 1), mean and rstd of each row rounded to
//                     bf16 as the forward stores them; dinp, dweight, dbias zeroed) against a
//                     double-precision reference of the same formula (train_gpt2.c's CPU
//                     layernorm_backward), on the host; max_err over dinp, dweight and dbias
//                     together; bad_fraction: |err| > 0.02 + 0.016 |ref| (one bf16 rounding
//                     of a float sum); then 3 more launches on the last input, outputs zeroed
//                     again, that must agree bit for bit with the first
//   KG_MODE=bench     KG_ROUNDS rounds of KG_SAMPLES launches (kgbench::TimeLaunches) after a
//                     warm-up, rotating through enough input sets that L2 holds none; the
//                     kernel accumulates into dinp, dweight and dbias, as in training
//   KG_MODE=serve     each shape set up once, one round per request (kgbench::Serve)
//   KG_MODE=sanitize  one launch on the first shape, exact-size buffers
//
// Inputs are drawn on the host and copied: the harness launches no kernel of its own before
// layernorm_backward's, so Nsight Compute's first launches (-c) are the kernel's.
#include "kg_bench.h"

#define TESTING
#include "train_gpt2.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

const char *const kKernel = "layernorm_backward";
constexpr int kBlockSize = 512;  // layernorm_backward's block_size, on both sides

struct Dims {
  int B, T, C;
  size_t rows() const { return size_t(B) * size_t(T); }
};
const std::map<std::string, Dims> kShapes = {{"small", {1, 64, 768}}, {"mission", {8, 1024, 768}}};

constexpr double kAtol = 0.02, kRtol = 0.016;
constexpr int kRepeats = 3;

void cuda(cudaError_t e, const char *what) {
  if (e != cudaSuccess) throw std::string(what) + ": " + cudaGetErrorString(e);
}

// The scratch both sides' layernorm_backward need: base 2C + 1 floats, head a flag's
// cache line (32 floats) and 2C per block of the grid (blocks_per_sm × SMs, at most 3 × SMs).
size_t scratch_floats(const Dims &d) {
  return 32 + 2 * size_t(d.C) * 3 * size_t(deviceProp.multiProcessorCount) + 2 * size_t(d.C) + 1;
}

template <typename T>
struct Buf {
  T *p = nullptr;
  size_t n = 0;
  explicit Buf(size_t count) : n(count) { cuda(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc"); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf &) = delete;
  Buf &operator=(const Buf &) = delete;
  void put(const std::vector<T> &h) { cuda(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy"); }
  void get(std::vector<T> &h) const {
    h.resize(n);
    cuda(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  void zero() { cuda(cudaMemset(p, 0, n * sizeof(T)), "cudaMemset"); }
};

// Host holds one input set: what the forward pass leaves for the backward.
struct Host {
  std::vector<floatX> dout, inp, weight, mean, rstd;
};

Host draw(const Dims &d, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  const size_t rows = d.rows(), C = size_t(d.C);
  Host h;
  h.dout.resize(rows * C);
  h.inp.resize(rows * C);
  h.weight.resize(C);
  h.mean.resize(rows);
  h.rstd.resize(rows);
  for (auto &w : h.weight) w = __float2bfloat16(1.0f + 0.1f * n01(rng));
  for (size_t r = 0; r < rows; ++r) {
    const float offset = 0.5f * n01(rng);
    double sum = 0, sq = 0;
    for (size_t c = 0; c < C; ++c) {
      const floatX x = __float2bfloat16(offset + n01(rng));
      h.inp[r * C + c] = x;
      h.dout[r * C + c] = __float2bfloat16(n01(rng));
      sum += double(__bfloat162float(x));
    }
    const double mean = sum / double(C);
    for (size_t c = 0; c < C; ++c) {
      const double v = double(__bfloat162float(h.inp[r * C + c])) - mean;
      sq += v * v;
    }
    h.mean[r] = __float2bfloat16(float(mean));
    h.rstd[r] = __float2bfloat16(float(1.0 / std::sqrt(sq / double(C) + 1e-5)));
  }
  return h;
}

// Dev is one input set on the GPU with its outputs.
struct Dev {
  Buf<floatX> dout, inp, weight, mean, rstd, dinp, dweight, dbias;
  explicit Dev(const Dims &d)
      : dout(d.rows() * d.C), inp(d.rows() * d.C), weight(d.C), mean(d.rows()), rstd(d.rows()),
        dinp(d.rows() * d.C), dweight(d.C), dbias(d.C) {}
  void put(const Host &h) {
    dout.put(h.dout);
    inp.put(h.inp);
    weight.put(h.weight);
    mean.put(h.mean);
    rstd.put(h.rstd);
  }
  void zero_grads() {
    dinp.zero();
    dweight.zero();
    dbias.zero();
  }
};

void launch(Dev &v, float *scratch, const Dims &d) {
  layernorm_backward(v.dinp.p, v.dweight.p, v.dbias.p, scratch, v.dout.p, v.inp.p, v.weight.p, v.mean.p, v.rstd.p, d.B,
                     d.T, d.C);
  cuda(cudaGetLastError(), "layernorm_backward");
}

// reference: train_gpt2.c's layernorm_backward in double, from zeroed gradients; out is
// dinp (rows × C), then dweight (C), then dbias (C).
std::vector<double> reference(const Host &h, const Dims &d) {
  const size_t rows = d.rows(), C = size_t(d.C);
  std::vector<double> out(rows * C + 2 * C, 0.0);
  double *dinp = out.data(), *dweight = dinp + rows * C, *dbias = dweight + C;
  for (size_t r = 0; r < rows; ++r) {
    const double mean = __bfloat162float(h.mean[r]), rstd = __bfloat162float(h.rstd[r]);
    double dnorm_mean = 0, dnorm_norm_mean = 0;
    for (size_t c = 0; c < C; ++c) {
      const double norm = (double(__bfloat162float(h.inp[r * C + c])) - mean) * rstd;
      const double dnorm = double(__bfloat162float(h.weight[c])) * double(__bfloat162float(h.dout[r * C + c]));
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= double(C);
    dnorm_norm_mean /= double(C);
    for (size_t c = 0; c < C; ++c) {
      const double g = __bfloat162float(h.dout[r * C + c]);
      const double norm = (double(__bfloat162float(h.inp[r * C + c])) - mean) * rstd;
      const double dnorm = double(__bfloat162float(h.weight[c])) * g;
      dbias[c] += g;
      dweight[c] += norm * g;
      dinp[r * C + c] = (dnorm - dnorm_mean - norm * dnorm_norm_mean) * rstd;
    }
  }
  return out;
}

// outputs is the kernel's dinp, dweight and dbias in reference's order.
std::vector<floatX> outputs(const Dev &v) {
  std::vector<floatX> a, b, c;
  v.dinp.get(a);
  v.dweight.get(b);
  v.dbias.get(c);
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

void check(const Dims &d, int checks, kgbench::Result &r) {
  Dev v(d);
  Buf<float> scratch(scratch_floats(d));
  std::vector<floatX> got;
  double max_err = 0, sum_err = 0, ref_max = 0;
  long long bad = 0, nan = 0, inf = 0, n = 0;
  Host h;
  for (int i = 0; i < checks; ++i) {
    h = draw(d, 300 + i);
    v.put(h);
    v.zero_grads();
    launch(v, scratch.p, d);
    cuda(cudaDeviceSynchronize(), "check");
    got = outputs(v);
    const std::vector<double> want = reference(h, d);
    for (size_t j = 0; j < want.size(); ++j) {
      const double g = __bfloat162float(got[j]), w = want[j];
      ++n;
      if (std::isnan(g)) { ++nan; ++bad; continue; }
      if (std::isinf(g)) { ++inf; ++bad; continue; }
      const double e = std::fabs(g - w);
      max_err = std::max(max_err, e);
      sum_err += e;
      ref_max = std::max(ref_max, std::fabs(w));
      if (e > kAtol + kRtol * std::fabs(w)) ++bad;
    }
  }
  double rep = 0;
  for (int i = 0; i < kRepeats; ++i) {
    v.zero_grads();
    launch(v, scratch.p, d);
    cuda(cudaDeviceSynchronize(), "repeat");
    const std::vector<floatX> again = outputs(v);
    for (size_t j = 0; j < got.size(); ++j) {
      const double x = __bfloat162float(got[j]), y = __bfloat162float(again[j]);
      if (std::isnan(x) != std::isnan(y)) rep = INFINITY;
      else if (!std::isnan(x)) rep = std::max(rep, std::fabs(x - y));
    }
  }
  r.max_err = max_err;
  r.mean_err = n ? sum_err / double(n) : 0.0;
  r.ref_max_abs = ref_max;
  r.bad_fraction = n ? double(bad) / double(n) : 0.0;
  r.nan_count = nan;
  r.inf_count = inf;
  r.checks = checks;
  r.repeat_launches = kRepeats + 1;
  r.repeat_max_diff = rep;
}

// Timer owns one shape's rotating input sets, warmed up: it times one round.
class Timer {
 public:
  explicit Timer(const Dims &d) : d_(d), scratch_(scratch_floats(d)) {
    const size_t set = (3 * d.rows() * d.C + 2 * d.rows() + 3 * size_t(d.C)) * sizeof(floatX);
    const int copies = int(std::max<size_t>(1, std::min<size_t>(16, (size_t(256) << 20) / set)));
    for (int i = 0; i < copies; ++i) {
      sets_.emplace_back(new Dev(d));
      sets_.back()->put(draw(d, 7 + i));
      sets_.back()->zero_grads();
    }
    for (int i = 0; i < 3 * copies + 10; ++i) one(i);  // warm-up, discarded
    cuda(cudaDeviceSynchronize(), "warm-up");
  }
  std::vector<double> operator()(int samples) {
    std::vector<double> t = kgbench::TimeLaunches([this](int i) { one(i); }, samples, 0);
    cuda(cudaGetLastError(), "timed launches");
    return t;
  }

 private:
  void one(int i) {
    Dev &v = *sets_[size_t(i) % sets_.size()];
    layernorm_backward(v.dinp.p, v.dweight.p, v.dbias.p, scratch_.p, v.dout.p, v.inp.p, v.weight.p, v.mean.p, v.rstd.p,
                       d_.B, d_.T, d_.C);
  }
  Dims d_;
  Buf<float> scratch_;
  std::vector<std::unique_ptr<Dev>> sets_;
};

void sanitize(const Dims &d) {
  Dev v(d);
  Buf<float> scratch(scratch_floats(d));
  v.put(draw(d, 1));
  v.zero_grads();
  launch(v, scratch.p, d);
  cuda(cudaDeviceSynchronize(), "sanitize");
}

int serve(const kgbench::Request &req) {
  struct Entry {
    std::string shape, error;
    std::unique_ptr<Timer> timer;
  };
  std::vector<Entry> entries;
  bool failed = false;
  for (const auto &shape : req.shapes) {
    Entry e{shape, "", nullptr};
    try {
      auto s = kShapes.find(shape);
      if (s == kShapes.end()) throw std::string("unknown shape");
      e.timer.reset(new Timer(s->second));
    } catch (const std::string &err) {
      e.error = err;
      failed = true;
      std::fprintf(stderr, "kg_harness: %s %s: %s\n", kKernel, shape.c_str(), err.c_str());
    }
    entries.push_back(std::move(e));
  }
  const int rc = kgbench::Serve(req, [&](const kgbench::ServeRequest &sr) {
    std::vector<kgbench::Result> out;
    for (auto &e : entries) {
      if (!kgbench::Wanted(sr.kernels, kKernel) || !kgbench::Wanted(sr.shapes, e.shape)) continue;
      kgbench::Result r;
      r.kernel = kKernel;
      r.shape = e.shape;
      r.block_size = kBlockSize;
      if (e.error.empty()) {
        try {
          r.rounds_us.push_back((*e.timer)(sr.samples));
        } catch (const std::string &err) {
          e.error = err;
          failed = true;
          std::fprintf(stderr, "kg_harness: %s %s: round %d: %s\n", kKernel, e.shape.c_str(), sr.round, err.c_str());
        }
      }
      r.error = e.error;
      out.push_back(r);
    }
    return out;
  });
  return rc != 0 ? rc : failed ? 1 : 0;
}

}  // namespace

int main() {
  kgbench::Request req = kgbench::Request::FromEnv("small,mission");
  const std::string kernels = kgbench::Request::env("KG_KERNELS", kKernel);
  if (kernels != kKernel) {
    std::fprintf(stderr, "kg_harness: KG_KERNELS=%s: this harness has one kernel, %s\n", kernels.c_str(), kKernel);
    return 2;
  }
  if (req.mode != "check" && req.mode != "bench" && req.mode != "sanitize" && req.mode != "serve") {
    std::fprintf(stderr, "kg_harness: KG_MODE=%s: want check, bench, sanitize or serve\n", req.mode.c_str());
    return 2;
  }
  if (req.shapes.empty()) {
    std::fprintf(stderr, "kg_harness: no shapes to run (KG_SHAPES)\n");
    return 2;
  }
  // train_gpt2.cu's layernorm_backward sizes its grid from this global, as its main() fills it.
  if (cudaError_t e = cudaGetDeviceProperties(&deviceProp, 0); e != cudaSuccess) {
    std::fprintf(stderr, "kg_harness: cudaGetDeviceProperties: %s\n", cudaGetErrorString(e));
    kgbench::Result r;
    r.kernel = kKernel;
    r.shape = req.shapes.front();
    r.error = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e);
    kgbench::Write(req, {r});
    return 1;
  }
  if (req.mode == "serve") return serve(req);
  std::vector<kgbench::Result> results;
  bool failed = false;
  std::string broken;  // a CUDA error breaks the context: every later result is that error
  const std::vector<std::string> shapes =
      req.mode == "sanitize" ? std::vector<std::string>{req.shapes.front()} : req.shapes;
  for (const auto &shape : shapes) {
    kgbench::Result r;
    r.kernel = kKernel;
    r.shape = shape;
    r.block_size = kBlockSize;
    try {
      if (!broken.empty()) throw broken;
      auto s = kShapes.find(shape);
      if (s == kShapes.end()) throw std::string("unknown shape");
      if (req.mode == "check") {
        check(s->second, std::max(req.rounds, 1), r);
      } else if (req.mode == "bench") {
        Timer t(s->second);
        for (int i = 0; i < std::max(req.rounds, 1); ++i) r.rounds_us.push_back(t(std::max(req.samples, 1)));
      } else {
        sanitize(s->second);
        r.launches = 1;
      }
    } catch (const std::string &e) {
      r.error = e;
      failed = true;
      std::fprintf(stderr, "kg_harness: %s %s: %s\n", kKernel, shape.c_str(), e.c_str());
      if (broken.empty() && cudaPeekAtLastError() != cudaSuccess) broken = e;
    }
    results.push_back(r);
  }
  if (!kgbench::Write(req, results)) {
    std::fprintf(stderr, "kg_harness: cannot write %s\n", req.out.c_str());
    return 2;
  }
  return failed ? 1 : 0;
}
