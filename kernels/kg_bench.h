// kg_bench.h: a small helper for CUDA harnesses that speak kernel-gate/bench/v1
// (docs/harness-protocol.md). It reads the request from the environment (KG_MODE, KG_SHAPES,
// KG_ROUNDS, KG_SAMPLES, KG_OUT), times single launches with CUDA events, and writes the
// result file; in KG_MODE=serve, Serve answers one round per request line. Header-only;
// C++17. Compiled by nvcc, TimeLaunches queues the timed launches behind a blocking kernel
// (see there); compiled as plain C++ it times them unheld, unless the program's kernel comes
// from a .cu of its own (KG_BENCH_EXTERN_HOLD, "a host-only file's hold" below).
#pragma once
#include <cuda_runtime.h>

// With KG_BENCH_DEFINE_HOLD only the stream's hold is compiled ("a host-only file's hold"):
// the rest is host code, which would only slow that .cu's device passes.
#ifndef KG_BENCH_DEFINE_HOLD
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <typeindex>
#include <vector>

namespace kgbench {

struct Request {
  std::string mode = "check";  // check | bench | sanitize | serve
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
  // The launch, any mode: threads per block and dynamic shared memory in bytes (what
  // kernel-gate computes a regression's occupancy for); 0 and -1: not said.
  int block_size = 0;
  long long dynamic_smem = -1;
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

// Format is the kernel-gate/bench/v1 text of the results.
inline std::string Format(const Request& req, const std::vector<Result>& results) {
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
    if (r.block_size > 0) o << ", \"block_size\": " << r.block_size;
    if (r.dynamic_smem >= 0) o << ", \"dynamic_smem\": " << r.dynamic_smem;
    if (!r.error.empty()) { o << ", \"error\": "; json_string(o, r.error); }
    o << "}";
  }
  o << "\n ]}\n";
  return o.str();
}

// Write stores the results in req.out (stdout when empty). Returns false on an I/O error.
inline bool Write(const Request& req, const std::vector<Result>& results) {
  const std::string text = Format(req, results);
  if (req.out.empty()) { std::fputs(text.c_str(), stdout); return true; }
  FILE* f = std::fopen(req.out.c_str(), "w");
  if (!f) return false;
  bool ok = std::fputs(text.c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace kgbench
#endif  // KG_BENCH_DEFINE_HOLD

namespace kgbench {

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
// kHoldTimeoutNs bounds a hold on the GPU's global timer, so a hold can never hang and never
// lasts longer than this. A hold that times out ran its chunk before the host had queued all
// of it: those timings may hold host gaps, and TimeLaunches reports them as NaN; one that
// times out during launch's first call of a chunk means launch waits for the GPU, and
// TimeLaunches times it unheld.
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

// launch_hold queues hold_stream on stream, through the API to see this launch's own error.
inline cudaError_t launch_hold(const volatile int* release, volatile int* timed_out, unsigned long long timeout_ns,
                               cudaStream_t stream) {
  void* args[] = {&release, &timed_out, &timeout_ns};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&hold_stream<0>), dim3(1), dim3(1), args, 0, stream);
}
#endif

// HoldLauncher queues one hold (launch_hold's arguments).
using HoldLauncher = cudaError_t (*)(const volatile int* release, volatile int* timed_out,
                                     unsigned long long timeout_ns, cudaStream_t stream);

}  // namespace detail

// ---- a host-only file's hold ----
//
// A file compiled without nvcc's CUDA front end (a .cpp, no __CUDACC__) cannot define the
// hold's kernel. A harness whose driver is such a file, to keep its host C++ out of nvcc's
// device passes (kernels/harness_cases.h), defines KG_BENCH_EXTERN_HOLD before including
// kg_bench.h there, and KG_BENCH_DEFINE_HOLD before including it in one .cu of the program
// (kernels/harness_device.cu), which then gets the hold alone and defines LaunchHold; the
// .cpp's TimeLaunches holds the stream through it. A program without that .cu does not link
// (kgbench::LaunchHold is undefined): it never times unheld unnoticed.
cudaError_t LaunchHold(const volatile int* release, volatile int* timed_out, unsigned long long timeout_ns,
                       cudaStream_t stream);

#ifdef KG_BENCH_DEFINE_HOLD
#ifndef __CUDACC__
#error "kg_bench.h: KG_BENCH_DEFINE_HOLD defines the stream's hold, a kernel: define it in a .cu that nvcc compiles"
#endif
cudaError_t LaunchHold(const volatile int* release, volatile int* timed_out, unsigned long long timeout_ns,
                       cudaStream_t stream) {
  return detail::launch_hold(release, timed_out, timeout_ns, stream);
}
#endif

}  // namespace kgbench

