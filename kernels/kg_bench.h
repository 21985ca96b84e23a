// kg_bench.h: a small helper for CUDA harnesses that speak kernel-gate/bench/v1
// (docs/harness-protocol.md). It reads the request from the environment (KG_MODE, KG_SHAPES,
// KG_ROUNDS, KG_SAMPLES, KG_OUT), times single launches with CUDA events, and writes the
// result file. Header-only; C++17.
#pragma once
#include <cuda_runtime.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
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

// TimeLaunches times `samples` single launches of launch(i) with CUDA events on stream and
// returns microseconds per launch. launch(i) gets the sample index, e.g. to rotate buffers.
inline std::vector<double> TimeLaunches(const std::function<void(int)>& launch, int samples, cudaStream_t stream) {
  std::vector<cudaEvent_t> ev(2 * samples);
  for (auto& e : ev) cudaEventCreate(&e);
  for (int i = 0; i < samples; ++i) {
    cudaEventRecord(ev[2 * i], stream);
    launch(i);
    cudaEventRecord(ev[2 * i + 1], stream);
  }
  cudaEventSynchronize(ev.back());
  std::vector<double> us(samples);
  for (int i = 0; i < samples; ++i) {
    float ms = 0;
    cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
    us[i] = 1000.0 * ms;
  }
  for (auto& e : ev) cudaEventDestroy(e);
  return us;
}

}  // namespace kgbench
