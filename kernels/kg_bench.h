// kg_bench.h: a small helper for CUDA harnesses that speak kernel-gate/bench/v1
// (docs/harness-protocol.md). It reads the request from the environment (KG_MODE, KG_SHAPES,
// KG_ROUNDS, KG_SAMPLES, KG_OUT), times single launches with CUDA events, and writes the
// result file. Header-only; C++17. Compiled by nvcc, TimeLaunches queues the timed launches
// behind a blocking kernel (see there); compiled as plain C++ it times them unheld.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace kgbench {

struct Request {
  std::string mode = "check";  // check | bench | sanitize
  std::vector<std::string> shapes;
  int rounds = 3;
  int samples = 50;
  std::string out;

  static std::string env(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
  }
  // FromEnv reads KG_*; default_shapes is used when KG_SHAPES is unset.
  static Request FromEnv(const std::string& default_shapes) {
    Request r;
    r.mode = env("KG_MODE", "check");
    std::stringstream ss(env("KG_SHAPES", default_shapes.c_str()));
    for (std::string s; std::getline(ss, s, ',');)
      if (!s.empty()) r.shapes.push_back(s);
    r.rounds = std::atoi(env("KG_ROUNDS", "3").c_str());
    r.samples = std::atoi(env("KG_SAMPLES", "50").c_str());
    r.out = env("KG_OUT", "");
    return r;
  }
};

// A value that is written only when set.
struct Opt {
  bool set = false;
  double v = 0;
  Opt() = default;
  Opt(double x) : set(true), v(x) {}  // NOLINT: implicit on purpose
};

struct Result {
  std::string kernel, shape;
  std::vector<std::vector<double>> rounds_us;  // bench
  Opt max_err, mean_err, ref_max_abs, bad_fraction, repeat_max_diff;  // check
  long long nan_count = -1, inf_count = -1;
  int checks = -1, repeat_launches = -1, launches = -1;
  std::string error;
};

inline void json_string(std::ostream& o, const std::string& s) {
  o << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o << '\\' << c;
    else if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o << b; }
    else o << c;
  }
  o << '"';
}

// json_number writes NaN and infinities as the strings the protocol accepts.
inline void json_number(std::ostream& o, double v) {
  if (std::isnan(v)) o << "\"NaN\"";
  else if (std::isinf(v)) o << (v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  else { char b[32]; std::snprintf(b, sizeof b, "%.9g", v); o << b; }
}

// driver_version reads the kernel driver's version ("580.159.04") on Linux; elsewhere it
// falls back to the CUDA version the driver supports.
inline std::string driver_version() {
  if (FILE* f = std::fopen("/proc/driver/nvidia/version", "r")) {
    char line[512] = {0};
    const bool ok = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." or, with the open
    // module, "... Open Kernel Module for x86_64  580.159.04 ...": the first dotted number
    // after "Kernel Module".
    const char* k = ok ? std::strstr(line, "Kernel Module") : nullptr;
    if (k) {
      std::istringstream in(k + std::strlen("Kernel Module"));
      for (std::string v; in >> v;)
        if (std::isdigit((unsigned char)v[0]) && v.find('.') != std::string::npos) return v;
    }
  }
  int driver = 0;
  cudaDriverGetVersion(&driver);
  return std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
}

inline std::string device_json() {
  int dev = 0, runtime = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, dev);
  cudaRuntimeGetVersion(&runtime);
  std::ostringstream o;
  o << "{\"name\": ";
  json_string(o, p.name);
  o << ", \"compute_cap\": \"" << p.major << "." << p.minor << "\", \"driver\": ";
  json_string(o, driver_version());
  o << ", \"cuda\": \"" << runtime / 1000 << "." << (runtime % 1000) / 10 << "\"}";
  return o.str();
}