#ifndef KG_BENCH_DEFINE_HOLD
namespace kgbench {

namespace detail {

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

// HoldVerdict is what one held chunk says (hold_verdict).
enum class HoldVerdict { kQueued, kWaits, kTimedOut };

// hold_verdict: a hold that had already ended (timed out) when launch's first call of the
// chunk returned means launch waits for the GPU (synchronises, copies from pageable host
// memory, allocates): no hold can outlast that, so every sample is timed unheld (kWaits). One
// that ended later ran part of the chunk before it was queued: NaN (kTimedOut). Otherwise
// the chunk was queued behind it (kQueued).
inline HoldVerdict hold_verdict(bool ended_during_first, bool ended_before_release) {
  if (ended_during_first) return HoldVerdict::kWaits;
  return ended_before_release ? HoldVerdict::kTimedOut : HoldVerdict::kQueued;
}

// A Hold holds the stream for one chunk at a time (DeviceHold compiled by nvcc or with
// KG_BENCH_EXTERN_HOLD, NoHold otherwise; host-only tests give their own): Start(c, stream)
// queues chunk c's hold and says whether it did, Ended(c) whether that hold ended without
// being released (it timed out), Release(c) lets it go once the chunk is queued.
struct NoHold {
  bool Start(int, cudaStream_t) { return false; }
  bool Ended(int) const { return false; }
  void Release(int) {}
};

// DeviceHold holds the stream with hold_stream, which launch queues (launch_hold in a file nvcc
// compiles, LaunchHold in a host-only one).
struct DeviceHold {
  HoldSlots* s;
  HoldLauncher launch;
  bool Start(int c, cudaStream_t stream) {
    volatile int* h = s->host;
    h[c] = 0;
    h[s->n + c] = 0;
    // A failed hold leaves its error for the harness to report and the chunk is timed unheld.
    return launch(s->dev + c, s->dev + s->n + c, kHoldTimeoutNs, stream) == cudaSuccess;
  }
  // The hold's own write, seen once launch has waited for it to end (or at the end).
  bool Ended(int c) const { return static_cast<volatile int*>(s->host)[s->n + c] != 0; }
  void Release(int c) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    static_cast<volatile int*>(s->host)[c] = 1;
  }
};

// said_waits says once per process and launch's type (a lambda's type is its place in the
// source) that launch waits for the GPU; false when it was said already.
inline bool said_waits(const std::function<void(int)>& launch) {
  static std::set<std::type_index> said;
  return !said.insert(std::type_index(launch.target_type())).second;
}

// time_launches is TimeLaunches behind hold (see there).
template <class Hold>
std::vector<double> time_launches(Hold& hold, const std::function<void(int)>& launch, int samples, cudaStream_t stream) {
  if (samples <= 0) return {};
  std::vector<cudaEvent_t> ev(2 * samples);
  for (auto& e : ev) cudaEventCreate(&e);
  const int chunks = (samples + kHoldChunk - 1) / kHoldChunk;
  std::vector<char> held(chunks, 0);
  bool waits = false;  // launch waits for the GPU: every sample is timed unheld
  for (int c = 0; c < chunks; ++c) {
    const int lo = c * kHoldChunk, hi = std::min(samples, lo + kHoldChunk);
    held[c] = !waits && hold.Start(c, stream);
    bool ended_first = false;
    for (int i = lo; i < hi; ++i) {
      cudaEventRecord(ev[2 * i], stream);
      launch(i);
      cudaEventRecord(ev[2 * i + 1], stream);
      if (held[c] && i == lo && hold.Ended(c)) {
        ended_first = true;
        break;
      }
    }
    if (held[c]) hold.Release(c);  // release: the chunk is queued
    if (hold_verdict(ended_first, false) == HoldVerdict::kWaits) {
      waits = true;
      if (!said_waits(launch))
        std::fprintf(stderr,
                     "kg_bench: TimeLaunches: launch() waits for the GPU: the stream's hold timed out (%.1f s) "
                     "during its first call (does it synchronise, copy from pageable host memory, allocate or load "
                     "a kernel for the first time?); it is timed unheld, so each timing includes the host's launch "
                     "gaps and waits (said once per launch)\n",
                     kHoldTimeoutNs / 1e9);
      std::fill(held.begin(), held.end(), 0);
      c = -1;  // every sample again, unheld, so that one round is timed one way
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
    if (!held[c] || hold_verdict(false, hold.Ended(c)) != HoldVerdict::kTimedOut) continue;
    const int lo = c * kHoldChunk, hi = std::min(samples, lo + kHoldChunk);
    for (int i = lo; i < hi; ++i) us[i] = std::numeric_limits<double>::quiet_NaN();
    std::fprintf(stderr,
                 "kg_bench: TimeLaunches: the stream was held %.1f s and the launches of samples %d-%d were "
                 "still not all queued: their timings would include host gaps and are NaN (does launch() "
                 "synchronise now and then, allocate or load a kernel for the first time? warm up first; "
                 "KG_BENCH_BLOCKING=0 times unheld)\n",
                 kHoldTimeoutNs / 1e9, lo, hi - 1);
  }
  for (auto& e : ev) cudaEventDestroy(e);
  return us;
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
// the GPU (no synchronisation, no copy from pageable host memory, no cudaMalloc/cudaFree, no
// first launch of a lazily loaded kernel: warm up first). A hold never lasts more than
// kHoldTimeoutNs. When the hold times out during launch's first call of a chunk, launch
// waits for the GPU: every sample is then timed unheld (launch is called again for those
// already queued) and a "kg_bench:" line on stderr says so, once per launch's type; so a
// launch that waits costs one hold per call. When it times out later in a chunk, a message
// goes to stderr and that chunk's timings are NaN (the speedup gate drops NaN timings and
// warns). KG_BENCH_BLOCKING=0 in the environment times the launches unheld, as before.
inline std::vector<double> TimeLaunches(const std::function<void(int)>& launch, int samples, cudaStream_t stream) {
#if defined(__CUDACC__) || defined(KG_BENCH_EXTERN_HOLD)  // else plain C++: unheld
  if (samples > 0 && detail::blocking())
    if (detail::HoldSlots* s = detail::hold_slots((samples + kHoldChunk - 1) / kHoldChunk)) {
#ifdef __CUDACC__
      detail::DeviceHold hold{s, detail::launch_hold};
#else
      detail::DeviceHold hold{s, LaunchHold};  // a .cu of the program defines it (KG_BENCH_DEFINE_HOLD)
#endif
      return detail::time_launches(hold, launch, samples, stream);
    }
#endif
  detail::NoHold none;
  return detail::time_launches(none, launch, samples, stream);
}

// ---- KG_MODE=serve: one process, many rounds ----
//
// kernel-gate starts the harness once with KG_MODE=serve (and every restart_every rounds
// again); the harness sets up (inputs, warm-up), then Serve writes the handshake and answers
// each request line on standard input, {"round": 3, "samples": 30, "shapes": [...],
// "kernels": [...]}, with one line {"round": 3, "file": <the round's bench/v1 file>} on the
// descriptor KG_SERVE_FD names (never stdout, where the harness's own prints go), and
// returns at the end of input. docs/harness-protocol.md has the protocol.

// ServeRequest is one request: time round `round` with `samples` launches of each kernel ×
// shape named (shapes and kernels empty: everything the harness set up).
struct ServeRequest {
  int round = -1;
  int samples = 0;
  std::vector<std::string> shapes, kernels;
};

namespace detail {

// A small reader for the request objects: numbers, strings and arrays of strings under
// known keys; any other key's value is skipped whole. Returns false on anything malformed.
struct JsonIn {
  const std::string& s;
  size_t i = 0;
  void ws() { while (i < s.size() && std::isspace((unsigned char)s[i])) ++i; }
  bool lit(char c) { ws(); if (i < s.size() && s[i] == c) { ++i; return true; } return false; }
  bool str(std::string& out) {
    ws();
    if (i >= s.size() || s[i] != '"') return false;
    out.clear();
    for (++i; i < s.size(); ++i) {
      char c = s[i];
      if (c == '"') { ++i; return true; }
      if (c == '\\') {
        if (++i >= s.size()) return false;
        switch (s[i]) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            unsigned cp = 0;
            if (!hex4(cp)) return false;
            if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
              unsigned lo = 0;
              if (i + 2 >= s.size() || s[i + 1] != '\\' || s[i + 2] != 'u') return false;
              i += 2;
              if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            utf8(out, cp);
            break;
          }
          default: out += s[i];
        }
        continue;
      }
      out += c;
    }
    return false;
  }
  // hex4 reads the four hex digits after s[i] (the u of the escape) and leaves i on the last.
  bool hex4(unsigned& cp) {
    if (i + 4 >= s.size()) return false;
    cp = 0;
    for (int k = 1; k <= 4; ++k) {
      const char h = s[i + k];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= h - '0';
      else if (h >= 'a' && h <= 'f') cp |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') cp |= h - 'A' + 10;
      else return false;
    }
    i += 4;
    return true;
  }
  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) out += (char)cp;
    else if (cp < 0x800) { out += (char)(0xC0 | cp >> 6); out += (char)(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) { out += (char)(0xE0 | cp >> 12); out += (char)(0x80 | (cp >> 6 & 0x3F)); out += (char)(0x80 | (cp & 0x3F)); }
    else { out += (char)(0xF0 | cp >> 18); out += (char)(0x80 | (cp >> 12 & 0x3F)); out += (char)(0x80 | (cp >> 6 & 0x3F)); out += (char)(0x80 | (cp & 0x3F)); }
  }
  bool integer(int& out) {
    ws();
    size_t j = i;
    if (j < s.size() && s[j] == '-') ++j;
    const size_t digits = j;
    while (j < s.size() && std::isdigit((unsigned char)s[j])) ++j;
    if (j == digits || j - digits > 9) return false;
    out = std::atoi(s.substr(i, j - i).c_str());
    i = j;
    return true;
  }
  bool strings(std::vector<std::string>& out) {
    out.clear();
    if (!lit('[')) return false;
    if (lit(']')) return true;
    do {
      std::string v;
      if (!str(v)) return false;
      out.push_back(v);
    } while (lit(','));
    return lit(']');
  }
  bool skip(int depth = 0) {  // any value
    if (depth > 64) return false;
    ws();
    if (i >= s.size()) return false;
    std::string tmp;
    switch (s[i]) {
      case '"': return str(tmp);
      case '[':
        ++i;
        if (lit(']')) return true;
        do { if (!skip(depth + 1)) return false; } while (lit(','));
        return lit(']');
      case '{':
        ++i;
        if (lit('}')) return true;
        do { if (!str(tmp) || !lit(':') || !skip(depth + 1)) return false; } while (lit(','));
        return lit('}');
      default:
        while (i < s.size() && (std::isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '+' || s[i] == '.')) ++i;
        return true;
    }
  }
};

}  // namespace detail

