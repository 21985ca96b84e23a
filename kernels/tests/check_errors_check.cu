// GPU check of kernels/check_errors.cuh: kgcheck::Compare and kgcheck::MaxDiff against the
// host loops harness.cu used before them (Errors::add, max_diff, each output copied to the
// host as to_host did), kept here verbatim, on random data with NaN, Inf, -Inf, denormals and
// values on the tolerance's edge, for float and half outputs, sizes from 0 to the row_softmax
// × long output (67M elements, beyond the grid so the grid-stride loop runs). From the
// repository's root:
//   nvcc -O3 -lineinfo -std=c++17 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a
//     -Ikernels -o /tmp/check_errors_check kernels/tests/check_errors_check.cu && /tmp/check_errors_check
// Every field must match exactly, except sum_err: the order of its additions differs, so it
// must agree to 1e-12 relative (or both be NaN). Prints one line per case, the two timings
// of the largest case, and "N passed, N failed"; exits 0 when every case passes, 1 when one
// does not, 2 when CUDA fails.
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "check_errors.cuh"

namespace {

// ---- the host loops of harness.cu before check_errors.cuh, verbatim (to_host: but for its error
// and n = 0, which harness.cu never asked for) ----

template <class T>
std::vector<float> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  if (n && cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) throw std::string("to_host");
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = (float)h[i];
  return f;
}

struct Errors {
  double max_err = 0, sum_err = 0, ref_max_abs = 0;
  long long nan = 0, inf = 0, bad = 0, n = 0;
  void add(const std::vector<float>& got, const std::vector<float>& ref, double atol, double rtol) {
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(got[i])) { ++nan; ++bad; continue; }
      if (std::isinf(got[i])) { ++inf; ++bad; continue; }
      const double e = std::fabs((double)got[i] - ref[i]);
      max_err = std::max(max_err, e);
      sum_err += e;
      ref_max_abs = std::max(ref_max_abs, (double)std::fabs(ref[i]));
      if (e > atol + rtol * std::fabs(ref[i])) ++bad;
    }
    n += (long long)got.size();
  }
};

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
    if (!std::isnan(a[i])) d = std::max(d, (double)std::fabs(a[i] - b[i]));
  }
  return d;
}

// ---- the check ----

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::string(what) + ": " + cudaGetErrorString(e);
}