// Write stores the results in req.out (stdout when empty). Returns false on an I/O error.
inline bool Write(const Request& req, const std::vector<Result>& results) {
  std::ostringstream o;
  o << "{\"schema\": \"kernel-gate/bench/v1\",\n \"device\": " << device_json() << ",\n \"request\": {\"mode\": ";
  json_string(o, req.mode);
  o << ", \"shapes\": [";
  for (size_t i = 0; i < req.shapes.size(); ++i) { if (i) o << ", "; json_string(o, req.shapes[i]); }
  o << "], \"rounds\": " << req.rounds << ", \"samples\": " << req.samples << "},\n \"results\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    o << (i ? ",\n  " : "\n  ") << "{\"kernel\": ";
    json_string(o, r.kernel);
    o << ", \"shape\": ";
    json_string(o, r.shape);
    if (!r.rounds_us.empty()) {
      o << ", \"rounds_us\": [";
      for (size_t k = 0; k < r.rounds_us.size(); ++k) {
        o << (k ? ", [" : "[");
        for (size_t j = 0; j < r.rounds_us[k].size(); ++j) { if (j) o << ", "; json_number(o, r.rounds_us[k][j]); }
        o << "]";
      }
      o << "]";
    }
    auto opt = [&](const char* name, const Opt& v) { if (v.set) { o << ", \"" << name << "\": "; json_number(o, v.v); } };
    opt("max_err", r.max_err);
    opt("mean_err", r.mean_err);
    opt("ref_max_abs", r.ref_max_abs);
    opt("bad_fraction", r.bad_fraction);
    if (r.nan_count >= 0) o << ", \"nan_count\": " << r.nan_count;
    if (r.inf_count >= 0) o << ", \"inf_count\": " << r.inf_count;
    if (r.checks >= 0) o << ", \"checks\": " << r.checks;
    if (r.repeat_launches >= 0) o << ", \"repeat_launches\": " << r.repeat_launches;
    opt("repeat_max_diff", r.repeat_max_diff);
    if (r.launches >= 0) o << ", \"launches\": " << r.launches;
    if (!r.error.empty()) { o << ", \"error\": "; json_string(o, r.error); }
    o << "}";
  }
  o << "\n ]}\n";
  if (req.out.empty()) { std::fputs(o.str().c_str(), stdout); return true; }
  FILE* f = std::fopen(req.out.c_str(), "w");
  if (!f) return false;
  bool ok = std::fputs(o.str().c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// ---- holding the stream while launches are queued ----
//
// An event pair recorded around a launch while the GPU is idle measures the host as much as
// the kernel: the GPU reaches the start event as soon as the host has enqueued it, then waits
// for the launch to be enqueued, then for the stop event. For a kernel of a few microseconds
// those gaps are most of what is measured. So TimeLaunches first launches a one-thread
// kernel that spins until the host releases it (a flag in pinned, mapped host memory, set
// once every launch and event of the chunk is queued); the queued work then runs back to
// back and each event pair measures the device time of its own launch. This is NVIDIA
// nvbench's "blocking kernel".

// kHoldChunk is how many samples (two events and launch(i)'s launches each) are queued
// behind one hold. The launch queue holds about a thousand entries; a host that fills it
// blocks inside a launch call until the GPU drains it, which a held stream never does.
constexpr int kHoldChunk = 64;
// kHoldTimeoutNs bounds a hold on the GPU's global timer, so a hold can never hang. A hold
// that times out ran its chunk before the host had queued all of it: those timings may hold
// host gaps, and TimeLaunches reports them as NaN.
constexpr unsigned long long kHoldTimeoutNs = 1000000000ull;  // 1 s

namespace detail {

#ifdef __CUDACC__
__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// hold_stream spins until the host sets *release, or until timeout_ns have passed (then it
// sets *timed_out). A template so that the header defines it in every file that includes it.
template <int = 0>
__global__ void hold_stream(const volatile int* release, volatile int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long t0 = global_timer_ns();
  while (*release == 0) {
    if (global_timer_ns() - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}
#endif

// HoldSlots is pinned, mapped host memory for the holds: host[c] releases chunk c's hold,
// host[n + c] says it timed out. Allocated once and kept for the life of the process.
struct HoldSlots {
  int* host = nullptr;
  int* dev = nullptr;
  int n = 0;
};

// hold_slots returns room for n holds, or nullptr when pinned memory cannot be had.
inline HoldSlots* hold_slots(int n) {
  static HoldSlots s;
  if (s.n >= n) return &s;
  if (s.host) cudaFreeHost(s.host);  // only between calls: every earlier hold has finished
  s = HoldSlots{};
  const int want = std::max(n, 64);
  void* h = nullptr;
  if (cudaHostAlloc(&h, 2 * want * sizeof(int), cudaHostAllocPortable | cudaHostAllocMapped) != cudaSuccess) {
    cudaGetLastError();  // not sticky: leave no error behind for the harness to trip on
    return nullptr;
  }
  void* d = nullptr;
  if (cudaHostGetDevicePointer(&d, h, 0) != cudaSuccess) {
    cudaGetLastError();
    d = h;  // unified addressing: the host pointer is the device pointer
  }
  s.host = static_cast<int*>(h);
  s.dev = static_cast<int*>(d);
  s.n = want;
  return &s;
}

// blocking is false when KG_BENCH_BLOCKING=0 (e.g. under a profiler that serialises launches,
// where a hold could only time out).
inline bool blocking() {
  const char* v = std::getenv("KG_BENCH_BLOCKING");
  return !(v && std::strcmp(v, "0") == 0);
}

}  // namespace detail

// TimeLaunches times `samples` single launches of launch(i) with CUDA events on stream and
// returns microseconds per launch. launch(i) gets the sample index, e.g. to rotate buffers,
// and must enqueue its work on stream.
//
// Blocking: compiled by nvcc, the launches and their events are queued behind a kernel that
// holds the stream until the host has enqueued them (in chunks of kHoldChunk samples), so
// they run back to back and each event pair measures its launch's device time, not the
// host's launch gaps (see "holding the stream" above). launch(i) must therefore not wait for
// the GPU (no synchronisation, no cudaMalloc/cudaFree, no first launch of a lazily loaded
// kernel: warm up first); if it does, the hold times out after kHoldTimeoutNs, a message goes
// to stderr and that chunk's timings are NaN (the speedup gate drops NaN timings and warns).
// KG_BENCH_BLOCKING=0 in the environment times the launches unheld, as before.
inline std::vector<double> TimeLaunches(const std::function<void(int)>& launch, int samples, cudaStream_t stream) {
  if (samples <= 0) return {};
  std::vector<cudaEvent_t> ev(2 * samples);
  for (auto& e : ev) cudaEventCreate(&e);
  const int chunks = (samples + kHoldChunk - 1) / kHoldChunk;
  detail::HoldSlots* hold = nullptr;
#ifdef __CUDACC__
  if (detail::blocking()) hold = detail::hold_slots(chunks);
#endif
  std::vector<char> held(chunks, 0);
  for (int c = 0; c < chunks; ++c) {
    const int lo = c * kHoldChunk, hi = std::min(samples, lo + kHoldChunk);
#ifdef __CUDACC__
    if (hold) {
      volatile int* h = hold->host;
      h[c] = 0;
      h[hold->n + c] = 0;
      const volatile int* release = hold->dev + c;
      volatile int* timed_out = hold->dev + hold->n + c;
      unsigned long long timeout_ns = kHoldTimeoutNs;
      void* args[] = {&release, &timed_out, &timeout_ns};
      // Launched through the API to see this launch's own error; a failed hold leaves its
      // error for the harness to report and the chunk is timed unheld.
      held[c] = cudaLaunchKernel(reinterpret_cast<const void*>(&detail::hold_stream<0>), dim3(1), dim3(1), args, 0,
                                 stream) == cudaSuccess;
    }
#endif
    for (int i = lo; i < hi; ++i) {
      cudaEventRecord(ev[2 * i], stream);
      launch(i);
      cudaEventRecord(ev[2 * i + 1], stream);
    }
    if (held[c]) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      static_cast<volatile int*>(hold->host)[c] = 1;  // release: the chunk is queued
    }
  }
  cudaEventSynchronize(ev.back());
  std::vector<double> us(samples);
  for (int i = 0; i < samples; ++i) {
    float ms = 0;
    cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
    us[i] = 1000.0 * ms;
  }
  for (int c = 0; c < chunks; ++c) {
    if (!held[c] || static_cast<volatile int*>(hold->host)[hold->n + c] == 0) continue;
    const int lo = c * kHoldChunk, hi = std::min(samples, lo + kHoldChunk);
    for (int i = lo; i < hi; ++i) us[i] = std::numeric_limits<double>::quiet_NaN();
    std::fprintf(stderr,
                 "kg_bench: TimeLaunches: the stream was held %.1f s and the launches of samples %d-%d were "
                 "still not all queued: their timings would include host gaps and are NaN (does launch() "
                 "synchronise, allocate or load a kernel for the first time? warm up first; "
                 "KG_BENCH_BLOCKING=0 times unheld)\n",
                 kHoldTimeoutNs / 1e9, lo, hi - 1);
  }
  for (auto& e : ev) cudaEventDestroy(e);
  return us;
}

}  // namespace kgbench