// ParseServeRequest reads one request line; false when it is not one.
inline bool ParseServeRequest(const std::string& line, ServeRequest& r) {
  detail::JsonIn in{line};
  r = ServeRequest{};
  if (!in.lit('{')) return false;
  if (!in.lit('}')) {
    do {
      std::string key;
      if (!in.str(key) || !in.lit(':')) return false;
      bool ok = key == "round" ? in.integer(r.round)
              : key == "samples" ? in.integer(r.samples)
              : key == "shapes" ? in.strings(r.shapes)
              : key == "kernels" ? in.strings(r.kernels)
              : in.skip();
      if (!ok) return false;
    } while (in.lit(','));
    if (!in.lit('}')) return false;
  }
  in.ws();
  return in.i == line.size() && r.round >= 0 && r.samples >= 1;
}

// Wanted reports whether a request names x (an empty list names everything).
inline bool Wanted(const std::vector<std::string>& names, const std::string& x) {
  return names.empty() || std::find(names.begin(), names.end(), x) != names.end();
}

// Serve answers requests until the end of standard input: answer(request) times one
// round and returns its results (rounds_us holding that one round); each becomes the
// answer line of that round. Call it once the harness has set up and warmed up. Returns
// the exit status: 0 at the end of input, 2 when KG_SERVE_FD is missing or unwritable or a
// request does not parse. Anything the harness prints on stdout or stderr goes to its log,
// never into the answers.
inline int Serve(const Request& req, const std::function<std::vector<Result>(const ServeRequest&)>& answer) {
  const char* fd_env = std::getenv("KG_SERVE_FD");
  const int fd = fd_env && *fd_env ? std::atoi(fd_env) : -1;
#ifdef _WIN32
  FILE* out = fd > 2 ? _fdopen(fd, "w") : nullptr;
#else
  FILE* out = fd > 2 ? fdopen(fd, "w") : nullptr;
#endif
  if (!out) {
    std::fprintf(stderr, "kg_bench: KG_MODE=serve needs KG_SERVE_FD, the descriptor kernel-gate reads answers from (got %s)\n",
                 fd_env ? fd_env : "none");
    return 2;
  }
  std::fputs("{\"serve\": \"kernel-gate/serve/v1\"}\n", out);
  if (std::fflush(out) != 0) return 2;
  std::string line;
  for (int c; (c = std::fgetc(stdin)) != EOF;) {
    if (c != '\n') { line += (char)c; continue; }
    if (line.find_first_not_of(" \t\r") == std::string::npos) { line.clear(); continue; }
    ServeRequest sr;
    if (!ParseServeRequest(line, sr)) {
      std::fprintf(stderr, "kg_bench: not a serve request: %.200s\n", line.c_str());
      return 2;
    }
    line.clear();
    const std::vector<Result> results = answer(sr);
    Request round = req;
    round.mode = "bench";
    round.rounds = 1;
    round.samples = sr.samples;
    if (!sr.shapes.empty()) round.shapes = sr.shapes;
    std::string file = Format(round, results);
    std::replace(file.begin(), file.end(), '\n', ' ');  // strings escape their newlines: these are layout
    std::fprintf(out, "{\"round\": %d, \"file\": %s}\n", sr.round, file.c_str());
    if (std::fflush(out) != 0) return 2;
  }
  std::fclose(out);
  return 0;
}

}  // namespace kgbench
#endif  // KG_BENCH_DEFINE_HOLD