template <class T>
struct Dev {
  T* p = nullptr;
  explicit Dev(const std::vector<T>& h) {
    ck(cudaMalloc(&p, std::max<size_t>(h.size(), 1) * sizeof(T)), "cudaMalloc");
    if (!h.empty()) ck(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

int passed = 0, failed = 0;

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
bool agree(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b));
}

void report(const std::string& name, bool ok, const std::string& detail) {
  std::printf("%s  %s: %s\n", ok ? "ok  " : "FAIL", name.c_str(), detail.c_str());
  ++(ok ? passed : failed);
}

// How a case's data are drawn.
struct Spec {
  std::string name;
  size_t n;
  double atol, rtol;
  double special;    // fraction of got made NaN, Inf or -Inf (a third each)
  bool ref_special;  // also a few NaN and Inf in ref
  bool edge;         // a fraction of got put at ref ± (atol + rtol·|ref|), the tolerance's edge
};

template <class T>
T from_float(float x) { return (T)x; }
template <>
__half from_float<__half>(float x) { return __float2half(x); }

// Data draws ref ~ N(0, 1) (a few denormals) and got = ref + N(0, 1e-3) with the specials.
template <class T>
void draw(const Spec& s, std::mt19937_64& rng, std::vector<T>& got, std::vector<float>& ref) {
  std::normal_distribution<float> nd(0.0f, 1.0f), noise(0.0f, 1e-3f);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  got.resize(s.n);
  ref.resize(s.n);
  for (size_t i = 0; i < s.n; ++i) {
    float r = nd(rng);
    if (u(rng) < 1e-4) r = r * 1e-40f;  // a denormal (or 0)
    float g = r + noise(rng);
    if (s.edge && u(rng) < 0.05) {
      const double tol = s.atol + s.rtol * std::fabs(r);
      g = (float)((double)r + (u(rng) < 0.5 ? tol : -tol));
      if (u(rng) < 0.5) g = std::nextafter(g, u(rng) < 0.5 ? INFINITY : -INFINITY);
    }
    const double p = u(rng);
    if (p < s.special / 3) g = NAN;
    else if (p < 2 * s.special / 3) g = INFINITY;
    else if (p < s.special) g = -INFINITY;
    if (s.ref_special && u(rng) < 1e-5) r = u(rng) < 0.5 ? NAN : INFINITY;
    got[i] = from_float<T>(g);
    ref[i] = r;
  }
}

template <class T>
void check_compare(const Spec& s, std::mt19937_64& rng, bool timed) {
  std::vector<T> got;
  std::vector<float> ref;
  draw(s, rng, got, ref);
  Dev<T> dg(got);
  Dev<float> dr(ref);
  // The harness calls it once per check and sums: twice here, as two checks would.
  const auto t0 = std::chrono::steady_clock::now();
  Errors host;
  for (int c = 0; c < 2; ++c) host.add(to_host(dg.p, s.n), to_host(dr.p, s.n), s.atol, s.rtol);
  const auto t1 = std::chrono::steady_clock::now();
  kgcheck::ErrorSums gpu, once;
  long long n = 0;
  for (int c = 0; c < 2; ++c) {
    ck(kgcheck::Compare(dg.p, dr.p, s.n, s.atol, s.rtol, &once), "kgcheck::Compare");
    gpu.max_err = std::max(gpu.max_err, once.max_err);
    gpu.sum_err += once.sum_err;
    gpu.ref_max_abs = std::max(gpu.ref_max_abs, once.ref_max_abs);
    gpu.nan += once.nan;
    gpu.inf += once.inf;
    gpu.bad += once.bad;
    n += (long long)s.n;
  }
  const auto t2 = std::chrono::steady_clock::now();
  const bool ok = same(gpu.max_err, host.max_err) && agree(gpu.sum_err, host.sum_err) &&
                  same(gpu.ref_max_abs, host.ref_max_abs) && (long long)gpu.nan == host.nan &&
                  (long long)gpu.inf == host.inf && (long long)gpu.bad == host.bad && n == host.n;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "n %zu: max_err %.17g / %.17g, sum_err %.17g / %.17g, ref_max_abs %.9g / %.9g, nan %llu / %lld, "
                "inf %llu / %lld, bad %llu / %lld (gpu / host)",
                s.n, gpu.max_err, host.max_err, gpu.sum_err, host.sum_err, gpu.ref_max_abs, host.ref_max_abs, gpu.nan,
                host.nan, gpu.inf, host.inf, gpu.bad, host.bad);
  report("Compare " + s.name, ok, buf);
  if (timed)
    std::printf("      timing, 2 checks of %zu elements: host loops %.3f s, GPU %.3f s\n", s.n,
                std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
}

// MaxDiff on b = a with changes: a few perturbed elements (and, by mode, NaN in both at the
// same places, Inf in both, Inf against a finite value, or one NaN against a number).
template <class T>
void check_max_diff(const std::string& name, size_t n, int mode, std::mt19937_64& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_int_distribution<size_t> at(0, n ? n - 1 : 0);
  std::vector<T> a(n), b(n);
  for (size_t i = 0; i < n; ++i) a[i] = b[i] = from_float<T>(nd(rng));
  if (n) {
    for (int k = 0; k < 5 && mode >= 1; ++k) {
      const size_t i = at(rng);
      b[i] = from_float<T>((float)a[i] + 0.01f * (k + 1));
    }
    for (int k = 0; k < 5 && mode >= 2; ++k) {
      const size_t i = at(rng);
      a[i] = b[i] = from_float<T>(NAN);
    }
    for (int k = 0; k < 5 && mode >= 3; ++k) {
      const size_t i = at(rng);
      a[i] = b[i] = from_float<T>(k % 2 ? INFINITY : -INFINITY);  // Inf - Inf: NaN, left out
    }
    if (mode == 4) b[at(rng)] = from_float<T>(INFINITY);
    if (mode == 5) b[n - 1] = from_float<T>(NAN);  // the last element: the host returns only there
    if (mode == 6) a[0] = from_float<T>(NAN);
  }
  Dev<T> da(a), db(b);
  const double host = max_diff(to_host(da.p, n), to_host(db.p, n));
  double gpu = -1;
  ck(kgcheck::MaxDiff(da.p, db.p, n, &gpu), "kgcheck::MaxDiff");
  char buf[160];
  std::snprintf(buf, sizeof buf, "n %zu: %.17g / %.17g (gpu / host)", n, gpu, host);
  report("MaxDiff " + name, same(gpu, host), buf);
}

}  // namespace

int main() {
  try {
    std::mt19937_64 rng(20261127);
    const size_t big = (size_t)32768 * 2048;  // row_softmax × long
    const Spec specs[] = {
        {"empty", 0, 1e-2, 1e-3, 0, false, false},
        {"one", 1, 1e-2, 1e-3, 0, false, false},
        {"small", 1000, 1e-6, 1e-3, 0.01, false, true},
        {"odd size, grid-stride", 3000017, 1e-3, 1e-3, 0.001, false, true},
        {"attention tolerances", 1 << 20, 0.02, 0.02, 0.001, false, true},
        {"softmax tolerances", 1 << 20, 1e-6, 1e-3, 0.001, false, true},
        {"NaN and Inf in ref", 1 << 20, 1e-2, 1e-3, 0.001, true, true},
        {"all NaN or Inf", 4097, 1e-2, 1e-3, 1.0, false, false},
    };
    for (const Spec& s : specs) check_compare<float>(s, rng, false);
    for (const Spec& s : specs) {
      Spec h = s;
      h.name += ", half";
      check_compare<__half>(h, rng, false);
    }
    check_compare<float>({"row_softmax x long size", big, 1e-6, 1e-3, 1e-6, false, true}, rng, true);
    const char* modes[] = {"identical", "perturbed", "NaN in both", "Inf in both", "Inf against a number",
                           "NaN against a number (last)", "NaN against a number (first)"};
    for (int m = 0; m < 7; ++m) {
      check_max_diff<float>(modes[m], 3000017, m, rng);
      check_max_diff<__half>(std::string(modes[m]) + ", half", 1000003, m, rng);
    }
    check_max_diff<float>("empty", 0, 0, rng);
  } catch (const std::string& e) {
    std::fprintf(stderr, "check_errors_check: %s\n", e.c_str());
    return 2;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
